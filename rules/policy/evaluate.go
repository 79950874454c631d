package policy

import (
	"fmt"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
)

// Evaluate decides a: the first matching deny rule blocks, then the first
// matching verify rule escalates, then the first matching allow rule
// allows; otherwise the defaults apply. Unknown action types meet allow
// rules only when a rule names them (custom:…).
func (p *Policy) Evaluate(a *action.Action) Decision {
	d, _ := p.Decide(a)
	return d
}

// Decide is Evaluate, and also says which of RuleDecisions the decision
// is: index is its position there, or -1 for a decision not listed (an
// unknown action type's default, or a fail-closed block). Callers that
// prepared work per decision find it by index instead of by rule id.
func (p *Policy) Decide(a *action.Action) (d Decision, index int) {
	if p == nil || a == nil {
		return failClosed("no policy or no action to evaluate"), -1
	}
	st := evalState{act: a, programs: p.programs}
	e := p.index.lookup(a).first(&st)
	st.release()
	if e != nil {
		return e.rule.decision, e.index
	}
	if !a.Known {
		return p.defaultDecision(a), -1
	}
	return p.defaultDecision(a), p.RuleCount()
}

// first returns the first entry of set whose rule matches: the set lists
// deny rules, then verify rules, then allow rules.
func (set *ruleSet) first(st *evalState) *ruleEntry {
	for i := range set.rules {
		if e := &set.rules[i]; e.cond.hold(st) {
			return e
		}
	}
	return nil
}

// defaultDecision is the outcome when no rule matched.
func (p *Policy) defaultDecision(a *action.Action) Decision {
	if !a.Known {
		d := Decision{
			Outcome: p.Defaults.UnknownAction, Section: SectionUnknownAction, RuleID: RuleUnknownAction,
			RequiredTier: p.Defaults.UnknownActionTier,
		}
		switch d.Outcome {
		case pb.VerdictDecision_VERDICT_DECISION_ALLOW:
			d.Reason = fmt.Sprintf("%q is not a known action type; policy %q allows unknown tools.", a.Type, p.Name)
		case pb.VerdictDecision_VERDICT_DECISION_BLOCK:
			d.Reason = fmt.Sprintf("%q is not a known action type and policy %q blocks unknown tools; add an allow rule with `action: [\"custom:%s\"]` if the tool is safe.", a.Type, p.Name, a.Type)
		default:
			d.Reason = fmt.Sprintf("%q is not a known action type, so it needs review (%s); add an allow rule with `action: [\"custom:%s\"]` if the tool is safe.", a.Type, tierName(d.RequiredTier), a.Type)
		}
		return sanitize(d)
	}
	return sanitize(Decision{
		Outcome: p.Defaults.NoMatch, Section: SectionDefault, RuleID: RuleNoMatch,
		Reason: p.noMatchReason, RequiredTier: p.Defaults.NoMatchTier,
	})
}

// sanitize enforces the decision contract on defaults a caller may have
// set by hand: never UNSPECIFIED, and an escalation always names a tier.
func sanitize(d Decision) Decision {
	switch d.Outcome {
	case pb.VerdictDecision_VERDICT_DECISION_ALLOW, pb.VerdictDecision_VERDICT_DECISION_BLOCK:
		d.RequiredTier = 0
	default:
		d.Outcome = pb.VerdictDecision_VERDICT_DECISION_ESCALATE
		if d.RequiredTier != 2 && d.RequiredTier != 3 {
			d.RequiredTier = defaultEscalateTier
		}
	}
	if d.Reason == "" {
		d.Reason = "The policy has no outcome for this action, so it needs review by a human."
	}
	return d
}

func failClosed(why string) Decision {
	return Decision{
		Outcome: pb.VerdictDecision_VERDICT_DECISION_BLOCK, Section: SectionDefault, RuleID: RuleNoMatch,
		Reason: "Blocked: " + why + ".",
	}
}

// evalState is what one evaluation carries between rules: what several
// rules would otherwise each work out again about the action.
type evalState struct {
	act *action.Action
	// programs is the policy's table of program names (see programTable).
	programs programTable
	// cel is taken from celActivations on first use: most actions never
	// reach a `when`.
	cel *celActivation
	// cmds caches, for the script's first commands, what command matchers
	// derive from each; programsDone says their program bits, and
	// programUnion those of all commands, are set (numberPrograms).
	cmds         [cachedCommands]commandFacts
	programUnion uint64
	programsDone bool
}

// cachedCommands bounds the commands whose facts an evaluation keeps; the
// facts of later ones (rare: long scripts) are worked out on each use.
const cachedCommands = 8

// release returns what st borrowed.
func (st *evalState) release() {
	if st.cel != nil {
		*st.cel = celActivation{} // the pool keeps no action alive
		celActivations.Put(st.cel)
		st.cel = nil
	}
}
