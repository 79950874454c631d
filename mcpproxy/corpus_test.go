package mcpproxy

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

type descriptionCase struct {
	Name string         `yaml:"name"`
	Tool map[string]any `yaml:"tool"`
}

// TestToolDescriptionCorpus runs the tool-poisoning corpus: every attack
// is reported, every everyday description passes.
func TestToolDescriptionCorpus(t *testing.T) {
	b, err := os.ReadFile("testdata/tool_descriptions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var corpus struct {
		Attacks  []descriptionCase `yaml:"attacks"`
		Everyday []descriptionCase `yaml:"everyday"`
	}
	if err := yaml.Unmarshal(b, &corpus); err != nil {
		t.Fatal(err)
	}
	if len(corpus.Attacks) < 10 || len(corpus.Everyday) < 10 {
		t.Fatalf("corpus too small: %d attacks, %d everyday", len(corpus.Attacks), len(corpus.Everyday))
	}
	cfg := &Config{Server: "s", Shield: denyShield{}, Pins: &Pins{}, Workspace: "/home/dev/project", Home: "/home/dev"}
	if err := cfg.prepare(); err != nil {
		t.Fatal(err)
	}
	// Tools arrive as JSON: round-trip the YAML so types match.
	asJSON := func(m map[string]any) map[string]any {
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		def, err := decodeObject(raw)
		if err != nil {
			t.Fatal(err)
		}
		return def
	}
	for _, c := range corpus.Attacks {
		if problems, _ := cfg.toolProblems(asJSON(c.Tool)); len(problems) == 0 {
			t.Errorf("attack %q not reported", c.Name)
		}
	}
	for _, c := range corpus.Everyday {
		if problems, ev := cfg.toolProblems(asJSON(c.Tool)); len(problems) > 0 {
			t.Errorf("everyday %q reported: %s (%s)", c.Name, strings.Join(problems, "; "), strings.Join(ev, "; "))
		}
	}
}
