package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadResolvesFilesAndEmbeddedNames(t *testing.T) {
	for _, ref := range []string{"", "default", "strict", "embedded:permissive"} {
		p, err := Load(ref)
		if err != nil {
			t.Fatalf("Load(%q): %v", ref, err)
		}
		want := strings.TrimPrefix(ref, "embedded:")
		if want == "" {
			want = "default"
		}
		if p.Source != "embedded:"+want {
			t.Errorf("Load(%q).Source = %q", ref, p.Source)
		}
	}
	src, err := EmbeddedSource("strict")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "mine.yaml")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := Load(file); err != nil || p.Source != file {
		t.Errorf("Load(file) = %v, %v", p, err)
	}
	if _, err := Load("no-such-policy"); err == nil || !strings.Contains(err.Error(), "not an embedded policy") {
		t.Errorf("unknown ref: %v", err)
	}
}

// TestLoadPrefersEmbeddedNames: a file named like an embedded policy in the
// current directory (where an agent may have written it) does not replace
// that policy; it is loaded only by a path that says it is a file.
func TestLoadPrefersEmbeddedNames(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	permissive, err := EmbeddedSource("permissive")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "default"), permissive, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load("default")
	if err != nil || p.Source != "embedded:default" {
		t.Fatalf(`Load("default") with a planted ./default = %v, %v; want the embedded policy`, p, err)
	}
	if p, err := Load("./default"); err != nil || p.Source != "./default" {
		t.Errorf(`Load("./default") = %v, %v; want the file`, p, err)
	}
	if _, err := Load("embedded:nope"); err == nil || !strings.Contains(err.Error(), "no embedded policy") {
		t.Errorf("unknown embedded name: %v", err)
	}
}
