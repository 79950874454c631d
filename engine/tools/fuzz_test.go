package tools

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzValidate: arbitrary argument documents never panic the validator, and
// an accepted document's canonical payload is accepted again unchanged, so
// the shield and the executor always see the same values.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{
		`{"path":"a.go","offset":2,"limit":10}`,
		`{"command":"ls -la","timeout_seconds":5.0}`,
		`{"method":"post","url":"https://x/","headers":{"A":"b"},"body":"\u0000"}`,
		`{"paths":["a","b"]}`, `{"groups":["files"]}`, `{"path":"a","path":"b"}`,
		`{"old_string":"x","new_string":"y","path":"p","replace_all":true}`,
		``, `null`, `{"a":`, `{"offset":1e308}`, `{"path":"\ud800"}`,
	} {
		for i := range 4 {
			f.Add(uint8(i*4+1), []byte(s))
		}
	}
	r, err := New(Options{Workspace: f.TempDir(), Env: []string{}})
	if err != nil {
		f.Fatal(err)
	}
	defer r.Close()
	names := append(append([]string{}, r.order...), "unknown")
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		name := names[int(which)%len(names)]
		err := r.Validate(name, data)
		if name == "unknown" {
			if err == nil {
				t.Fatal("unknown tool validated")
			}
			return
		}
		if err != nil {
			return
		}
		a, err := parseArgs(r.tools[name].props, data)
		if err != nil {
			t.Fatalf("Validate accepted what parseArgs refuses: %v", err)
		}
		payload, err := canonicalJSON(a)
		if err != nil {
			t.Fatalf("canonical encoding: %v", err)
		}
		a2, err := parseArgs(r.tools[name].props, payload)
		if err != nil {
			t.Fatalf("canonical payload %s refused: %v", payload, err)
		}
		payload2, _ := canonicalJSON(a2)
		if !bytes.Equal(payload, payload2) {
			t.Fatalf("canonical payload not stable: %s vs %s", payload, payload2)
		}
	})
}

// FuzzResolve: whatever path the model sends, a path that resolves is local
// to the workspace, and whatever os.Root then opens lies inside it, links
// to the outside notwithstanding.
func FuzzResolve(f *testing.F) {
	parent := f.TempDir()
	ws := filepath.Join(parent, "ws")
	for _, d := range []string{"ws/sub", "outside"} {
		if err := os.MkdirAll(filepath.Join(parent, d), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(parent, "outside", "secret"), []byte("s"), 0o644)
	os.WriteFile(filepath.Join(ws, "sub", "in"), []byte("i"), 0o644)
	os.Symlink("../outside", filepath.Join(ws, "out"))
	os.Symlink("../in", filepath.Join(ws, "sub", "up"))
	os.Symlink(filepath.Join(parent, "outside", "secret"), filepath.Join(ws, "abs"))
	r, err := New(Options{Workspace: ws, Env: []string{}})
	if err != nil {
		f.Fatal(err)
	}
	defer r.Close()
	for _, s := range []string{"sub/in", "out/secret", "../outside/secret", "sub/../../outside", "abs",
		ws + "/sub/in", ws + "/../outside/secret", "/etc/passwd", "~root", "./sub//in", "sub/up/../in", ".", "a\x00b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := r.resolve(p)
		if err != nil {
			return
		}
		if !filepath.IsLocal(rel) && rel != "." {
			t.Fatalf("resolve(%q) = %q, not local", p, rel)
		}
		if slicesHasDotDot(rel) {
			t.Fatalf("resolve(%q) = %q keeps ..", p, rel)
		}
		file, err := r.root.Open(rel)
		if err != nil {
			return
		}
		defer file.Close()
		real, err := fdPath(file)
		if err != nil {
			t.Skip("no /proc")
		}
		if _, ok := within(r.wsReal, real); !ok {
			t.Fatalf("resolve(%q) opened %s, outside the workspace", p, real)
		}
	})
}

func slicesHasDotDot(rel string) bool {
	for c := range strings.SplitSeq(filepath.ToSlash(rel), "/") {
		if c == ".." {
			return true
		}
	}
	return false
}
