package reload

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/internal/proctest"
	"github.com/parapet-dev/parapet/rules/policy"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
)

const (
	allowReads   = "version: 1\nname: reads-allowed\nallow:\n  - id: reads.ok\n    match:\n      action: [read_file]\n"
	denyReads    = "version: 1\nname: reads-denied\ndeny:\n  - id: reads.no\n    match:\n      action: [read_file]\n"
	brokenPolicy = "version: 1\nname: broken\nallow:\n  - id: a\n    match:\n      action: [read_file]\n  - id: b\n    match:\n      acton: [read_file]\n"
)

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func version(t *testing.T, src string) string {
	t.Helper()
	p, err := policy.Parse("x", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p.Version
}

func newPipeline(t *testing.T, policyRef string) *pipeline.Pipeline {
	t.Helper()
	pol, err := policy.Load(policyRef)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Config{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestWatchKubernetesConfigMapSwap updates a policy the way the kubelet
// updates a mounted ConfigMap: the file is a symlink through "..data",
// and an update swaps "..data" to a new timestamped directory.
func TestWatchKubernetesConfigMapSwap(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "..2026_01"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "..2026_01", "policy.yaml"), allowReads)
	must(t, os.Symlink("..2026_01", filepath.Join(dir, "..data")))
	must(t, os.Symlink(filepath.Join("..data", "policy.yaml"), filepath.Join(dir, "policy.yaml")))

	p := newPipeline(t, filepath.Join(dir, "policy.yaml"))
	r, err := New(Config{Pipeline: p})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	must(t, r.Watch(ctx, 20*time.Millisecond))

	must(t, os.Mkdir(filepath.Join(dir, "..2026_02"), 0o755))
	write(t, filepath.Join(dir, "..2026_02", "policy.yaml"), denyReads)
	must(t, os.Symlink("..2026_02", filepath.Join(dir, "..data_tmp")))
	must(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	must(t, os.RemoveAll(filepath.Join(dir, "..2026_01")))

	want := version(t, denyReads)
	proctest.Eventually(t, "the swapped ConfigMap is loaded", 20*time.Second, func() (bool, string) {
		return p.Policy().Version == want, p.Policy().Version + " " + r.PolicyError()
	})
	// A reload sets the pipeline's policy before it counts itself, so
	// the count can trail the version seen above by a moment.
	proctest.Eventually(t, "the reload is counted", 20*time.Second, func() (bool, string) {
		st := r.Status()
		return st.Succeeded > 0, fmt.Sprintf("status %+v", st)
	})
	if st := r.Status(); st.Err != "" {
		t.Fatalf("status %+v", st)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestWatchTenantDirRemovedAndRecreated removes the watched tenant
// directory (an error while it is gone) and creates it again: the watch
// comes back and the new files load.
func TestWatchTenantDirRemovedAndRecreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tenants")
	must(t, os.Mkdir(dir, 0o755))
	write(t, filepath.Join(dir, "acme.yaml"), allowReads)
	p := newPipeline(t, "default")
	r, err := New(Config{Pipeline: p, TenantDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if r.PolicyFile() != "" {
		t.Fatalf("an embedded policy has a file: %q", r.PolicyFile())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	must(t, r.Watch(ctx, 20*time.Millisecond))

	// Moved away in one step: a RemoveAll deletes acme.yaml first, and a
	// reload between the two steps would rightly drop acme's policy.
	must(t, os.Rename(dir, dir+".gone"))
	proctest.Eventually(t, "the missing directory is an error", 20*time.Second, func() (bool, string) {
		return strings.Contains(r.PolicyError(), "tenant policy dir"), r.PolicyError()
	})
	if got := p.PolicyFor("acme").Version; got != version(t, allowReads) {
		t.Fatalf("acme lost its policy with the directory: %s", got)
	}

	must(t, os.Mkdir(dir, 0o755))
	write(t, filepath.Join(dir, "acme.yaml"), denyReads)
	want := version(t, denyReads)
	proctest.Eventually(t, "the recreated directory is watched and loaded", 20*time.Second, func() (bool, string) {
		return p.PolicyFor("acme").Version == want && r.PolicyError() == "", p.PolicyFor("acme").Version + " " + r.PolicyError()
	})
	// And watched again: a later change is seen without a SIGHUP.
	write(t, filepath.Join(dir, "beta.yaml"), denyReads)
	proctest.Eventually(t, "a file added after the watch came back", 20*time.Second, func() (bool, string) {
		return p.PolicyFor("beta").Version == want, p.PolicyFor("beta").Version
	})
}

// TestPolicyErrorViews: the operator sees every problem; a tenant sees
// the default policy's and its own file's, and a count of the rest.
func TestPolicyErrorViews(t *testing.T) {
	root := t.TempDir()
	polFile := filepath.Join(root, "policy.yaml")
	write(t, polFile, allowReads)
	dir := filepath.Join(root, "tenants")
	must(t, os.Mkdir(dir, 0o755))
	write(t, filepath.Join(dir, "acme.yaml"), allowReads)
	write(t, filepath.Join(dir, "beta.yaml"), allowReads)
	p := newPipeline(t, polFile)
	r, err := New(Config{Pipeline: p, TenantDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Tenants(); strings.Join(got, ",") != "acme,beta" {
		t.Fatalf("tenants %v", got)
	}
	if err := r.Reload("test"); err != nil || r.PolicyError() != "" {
		t.Fatalf("a clean reload: %v %q", err, r.PolicyError())
	}

	write(t, filepath.Join(dir, "beta.yaml"), brokenPolicy)
	write(t, filepath.Join(dir, "gamma.yml"), brokenPolicy)
	if err := r.Reload("test"); err == nil {
		t.Fatal("broken tenant files reloaded without an error")
	}
	full := r.PolicyError()
	for _, f := range []string{"beta.yaml", "gamma.yml"} {
		if !regexp.MustCompile(regexp.QuoteMeta(filepath.Join(dir, f)) + `:9: .*acton`).MatchString(full) {
			t.Errorf("the operator's view lacks %s:\n%s", f, full)
		}
	}
	beta := r.TenantPolicyError("beta")
	if !strings.Contains(beta, filepath.Join(dir, "beta.yaml")+":9:") || strings.Contains(beta, "gamma") || !strings.Contains(beta, "1 problem(s) in other tenants'") {
		t.Errorf("beta's view:\n%s", beta)
	}
	for _, name := range []string{"acme", "../tenants/beta", ""} {
		v := r.TenantPolicyError(name)
		if strings.Contains(v, "beta") || strings.Contains(v, "gamma") || !strings.Contains(v, "2 problem(s) in other tenants'") {
			t.Errorf("%q's view:\n%s", name, v)
		}
	}

	// The default policy breaks too: everyone sees that.
	write(t, polFile, brokenPolicy)
	_ = r.Reload("test")
	for _, v := range []string{r.PolicyError(), r.TenantPolicyError("acme")} {
		if !strings.Contains(v, polFile+":9:") {
			t.Errorf("the default policy's problem is missing:\n%s", v)
		}
	}
	if p.Policy().Version != version(t, allowReads) || p.PolicyFor("beta").Version != version(t, allowReads) {
		t.Fatal("a broken file replaced a running policy")
	}

	write(t, polFile, denyReads)
	must(t, os.Remove(filepath.Join(dir, "beta.yaml")))
	must(t, os.Remove(filepath.Join(dir, "gamma.yml")))
	before := r.Status().LastSuccess
	if err := r.Reload("test"); err != nil || r.PolicyError() != "" || r.TenantPolicyError("acme") != "" {
		t.Fatalf("the fixed files: %v %q", err, r.PolicyError())
	}
	st := r.Status()
	if st.Succeeded != 2 || st.Failed != 2 || st.LastSuccess.Before(before) {
		t.Fatalf("status %+v", st)
	}
	if p.Policy().Version != version(t, denyReads) || p.PolicyFor("beta").Version != version(t, denyReads) {
		t.Fatal("beta should fall back to the new default policy")
	}
}

// TestConcurrentReloads runs reloads from several goroutines (as SIGHUP
// and the watcher may) while the files change; run with -race.
func TestConcurrentReloads(t *testing.T) {
	root := t.TempDir()
	polFile := filepath.Join(root, "policy.yaml")
	write(t, polFile, allowReads)
	p := newPipeline(t, polFile)
	r, err := New(Config{Pipeline: p})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 20 {
				if i == 0 {
					write(t, polFile, []string{allowReads, denyReads}[j%2])
				}
				_ = r.Reload("test")
				_ = r.PolicyError()
				_ = r.TenantPolicyError("acme")
			}
		})
	}
	wg.Wait()
	write(t, polFile, denyReads)
	if err := r.Reload("test"); err != nil || p.Policy().Version != version(t, denyReads) {
		t.Fatalf("final reload: %v %s", err, p.Policy().Version)
	}
}

func TestWatchNothingToWatch(t *testing.T) {
	r, err := New(Config{Pipeline: newPipeline(t, "strict")})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Watch(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	if err := r.Reload("test"); err != nil || r.Status().Succeeded != 1 {
		t.Fatalf("reloading nothing: %v %+v", err, r.Status())
	}
}

func TestNewRejectsBrokenTenantDir(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "acme.yaml"), brokenPolicy)
	if _, err := New(Config{Pipeline: newPipeline(t, "default"), TenantDir: dir}); err == nil || !strings.Contains(err.Error(), "acme.yaml:9:") {
		t.Fatalf("New: %v", err)
	}
}
