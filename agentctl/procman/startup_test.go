package procman

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseStartup(t *testing.T) {
	t.Parallel()
	good := []struct {
		in   string
		want StartInfo
	}{
		{"PORT:1\nWEB:2\n", StartInfo{1, WebStatus{State: WebEnabled, Port: 2}}},
		{"PORT:7700\nWEB_DISABLED\n", StartInfo{7700, WebStatus{State: WebDisabled}}},
		{"PORT:7700\nWEB_FAILED:0:no free port\n", StartInfo{7700, WebStatus{State: WebFailed, Port: 0, Error: "no free port"}}},
		{"PORT:7700\r\nWEB_FAILED:80:a:b:c\r\n", StartInfo{7700, WebStatus{State: WebFailed, Port: 80, Error: "a:b:c"}}},
	}
	for _, tc := range good {
		got, err := ParseStartup(bufio.NewReader(strings.NewReader(tc.in)))
		if err != nil || got != tc.want {
			t.Errorf("ParseStartup(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	bad := []struct{ in, want string }{
		{"", "before the PORT: line: stdout closed"},
		{"PORT:1", `stdout closed in the middle of line "PORT:1"`},
		{"hello\n", `unexpected line before PORT: "hello"`},
		{"\nPORT:1\n", `unexpected line before PORT: ""`},
		{"port:1\n", `unexpected line before PORT: "port:1"`},
		{"PORT: 1\n", `port " 1" is not a number`},
		{"PORT:+1\n", `port "+1" is not a number`},
		{"PORT:99999999999999999999\n", "is not a number"},
		{"PORT:65536\n", "port 65536 out of range 1-65535"},
		{"PORT:1\n", "after PORT:1, before a WEB line: stdout closed"},
		{"PORT:1\nWEB:0\n", "port 0 out of range 1-65535"},
		{"PORT:1\nWEB:\n", `port "" is not a number`},
		{"PORT:1\nWEB_DISABLED:\n", `got "WEB_DISABLED:"`},
		{"PORT:1\nWEB_FAILED:80\n", "want WEB_FAILED:<port>:<error>"},
		{"PORT:1\nWEB_FAILED:80:\n", "want WEB_FAILED:<port>:<error>"},
		{"PORT:1\nWEB_FAILED:x:oops\n", `port "x" is not a number`},
		{strings.Repeat("a", 5000) + "\n", "line longer than 4096 bytes"},
	}
	for _, tc := range bad {
		_, err := ParseStartup(bufio.NewReaderSize(strings.NewReader(tc.in), maxLineLen))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseStartup(%.40q) error %v; want it to contain %q", tc.in, err, tc.want)
		}
	}
}

func TestParseStartupLeavesTheRest(t *testing.T) {
	t.Parallel()
	r := bufio.NewReader(strings.NewReader("PORT:1\nWEB_DISABLED\nlog line\n"))
	if _, err := ParseStartup(r); err != nil {
		t.Fatal(err)
	}
	if rest, _ := io.ReadAll(r); string(rest) != "log line\n" {
		t.Fatalf("rest %q", rest)
	}
}

func TestWriteStartupRoundTrip(t *testing.T) {
	t.Parallel()
	for _, web := range []WebStatus{
		{State: WebEnabled, Port: 8080},
		{State: WebDisabled},
		{State: WebFailed, Port: 8080, Error: "bind:\naddress in use"},
		{State: WebFailed, Port: 8080},
	} {
		var b bytes.Buffer
		if err := WritePort(&b, 7700); err != nil {
			t.Fatal(err)
		}
		if err := WriteWeb(&b, web); err != nil {
			t.Fatal(err)
		}
		got, err := ParseStartup(bufio.NewReader(&b))
		if err != nil {
			t.Fatalf("%+v: %v", web, err)
		}
		if got.GRPCPort != 7700 || got.Web.State != web.State || got.Web.Port != web.Port || got.Web.Error == "" && web.State == WebFailed {
			t.Fatalf("wrote %+v, read %+v", web, got)
		}
	}
	if err := WriteWeb(io.Discard, WebStatus{State: "bogus"}); err == nil {
		t.Fatal("unknown web state accepted")
	}
}

func FuzzParseStartup(f *testing.F) {
	for _, s := range []string{"PORT:1\nWEB:2\n", "PORT:7700\nWEB_FAILED:80:x\n", "PORT:7700\nWEB_DISABLED\n", "junk\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		info, err := ParseStartup(bufio.NewReaderSize(strings.NewReader(in), maxLineLen))
		if err != nil {
			return
		}
		if info.GRPCPort < 1 || info.GRPCPort > 65535 {
			t.Fatalf("accepted gRPC port %d", info.GRPCPort)
		}
		switch info.Web.State {
		case WebEnabled:
			if info.Web.Port < 1 || info.Web.Port > 65535 {
				t.Fatalf("accepted web port %d", info.Web.Port)
			}
		case WebFailed:
			if info.Web.Error == "" || strings.ContainsAny(info.Web.Error, "\n") {
				t.Fatalf("accepted web error %q", info.Web.Error)
			}
		case WebDisabled:
		default:
			t.Fatalf("web state %q", info.Web.State)
		}
	})
}

// The state file holds the client token: only its owner may read it.
func TestStateFileIsPrivate(t *testing.T) {
	dir := t.TempDir()
	if err := WriteState(dir, State{ClientToken: "secret"}); err != nil {
		t.Fatal(err)
	}
	if err := UpdateState(dir, func(s *State) { s.AgentPID = 7 }); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, StateFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file mode %v, want 0600", fi.Mode().Perm())
	}
	if st, err := ReadState(dir); err != nil || st.ClientToken != "secret" || st.AgentPID != 7 {
		t.Fatalf("state %+v, %v", st, err)
	}
}
