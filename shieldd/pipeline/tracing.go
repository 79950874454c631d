package pipeline

import (
	"context"
	"reflect"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/heuristics"
	"github.com/parapet-dev/parapet/rules/policy"
)

// Spans an evaluation makes under the caller's span (shieldd's
// "shieldd.evaluate"), one per stage it reaches.
const (
	SpanCache        = "shieldd.cache"
	SpanCanonicalize = "shieldd.canonicalize"
	SpanPolicy       = "shieldd.tier0.policy"
	SpanHeuristics   = "shieldd.tier1.heuristics"
	SpanEvaluator    = "shieldd.tier2.evaluator"
)

// Attribute keys, shared with the evaluation span.
const (
	attrDecision = attribute.Key("parapet.decision")
	attrTier     = attribute.Key("parapet.tier")
	attrRuleIDs  = attribute.Key("parapet.rule_ids")
	attrCacheHit = attribute.Key("parapet.cache_hit")
	attrFindings = attribute.Key("parapet.findings")
)

const tracerName = "github.com/parapet-dev/parapet/shieldd/pipeline"

// stageSpans makes the stage spans of one evaluation, children of the
// span in ctx, with that span's tracer provider. It exists only when that
// span is recording: otherwise Evaluate holds a nil *stageSpans and does
// no span work at all (a cache hit takes under half a microsecond; even a
// non-recording span would be a noticeable share).
type stageSpans struct {
	ctx    context.Context
	tracer trace.Tracer
}

func (p *Pipeline) startStageSpans(ctx context.Context) *stageSpans {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return nil
	}
	return &stageSpans{ctx: ctx, tracer: p.tracerFor(parent.TracerProvider())}
}

// tracerFor returns the pipeline's tracer from tp. Asking the SDK for a
// tracer takes a lock and a map lookup, so the last one is kept: callers
// almost always share one provider.
func (p *Pipeline) tracerFor(tp trace.TracerProvider) trace.Tracer {
	if c := p.tracer.Load(); c != nil && c.provider == tp {
		return c.tracer
	}
	t := tp.Tracer(tracerName)
	// Only comparable providers are kept: comparing an interface whose
	// dynamic type is not comparable panics.
	if reflect.TypeOf(tp).Comparable() {
		p.tracer.Store(&cachedTracer{provider: tp, tracer: t})
	}
	return t
}

type cachedTracer struct {
	provider trace.TracerProvider
	tracer   trace.Tracer
}

// start starts a stage span; every stage is a child of the caller's span.
func (s *stageSpans) start(name string) (context.Context, trace.Span) {
	return s.tracer.Start(s.ctx, name)
}

// endCache ends the cache lookup span; v is the cached verdict or nil.
func endCache(sp trace.Span, v *pb.Verdict) {
	sp.SetAttributes(attrCacheHit.Bool(v != nil))
	if v != nil {
		setVerdict(sp, v)
	}
	sp.End()
}

// endStage ends a span with err as its status, if any.
func endStage(sp trace.Span, err error) {
	if err != nil {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, err.Error())
	}
	sp.End()
}

// endPolicy ends the Tier 0 span with the policy's decision.
func endPolicy(sp trace.Span, d *policy.Decision, outcome pb.VerdictDecision) {
	sp.SetAttributes(attrDecision.String(outcome.Word()), attrTier.Int(int(TierPolicy)),
		attrRuleIDs.StringSlice([]string{d.RuleID}))
	sp.End()
}

// endHeuristics ends the Tier 1 span with what Tier 1 alone would decide
// (its most severe finding, ALLOW without one) and the rules that fired.
func endHeuristics(sp trace.Span, findings []heuristics.Finding) {
	worst := allow
	ids := make([]string, len(findings))
	for i, f := range findings {
		ids[i] = f.RuleID
		worst = worst.Stricter(f.Outcome)
	}
	sp.SetAttributes(attrDecision.String(worst.Word()), attrTier.Int(int(TierHeuristics)),
		attrRuleIDs.StringSlice(ids), attrFindings.Int(len(findings)))
	sp.End()
}

// endEvaluator ends the Tier 2 span with the verdict it produced.
func endEvaluator(sp trace.Span, v *pb.Verdict, err error) {
	if err == nil && v != nil {
		setVerdict(sp, v)
	}
	endStage(sp, err)
}

func setVerdict(sp trace.Span, v *pb.Verdict) {
	sp.SetAttributes(attrDecision.String(v.Decision.Word()), attrTier.Int(int(v.Tier)),
		attrRuleIDs.StringSlice(v.RuleIds))
}
