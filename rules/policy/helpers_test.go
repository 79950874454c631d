package policy

import (
	"strings"
	"testing"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
)

var testCaller = action.Caller{WorkspaceRoot: "/home/dev/project", Home: "/home/dev"}

// act canonicalises a tool call the way the Shield does.
func act(t testing.TB, typ, payload string) *action.Action {
	t.Helper()
	return actAs(t, typ, payload, testCaller)
}

func actAs(t testing.TB, typ, payload string, caller action.Caller) *action.Action {
	t.Helper()
	a, err := action.Canonicalize(action.Request{Type: typ, Payload: []byte(payload), Caller: caller}, action.Limits{})
	if err != nil {
		t.Fatalf("canonicalize %s %s: %v", typ, payload, err)
	}
	return a
}

// cmd canonicalises a shell command.
func cmd(t testing.TB, line string) *action.Action {
	t.Helper()
	return act(t, "execute_command", `{"command":`+jsonString(line)+`}`)
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// requireShellParser skips command-structure tests until rules/shell
// parses (its first version returned no commands).
func requireShellParser(t testing.TB) {
	t.Helper()
	if a := cmd(t, "git status"); a.Script == nil || len(a.Script.Commands) == 0 {
		t.Skip("rules/shell.Parse returns no commands yet; command matchers need the parser")
	}
}

func mustParse(t testing.TB, src string) *Policy {
	t.Helper()
	p, err := Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatalf("parse:\n%v", err)
	}
	return p
}

// oneRule builds a policy with a single rule in section and no_match
// escalate, so a test can tell "the rule matched" from "nothing did".
func oneRule(t testing.TB, section, match string) *Policy {
	t.Helper()
	tier := ""
	if section == "verify" {
		tier = "\n    tier: 2"
	}
	return mustParse(t, "version: 1\n"+section+":\n  - id: r"+tier+"\n    match:\n"+indent(match, "      "))
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}

const (
	allow    = pb.VerdictDecision_VERDICT_DECISION_ALLOW
	block    = pb.VerdictDecision_VERDICT_DECISION_BLOCK
	escalate = pb.VerdictDecision_VERDICT_DECISION_ESCALATE
)

// matched reports whether the single rule "r" decided.
func matched(p *Policy, a *action.Action) bool {
	return p.Evaluate(a).RuleID == "r"
}
