package policy

import (
	"fmt"
	"sync"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
)

// Evaluate decides a: the first matching deny rule blocks, then the first
// matching verify rule escalates, then the first matching allow rule
// allows; otherwise the defaults apply. Unknown action types meet allow
// rules only when a rule names them (custom:…).
func (p *Policy) Evaluate(a *action.Action) Decision {
	if p == nil || a == nil {
		return failClosed("no policy or no action to evaluate")
	}
	// The matchers are called through an interface, so the state they
	// share would escape to the heap: a pooled one costs no allocation.
	st := evalStates.Get().(*evalState)
	st.act = a
	d, matched := p.index.lookup(a).first(st)
	*st = evalState{} // the pool keeps no action alive
	evalStates.Put(st)
	if matched {
		return d
	}
	return p.defaultDecision(a)
}

var evalStates = sync.Pool{New: func() any { return new(evalState) }}

// first returns the decision of the first rule of set that matches: deny
// rules, then verify rules, then allow rules.
func (set *ruleSet) first(st *evalState) (Decision, bool) {
	for _, r := range set.deny {
		if r.matches(st) {
			return r.decision, true
		}
	}
	for _, r := range set.verify {
		if r.matches(st) {
			return r.decision, true
		}
	}
	for _, r := range set.allow {
		if r.matches(st) {
			return r.decision, true
		}
	}
	return Decision{}, false
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
