package corpus

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/policytest"
)

// attackCategories must each hold at least minAttacks attacks.
var attackCategories = []string{
	"remote_code_execution", "decode_execute", "reverse_shell", "destructive",
	"privilege_persistence", "credential_access", "exfiltration", "secret_material",
	"prompt_injection", "encoding_evasion", "policy", "malformed", "memory_poisoning",
}

var everydayCategories = []string{
	"everyday_shell", "everyday_files", "everyday_git", "everyday_http", "everyday_email", "everyday_memory",
	// The executor's grants (network ports) of everyday commands, plus a
	// few attacks whose grant Tier 1 takes away.
	"confinement",
}

// analysisCategories belong to one analysis each and hold both its
// attacks and the everyday commands it must let through: at least
// minAttacks of each. The first group is about what really runs (the
// shell's dialect, working directory and values, interpreter code, code
// that runs later), the second about the families of harm and option
// parsing.
var analysisCategories = []string{
	"shell_dialect", "working_directory", "shell_values", "interpreter_code", "planted_code", "powershell",
	"defense_impairment", "system_disruption", "account_change", "trust_store", "tunnel", "file_transfer",
	"cloud_secrets", "secret_search", "private_keys", "option_parsing", "system_tamper", "collection", "command_runners", "offensive_tools", "infrastructure",
	"supply_chain", "lookalike_packages", "review_bypass", "network_exposure", "discovery", "code_tampering", "agent_config", "hollow_checks",
	"tool_startup",
}

const (
	minAttacks  = 20
	minEveryday = 100
	minTotal    = 300
)

func load(t *testing.T) []policytest.Case {
	t.Helper()
	cases, err := policytest.LoadFS(FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

func TestCorpusCounts(t *testing.T) {
	cases := load(t)
	attacks := map[string]int{}
	everyday := map[string]int{}
	for _, c := range cases {
		if c.Kind == policytest.KindAttack {
			attacks[c.Category]++
		} else {
			everyday[c.Category]++
		}
	}
	for _, cat := range attackCategories {
		if attacks[cat] < minAttacks {
			t.Errorf("%s: %d attacks, want at least %d", cat, attacks[cat], minAttacks)
		}
	}
	for _, cat := range analysisCategories {
		if attacks[cat] < minAttacks || everyday[cat] < minAttacks {
			t.Errorf("%s: %d attacks and %d everyday cases, want at least %d of each", cat, attacks[cat], everyday[cat], minAttacks)
		}
	}
	total := 0
	for _, cat := range everydayCategories {
		if everyday[cat] == 0 {
			t.Errorf("%s: no everyday cases", cat)
		}
		total += everyday[cat]
	}
	if total < minEveryday {
		t.Errorf("%d everyday cases, want at least %d", total, minEveryday)
	}
	if len(cases) < minTotal {
		t.Errorf("%d cases, want at least %d", len(cases), minTotal)
	}
	known := map[string]bool{}
	for _, c := range append(append(append([]string{}, attackCategories...), everydayCategories...), analysisCategories...) {
		known[c] = true
	}
	for _, c := range cases {
		if !known[c.Category] {
			t.Errorf("%s: unknown category %q", c.Pos(), c.Category)
		}
	}
	t.Logf("%d cases", len(cases))
}

// The labels are a specification; these invariants keep them consistent.
func TestCorpusLabels(t *testing.T) {
	seen := map[string]string{}
	for _, c := range load(t) {
		if strings.TrimSpace(c.Name) == "" || c.Expect == "" {
			t.Errorf("%s: case without name or expectation", c.Pos())
		}
		if c.Rule != "" {
			t.Errorf("%s: rule ids are not settled yet; leave rule: empty", c.Pos())
		}
		switch {
		case c.Kind == policytest.KindEveryday && c.Expect != policytest.ExpectAllow:
			t.Errorf("%s: everyday case %q expects %s", c.Pos(), c.Name, c.Expect)
		case c.Kind == policytest.KindAttack && c.Expect == policytest.ExpectAllow:
			t.Errorf("%s: attack %q expects allow", c.Pos(), c.Name)
		case c.Category == "malformed" && c.Expect != policytest.ExpectError:
			t.Errorf("%s: malformed case %q must expect error", c.Pos(), c.Name)
		case c.Category != "malformed" && c.Expect == policytest.ExpectError:
			t.Errorf("%s: %q expects error outside malformed.yaml", c.Pos(), c.Name)
		}
		if c.Request.Caller.WorkspaceRoot == "" || c.Request.Caller.Home == "" {
			t.Errorf("%s: case without workspace root and home", c.Pos())
		}
		// Outside malformed.yaml every payload must be a JSON object, or the
		// case would test the parser instead of the label.
		if c.Category != "malformed" {
			var obj map[string]any
			if err := json.Unmarshal(c.Request.Payload, &obj); err != nil {
				t.Errorf("%s: payload is not a JSON object: %v", c.Pos(), err)
			}
		}
		// The same action twice with different labels would be a contradiction;
		// twice with the same label is a wasted case.
		key := c.Request.Type + "\x00" + string(c.Request.Payload) + "\x00" + c.Request.Caller.Home
		for _, at := range c.Request.Attachments { // the same command running other code
			key += fmt.Sprintf("\x00%s\x00%s\x00%v", at.Path, at.Content, at.Unreadable)
		}
		if prev, dup := seen[key]; dup {
			t.Errorf("%s: same action as %s", c.Pos(), prev)
		}
		seen[key] = c.Pos()
	}
}

// Canonicalisation is the first tier: malformed cases must fail there, and
// every other case must get past it, or its label would never be reached.
func TestCorpusCanonicalize(t *testing.T) {
	for _, c := range load(t) {
		_, err := action.Canonicalize(c.Request, action.Limits{})
		switch {
		case c.Expect == policytest.ExpectError && err == nil:
			t.Errorf("%s: %q canonicalises without error", c.Pos(), c.Name)
		case c.Expect != policytest.ExpectError && err != nil:
			t.Errorf("%s: %q: %v", c.Pos(), c.Name, err)
		}
	}
}
