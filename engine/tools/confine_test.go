package tools

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// confinedRegistry is a registry whose commands run in the executor; the
// test is skipped where the host cannot confine.
func confinedRegistry(t *testing.T, mutate func(*Options)) (*Registry, string) {
	t.Helper()
	r, ws := newTestRegistry(t, mutate)
	if !r.Confined() {
		t.Skip("no confined executor on this host")
	}
	return r, ws
}

func execWith(t *testing.T, r *Registry, cmd string, g Grant) Result {
	t.Helper()
	return r.ExecuteWith(t.Context(), "execute_command", []byte(`{"command":`+strconv.Quote(cmd)+`}`), g)
}

func TestConfinedCommandFilesystem(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	db := filepath.Join(parent, "state", "sessions.db")
	os.MkdirAll(filepath.Dir(db), 0o700)
	writeFile(t, db, "SECRET-DB")
	r, ws := confinedRegistry(t, func(o *Options) { o.Hidden = []string{db}; o.UserHome = parent })
	os.MkdirAll(filepath.Join(ws, ".parapet"), 0o700)
	writeFile(t, filepath.Join(ws, ".parapet", "state.json"), "SECRET-STATE")
	writeFile(t, filepath.Join(ws, "in.txt"), "inside")

	wantOK(t, execWith(t, r, "cat in.txt && echo new > new.txt && echo t > $TMPDIR/x && cat $TMPDIR/x", Grant{}))
	for _, c := range []string{"cat .parapet/state.json", "cat " + db, "echo x > " + filepath.Join(parent, "planted"), "echo x > .parapet/f"} {
		res := execWith(t, r, c, Grant{})
		if !res.IsError || strings.Contains(res.Output, "SECRET") {
			t.Errorf("%s: %s", c, res.Output)
		}
	}
	// A grant of the directory holding the database still hides it.
	res := execWith(t, r, "ls "+filepath.Dir(db)+"; cat "+db, Grant{ReadPaths: []string{"~/state"}})
	if !res.IsError || strings.Contains(res.Output, "SECRET") {
		t.Errorf("granted dir: %s", res.Output)
	}
	// Narrowed write scope: the workspace is read-only, the temp dir is not.
	res = execWith(t, r, "echo t > $TMPDIR/y && cat in.txt && echo x > ro.txt", Grant{ReadOnlyWorkspace: true})
	if !res.IsError || !strings.Contains(res.Output, "inside") || exists(filepath.Join(ws, "ro.txt")) {
		t.Errorf("read-only workspace: %s", res.Output)
	}
	if res := execWith(t, r, "true", Grant{ReadPaths: []string{"relative"}}); !res.IsError {
		t.Errorf("a relative granted path was accepted")
	}
}

func TestConfinedCommandNetworkGrant(t *testing.T) {
	t.Parallel()
	r, _ := confinedRegistry(t, nil)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	connect := "exec 3<>/dev/tcp/127.0.0.1/" + strconv.Itoa(port)
	if res := execWith(t, r, connect, Grant{}); !res.IsError {
		t.Errorf("connected without a grant: %s", res.Output)
	}
	wantOK(t, execWith(t, r, connect, Grant{ConnectTCP: []uint16{uint16(port)}}))
	if res := execWith(t, r, connect, Grant{ConnectTCP: []uint16{uint16(port + 1)}}); !res.IsError {
		t.Errorf("connected with a grant for another port: %s", res.Output)
	}
}

func TestConfinedCommandTimeoutAndBackground(t *testing.T) {
	t.Parallel()
	r, ws := confinedRegistry(t, func(o *Options) { o.MaxCommandTimeout = time.Second })
	res := execWith(t, r, "setsid sh -c 'sleep 1.5; touch late1' >/dev/null 2>&1 & sleep 300", Grant{})
	wantErr(t, res, "timed out after")
	wantOK(t, execWith(t, r, "nohup sh -c 'sleep 1.5; touch late2' >/dev/null 2>&1 & disown; echo ok", Grant{}))
	// Control: the same command unconfined leaves a writer behind.
	u, uws := newTestRegistry(t, unconfined)
	wantOK(t, call(t, u, "execute_command", map[string]any{"command": "setsid sh -c 'sleep 1.5; touch late3' >/dev/null 2>&1 & sleep 0.3"}))
	time.Sleep(2500 * time.Millisecond)
	if !exists(filepath.Join(uws, "late3")) {
		t.Fatal("control: the detached child did not write unconfined")
	}
	for _, f := range []string{"late1", "late2"} {
		if exists(filepath.Join(ws, f)) {
			t.Errorf("%s was written after the call ended", f)
		}
	}
}

func TestCommandsRefusedWithoutExecutor(t *testing.T) {
	t.Parallel()
	r, _ := newTestRegistry(t, func(o *Options) { o.Executor, o.AllowUnconfined = nil, false })
	wantErr(t, call(t, r, "execute_command", map[string]any{"command": "true"}), "--allow-unconfined")
	wantErr(t, call(t, r, "git_status", map[string]any{}), "--allow-unconfined")
}

func TestConfinedGit(t *testing.T) {
	t.Parallel()
	if lookPath("git", defaultPath) == "" {
		t.Skip("no git")
	}
	r, _ := confinedRegistry(t, nil)
	wantOK(t, call(t, r, "execute_command", map[string]any{"command": "git init -q . && echo a > a.txt"}))
	wantOK(t, call(t, r, "git_add", map[string]any{"paths": []string{"a.txt"}}))
	wantOK(t, call(t, r, "git_commit", map[string]any{"message": "first"}))
	res := wantOK(t, call(t, r, "git_log", map[string]any{}))
	if !strings.Contains(res.Output, "first") {
		t.Fatalf("log: %s", res.Output)
	}
}
