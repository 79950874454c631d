package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/trace"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/heuristics"
	"github.com/parapet-dev/parapet/rules/policy"
)

const (
	allow    = pb.VerdictDecision_VERDICT_DECISION_ALLOW
	block    = pb.VerdictDecision_VERDICT_DECISION_BLOCK
	escalate = pb.VerdictDecision_VERDICT_DECISION_ESCALATE
)

// decide runs the tiers on a cache miss and caches the verdict. key is the
// request's cache key (zero when there is no cache); spans, when not nil,
// records a span per stage.
func (p *Pipeline) decide(ctx context.Context, rs *ruleset, in Input, now instant, key cacheKey, spans *stageSpans) (*pb.Verdict, error) {
	req := in.Request
	// Verdicts are cached across sessions, so nothing may depend on the session.
	req.Caller.SessionID = ""
	var sp trace.Span
	if spans != nil {
		_, sp = spans.start(SpanCanonicalize)
	}
	act, err := action.Canonicalize(req, p.limits)
	if spans != nil {
		endStage(sp, err)
	}
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return deadlineVerdict(ctx, act, rs, now), nil
	}

	v := newVerdict(&act.Hash)
	v.ActionType, v.PolicyVersion, v.Confidence, v.EvaluatedAt = act.Type, rs.policy.Version, 1.0, now.unix

	// Tier 0.
	if spans != nil {
		_, sp = spans.start(SpanPolicy)
	}
	pol, polIndex := rs.policy.Decide(act)
	t0 := rs.tier0For(&pol, polIndex)
	if spans != nil {
		endPolicy(sp, &pol, t0.outcome)
	}
	v.Decision, v.Tier = t0.outcome, TierPolicy
	v.RuleIds, v.Findings = t0.ruleIDs, t0.findings
	v.Confinement = pol.Confine
	required := max(in.MinTier, pol.RequiredTier)
	// reasons is nil while the Tier 0 reason alone explains the verdict,
	// which lets most verdicts share t0's prepared reasoning. It only
	// feeds summarize, so a stack buffer holds the usual few.
	var reasons []string
	var reasonBuf [6]string

	// Tier 1 runs unless the policy already blocked.
	if v.Decision != block {
		if spans != nil {
			_, sp = spans.start(SpanHeuristics)
		}
		buf := findingBufs.Get().(*[]heuristics.Finding)
		findings := rs.analyzer.AnalyzeAppend(ctx, act, *buf)
		if spans != nil {
			endHeuristics(sp, findings)
		}
		if ctx.Err() != nil {
			// The analysis stopped early: what it found is incomplete.
			putFindings(buf, findings)
			return deadlineVerdict(ctx, act, rs, now), nil
		}
		if len(findings) > 0 {
			reasons = addFindings(v, t0, findings, reasonBuf[:0])
			v.Confinement = policy.NarrowConfinement(v.Confinement, leaksData(findings))
		}
		putFindings(buf, findings) // the verdict holds copies
	}

	// An allow rule that asks for a second opinion sends what Tier 1 did
	// not find known-safe to the evaluator, when there is one.
	if v.Decision == allow && pol.SecondOpinion && p.evaluator != nil && required < TierEvaluator && !rs.analyzer.KnownSafe(act) {
		required = TierEvaluator
		if reasons == nil {
			reasons = append(reasonBuf[:0], t0.decision.Reason)
		}
		reasons = append(reasons, secondOpinionReason)
	}

	// What the deterministic tiers escalate, or what must be judged at
	// Tier 2 or above, goes to the evaluator; without one, to a human.
	noEvaluator := false
	if v.Decision != block && (v.Decision == escalate || required >= TierEvaluator) {
		v.RequiredTier = max(required, TierEvaluator)
		if required < TierHuman && p.evaluator != nil {
			// The evaluator shows the model why the deterministic tiers sent it.
			v.Reasoning = t0.reasoning(v.Decision, reasons, false)
			if p.cache == nil {
				key = makeCacheKey(rs.policy.Version, &in)
			}
			if spans == nil {
				return p.tier2(ctx, key, in, act, v) // caches what it may
			}
			ctx, sp = spans.start(SpanEvaluator)
			ev, err := p.tier2(ctx, key, in, act, v)
			endEvaluator(sp, ev, err)
			return ev, err
		}
		if v.Decision == allow {
			v.Decision, v.Tier = escalate, required
			if reasons == nil {
				reasons = append(reasonBuf[:0], t0.decision.Reason)
			}
			reasons = append(reasons, fmt.Sprintf("the caller or policy requires tier %d review", required))
		}
		noEvaluator = required < TierHuman
	}
	v.Reasoning = t0.reasoning(v.Decision, reasons, noEvaluator)
	if p.cache != nil {
		v = p.cache.put(key, v, &act.Hash)
	}
	// The verdict keeps only strings of the action (see Release); the
	// evaluator's path above keeps the action itself, so does not release.
	act.Release()
	return v, nil
}

// findingBufs lends Tier 1 the storage for its findings: the verdict
// copies them (addFindings), so a decision needs the slice only briefly.
var findingBufs = sync.Pool{New: func() any { b := make([]heuristics.Finding, 0, 4); return &b }}

// maxPooledFindings bounds the buffers kept: one action with hundreds of
// findings must not pin that much memory in the pool.
const maxPooledFindings = 32

// putFindings clears findings (the pool keeps no message alive) and
// returns their storage to findingBufs.
func putFindings(buf *[]heuristics.Finding, findings []heuristics.Finding) {
	if cap(findings) > maxPooledFindings {
		return
	}
	clear(findings)
	*buf = findings[:0]
	findingBufs.Put(buf)
}

// leaksData reports whether a Tier 1 finding says data could leave:
// then the action runs without the network its rule granted, whatever
// its decision (an override may have allowed it, a human may approve it).
// Tier 1 can only narrow a grant.
func leaksData(findings []heuristics.Finding) bool {
	for i := range findings {
		switch findings[i].Category {
		case heuristics.CategoryExfiltration, heuristics.CategorySecrets,
			heuristics.CategoryCredentialAccess, heuristics.CategoryReverseShell:
			return true
		}
	}
	return false
}

// addFindings adds Tier 1's findings to v, which holds Tier 0's verdict,
// and returns the reasons that explain the result, appended to reasons
// (nil when Tier 0's reason alone does). Tier 1 decides when its worst
// finding is more severe than the policy's outcome; findings as severe as
// the outcome join the policy's reason.
func addFindings(v *pb.Verdict, t0 *tier0Verdict, findings []heuristics.Finding, reasons []string) []string {
	var list []*pb.Finding
	var protos []pb.Finding
	var ids []string
	switch {
	case len(findings) == 1:
		// The usual few findings: one allocation for everything.
		b := &findingsBlock1{}
		list, protos, ids = b.list[:0], b.protos[:], b.ids[:0]
	case len(findings) <= len(findingsBlock3{}.protos):
		b := &findingsBlock3{}
		list, protos, ids = b.list[:0], b.protos[:len(findings)], b.ids[:0]
	default:
		list = make([]*pb.Finding, 0, 1+len(findings))
		protos = make([]pb.Finding, len(findings))
		ids = make([]string, 0, 1+len(findings))
	}
	list = append(list, t0.finding)
	worst := allow
	for i := range findings {
		f := &findings[i]
		fp := &protos[i]
		fp.RuleId, fp.Category, fp.Severity, fp.Outcome = f.RuleID, f.Category, f.Severity, f.Outcome
		fp.Message, fp.Tier, fp.Evidence = f.Message, TierHeuristics, f.Evidence
		list = append(list, fp)
		worst = worst.Stricter(f.Outcome)
	}
	v.Findings = slices.Clip(list)
	switch {
	case worst.Rank() > v.Decision.Rank():
		v.Decision, v.Tier = worst, TierHeuristics
	case worst == v.Decision && worst != allow:
		ids = append(ids, t0.decision.RuleID)
		reasons = append(reasons, t0.decision.Reason)
	default:
		return nil // Tier 1 found something, but less severe than the policy's outcome
	}
	for i := range findings {
		if f := &findings[i]; f.Outcome == worst {
			ids = append(ids, f.RuleID)
			reasons = append(reasons, f.Message)
		}
	}
	v.RuleIds = slices.Clip(ids)
	return reasons
}

// findingsBlock1 and findingsBlock3 hold the findings and rule ids of a
// verdict with one, or up to three, Tier 1 findings.
type findingsBlock1 struct {
	list   [2]*pb.Finding
	protos [1]pb.Finding
	ids    [2]string
}

type findingsBlock3 struct {
	list   [4]*pb.Finding
	protos [3]pb.Finding
	ids    [4]string
}

// tier0Verdict is what one Tier 0 decision puts into every verdict it
// starts. A ruleset prepares one per rule when its policy is set, so the
// usual verdict (no Tier 1 finding) shares its rule ids, findings and
// reasoning instead of building them: verdicts are immutable once made
// (see verdictCache.verdict).
type tier0Verdict struct {
	decision policy.Decision
	// outcome is the decision's outcome, BLOCK if it was unset.
	outcome  pb.VerdictDecision
	finding  *pb.Finding
	ruleIDs  []string      // the rule id alone; len == cap, so append copies
	findings []*pb.Finding // finding alone; len == cap
	// summary is summarize(outcome, reason); summaryNoEvaluator adds
	// that a human must decide (set for ESCALATE only).
	summary, summaryNoEvaluator string
}

func newTier0Verdict(d policy.Decision) *tier0Verdict {
	t := &tier0Verdict{decision: d, outcome: d.Outcome}
	if t.outcome == pb.VerdictDecision_VERDICT_DECISION_UNSPECIFIED {
		t.outcome = block // fail closed on a policy that could not decide
	}
	t.finding = &pb.Finding{
		RuleId: d.RuleID, Category: policyCategory(d.Section), Outcome: t.outcome, Message: d.Reason,
		Tier: TierPolicy, Severity: t.outcome.Severity(),
	}
	t.ruleIDs = []string{d.RuleID}
	t.findings = []*pb.Finding{t.finding}
	t.summary = summarize(t.outcome, []string{d.Reason})
	if t.outcome == escalate {
		t.summaryNoEvaluator = summarize(escalate, []string{d.Reason, noEvaluatorReason})
	}
	return t
}

const noEvaluatorReason = "no LLM evaluator is configured, so a human must decide"

// secondOpinionReason explains why an allowed command went to Tier 2.
const secondOpinionReason = "the command is not built only from everyday programs with harmless arguments, so the evaluator gives a second opinion"

// reasoning is the verdict's Reasoning for decision d. reasons nil means
// the Tier 0 reason alone; noEvaluator adds that a human must decide.
func (t *tier0Verdict) reasoning(d pb.VerdictDecision, reasons []string, noEvaluator bool) string {
	if reasons == nil && d == t.outcome {
		switch {
		case !noEvaluator:
			return t.summary
		case t.summaryNoEvaluator != "":
			return t.summaryNoEvaluator
		}
	}
	if reasons == nil {
		reasons = []string{t.decision.Reason}
	}
	if noEvaluator {
		reasons = append(reasons, noEvaluatorReason)
	}
	return summarize(d, reasons)
}

// prepareTier0 builds the tier0Verdict of every decision pol can return
// for a known action type, in the order of pol.RuleDecisions.
func prepareTier0(pol *policy.Policy) []*tier0Verdict {
	ds := pol.RuleDecisions()
	out := make([]*tier0Verdict, len(ds))
	for i, d := range ds {
		out[i] = newTier0Verdict(d)
	}
	return out
}

// tier0For returns the prepared tier0Verdict of d, the decision at index
// in the policy's RuleDecisions (-1: none), or builds one (an unknown
// action type's decision names the type, so it is not prepared).
func (rs *ruleset) tier0For(d *policy.Decision, index int) *tier0Verdict {
	if index >= 0 && index < len(rs.tier0) {
		// Equal unless the policy's defaults were changed after it was
		// prepared: then the verdict follows the decision made.
		if t := rs.tier0[index]; t.decision == *d {
			return t
		}
	}
	return newTier0Verdict(*d)
}

// summarize joins the deciding reasons into one sentence, e.g.
// "Blocked: pipes a download into sh; …".
func summarize(d pb.VerdictDecision, reasons []string) string {
	var head string
	switch d {
	case allow:
		head = "Allowed"
	case escalate:
		head = "Needs approval"
	default:
		head = "Blocked"
	}
	// Trim and drop repeats first, so that the string is built at its
	// final size in one allocation.
	var buf [8]string
	kept := buf[:0]
	n := len(head) + 1
	for _, r := range reasons {
		r = strings.TrimSuffix(strings.TrimSpace(r), ".")
		if r == "" || slices.Contains(kept, r) {
			continue
		}
		kept = append(kept, r)
		n += len(r) + 2
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(head)
	for i, r := range kept {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(r)
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

// DeadlineRuleID names the verdict of an evaluation that the request's
// deadline (or a cancellation) stopped before every tier had judged it.
const DeadlineRuleID = "shield.deadline-exceeded"

// deadlineVerdict is BLOCK for an action whose evaluation ctx ended: an
// unfinished judgement never allows. It is not cached, so the action is
// judged in full when it is asked about again.
func deadlineVerdict(ctx context.Context, act *action.Action, rs *ruleset, now instant) *pb.Verdict {
	v := newVerdict(&act.Hash)
	v.ActionType, v.PolicyVersion, v.EvaluatedAt = act.Type, rs.policy.Version, now.unix
	v.Decision, v.Tier, v.Confidence = block, TierHeuristics, 1.0
	v.RuleIds = []string{DeadlineRuleID}
	reason := "the evaluation did not finish before the request's deadline (" + ctx.Err().Error() + "); ask again with more time or a shorter action"
	v.Findings = []*pb.Finding{{
		RuleId: DeadlineRuleID, Category: "shield", Severity: pb.Severity_SEVERITY_HIGH, Outcome: block,
		Message: reason, Tier: TierHeuristics,
	}}
	v.Reasoning = summarize(block, []string{reason})
	act.Release()
	return v
}
