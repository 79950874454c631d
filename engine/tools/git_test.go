package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitCmd runs the real git binary for test setup, isolated from the
// machine's configuration.
func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "LANG=C"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// newGitWorkspace makes a registry whose workspace is a fresh repository.
func newGitWorkspace(t *testing.T) (*Registry, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	r, ws := newTestRegistry(t, nil)
	gitCmd(t, ws, "init", "-q", "-b", "main")
	return r, ws
}

func TestGitTools(t *testing.T) {
	t.Parallel()
	r, ws := newGitWorkspace(t)
	writeFile(t, filepath.Join(ws, "a.txt"), "one\n")
	writeFile(t, filepath.Join(ws, "dir", "b.txt"), "bee\n")

	res := wantOK(t, call(t, r, "git_status", "{}"))
	if !strings.Contains(res.Output, "## No commits yet on main") || !strings.Contains(res.Output, "?? a.txt") {
		t.Fatalf("status: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "git_add", map[string]any{"paths": []string{"a.txt", filepath.Join(ws, "dir")}}))
	if res.Output != "staged a.txt, dir" {
		t.Fatalf("add: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "git_diff", map[string]any{"staged": true}))
	if !strings.Contains(res.Output, "+++ b/a.txt") || !strings.Contains(res.Output, "+bee") {
		t.Fatalf("staged diff: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "git_commit", map[string]any{"message": "first: add a and b"}))
	if !strings.Contains(res.Output, "first: add a and b") {
		t.Fatalf("commit: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "git_log", map[string]any{"max_count": 5}))
	if !strings.Contains(res.Output, "Parapet Agent: first: add a and b") {
		t.Fatalf("log: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "git_diff", "{}"))
	if res.Output != "no unstaged changes" {
		t.Fatalf("clean diff: %q", res.Output)
	}
	writeFile(t, filepath.Join(ws, "a.txt"), "two\n")
	writeFile(t, filepath.Join(ws, "dir", "b.txt"), "bzz\n")
	res = wantOK(t, call(t, r, "git_diff", map[string]any{"path": "dir"}))
	if !strings.Contains(res.Output, "+bzz") || strings.Contains(res.Output, "a.txt") {
		t.Fatalf("path diff: %q", res.Output)
	}
	// Literal pathspecs: magic such as ':(top)' or globs is not interpreted.
	res = call(t, r, "git_add", map[string]any{"paths": []string{"*.txt"}})
	wantErr(t, res, "did not match any files")

	wantErr(t, call(t, r, "git_commit", map[string]any{"message": "   \n"}), "commit message is empty")
	wantErr(t, call(t, r, "git_commit", map[string]any{"message": ""}), `"message" must not be empty`)
	wantErr(t, call(t, r, "git_add", map[string]any{"paths": []string{"../outside"}}), "leaves the workspace")
	wantErr(t, call(t, r, "git_diff", map[string]any{"path": "/etc/passwd"}), "outside the workspace")
	wantErr(t, call(t, r, "git_add", map[string]any{"paths": []string{}}), "at least one item")
}

// TestGitRunsNoRepositoryPrograms: hooks, fsmonitor, filter and diff drivers
// planted in the repository configuration run with plain git (the control)
// and never through the git tools.
func TestGitRunsNoRepositoryPrograms(t *testing.T) {
	t.Parallel()
	r, ws := newGitWorkspace(t)
	markers := t.TempDir()
	mark := func(name string) string { return "touch " + filepath.Join(markers, name) }
	writeFile(t, filepath.Join(ws, "a.txt"), "one\n")
	gitCmd(t, ws, "-c", "user.name=t", "-c", "user.email=t@t", "add", "a.txt")
	gitCmd(t, ws, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")

	hook := filepath.Join(ws, ".git", "hooks", "pre-commit")
	writeFile(t, hook, "#!/bin/sh\n"+mark("hook")+"\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, ws, "config", "core.fsmonitor", mark("fsmonitor"))
	gitCmd(t, ws, "config", "diff.evil.textconv", mark("textconv")+"; cat")
	writeFile(t, filepath.Join(ws, ".gitattributes"), "*.txt diff=evil\n")
	writeFile(t, filepath.Join(ws, "a.txt"), "two\n")

	// Control: plain git runs them all.
	gitCmd(t, ws, "status")
	gitCmd(t, ws, "diff")
	gitCmd(t, ws, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "control")
	for _, m := range []string{"hook", "fsmonitor", "textconv"} {
		if !exists(filepath.Join(markers, m)) {
			t.Fatalf("control: plain git did not run the planted %s", m)
		}
		os.Remove(filepath.Join(markers, m))
	}

	wantOK(t, call(t, r, "git_status", "{}"))
	res := wantOK(t, call(t, r, "git_diff", "{}"))
	if !strings.Contains(res.Output, "+two") {
		t.Fatalf("diff: %q", res.Output)
	}
	wantOK(t, call(t, r, "git_add", map[string]any{"paths": []string{"a.txt", ".gitattributes"}}))
	wantOK(t, call(t, r, "git_commit", map[string]any{"message": "through the tools"}))
	wantOK(t, call(t, r, "git_log", "{}"))
	for _, m := range []string{"hook", "fsmonitor", "textconv"} {
		if exists(filepath.Join(markers, m)) {
			t.Errorf("the git tools ran the planted %s", m)
		}
	}
}

func TestGitFilterDrivers(t *testing.T) {
	t.Parallel()
	r, ws := newGitWorkspace(t)
	markers := t.TempDir()
	marker := filepath.Join(markers, "filter")
	gitCmd(t, ws, "config", "filter.evil.clean", "touch "+marker+"; cat")
	gitCmd(t, ws, "config", "filter.evil.required", "true")
	writeFile(t, filepath.Join(ws, ".gitattributes"), "*.txt filter=evil\n")
	writeFile(t, filepath.Join(ws, "a.txt"), "one\n")

	wantOK(t, call(t, r, "git_status", "{}"))
	wantErr(t, call(t, r, "git_add", map[string]any{"paths": []string{"a.txt"}}), "clean filter", "execute_command")
	if exists(marker) {
		t.Fatal("the git tools ran a filter driver")
	}
	gitCmd(t, ws, "add", "a.txt") // control
	if !exists(marker) {
		t.Fatal("control: plain git add did not run the filter")
	}
	os.Remove(marker)
	writeFile(t, filepath.Join(ws, "a.txt"), "two\n")
	wantOK(t, call(t, r, "git_diff", "{}"))
	wantOK(t, call(t, r, "git_status", "{}"))
	if exists(marker) {
		t.Fatal("git_diff or git_status ran a filter driver")
	}
}

// TestGitStaysInWorkspace: a workspace below a repository is not part of
// it for the git tools, and a bare repository planted in the workspace is
// not picked up.
func TestGitStaysInWorkspace(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	outer := t.TempDir()
	gitCmd(t, outer, "init", "-q")
	ws := filepath.Join(outer, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := New(withEnv(testOptions(ws), []string{}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	wantErr(t, call(t, r, "git_status", "{}"), "not a git repository")

	// A bare repository's layout written at the workspace root.
	gitCmd(t, ws, "init", "-q", "--bare", ".")
	wantErr(t, call(t, r, "git_status", "{}"), "bare")
}

func TestGitMissing(t *testing.T) {
	t.Parallel()
	r, _ := newTestRegistry(t, func(o *Options) { o.Path = t.TempDir() })
	wantErr(t, call(t, r, "git_status", "{}"), "git is not installed")
}
