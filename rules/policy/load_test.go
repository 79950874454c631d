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
