package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
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
	r, err := New(withEnv(testOptions(f.TempDir()), []string{}))
	if err != nil {
		f.Fatal(err)
	}
	defer r.Close()
	names := append(append([]string{}, r.order...), "unknown")
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		name := names[int(which)%len(names)]
		err := validate(r, name, data)
		if name == "unknown" {
			if err == nil {
				t.Fatal("unknown tool validated")
			}
			return
		}
		if err != nil {
			return
		}
		if name == LoadToolsName {
			return // not an action: the engine answers it
		}
		// What runs is what the shield judged: the arguments a call runs
		// are exactly those its payload encodes, and the payload is stable.
		c, err := r.Prepare(name, data)
		if err != nil {
			t.Fatalf("validated but not prepared: %v", err)
		}
		c2, err := r.Prepare(name, c.Payload)
		if err != nil {
			t.Fatalf("canonical payload %s refused: %v", c.Payload, err)
		}
		if !bytes.Equal(c.Payload, c2.Payload) {
			t.Fatalf("canonical payload not stable: %s vs %s", c.Payload, c2.Payload)
		}
		if !reflect.DeepEqual(c.args, c2.args) {
			t.Fatalf("the arguments that run differ from those the payload encodes: %v vs %v", c.args, c2.args)
		}
	})
}

// FuzzResolve: whatever path the model sends, a path that resolves is local
// to the workspace, and whatever os.Root then opens lies inside it, links
// to the outside notwithstanding. And no file tool, given the path as its
// path, pattern or include, shows or changes anything in the state
// directory, however the path spells it or whichever link leads there.
func FuzzResolve(f *testing.F) {
	// The canary's content is in every state file; hiddenName is the name of
	// state files no link in the workspace spells out.
	const canaryName, canaryContent, hiddenName = "canary-name-91c2", "CANARY-CONTENT-7f3a", "hidden-name-5e8b"
	parent := f.TempDir()
	ws := filepath.Join(parent, "ws")
	for _, d := range []string{"ws/sub", "outside", "ws/" + StateDirName + "/d"} {
		if err := os.MkdirAll(filepath.Join(parent, d), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(parent, "outside", "secret"), []byte("s"), 0o644)
	os.WriteFile(filepath.Join(ws, "sub", "in"), []byte("i"), 0o644)
	os.WriteFile(filepath.Join(ws, StateDirName, canaryName), []byte(canaryContent+"\n"), 0o644)
	os.WriteFile(filepath.Join(ws, StateDirName, "d", canaryName), []byte(canaryContent+"\n"), 0o644)
	os.WriteFile(filepath.Join(ws, StateDirName, hiddenName), []byte(canaryContent+"\n"), 0o644)
	os.WriteFile(filepath.Join(ws, StateDirName, "d", hiddenName), []byte(canaryContent+"\n"), 0o644)
	os.Symlink("../outside", filepath.Join(ws, "out"))
	os.Symlink("../in", filepath.Join(ws, "sub", "up"))
	os.Symlink(filepath.Join(parent, "outside", "secret"), filepath.Join(ws, "abs"))
	os.Symlink(StateDirName, filepath.Join(ws, "p"))
	os.Symlink(StateDirName+"/"+canaryName, filepath.Join(ws, "c"))
	os.Symlink("../"+StateDirName+"/d", filepath.Join(ws, "sub", "st"))
	os.Symlink(".", filepath.Join(ws, "me"))
	os.Symlink(StateDirName+"/d/new", filepath.Join(ws, "dangling"))
	r, err := New(withEnv(testOptions(ws), []string{}))
	if err != nil {
		f.Fatal(err)
	}
	defer r.Close()
	stateDir := filepath.Join(r.Workspace(), StateDirName)
	stateBefore := snapshotFuzz(f, stateDir)
	wsBefore := snapshotFuzz(f, r.Workspace())
	for _, s := range []string{"sub/in", "out/secret", "../outside/secret", "sub/../../outside", "abs",
		ws + "/sub/in", ws + "/../outside/secret", "/etc/passwd", "~root", "./sub//in", "sub/up/../in", ".", "a\x00b", "",
		".parapet/" + canaryName, ".PARAPET/d/" + canaryName, "./.parapet/../.parapet/d", ws + "/.parapet/" + canaryName,
		"p/" + canaryName, "p/d/x", "c", "sub/st/" + canaryName, "sub/st/x/y", "me/.parapet", "me/p/d", "dangling/x/y",
		"sub/.parapet/x", ".parapet/" + hiddenName, "sub/st/" + hiddenName, "**", "*/*", ".p*/**", "{.parapet,sub}/**", "me/**",
	} {
		f.Add(s)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, p string) {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"read_file", map[string]any{"path": p}},
			{"list_directory", map[string]any{"path": p, "recursive": true}},
			{"glob_files", map[string]any{"pattern": "**", "path": p}},
			{"glob_files", map[string]any{"pattern": p}},
			{"glob_files", map[string]any{"pattern": p, "path": "me"}},
			{"search_files", map[string]any{"pattern": "CANARY", "path": p}},
			{"search_files", map[string]any{"pattern": "CANARY", "include": p}},
			{"edit_file", map[string]any{"path": p, "old_string": canaryContent, "new_string": "forged"}},
			{"write_file", map[string]any{"path": p, "content": "forged"}},
		} {
			data, err := json.Marshal(c.args)
			if err != nil {
				t.Fatal(err)
			}
			res := r.Execute(ctx, c.tool, data)
			if strings.Contains(res.Output, canaryContent) ||
				(strings.Contains(res.Output, hiddenName) && !strings.Contains(p, hiddenName)) {
				t.Fatalf("%s %s reached the state directory: %s", c.tool, data, res.Output)
			}
		}
		if after := snapshotFuzz(t, stateDir); !maps.Equal(stateBefore, after) {
			t.Fatalf("path %q changed the state directory:\nbefore %v\nafter  %v", p, stateBefore, after)
		}
		removeNew(t, r.Workspace(), wsBefore) // keeps the walks of the next inputs small

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

// removeNew removes what was created under dir since the snapshot before.
func removeNew(tb testing.TB, dir string, before map[string]string) {
	tb.Helper()
	var created []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if _, ok := before[p]; !ok && err == nil {
			created = append(created, p)
			if d.IsDir() {
				return fs.SkipDir
			}
		}
		return nil
	})
	for _, p := range created {
		if err := os.RemoveAll(p); err != nil {
			tb.Fatal(err)
		}
	}
}

// snapshotFuzz records the names and contents under dir.
func snapshotFuzz(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		snap[p] = d.Type().String()
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			snap[p] += string(b)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return snap
}

func slicesHasDotDot(rel string) bool {
	for c := range strings.SplitSeq(filepath.ToSlash(rel), "/") {
		if c == ".." {
			return true
		}
	}
	return false
}
