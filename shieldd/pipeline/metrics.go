package pipeline

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// Metrics instruments the pipeline through an OpenTelemetry meter. A nil
// *Metrics records nothing.
type Metrics struct {
	decisions   metric.Int64Counter
	ruleMatches metric.Int64Counter
	latency     metric.Float64Histogram
	cacheHits   metric.Int64Counter
	cacheMisses metric.Int64Counter
	errors      metric.Int64Counter

	// Attribute sets are built once: building them per call would cost
	// more than the rest of a cache hit.
	decisionAttrs [4][4]metric.AddOption
	hitAttr       metric.RecordOption
	missAttr      metric.RecordOption
	ruleAttrs     sync.Map // rule id → metric.AddOption
}

// latencyBuckets span a sub-microsecond cache hit to a slow Tier 2 call.
var latencyBuckets = []float64{
	0.000001, 0.0000025, 0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
}

// NewMetrics creates the pipeline's instruments on m.
func NewMetrics(m metric.Meter) (*Metrics, error) {
	var err error
	mt := &Metrics{}
	if mt.decisions, err = m.Int64Counter("parapet.shield.decisions",
		metric.WithDescription("Verdicts by deciding tier and decision.")); err != nil {
		return nil, err
	}
	if mt.ruleMatches, err = m.Int64Counter("parapet.shield.rule_decisions",
		metric.WithDescription("Verdicts by deciding rule id.")); err != nil {
		return nil, err
	}
	if mt.latency, err = m.Float64Histogram("parapet.shield.evaluation.duration", metric.WithUnit("s"),
		metric.WithDescription("Time to evaluate one action, by cache result."),
		metric.WithExplicitBucketBoundaries(latencyBuckets...)); err != nil {
		return nil, err
	}
	if mt.cacheHits, err = m.Int64Counter("parapet.shield.cache.hits",
		metric.WithDescription("Verdicts served from the decision cache.")); err != nil {
		return nil, err
	}
	if mt.cacheMisses, err = m.Int64Counter("parapet.shield.cache.misses",
		metric.WithDescription("Evaluations that missed the decision cache.")); err != nil {
		return nil, err
	}
	if mt.errors, err = m.Int64Counter("parapet.shield.errors",
		metric.WithDescription("Evaluations rejected as malformed or oversized.")); err != nil {
		return nil, err
	}
	names := map[pb.VerdictDecision]string{}
	for num, name := range pb.VerdictDecision_name {
		names[pb.VerdictDecision(num)] = name
	}
	for tier := range 4 {
		for d := range 4 {
			mt.decisionAttrs[tier][d] = metric.WithAttributeSet(attribute.NewSet(
				attribute.Int("tier", tier),
				attribute.String("decision", decisionLabel(pb.VerdictDecision(d))),
			))
		}
	}
	mt.hitAttr = metric.WithAttributeSet(attribute.NewSet(attribute.Bool("cache_hit", true)))
	mt.missAttr = metric.WithAttributeSet(attribute.NewSet(attribute.Bool("cache_hit", false)))
	return mt, nil
}

func decisionLabel(d pb.VerdictDecision) string {
	switch d {
	case allow:
		return "allow"
	case block:
		return "block"
	case escalate:
		return "escalate"
	}
	return "unspecified"
}

func (m *Metrics) recordDecision(ctx context.Context, v *pb.Verdict, took time.Duration) {
	if m == nil {
		return
	}
	tier, d := int(v.Tier), int(v.Decision)
	if tier >= 0 && tier < 4 && d >= 0 && d < 4 {
		m.decisions.Add(ctx, 1, m.decisionAttrs[tier][d])
	}
	if v.CacheHit {
		m.latency.Record(ctx, took.Seconds(), m.hitAttr)
		return
	}
	m.latency.Record(ctx, took.Seconds(), m.missAttr)
	if len(v.RuleIds) > 0 && v.RuleIds[0] != "" {
		m.ruleMatches.Add(ctx, 1, m.ruleAttr(v.RuleIds[0]))
	}
}

// ruleAttr caches the attribute option per rule id. Rule ids come from the
// policy and the heuristics catalogue, so their number is bounded.
func (m *Metrics) ruleAttr(id string) metric.AddOption {
	if o, ok := m.ruleAttrs.Load(id); ok {
		return o.(metric.AddOption)
	}
	o := metric.WithAttributeSet(attribute.NewSet(attribute.String("rule", id)))
	m.ruleAttrs.Store(id, o)
	return o
}

func (m *Metrics) recordCacheHit(ctx context.Context) {
	if m != nil {
		m.cacheHits.Add(ctx, 1)
	}
}

func (m *Metrics) recordCacheMiss(ctx context.Context) {
	if m != nil {
		m.cacheMisses.Add(ctx, 1)
	}
}

func (m *Metrics) recordError(ctx context.Context) {
	if m != nil {
		m.errors.Add(ctx, 1)
	}
}
