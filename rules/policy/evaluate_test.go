package policy

import (
	"testing"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
)

const orderPolicy = `version: 1
name: order
defaults: {no_match: escalate, no_match_tier: 2, unknown_action: block}
deny:
  - id: d-etc
    reason: No /etc.
    match: {path: [/etc/**]}
verify:
  - id: v-etc-or-tmp
    tier: 3
    match: {path: [/etc/**, /tmp/**]}
  - id: v-tmp-second
    tier: 2
    match: {path: [/tmp/**]}
allow:
  - id: a-all-reads
    match: {action: [read_file]}
  - id: a-custom
    match: {action: ["custom:my_tool"]}
  - id: a-star
    match: {action: ["*"]}
`

func TestEvaluationOrder(t *testing.T) {
	p := mustParse(t, orderPolicy)
	cases := []struct {
		typ, args string
		want      Decision
	}{
		{"read_file", `{"path":"/etc/x"}`, Decision{Outcome: block, Section: "deny", RuleID: "d-etc", Reason: "No /etc."}},
		{"read_file", `{"path":"/tmp/x"}`, Decision{Outcome: escalate, Section: "verify", RuleID: "v-etc-or-tmp", RequiredTier: 3}},
		{"read_file", `{"path":"src/x"}`, Decision{Outcome: allow, Section: "allow", RuleID: "a-all-reads"}},
		{"write_file", `{"path":"src/x"}`, Decision{Outcome: allow, Section: "allow", RuleID: "a-star"}},
		// Unknown types: deny and verify apply as usual.
		{"my_other_tool", `{"path":"/etc/x"}`, Decision{Outcome: block, Section: "deny", RuleID: "d-etc"}},
		{"my_other_tool", `{"path":"/tmp/x"}`, Decision{Outcome: escalate, Section: "verify", RuleID: "v-etc-or-tmp", RequiredTier: 3}},
		// allow rules apply only when they name the type; "*" does not.
		{"my_other_tool", `{}`, Decision{Outcome: block, Section: "unknown_action", RuleID: "policy.unknown-action"}},
		{"my_tool", `{}`, Decision{Outcome: allow, Section: "allow", RuleID: "a-custom"}},
		{"My-Tool", `{}`, Decision{Outcome: allow, Section: "allow", RuleID: "a-custom"}},
	}
	for _, c := range cases {
		got := p.Evaluate(act(t, c.typ, c.args))
		if got.Outcome != c.want.Outcome || got.Section != c.want.Section || got.RuleID != c.want.RuleID ||
			got.RequiredTier != c.want.RequiredTier || (c.want.Reason != "" && got.Reason != c.want.Reason) {
			t.Errorf("%s %s: got %+v, want %+v", c.typ, c.args, got, c.want)
		}
		if got.Reason == "" {
			t.Errorf("%s %s: empty reason", c.typ, c.args)
		}
	}
}

func TestDefaults(t *testing.T) {
	p := mustParse(t, "version: 1\nallow:\n  - id: r\n    match: {action: [read_file]}\n")
	if p.Defaults != (Defaults{NoMatch: escalate, NoMatchTier: 3, UnknownAction: escalate, UnknownActionTier: 3}) {
		t.Fatalf("defaults = %+v", p.Defaults)
	}
	d := p.Evaluate(act(t, "write_file", `{"path":"a"}`))
	if d.Outcome != escalate || d.RuleID != RuleNoMatch || d.Section != SectionDefault || d.RequiredTier != 3 || d.Reason == "" {
		t.Fatalf("no match: %+v", d)
	}
	d = p.Evaluate(act(t, "frobnicate", `{}`))
	if d.Outcome != escalate || d.RuleID != RuleUnknownAction || d.Section != SectionUnknownAction || d.RequiredTier != 3 {
		t.Fatalf("unknown: %+v", d)
	}
	allowAll := mustParse(t, "version: 1\ndefaults: {no_match: allow}\n")
	if d := allowAll.Evaluate(act(t, "write_file", `{"path":"a"}`)); d.Outcome != allow || d.RequiredTier != 0 {
		t.Fatalf("no_match allow: %+v", d)
	}
	if d := allowAll.Evaluate(act(t, "frobnicate", `{}`)); d.Outcome != escalate {
		t.Fatalf("unknown_action must stay escalate when only no_match is allow: %+v", d)
	}
}

// Every decision Evaluate returns for a known type is among RuleDecisions.
func TestRuleDecisionsCoverEvaluate(t *testing.T) {
	p := mustParse(t, orderPolicy)
	listed := map[Decision]bool{}
	for _, d := range p.RuleDecisions() {
		listed[d] = true
	}
	if len(listed) != p.RuleCount()+1 {
		t.Fatalf("%d distinct decisions for %d rules and the default", len(listed), p.RuleCount())
	}
	noDefault := mustParse(t, "version: 1\ndefaults: {no_match: escalate, no_match_tier: 2}\nallow:\n  - id: r\n    match: {action: [read_file]}\n")
	for _, c := range []struct {
		p         *Policy
		typ, args string
	}{
		{p, "read_file", `{"path":"/etc/x"}`}, {p, "read_file", `{"path":"/tmp/x"}`},
		{p, "read_file", `{"path":"src/x"}`}, {p, "write_file", `{"path":"src/x"}`},
		{noDefault, "write_file", `{"path":"a"}`}, {noDefault, "read_file", `{"path":"a"}`},
	} {
		got := c.p.Evaluate(act(t, c.typ, c.args))
		found := false
		for _, d := range c.p.RuleDecisions() {
			found = found || d == got
		}
		if !found {
			t.Errorf("%s %s: %+v is not among RuleDecisions", c.typ, c.args, got)
		}
	}
	if (*Policy)(nil).RuleDecisions() != nil {
		t.Error("nil policy lists decisions")
	}
}

// Nothing may come out UNSPECIFIED, even from a Policy not built by Parse.
func TestNeverUnspecified(t *testing.T) {
	a := act(t, "read_file", `{"path":"a"}`)
	for _, p := range []*Policy{nil, {}, {Defaults: Defaults{NoMatch: pb.VerdictDecision(42)}}} {
		d := p.Evaluate(a)
		if d.Outcome == pb.VerdictDecision_VERDICT_DECISION_UNSPECIFIED || d.Outcome == allow {
			t.Errorf("policy %+v: got %+v", p, d)
		}
		if d.Outcome == escalate && d.RequiredTier == 0 {
			t.Errorf("escalation without a tier: %+v", d)
		}
	}
	if d := mustParse(t, "version: 1\n").Evaluate(nil); d.Outcome != block {
		t.Errorf("nil action: %+v", d)
	}
}

// A hand-built Action whose type is not in the index still meets the
// rules that apply to every type.
func TestHandBuiltAction(t *testing.T) {
	p := mustParse(t, orderPolicy)
	d := p.Evaluate(&action.Action{Type: "strange", Known: true, Paths: []action.Path{{Abs: "/etc/x"}}})
	if d.RuleID != "d-etc" {
		t.Fatalf("got %+v", d)
	}
}

func TestVerifyTierAndAliases(t *testing.T) {
	p := mustParse(t, `version: 1
verify:
  - id: shell-any
    tier: 2
    match: {action: [bash]}
`)
	d := p.Evaluate(act(t, "run_terminal_cmd", `{"command":"ls"}`))
	if d.RuleID != "shell-any" || d.RequiredTier != 2 || d.Outcome != escalate {
		t.Fatalf("aliases must resolve on both sides: %+v", d)
	}
}

// A Policy is shared by every request: evaluate concurrently (run with -race).
func TestConcurrentEvaluate(t *testing.T) {
	p, _ := Embedded("default")
	actions := []*action.Action{
		act(t, "send_email", `{"to":"a@b","cc":"c@d"}`),
		act(t, "bash", `{"command":"git push -f origin main"}`),
		act(t, "read_file", `{"path":"/etc/passwd"}`),
	}
	want := make([]Decision, len(actions))
	for i, a := range actions {
		want[i] = p.Evaluate(a)
	}
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 200; i++ {
				if d := p.Evaluate(actions[i%len(actions)]); d != want[i%len(actions)] {
					t.Errorf("concurrent evaluation differs: %+v", d)
					return
				}
			}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
}
