package tools

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const stateCanary = "STATE-CANARY-4f1d" // in every file of the state directory

// plantState fills the workspace's state directory (named dir, so a case
// variant can stand in for a case-insensitive filesystem) with what the
// process manager keeps there, and links into it from the workspace.
func plantState(t *testing.T, ws, dir string) {
	t.Helper()
	writeFile(t, filepath.Join(ws, dir, "state.json"), `{"port":7777,"pid":42,"canary":"`+stateCanary+`"}`+"\n")
	writeFile(t, filepath.Join(ws, dir, "instance.lock"), stateCanary+"\n")
	writeFile(t, filepath.Join(ws, dir, "logs", "manager.log"), "started "+stateCanary+"\n")
	writeFile(t, filepath.Join(ws, "sub", "ok.txt"), "ordinary\n")
	for link, target := range map[string]string{
		"p":        dir,                      // a directory link to it
		"s":        dir + "/state.json",      // a file link into it
		"sub/up":   "../" + dir,              // from a subdirectory
		"sub/deep": "../p",                   // a chain of links
		"me":       ".",                      // the root under another name
		"logs":     dir + "/logs",            // a link to a directory below it
		"q":        dir + "/not-yet/created", // dangling, into it
	} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshot records every name under dir with its contents (or link target).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			snap[rel] = "-> " + target
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			snap[rel] = string(b)
		default:
			snap[rel] = d.Type().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// fileToolCalls are the calls of every file tool on one path.
func fileToolCalls(p string) []struct {
	tool string
	args map[string]any
} {
	return []struct {
		tool string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": p}},
		{"write_file", map[string]any{"path": p, "content": "forged " + p}},
		{"edit_file", map[string]any{"path": p, "old_string": stateCanary, "new_string": "forged"}},
		{"list_directory", map[string]any{"path": p}},
		{"list_directory", map[string]any{"path": p, "recursive": true}},
		{"glob_files", map[string]any{"pattern": "**", "path": p}},
		{"search_files", map[string]any{"pattern": "CANARY", "path": p}},
	}
}

// TestStateDirRefused: no file tool reads, writes or lists the state
// directory, whatever the path looks like and whatever link leads there.
func TestStateDirRefused(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, nil)
	plantState(t, ws, StateDirName)
	before := snapshot(t, ws)

	paths := []string{
		".parapet", ".parapet/", ".parapet/state.json", ".parapet/instance.lock", ".parapet/logs",
		".parapet/logs/manager.log", ".parapet/new.json", ".parapet/newdir/new.json",
		".PARAPET/state.json", ".Parapet", ".paraPET/logs/manager.log",
		"./.parapet/../.parapet/state.json", "./.parapet/../.parapet", "sub/../.parapet/state.json",
		filepath.Join(ws, ".parapet", "state.json"), filepath.Join(ws, ".parapet"), ws + "/./.parapet/../.parapet/instance.lock",
		"p", "p/", "p/state.json", "p/instance.lock", "p/new.json", "p/newdir/new.json", "p/logs/manager.log",
		"s", "sub/up", "sub/up/state.json", "sub/deep/state.json", "sub/deep/new.json",
		"me/.parapet/state.json", "me/p/state.json", "me/s", "logs", "logs/manager.log", "logs/new.log",
		filepath.Join(ws, "p", "state.json"), filepath.Join(ws, "s"),
	}
	for _, p := range paths {
		t.Run(p, func(t *testing.T) {
			for _, c := range fileToolCalls(p) {
				res := call(t, r, c.tool, c.args)
				wantErr(t, res, "Parapet's own state", "not accessible to tools")
				if strings.Contains(res.Output, stateCanary) {
					t.Fatalf("%s %v leaked the state: %s", c.tool, c.args, res.Output)
				}
			}
		})
	}
	if after := snapshot(t, ws); !maps.Equal(before, after) {
		t.Fatalf("the workspace changed:\nbefore %v\nafter  %v", before, after)
	}
}

// TestStateDirDanglingLink: a dangling link into the state directory can't
// be used to create a file or directories there.
func TestStateDirDanglingLink(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, nil)
	plantState(t, ws, StateDirName)
	before := snapshot(t, filepath.Join(ws, StateDirName))
	var results []Result
	for _, p := range []string{"q", "q/x", "q/deeper/x", "sub/deep/new/x"} {
		results = append(results, call(t, r, "write_file", map[string]any{"path": p, "content": "forged"}))
	}
	if after := snapshot(t, filepath.Join(ws, StateDirName)); !maps.Equal(before, after) {
		t.Fatalf("the state directory changed:\nbefore %v\nafter  %v", before, after)
	}
	wantErr(t, results[0], "does not exist")
	wantErr(t, results[1])
	wantErr(t, results[2], "symbolic link to nothing")
	wantErr(t, results[3], "Parapet's own state")
}

// TestStateDescriptorChecks: the checks on open descriptors refuse the
// state directory on their own. They are what closes the gap between the
// path check and the open, should a link be swapped in meanwhile.
func TestStateDescriptorChecks(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, nil)
	plantState(t, ws, StateDirName)
	for _, p := range []string{"s", "p/state.json", "sub/up/instance.lock", "logs/manager.log"} {
		if _, _, err := r.openRegular(p, p, os.O_RDONLY); !errors.Is(err, errInState) {
			t.Fatalf("openRegular(%q): %v", p, err)
		}
		f, err := r.root.OpenFile(p, os.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.checkWriteTarget(p, p, f); !errors.Is(err, errInState) {
			t.Fatalf("checkWriteTarget(%q): %v", p, err)
		}
		f.Close()
	}
	for _, p := range []string{"p", "sub/up", "logs", "sub/deep"} {
		sub, err := r.root.OpenRoot(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.subRootReal(p, p, sub); !errors.Is(err, errInState) {
			t.Fatalf("subRootReal(%q): %v", p, err)
		}
		sub.Close()
	}
	if got := readFile(t, filepath.Join(ws, StateDirName, "state.json")); !strings.Contains(got, stateCanary) {
		t.Fatalf("state.json changed: %q", got)
	}
}

// TestStateDirCaseVariant: on a case-insensitive filesystem the directory
// may be spelled differently on disk; it is refused and skipped all the same.
func TestStateDirCaseVariant(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, nil)
	plantState(t, ws, ".PaRaPeT")
	for _, p := range []string{".parapet/state.json", ".PaRaPeT/state.json", "p/state.json", "s", "sub/up"} {
		for _, c := range fileToolCalls(p) {
			wantErr(t, call(t, r, c.tool, c.args), "Parapet's own state")
		}
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"list_directory", map[string]any{"recursive": true}},
		{"glob_files", map[string]any{"pattern": "**"}},
		{"search_files", map[string]any{"pattern": "."}},
	} {
		res := wantOK(t, call(t, r, c.tool, c.args))
		for line := range strings.SplitSeq(res.Output, "\n") {
			if strings.HasPrefix(strings.ToLower(line), ".parapet") || strings.Contains(line, stateCanary) {
				t.Fatalf("%s shows the state directory: %s", c.tool, res.Output)
			}
		}
	}
}

// TestStateDirWalksSkipIt: listing, globbing and searching the workspace
// (under any name for its root) pass over the state directory silently.
func TestStateDirWalksSkipIt(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, nil)
	plantState(t, ws, StateDirName)

	noState := func(what, out string) {
		t.Helper()
		for line := range strings.SplitSeq(out, "\n") {
			if strings.Contains(line, stateCanary) || strings.HasPrefix(line, ".parapet") || strings.HasPrefix(line, "me/.parapet") {
				t.Fatalf("%s shows the state directory: %q in\n%s", what, line, out)
			}
		}
	}
	for _, dir := range []string{"", ".", "me", ws, "sub/.."} {
		res := wantOK(t, call(t, r, "list_directory", map[string]any{"path": dir}))
		noState("list "+dir, res.Output)
		if !strings.Contains(res.Output, "sub/") || !strings.Contains(res.Output, "p -> .parapet") {
			t.Fatalf("list %q lost ordinary entries: %s", dir, res.Output)
		}
		res = wantOK(t, call(t, r, "list_directory", map[string]any{"path": dir, "recursive": true}))
		noState("recursive list "+dir, res.Output)
		if !strings.Contains(res.Output, "sub/ok.txt (9 bytes)") {
			t.Fatalf("recursive list %q lost ordinary entries: %s", dir, res.Output)
		}
		for _, pattern := range []string{"*", "**", "**/*", "**/*.json", ".*", "{.parapet,sub}/*", "*/state.json", "[.]parapet/*", "\\.parapet/*"} {
			res = wantOK(t, call(t, r, "glob_files", map[string]any{"pattern": pattern, "path": dir}))
			noState("glob "+pattern+" in "+dir, res.Output)
		}
		res = wantOK(t, call(t, r, "search_files", map[string]any{"pattern": ".", "path": dir}))
		noState("search in "+dir, res.Output)
		if !strings.Contains(res.Output, "sub/ok.txt:1: ordinary") {
			t.Fatalf("search in %q lost ordinary files: %s", dir, res.Output)
		}
		res = wantOK(t, call(t, r, "search_files", map[string]any{"pattern": "CANARY", "path": dir, "include": "*.json"}))
		if !strings.HasPrefix(res.Output, "no matches") || strings.Contains(res.Output, "skipped") {
			t.Fatalf("search in %q: %s", dir, res.Output)
		}
	}
	// Through the alias, glob's walk starts at me/, whose real path is the root.
	for _, pattern := range []string{"me/*", "me/**"} {
		res := wantOK(t, call(t, r, "glob_files", map[string]any{"pattern": pattern}))
		noState("glob "+pattern, res.Output)
		if !strings.Contains(res.Output, "me/sub/") {
			t.Fatalf("glob %s: %s", pattern, res.Output)
		}
	}
}

// TestStateDirGlobPatterns: a pattern that names the state directory is
// refused with a reason, not answered with an empty result.
func TestStateDirGlobPatterns(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, nil)
	plantState(t, ws, StateDirName)
	for _, c := range []struct{ pattern, path string }{
		{".parapet", ""}, {".parapet/*", ""}, {".parapet/**", ""}, {".PARAPET/*.json", ""}, {".parapet/logs/*", ""},
		{"./.parapet/*", ""}, {".parapet/*", "."}, {".parapet/*", "me"}, {".parapet", ws},
		{"me/.parapet/*", ""}, {"p/*", ""}, {"p/**", ""}, {"logs/*", ""}, {"sub/up/*", ""}, {"up/*", "sub"},
	} {
		res := call(t, r, "glob_files", map[string]any{"pattern": c.pattern, "path": c.path})
		wantErr(t, res, "Parapet's own state", c.pattern)
		if strings.Contains(res.Output, stateCanary) || strings.Contains(res.Output, "state.json") {
			t.Fatalf("glob %q leaked: %s", c.pattern, res.Output)
		}
	}
	wantErr(t, call(t, r, "search_files", map[string]any{"pattern": "x", "include": ".parapet/*"}), "Parapet's own state")
	wantErr(t, call(t, r, "search_files", map[string]any{"pattern": "x", "path": "me", "include": ".PARAPET/**"}), "Parapet's own state")
}

// TestNestedParapetIsOrdinary: only the workspace's top-level .parapet is
// Parapet's; one in a subdirectory is an ordinary directory.
func TestNestedParapetIsOrdinary(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, nil)
	plantState(t, ws, StateDirName)
	writeFile(t, filepath.Join(ws, "sub", ".parapet", "state.json"), "nested\n")

	wantOK(t, call(t, r, "write_file", map[string]any{"path": "sub/.parapet/new.txt", "content": "hello nested\n"}))
	wantOK(t, call(t, r, "write_file", map[string]any{"path": "sub/.PARAPET/made/x.txt", "content": "x\n"}))
	wantOK(t, call(t, r, "edit_file", map[string]any{"path": "sub/.parapet/new.txt", "old_string": "hello", "new_string": "hi"}))
	if res := wantOK(t, call(t, r, "read_file", map[string]any{"path": "sub/.parapet/new.txt"})); res.Output != "hi nested\n" {
		t.Fatalf("read: %q", res.Output)
	}
	if res := wantOK(t, call(t, r, "list_directory", map[string]any{"path": "sub/.parapet"})); !strings.Contains(res.Output, "sub/.parapet/state.json") {
		t.Fatalf("list: %q", res.Output)
	}
	res := wantOK(t, call(t, r, "list_directory", map[string]any{"recursive": true}))
	if !strings.Contains(res.Output, "sub/.parapet/state.json") || strings.Contains(res.Output, stateCanary) {
		t.Fatalf("recursive list: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "glob_files", map[string]any{"pattern": "**/.parapet/*.json"}))
	if res.Output != "sub/.parapet/state.json" {
		t.Fatalf("glob: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "glob_files", map[string]any{"pattern": ".parapet/*", "path": "sub"}))
	if !strings.Contains(res.Output, "sub/.parapet/state.json") {
		t.Fatalf("glob under sub: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "search_files", map[string]any{"pattern": "nested"}))
	if res.Output != "sub/.parapet/new.txt:1: hi nested\nsub/.parapet/state.json:1: nested" {
		t.Fatalf("search: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "search_files", map[string]any{"pattern": "nested", "path": "sub", "include": ".parapet/*.json"}))
	if res.Output != "sub/.parapet/state.json:1: nested" {
		t.Fatalf("search include: %q", res.Output)
	}
	// A file merely named like it, or a name that only starts with it, is ordinary too.
	wantOK(t, call(t, r, "write_file", map[string]any{"path": ".parapet-notes/a.txt", "content": "a"}))
	wantOK(t, call(t, r, "write_file", map[string]any{"path": "sub/x.parapet", "content": "a"}))
	wantOK(t, call(t, r, "read_file", map[string]any{"path": ".parapet-notes/a.txt"}))
}

// TestStateDirAbsent: before the manager has made its directory, the tools
// can't create it, so nobody can plant state for the manager to find.
func TestStateDirAbsent(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, nil)
	for _, p := range []string{".parapet", ".parapet/state.json", ".Parapet/instance.lock", ".parapet/sub/manager.log", filepath.Join(ws, ".parapet", "state.json")} {
		for _, c := range fileToolCalls(p) {
			wantErr(t, call(t, r, c.tool, c.args), "Parapet's own state")
		}
	}
	if entries, err := os.ReadDir(ws); err != nil || len(entries) != 0 {
		t.Fatalf("the workspace is no longer empty: %v %v", entries, err)
	}
}
