package policy

import (
	"fmt"
	"strings"

	"github.com/parapet-dev/parapet/rules/action"
)

// Explain walks the rules as Evaluate does and says, for every rule it
// considers, whether it matched and why. The walk stops at the deciding
// rule; when no rule decides, the last entry is the default that did.
// Explain is for people (`shieldd policy test`), not for the hot path.
func (p *Policy) Explain(a *action.Action) []Explanation {
	if p == nil || a == nil {
		d := failClosed("no policy or no action to evaluate")
		return []Explanation{{Section: d.Section, RuleID: d.RuleID, Matched: true, Why: d.Reason}}
	}
	var out []Explanation
	st := evalState{act: a, programs: p.programs}
	defer st.release()
	for _, section := range [][]*rule{p.deny, p.verify, p.allow} {
		for _, r := range section {
			e := explainRule(r, &st)
			out = append(out, e)
			if e.Matched {
				return out
			}
		}
	}
	d := p.defaultDecision(a)
	return append(out, Explanation{Section: d.Section, RuleID: d.RuleID, Matched: true, Why: d.Reason})
}

func explainRule(r *rule, st *evalState) Explanation {
	e := Explanation{Section: r.section, RuleID: r.id}
	a := st.act
	var why []string
	if r.actions != nil {
		if !r.actions.covers(a.Type) {
			e.Why = fmt.Sprintf("action: %s is not in [%s]", a.Type, r.actions)
			return e
		}
		if r.section == SectionAllow && !a.Known && !r.actions.namesExplicitly(a.Type) {
			e.Why = fmt.Sprintf("action: %s is not a known type; allow rules apply to it only when they name it (custom:%s)", a.Type, a.Type)
			return e
		}
		why = append(why, fmt.Sprintf("action: %s is in [%s]", a.Type, r.actions))
	} else if r.section == SectionAllow && !a.Known {
		e.Why = fmt.Sprintf("action: %s is not a known type; allow rules apply to it only when they name it (custom:%s)", a.Type, a.Type)
		return e
	}
	quantifier := "any"
	if r.section == SectionAllow {
		quantifier = "every"
	}
	for _, m := range r.cond.list() {
		ok, witness := m.eval(st)
		why = append(why, describe(m.kind(), quantifier, ok, witness))
		if !ok {
			e.Why = strings.Join(why, "; ")
			return e
		}
	}
	e.Matched = true
	e.Why = strings.Join(why, "; ")
	return e
}

// describe renders one matcher's result.
func describe(kind, quantifier string, ok bool, witness string) string {
	noun := map[string]string{"path": "path", "command": "simple command", "url": "URL"}[kind]
	switch {
	case kind == "when":
		if witness != "" {
			return fmt.Sprintf("when: %s (counted as %v: failing closed)", witness, ok)
		}
		return fmt.Sprintf("when: %v", ok)
	case kind == "fields" && ok:
		return fmt.Sprintf("fields: matched %q", witness)
	case kind == "fields":
		return fmt.Sprintf("fields: %s does not match", witness)
	case ok && quantifier == "any":
		return fmt.Sprintf("%s: %q matches", kind, witness)
	case ok:
		return fmt.Sprintf("%s: every %s matches", kind, noun)
	case quantifier == "any":
		return fmt.Sprintf("%s: no %s matches", kind, noun)
	case witness == "":
		return fmt.Sprintf("%s: the action has no %s that can be vouched for (allow rules need at least one, all matching)", kind, noun)
	}
	return fmt.Sprintf("%s: %q does not match (allow rules need every %s to match)", kind, witness, noun)
}
