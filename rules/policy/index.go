package policy

import (
	"github.com/parapet-dev/parapet/rules/action"
)

// ruleSet is the rules that can apply to one action type, in policy
// order: deny rules, then verify rules, then allow rules, so the first
// entry that matches decides.
type ruleSet struct {
	rules []ruleEntry
}

// ruleEntry is one rule of a ruleSet. The conditions are copied in, so
// that walking a set reads one array rather than following a pointer to
// each rule.
type ruleEntry struct {
	cond conditions
	rule *rule
	// index is the rule's position in Policy.RuleDecisions.
	index int
}

// ruleIndex holds a ruleSet per action type, so Evaluate skips rules
// whose `action:` excludes the type without looking at them.
type ruleIndex struct {
	// known covers every known type; custom every custom: name a rule lists.
	known, custom map[string]*ruleSet
	// otherKnown is for a known type missing from known (an Action built
	// by hand); unknown is for every other unknown type.
	otherKnown, unknown *ruleSet
}

func buildIndex(deny, verify, allow []*rule) ruleIndex {
	idx := ruleIndex{known: map[string]*ruleSet{}, custom: map[string]*ruleSet{}}
	for _, t := range action.KnownTypes() {
		idx.known[t] = filterRules(deny, verify, allow, t, true)
	}
	for _, section := range [][]*rule{deny, verify, allow} {
		for _, r := range section {
			if r.actions == nil {
				continue
			}
			for _, t := range r.actions.custom {
				if idx.custom[t] == nil {
					idx.custom[t] = filterRules(deny, verify, allow, t, false)
				}
			}
		}
	}
	idx.otherKnown = filterRules(deny, verify, allow, "", true)
	idx.unknown = filterRules(deny, verify, allow, "", false)
	return idx
}

// filterRules selects the rules applicable to type t. For unknown types,
// allow rules apply only when they name the type explicitly.
func filterRules(deny, verify, allow []*rule, t string, known bool) *ruleSet {
	s := &ruleSet{}
	for i, r := range deny {
		if r.actions == nil || r.actions.covers(t) {
			s.rules = append(s.rules, ruleEntry{cond: r.cond, rule: r, index: i})
		}
	}
	for i, r := range verify {
		if r.actions == nil || r.actions.covers(t) {
			s.rules = append(s.rules, ruleEntry{cond: r.cond, rule: r, index: len(deny) + i})
		}
	}
	for i, r := range allow {
		if known && (r.actions == nil || r.actions.covers(t)) ||
			!known && r.actions != nil && t != "" && r.actions.namesExplicitly(t) {
			s.rules = append(s.rules, ruleEntry{cond: r.cond, rule: r, index: len(deny) + len(verify) + i})
		}
	}
	return s
}

// noRules serves a Policy that was not built by Parse (the zero value).
var noRules = &ruleSet{}

// lookup returns the rules that can apply to a.
func (idx *ruleIndex) lookup(a *action.Action) *ruleSet {
	s := idx.unknown
	if a.Known {
		if s = idx.known[a.Type]; s == nil {
			s = idx.otherKnown
		}
	} else if c := idx.custom[a.Type]; c != nil {
		s = c
	}
	if s == nil {
		return noRules
	}
	return s
}
