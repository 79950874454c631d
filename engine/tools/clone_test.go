package tools

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Clone runs confined (where the host can confine) with read access to
// the local repository only, checks out the branch asked for, and
// refuses transports that run programs and a workspace that is not empty.
func TestCloneLocalRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	src := t.TempDir()
	bare, work := filepath.Join(src, "repo.git"), filepath.Join(src, "work")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.invalid", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+src)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "--bare", bare)
	git("init", work)
	writeFile(t, filepath.Join(work, "main.txt"), "main\n")
	git("-C", work, "add", "main.txt")
	git("-C", work, "commit", "-m", "main")
	git("-C", work, "checkout", "-b", "feature")
	writeFile(t, filepath.Join(work, "feature.txt"), "feature\n")
	git("-C", work, "add", "feature.txt")
	git("-C", work, "commit", "-m", "feature")
	git("-C", work, "push", bare, "main", "feature")

	base, _ := newTestRegistry(t, nil)
	t.Logf("confined executor: %v", base.Confined())
	for _, repo := range []string{bare, "file://" + bare} {
		ws := t.TempDir()
		r, err := base.ForWorkspace(ws, []string{"THREAD_VAR=1"})
		if err != nil {
			t.Fatal(err)
		}
		wantOK(t, r.Clone(context.Background(), repo, "feature"))
		if readFile(t, filepath.Join(ws, "feature.txt")) != "feature\n" {
			t.Fatalf("%s: the feature branch is not checked out", repo)
		}
		wantErr(t, r.Clone(context.Background(), repo, ""), "not an empty directory")
		r.Close()
	}
	r, err := base.ForWorkspace(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for repo, want := range map[string]string{
		"ext::sh -c touch% /tmp/pwned": "want an https",
		"relative/repo":                "want an https",
		"--upload-pack=touch /tmp/x":   "starts with '-'",
		"gopher://host/repo":           `scheme "gopher"`,
		"":                             "empty",
	} {
		wantErr(t, r.Clone(context.Background(), repo, ""), want)
	}
	wantErr(t, r.Clone(context.Background(), bare, "--orphan"), "not a valid branch name")
}
