package cmd

// The web server as agentctl start runs it: real manager, engine and
// sandboxed agent processes, the URL found through status, a restart over
// HTTP.

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/agentctl/procman"
	"github.com/parapet-dev/parapet/engine/tools"
	"github.com/parapet-dev/parapet/internal/proctest"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// startManager runs agentctl start with a scripted agent and extra flags,
// stops it at the end of the test, and returns its stderr.
func startManager(t *testing.T, ws string, extra ...string) *proctest.Buffer {
	t.Helper()
	return startManagerScript(t, ws, "- text: hello\n", extra...)
}

// startManagerScript is startManager with the agent's script.
func startManagerScript(t *testing.T, ws, scriptYAML string, extra ...string) *proctest.Buffer {
	t.Helper()
	script := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(script, []byte(scriptYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	return startAgentctl(t, "manager", append([]string{"start", "--workspace", ws, "--provider", "scripted", "--script", script}, extra...)...).Stderr
}

// engineReady waits for an engine other than notEngine with its agent
// connected, and returns its status.
func engineReady(t *testing.T, ws string, notEngine int64) *pb.StatusResponse {
	t.Helper()
	var s *pb.StatusResponse
	proctest.Until(t, "engine and agent", 60*time.Second, func() bool {
		st, ok := procman.Running(filepath.Join(ws, tools.StateDirName))
		if !ok || st.GRPCAddress == "" {
			return false
		}
		var err error
		s, err = engineStatus(t, st.GRPCAddress, st.ClientToken)
		return err == nil && s.GetAgentConnected() && s.GetEnginePid() != notEngine
	})
	return s
}

func TestStartServesTheWebAPI(t *testing.T) {
	ws := t.TempDir()
	startManager(t, ws)
	s := engineReady(t, ws, 0)

	code, out, errOut := runAgentctl(t, "status", "--workspace", ws, "--output", "json")
	var st struct {
		WebURL    string `json:"web_url"`
		WebSignIn string `json:"web_sign_in_url"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || !strings.HasPrefix(st.WebURL, "http://127.0.0.1:") ||
		st.WebSignIn != st.WebURL+"/?token="+stateToken(t, filepath.Join(ws, tools.StateDirName)) {
		t.Fatalf("status: exit %d %q %q", code, out, errOut)
	}

	// Without the token the API tells nothing.
	resp, err := http.Get(st.WebURL + "/api/status")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /api/status without the token: %d", resp.StatusCode)
	}

	// A browser opens the sign-in address: it gets the cookie and the page.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	page, err := browser.Get(st.WebSignIn)
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if page.StatusCode != http.StatusOK || page.Request.URL.String() != st.WebURL+"/" {
		t.Fatalf("sign-in: %d at %s", page.StatusCode, page.Request.URL)
	}

	// The API answers for the same engine.
	resp, err = browser.Get(st.WebURL + "/api/status")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var viaWeb pb.StatusResponse
	if resp.StatusCode != http.StatusOK || protojson.Unmarshal(body, &viaWeb) != nil ||
		viaWeb.GetEnginePid() != s.GetEnginePid() || viaWeb.GetWebUrl() != st.WebURL || !viaWeb.GetAgentConnected() {
		t.Fatalf("GET /api/status: %d %s", resp.StatusCode, body)
	}

	// POST /api/restart as the page sends it: the engine exits 75 and the
	// manager starts a new one, with its own web server.
	req, _ := http.NewRequest("POST", st.WebURL+"/api/restart", nil)
	req.Header.Set("Origin", st.WebURL)
	resp, err = browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /api/restart: %d", resp.StatusCode)
	}
	s2 := engineReady(t, ws, s.GetEnginePid())
	if !strings.HasPrefix(s2.GetWebUrl(), "http://127.0.0.1:") {
		t.Fatalf("restarted engine's web URL %q", s2.GetWebUrl())
	}
	req, _ = http.NewRequest("GET", s2.GetWebUrl()+"/api/status", nil)
	req.Header.Set("Authorization", "Bearer "+stateToken(t, filepath.Join(ws, tools.StateDirName)))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("restarted engine's API: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}

// A web address that cannot be bound is reported (WEB_FAILED) and the
// engine runs on without it; --web-addr off runs none.
func TestStartWithoutTheWebServer(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct{ addr, report string }{
		{busy.Addr().String(), "web=failed"},
		{"off", "web=disabled"},
	} {
		t.Run(c.addr, func(t *testing.T) {
			ws := t.TempDir()
			log := startManager(t, ws, "--web-addr", c.addr)
			if s := engineReady(t, ws, 0); s.GetWebUrl() != "" {
				t.Fatalf("web URL %q", s.GetWebUrl())
			}
			// The manager logged the engine's WEB line once it had it.
			if !strings.Contains(log.String(), c.report) {
				t.Fatalf("manager log lacks %q:\n%s", c.report, log.String())
			}
		})
	}
}

func TestWebAddrMustBeLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:80", "example.com:80", "127.0.0.1", "127.0.0.1:99999"} {
		code, _, errOut := runAgentctl(t, "start", "--workspace", t.TempDir(), "--provider", "scripted", "--script", os.Args[0], "--web-addr", addr)
		if code != exitcode.Usage || !strings.Contains(errOut, "--web-addr") {
			t.Errorf("--web-addr %s: exit %d, %q", addr, code, errOut)
		}
	}
}
