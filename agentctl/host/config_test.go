package host

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaultDBPathIsOutsideTheWorkspace(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	ws := filepath.Join(t.TempDir(), "project")
	a, err := DefaultDBPath(ws)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a, filepath.Join(state, "parapet", "workspaces", "project-")) || strings.HasPrefix(a, ws) {
		t.Fatalf("db path %s", a)
	}
	b, _ := DefaultDBPath(filepath.Join(t.TempDir(), "project"))
	if a == b {
		t.Fatalf("two workspaces named alike share %s", a)
	}
	t.Setenv("XDG_STATE_HOME", "relative/dir") // not absolute: ignored, as the XDG spec says
	t.Setenv("HOME", state)
	if c, _ := DefaultDBPath(ws); !strings.HasPrefix(c, filepath.Join(state, ".local", "state", "parapet")) {
		t.Fatalf("db path without XDG_STATE_HOME %s", c)
	}
}

// The agent and sub-agents get neither the engine's shieldd token nor
// OPENPARALLAX_ variables; what their LLM call needs stays.
func TestChildEnvDropsTheEnginesCredentials(t *testing.T) {
	got := strings.Join(childEnv([]string{"PATH=/bin", "PARAPET_SHIELD_TOKEN=s3cret", "OPENPARALLAX_X=y", "GODEBUG=a=1", "OPENAI_API_KEY=k"}), " ")
	if got != "PATH=/bin OPENAI_API_KEY=k" {
		t.Fatalf("child environment %q", got)
	}
}

// The canary dir is next to the session database, named by the engine's
// pid; a dir a killed engine left is removed by the next one, a live
// engine's is kept. A database inside the workspace puts it in the temp
// dir instead: the canary must be outside the workspace.
func TestCanaryDir(t *testing.T) {
	ws, state := t.TempDir(), t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(state, fmt.Sprintf("parapet-canary-%d-1", dead.Process.Pid))
	live := filepath.Join(state, fmt.Sprintf("parapet-canary-%d-2", os.Getppid()))
	for _, d := range []string{stale, live} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := makeCanaryDir(Config{Workspace: ws, DBPath: filepath.Join(state, "sessions.db")})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != state || !strings.HasPrefix(filepath.Base(dir), fmt.Sprintf("parapet-canary-%d-", os.Getpid())) {
		t.Fatalf("canary dir %s", dir)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("a killed engine's canary dir was kept")
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live engine's canary dir was removed: %v", err)
	}
	inside, err := makeCanaryDir(Config{Workspace: ws, DBPath: filepath.Join(ws, "sessions.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(inside)
	if strings.HasPrefix(inside, ws) || filepath.Dir(inside) != filepath.Clean(os.TempDir()) {
		t.Fatalf("database in the workspace: canary dir %s", inside)
	}
}
