// Package policy is Tier 0 of the Shield: a declarative YAML policy that
// decides ALLOW, BLOCK or ESCALATE for a canonical action before any
// heuristic or model looks at it.
//
// A policy has three ordered sections. The first matching deny rule blocks;
// otherwise the first matching verify rule escalates to the tier it names;
// otherwise the first matching allow rule allows; otherwise the policy's
// default applies. Everything is compiled when the policy loads, so that
// Evaluate only compares strings and walks small slices.
//
// Fail closed: nothing that cannot be evaluated turns into ALLOW, and no
// decision is ever VERDICT_DECISION_UNSPECIFIED.
package policy

import (
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/heuristics"
)

// Policy is a loaded and compiled policy. It is immutable and safe for
// concurrent use.
type Policy struct {
	// Name comes from the file's `name:` or, failing that, its base name.
	Name string
	// Version is "sha256:" and the hex SHA-256 of the source bytes.
	Version string
	// Source is the file path or "embedded:<name>".
	Source string
	// Heuristics tunes Tier 1 (the `heuristics:` section).
	Heuristics heuristics.Config
	Defaults   Defaults

	deny, verify, allow []*rule
	// index holds, per action type, the rules that can apply to it, in
	// policy order; see index.go.
	index ruleIndex
	// programs numbers the program names command matchers compare with.
	programs programTable
	// noMatchReason is generated at load so Evaluate does not format.
	noMatchReason string
}

// Defaults are the outcomes when no rule decides.
type Defaults struct {
	// NoMatch applies to a known action type that no rule matched.
	NoMatch pb.VerdictDecision
	// UnknownAction applies to an action type outside the known set that
	// no deny/verify rule and no allow rule naming it matched.
	UnknownAction pb.VerdictDecision
	// NoMatchTier and UnknownActionTier are the tiers an ESCALATE default
	// needs (2 = LLM evaluator, 3 = human); 0 for other outcomes.
	NoMatchTier       int32
	UnknownActionTier int32
}

// Decision is the outcome of Tier 0 for one action.
type Decision struct {
	// Outcome is ALLOW, BLOCK or ESCALATE — never UNSPECIFIED.
	Outcome pb.VerdictDecision
	// Section is "deny", "verify", "allow", "default" or "unknown_action".
	Section string
	// RuleID is the matching rule's id, or "policy.no-match" /
	// "policy.unknown-action" when a default decided.
	RuleID string
	// Reason is the rule's `reason:` or a generated sentence a user can act on.
	Reason string
	// RequiredTier is the tier an ESCALATE needs (2 = LLM evaluator,
	// 3 = human); 0 otherwise.
	RequiredTier int32
	// SecondOpinion is set by an allow rule with `second_opinion: true`:
	// when a Tier 2 evaluator is configured, an action the rule allows
	// goes to it unless Tier 1 marks it known-safe. Without an evaluator
	// the allow stands.
	SecondOpinion bool
	// Confine is the rule's `confine:` grant for the executor; nil means
	// the default confinement. Shared by every verdict of the rule: never
	// modify it.
	Confine *pb.Confinement
}

// Explanation says why one rule did or did not match.
type Explanation struct {
	Section string
	RuleID  string
	Matched bool
	// Why names each matcher that was checked and its result.
	Why string
}

// Section names used in decisions and explanations.
const (
	SectionDeny          = "deny"
	SectionVerify        = "verify"
	SectionAllow         = "allow"
	SectionDefault       = "default"
	SectionUnknownAction = "unknown_action"
)

// Rule ids of the defaults.
const (
	RuleNoMatch       = "policy.no-match"
	RuleUnknownAction = "policy.unknown-action"
)

// RuleDecisions lists every decision Evaluate can return for a known
// action type: each rule's, in policy order, then the no-match default.
// (Decisions for unknown types name the type in their reason, so they are
// not listed.) Callers use it to prepare per-decision work once per policy.
func (p *Policy) RuleDecisions() []Decision {
	if p == nil {
		return nil
	}
	out := make([]Decision, 0, p.RuleCount()+1)
	for _, section := range [][]*rule{p.deny, p.verify, p.allow} {
		for _, r := range section {
			out = append(out, r.decision)
		}
	}
	return append(out, p.defaultDecision(&action.Action{Known: true}))
}

// RuleCount is the number of rules in all sections.
func (p *Policy) RuleCount() int {
	if p == nil {
		return 0
	}
	return len(p.deny) + len(p.verify) + len(p.allow)
}
