package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/heuristics"
)

const (
	allow    = pb.VerdictDecision_VERDICT_DECISION_ALLOW
	block    = pb.VerdictDecision_VERDICT_DECISION_BLOCK
	escalate = pb.VerdictDecision_VERDICT_DECISION_ESCALATE
)

// severity orders decisions: BLOCK > ESCALATE > ALLOW. An unset decision
// ranks like BLOCK so that it can never read as ALLOW.
func severity(d pb.VerdictDecision) int {
	switch d {
	case allow:
		return 0
	case escalate:
		return 1
	}
	return 2
}

// decide runs the tiers on a cache miss. key is the request's cache key
// (zero when there is no cache). settled reports a verdict the Tier 2 path
// has already cached, or that must not be cached.
func (p *Pipeline) decide(ctx context.Context, rs *ruleset, in Input, now time.Time, key cacheKey) (_ *pb.Verdict, settled bool, _ error) {
	req := in.Request
	// Verdicts are cached across sessions, so nothing may depend on the session.
	req.Caller.SessionID = ""
	act, err := action.Canonicalize(req, p.limits)
	if err != nil {
		return nil, false, err
	}

	v := &pb.Verdict{
		ActionHash:    act.HashHex(),
		ActionType:    act.Type,
		PolicyVersion: rs.policy.Version,
		Confidence:    1.0,
		EvaluatedAt:   now.Unix(),
	}

	// Tier 0.
	pol := rs.policy.Evaluate(act)
	v.Decision, v.Tier = pol.Outcome, TierPolicy
	if v.Decision == pb.VerdictDecision_VERDICT_DECISION_UNSPECIFIED {
		v.Decision = block // fail closed on a policy that could not decide
	}
	v.RuleIds = append(v.RuleIds, pol.RuleID)
	v.Findings = append(v.Findings, &pb.Finding{
		RuleId: pol.RuleID, Category: policyCategory(pol.Section), Outcome: v.Decision, Message: pol.Reason,
		Tier: TierPolicy, Severity: policySeverity(v.Decision),
	})
	required := max(in.MinTier, pol.RequiredTier)
	reasons := []string{pol.Reason}

	// Tier 1 runs unless the policy already blocked.
	if v.Decision != block {
		findings := rs.analyzer.Analyze(act)
		var decisive []string
		worst := allow
		for _, f := range findings {
			v.Findings = append(v.Findings, findingProto(f))
			if severity(f.Outcome) > severity(worst) {
				worst = f.Outcome
			}
		}
		if severity(worst) > severity(v.Decision) {
			v.Decision, v.Tier = worst, TierHeuristics
			v.RuleIds, reasons = nil, nil
		}
		if worst == v.Decision && worst != allow {
			for _, f := range findings {
				if f.Outcome == worst {
					v.RuleIds = append(v.RuleIds, f.RuleID)
					decisive = append(decisive, f.Message)
				}
			}
			reasons = append(reasons, decisive...)
		}
	}

	// What the deterministic tiers escalate, or what must be judged at
	// Tier 2 or above, goes to the evaluator; without one, to a human.
	if v.Decision != block && (v.Decision == escalate || required >= TierEvaluator) {
		v.RequiredTier = max(required, TierEvaluator)
		if required < TierHuman && p.evaluator != nil {
			// The evaluator shows the model why the deterministic tiers sent it.
			v.Reasoning = summarize(v.Decision, reasons)
			if p.cache == nil {
				key = makeCacheKey(rs.policy.Version, &in)
			}
			ev, err := p.tier2(ctx, key, in, act, v)
			return ev, true, err
		}
		if v.Decision == allow {
			v.Decision, v.Tier = escalate, required
			reasons = append(reasons, fmt.Sprintf("the caller or policy requires tier %d review", required))
		}
		if required < TierHuman {
			reasons = append(reasons, "no LLM evaluator is configured, so a human must decide")
		}
	}
	v.Reasoning = summarize(v.Decision, reasons)
	return v, false, nil
}

// summarize joins the deciding reasons into one sentence, e.g.
// "Blocked: pipes a download into sh; …".
func summarize(d pb.VerdictDecision, reasons []string) string {
	var b strings.Builder
	switch d {
	case allow:
		b.WriteString("Allowed")
	case escalate:
		b.WriteString("Needs approval")
	default:
		b.WriteString("Blocked")
	}
	n := 0
	for i, r := range reasons {
		r = strings.TrimSuffix(strings.TrimSpace(r), ".")
		if r == "" || slices.ContainsFunc(reasons[:i], func(prev string) bool {
			return strings.TrimSuffix(strings.TrimSpace(prev), ".") == r
		}) {
			continue
		}
		if n == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(r)
		n++
	}
	b.WriteByte('.')
	return b.String()
}

// policyCategory names a Tier 0 finding's category without allocating.
func policyCategory(section string) string {
	switch section {
	case "deny":
		return "policy.deny"
	case "verify":
		return "policy.verify"
	case "allow":
		return "policy.allow"
	case "default":
		return "policy.default"
	case "unknown_action":
		return "policy.unknown_action"
	}
	return "policy." + section
}

func policySeverity(d pb.VerdictDecision) pb.Severity {
	switch d {
	case block:
		return pb.Severity_SEVERITY_HIGH
	case escalate:
		return pb.Severity_SEVERITY_MEDIUM
	}
	return pb.Severity_SEVERITY_LOW
}

func findingProto(f heuristics.Finding) *pb.Finding {
	return &pb.Finding{
		RuleId: f.RuleID, Category: f.Category, Severity: f.Severity, Outcome: f.Outcome,
		Message: f.Message, Tier: TierHeuristics, Evidence: f.Evidence,
	}
}
