package host

import (
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
