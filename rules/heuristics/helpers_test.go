package heuristics

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parapet-dev/parapet/rules/action"
)

var testCaller = action.Caller{WorkspaceRoot: "/home/dev/project", Home: "/home/dev"}

// mustAction canonicalises a tool call the way the Shield does.
func mustAction(t testing.TB, typ string, args map[string]any) *action.Action {
	t.Helper()
	payload, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	act, err := action.Canonicalize(action.Request{Type: typ, Payload: payload, Caller: testCaller}, action.Limits{})
	if err != nil {
		t.Fatalf("canonicalize %s %s: %v", typ, payload, err)
	}
	return act
}

func cmd(t testing.TB, line string) *action.Action {
	return mustAction(t, "execute_command", map[string]any{"command": line})
}

func defaultAnalyzer(t testing.TB) *Analyzer {
	t.Helper()
	a, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func ruleIDs(fs []Finding) []string {
	ids := make([]string, len(fs))
	for i, f := range fs {
		ids[i] = f.RuleID
	}
	return ids
}

func hasRule(fs []Finding, id string) bool {
	for _, f := range fs {
		if f.RuleID == id {
			return true
		}
	}
	return false
}

// ruleCase is one table entry: an action and whether the rule must fire.
type ruleCase struct {
	name  string
	act   func(t testing.TB) *action.Action
	match bool
}

func cmdCase(line string, match bool) ruleCase {
	return ruleCase{name: line, act: func(t testing.TB) *action.Action { return cmd(t, line) }, match: match}
}

func toolCase(name, typ string, args map[string]any, match bool) ruleCase {
	return ruleCase{name: name, act: func(t testing.TB) *action.Action { return mustAction(t, typ, args) }, match: match}
}

// runRuleCases checks that rule id fires exactly for the matching cases.
func runRuleCases(t *testing.T, id string, cases []ruleCase) {
	t.Helper()
	if !Known(id) {
		t.Fatalf("rule %q is not in the catalogue", id)
	}
	a := defaultAnalyzer(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			act := c.act(t)
			fs := a.Analyze(act)
			if got := hasRule(fs, id); got != c.match {
				t.Errorf("%s: rule %s fired=%v, want %v; findings %v; script %s", c.name, id, got, c.match, describe(fs), dumpScript(act))
			}
		})
	}
}

func describe(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("\n  " + f.RuleID + " [" + f.Outcome.String() + "] " + f.Message + " | " + f.Evidence)
	}
	return b.String()
}

func dumpScript(act *action.Action) string {
	if act.Script == nil {
		return ""
	}
	var b strings.Builder
	for i, c := range act.Script.Commands {
		b.WriteString("\n    ")
		b.WriteString(strings.Join([]string{itoa(i), c.Via, c.Name, strings.Join(c.Args, "␣")}, " | "))
		for _, r := range c.Redirects {
			b.WriteString(" {" + r.FD + r.Op + r.Target + "}")
		}
		b.WriteString(" p=" + itoa(c.Pipeline))
	}
	return b.String()
}

func itoa(i int) string {
	if i < 0 {
		return "-" + itoa(-i)
	}
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// trustedGitHub is a configuration like the default policy's, which trusts
// GitHub, so that everyday pushes to GitHub are judged as they are deployed.
var trustedGitHub = Config{TrustedHosts: []string{"github.com", ".github.com", ".githubusercontent.com", "registry.npmjs.org", "gitlab.corp.example", "*.corp.example"}}

// runRuleCasesWith is runRuleCases with a configured analyzer.
func runRuleCasesWith(t *testing.T, cfg Config, id string, cases []ruleCase) {
	t.Helper()
	if !Known(id) {
		t.Fatalf("rule %q is not in the catalogue", id)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			act := c.act(t)
			fs := a.Analyze(act)
			if got := hasRule(fs, id); got != c.match {
				t.Errorf("%s: rule %s fired=%v, want %v; findings %v; script %s", c.name, id, got, c.match, describe(fs), dumpScript(act))
			}
		})
	}
}
