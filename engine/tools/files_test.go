package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadFile(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, nil)
	var lines []string
	for i := 1; i <= 10; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	writeFile(t, filepath.Join(ws, "src", "ten.txt"), strings.Join(lines, "\n")+"\n")
	writeFile(t, filepath.Join(ws, "empty.txt"), "")
	writeFile(t, filepath.Join(ws, "bin.dat"), "abc\x00def")

	res := wantOK(t, call(t, r, "read_file", map[string]any{"path": "src/ten.txt"}))
	if res.Output != strings.Join(lines, "\n")+"\n" || res.Truncated {
		t.Fatalf("whole file: %q (truncated %v)", res.Output, res.Truncated)
	}
	res = wantOK(t, call(t, r, "read_file", map[string]any{"path": filepath.Join(ws, "src/ten.txt"), "offset": 3, "limit": 2}))
	if !strings.HasPrefix(res.Output, "line 3\nline 4\n\n[... truncated: ") || !strings.Contains(res.Output, "continue with offset=5]") || !res.Truncated {
		t.Fatalf("window: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "read_file", map[string]any{"path": "src/ten.txt", "offset": 10, "limit": 5}))
	if res.Output != "line 10\n" || res.Truncated {
		t.Fatalf("last line: %q", res.Output)
	}
	wantErr(t, call(t, r, "read_file", map[string]any{"path": "src/ten.txt", "offset": 11}), "past the end", "10 lines")
	wantOK(t, call(t, r, "read_file", map[string]any{"path": "empty.txt"}))
	wantErr(t, call(t, r, "read_file", map[string]any{"path": "bin.dat"}), "binary")
	wantErr(t, call(t, r, "read_file", map[string]any{"path": "src"}), "is a directory", "list_directory")
	wantErr(t, call(t, r, "read_file", map[string]any{"path": "missing.txt"}), `"missing.txt" does not exist`)
}

func TestReadFileOutputLimit(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, func(o *Options) { o.OutputLimit = 1024 })
	writeFile(t, filepath.Join(ws, "long.txt"), strings.Repeat("0123456789\n", 500))
	writeFile(t, filepath.Join(ws, "oneline.txt"), strings.Repeat("x", 5000))

	res := wantOK(t, call(t, r, "read_file", map[string]any{"path": "long.txt"}))
	if !res.Truncated || !strings.Contains(res.Output, "[... truncated: ") || len(res.Output) > 1024+200 {
		t.Fatalf("long file: truncated=%v len=%d tail=%q", res.Truncated, len(res.Output), res.Output[max(0, len(res.Output)-120):])
	}
	res = wantOK(t, call(t, r, "read_file", map[string]any{"path": "oneline.txt"}))
	if !strings.Contains(res.Output, "[... truncated: 3976 more bytes; line 1 alone is longer") {
		t.Fatalf("one long line: %q", res.Output[1000:])
	}
}

func TestReadFileRefusesSpecialFiles(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, nil)
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// A blocking open of a FIFO without writer would hang; this must return.
	wantErr(t, call(t, r, "read_file", map[string]any{"path": "pipe"}), "named pipe")
	wantErr(t, call(t, r, "write_file", map[string]any{"path": "pipe", "content": "x"}), "pipe")
	wantErr(t, call(t, r, "edit_file", map[string]any{"path": "pipe", "old_string": "a", "new_string": "b"}), "named pipe")
	wantErr(t, call(t, r, "read_file", map[string]any{"path": "/dev/null"}), "outside the workspace")
}

// TestConfinement feeds every file tool paths that leave the workspace.
func TestConfinement(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, nil)
	parent := filepath.Dir(ws)
	secret := filepath.Join(parent, "secret.txt")
	writeFile(t, secret, "TOP SECRET\n")
	if err := os.Mkdir(filepath.Join(parent, "outdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(parent, "outdir", "o.txt"), "TOP SECRET\n")
	for name, target := range map[string]string{
		"rel-link":    "../secret.txt",
		"abs-link":    secret,
		"dir-link":    "../outdir",
		"abs-in-link": filepath.Join(ws, "inside.txt"), // absolute links are refused even inside
	} {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(ws, "inside.txt"), "fine\n")

	paths := map[string]string{
		"../secret.txt":                       "leaves the workspace",
		"a/../../secret.txt":                  "leaves the workspace",
		secret:                                "outside the workspace",
		filepath.Join(ws, "..", "secret.txt"): "outside the workspace",
		"~/secret.txt":                        "home directory",
		"rel-link":                            "resolves outside the workspace",
		"abs-link":                            "resolves outside the workspace",
		"dir-link/o.txt":                      "resolves outside the workspace",
		"abs-in-link":                         "resolves outside the workspace",
	}
	for p, want := range paths {
		t.Run(p, func(t *testing.T) {
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{"read_file", map[string]any{"path": p}},
				{"write_file", map[string]any{"path": p, "content": "pwned"}},
				{"edit_file", map[string]any{"path": p, "old_string": "TOP", "new_string": "pwned"}},
				{"search_files", map[string]any{"pattern": "SECRET", "path": p}},
			} {
				res := call(t, r, c.tool, c.args)
				wantErr(t, res, want)
				if strings.Contains(res.Output, "TOP SECRET") {
					t.Fatalf("%s leaked the file: %s", c.tool, res.Output)
				}
			}
		})
	}
	for _, d := range []string{"..", "dir-link", parent, "~"} {
		wantErr(t, call(t, r, "list_directory", map[string]any{"path": d}))
		wantErr(t, call(t, r, "glob_files", map[string]any{"pattern": "*", "path": d}))
	}
	wantErr(t, call(t, r, "glob_files", map[string]any{"pattern": "../*"}), "contains '..'")
	wantErr(t, call(t, r, "glob_files", map[string]any{"pattern": "/etc/*"}), "absolute")
	if got := readFile(t, secret); got != "TOP SECRET\n" {
		t.Fatalf("outside file changed: %q", got)
	}
	if got := readFile(t, filepath.Join(parent, "outdir", "o.txt")); got != "TOP SECRET\n" {
		t.Fatalf("outside file changed: %q", got)
	}
	if exists(filepath.Join(parent, "pwned")) {
		t.Fatal("something was written outside")
	}
	// Walks don't follow the links out either.
	res := wantOK(t, call(t, r, "search_files", map[string]any{"pattern": "SECRET"}))
	if strings.Contains(res.Output, "TOP SECRET") {
		t.Fatalf("search followed a link out: %s", res.Output)
	}
	res = wantOK(t, call(t, r, "glob_files", map[string]any{"pattern": "**/*.txt"}))
	if strings.Contains(res.Output, "o.txt") || !strings.Contains(res.Output, "inside.txt") {
		t.Fatalf("glob: %s", res.Output)
	}
	// An absolute path inside the workspace is fine; so is a relative link inside.
	if err := os.Symlink("inside.txt", filepath.Join(ws, "good-link")); err != nil {
		t.Fatal(err)
	}
	wantOK(t, call(t, r, "read_file", map[string]any{"path": filepath.Join(ws, "inside.txt")}))
	wantOK(t, call(t, r, "read_file", map[string]any{"path": "good-link"}))

	// A hard link ties a workspace name to the outside file: no writes through it.
	if err := os.Link(secret, filepath.Join(ws, "hard")); err != nil {
		t.Skipf("link: %v", err)
	}
	wantErr(t, call(t, r, "write_file", map[string]any{"path": "hard", "content": "pwned"}), "hard links")
	wantErr(t, call(t, r, "edit_file", map[string]any{"path": "hard", "old_string": "TOP", "new_string": "pwned"}), "hard links")
	if got := readFile(t, secret); got != "TOP SECRET\n" {
		t.Fatalf("outside file changed through a hard link: %q", got)
	}
}

func TestWriteFile(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, func(o *Options) { o.MaxFileBytes = 100 })
	res := wantOK(t, call(t, r, "write_file", map[string]any{"path": "a/b/c.txt", "content": "hello\n"}))
	if !strings.Contains(res.Output, "created a/b/c.txt") || readFile(t, filepath.Join(ws, "a/b/c.txt")) != "hello\n" {
		t.Fatalf("create: %s", res.Output)
	}
	res = wantOK(t, call(t, r, "write_file", map[string]any{"path": "a/b/c.txt", "content": "hi"}))
	if !strings.Contains(res.Output, "previously 6") || readFile(t, filepath.Join(ws, "a/b/c.txt")) != "hi" {
		t.Fatalf("overwrite: %s", res.Output)
	}
	wantErr(t, call(t, r, "write_file", map[string]any{"path": "big", "content": strings.Repeat("x", 101)}), "101 bytes", "100 allowed")
	wantErr(t, call(t, r, "write_file", map[string]any{"path": "a/b", "content": "x"}), "is a directory")
	wantErr(t, call(t, r, "write_file", map[string]any{"path": "a/b/c.txt/d", "content": "x"}), "not a directory")
	wantErr(t, call(t, r, "write_file", map[string]any{"path": ".", "content": "x"}), "workspace root")
	if exists(filepath.Join(ws, "big")) {
		t.Fatal("an oversized write left a file")
	}
}

// TestWriteRefusesGit: the git tools run unsandboxed and git config can run
// programs, so the file tools never write into .git, by name or by link.
func TestWriteRefusesGit(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, nil)
	writeFile(t, filepath.Join(ws, ".git", "config"), "[core]\n")
	if err := os.Symlink(".git/config", filepath.Join(ws, "cfg")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".git", filepath.Join(ws, "g")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".git/config", ".GIT/hooks/pre-commit", "sub/.git", ".git", "cfg", "g/hooks/post-checkout", filepath.Join(ws, ".git/config")} {
		wantErr(t, call(t, r, "write_file", map[string]any{"path": p, "content": "[core]\n\tfsmonitor = touch /tmp/x\n"}), ".git")
		wantErr(t, call(t, r, "edit_file", map[string]any{"path": p, "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = x"}))
	}
	if got := readFile(t, filepath.Join(ws, ".git", "config")); got != "[core]\n" {
		t.Fatalf(".git/config changed: %q", got)
	}
	if exists(filepath.Join(ws, ".git", "hooks", "post-checkout")) {
		t.Fatal("a file created through a link into .git was left behind")
	}
	// Reading .git is fine.
	wantOK(t, call(t, r, "read_file", map[string]any{"path": ".git/config"}))
}

func TestEditFile(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, nil)
	f := filepath.Join(ws, "main.go")
	writeFile(t, f, "package main\n\nfunc a() { x := 1 }\nfunc b() { x := 1 }\n")

	wantErr(t, call(t, r, "edit_file", map[string]any{"path": "main.go", "old_string": "x := 1", "new_string": "x := 2"}), "occurs 2 times", "replace_all")
	wantErr(t, call(t, r, "edit_file", map[string]any{"path": "main.go", "old_string": "y := 1", "new_string": "y := 2"}), "not found")
	wantErr(t, call(t, r, "edit_file", map[string]any{"path": "main.go", "old_string": "a", "new_string": "a"}), "identical")
	wantErr(t, call(t, r, "edit_file", map[string]any{"path": "main.go", "old_string": "", "new_string": "z"}), `"old_string" must not be empty`)
	wantErr(t, call(t, r, "edit_file", map[string]any{"path": "nope.go", "old_string": "a", "new_string": "b"}), "does not exist")
	if got := readFile(t, f); got != "package main\n\nfunc a() { x := 1 }\nfunc b() { x := 1 }\n" {
		t.Fatalf("failed edits changed the file: %q", got)
	}

	res := wantOK(t, call(t, r, "edit_file", map[string]any{"path": "main.go", "old_string": "func b() { x := 1 }", "new_string": "func b() {}"}))
	if !strings.Contains(res.Output, "replaced 1 occurrence(s), the first at line 4") {
		t.Fatalf("edit: %s", res.Output)
	}
	res = wantOK(t, call(t, r, "edit_file", map[string]any{"path": "main.go", "old_string": "func", "new_string": "fn", "replace_all": true}))
	if !strings.Contains(res.Output, "replaced 2") {
		t.Fatalf("replace_all: %s", res.Output)
	}
	if got := readFile(t, f); got != "package main\n\nfn a() { x := 1 }\nfn b() {}\n" {
		t.Fatalf("after edits: %q", got)
	}
	// Shrinking leaves no stale tail.
	wantOK(t, call(t, r, "edit_file", map[string]any{"path": "main.go", "old_string": "\nfn a() { x := 1 }\nfn b() {}\n", "new_string": ""}))
	if got := readFile(t, f); got != "package main\n" {
		t.Fatalf("after shrink: %q", got)
	}
}

func TestListDirectory(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, func(o *Options) { o.MaxEntries = 5 })
	writeFile(t, filepath.Join(ws, "a.txt"), "12345")
	writeFile(t, filepath.Join(ws, "src", "b.go"), "package b")
	writeFile(t, filepath.Join(ws, ".git", "HEAD"), "ref: refs/heads/main\n")
	if err := os.Symlink("a.txt", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}

	res := wantOK(t, call(t, r, "list_directory", map[string]any{}))
	if res.Output != ".git/\na.txt (5 bytes)\nlink -> a.txt\nsrc/" {
		t.Fatalf("flat: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "list_directory", map[string]any{"path": "src"}))
	if res.Output != "src/b.go (9 bytes)" {
		t.Fatalf("subdir: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "list_directory", map[string]any{"recursive": true}))
	if res.Output != ".git/\na.txt (5 bytes)\nlink -> a.txt\nsrc/\nsrc/b.go (9 bytes)" {
		t.Fatalf("recursive: %q", res.Output)
	}
	for i := range 10 {
		writeFile(t, filepath.Join(ws, "many", fmt.Sprintf("f%02d", i)), "")
	}
	res = wantOK(t, call(t, r, "list_directory", map[string]any{"path": "many"}))
	if !res.Truncated || !strings.HasSuffix(res.Output, "[... truncated: 5 more entries]") {
		t.Fatalf("cap: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "list_directory", map[string]any{"recursive": true}))
	if !res.Truncated || !strings.Contains(res.Output, "listing stopped after 5 entries") {
		t.Fatalf("recursive cap: %q", res.Output)
	}
	wantErr(t, call(t, r, "list_directory", map[string]any{"path": "a.txt"}), "is a file")
	wantErr(t, call(t, r, "list_directory", map[string]any{"path": "nope"}), "does not exist")
}

func TestGlobFiles(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, nil)
	for _, p := range []string{"main.go", "cmd/x/main.go", "cmd/x/README.md", "web/app.ts", "web/app.tsx", ".git/hooks/x.go"} {
		writeFile(t, filepath.Join(ws, p), "")
	}
	res := wantOK(t, call(t, r, "glob_files", map[string]any{"pattern": "**/*.go"}))
	if res.Output != "cmd/x/main.go\nmain.go" {
		t.Fatalf("**/*.go: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "glob_files", map[string]any{"pattern": "*.{ts,tsx}", "path": "web"}))
	if res.Output != "web/app.ts\nweb/app.tsx" {
		t.Fatalf("braces under path: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "glob_files", map[string]any{"pattern": "cmd/*"}))
	if res.Output != "cmd/x/" {
		t.Fatalf("cmd/*: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "glob_files", map[string]any{"pattern": ".git/**/*.go"}))
	if res.Output != ".git/hooks/x.go" {
		t.Fatalf("explicit .git: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "glob_files", map[string]any{"pattern": "**/*.rs"}))
	if !strings.HasPrefix(res.Output, "no paths match") {
		t.Fatalf("no match: %q", res.Output)
	}
	wantErr(t, call(t, r, "glob_files", map[string]any{"pattern": "[abc"}), "not a valid glob")
}

func TestSearchFiles(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, nil)
	writeFile(t, filepath.Join(ws, "a.go"), "package a\n// TODO: one\nfunc A() {}\n")
	writeFile(t, filepath.Join(ws, "sub", "b.go"), "package b\n// todo: two\n")
	writeFile(t, filepath.Join(ws, "sub", "c.txt"), "TODO: three\n")
	writeFile(t, filepath.Join(ws, "bin.dat"), "TODO\x00binary")
	writeFile(t, filepath.Join(ws, ".git", "notes"), "TODO: in git\n")

	res := wantOK(t, call(t, r, "search_files", map[string]any{"pattern": "TODO"}))
	if !strings.HasPrefix(res.Output, "a.go:2: // TODO: one\nsub/c.txt:1: TODO: three") || strings.Contains(res.Output, "in git") || !strings.Contains(res.Output, "1 binary") {
		t.Fatalf("plain: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "search_files", map[string]any{"pattern": "(?i)todo", "include": "*.go"}))
	if res.Output != "a.go:2: // TODO: one\nsub/b.go:2: // todo: two" {
		t.Fatalf("include: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "search_files", map[string]any{"pattern": "(?i)todo", "path": "sub", "include": "**/*.txt"}))
	if res.Output != "sub/c.txt:1: TODO: three" {
		t.Fatalf("path include: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "search_files", map[string]any{"pattern": "func", "path": "a.go"}))
	if res.Output != "a.go:3: func A() {}" {
		t.Fatalf("one file: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "search_files", map[string]any{"pattern": "(?i)todo", "max_results": 1}))
	if !res.Truncated || !strings.Contains(res.Output, "stopped at 1 matching lines") {
		t.Fatalf("max_results: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "search_files", map[string]any{"pattern": "nothing-here"}))
	if !strings.HasPrefix(res.Output, "no matches") {
		t.Fatalf("none: %q", res.Output)
	}
	wantErr(t, call(t, r, "search_files", map[string]any{"pattern": "(unclosed"}), "not a valid RE2")
	wantErr(t, call(t, r, "search_files", map[string]any{"pattern": "x", "max_results": 100000}), "at most 200")
}

// TestCancelledContext: nothing runs once the caller has given up.
func TestCancelledContext(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := r.Execute(ctx, "write_file", []byte(`{"path":"x","content":"y"}`))
	wantErr(t, res, "not run")
	if exists(filepath.Join(ws, "x")) {
		t.Fatal("a cancelled call wrote")
	}
	if res.Duration < 0 || res.Duration > time.Hour {
		t.Fatalf("duration %v", res.Duration)
	}
}
