package pipeline

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// counters are the pipeline's hot-path tallies. They are plain atomics:
// a synchronous OpenTelemetry instrument costs ~340 ns per call here, more
// than a whole cache hit, so OTel observable counters read these at
// collection time instead.
type counters struct {
	decisions [4][4]atomic.Int64 // [tier][decision]
	// odd counts, by decision (0 for one out of range), verdicts whose
	// tier or decision is out of range; the daily totals include them.
	odd     [4]atomic.Int64
	hits    atomic.Int64
	misses  atomic.Int64
	errors  atomic.Int64
	rules   sync.Map // rule id → *atomic.Int64; ids come from the policy and catalogue, so bounded
	latency *latencyObservers
}

func (c *counters) recordDecision(v *pb.Verdict, took time.Duration) {
	if t, d := int(v.Tier), int(v.Decision); t >= 0 && t < 4 && d >= 0 && d < 4 {
		c.decisions[t][d].Add(1)
	} else if d >= 0 && d < 4 {
		c.odd[d].Add(1)
	} else {
		c.odd[0].Add(1)
	}
	if v.CacheHit {
		if c.latency != nil {
			c.latency.hit.Observe(took.Seconds())
		}
		return
	}
	if c.latency != nil {
		c.latency.miss.Observe(took.Seconds())
	}
	if len(v.RuleIds) > 0 && v.RuleIds[0] != "" {
		n, ok := c.rules.Load(v.RuleIds[0])
		if !ok {
			n, _ = c.rules.LoadOrStore(v.RuleIds[0], new(atomic.Int64))
		}
		n.(*atomic.Int64).Add(1)
	}
}

// totals sums the verdicts counted so far.
func (c *counters) totals() decisionTotals {
	var t decisionTotals
	for tier := range c.decisions {
		for d := range c.decisions[tier] {
			n := c.decisions[tier][d].Load()
			t.evaluations += n
			switch pb.VerdictDecision(d) {
			case block:
				t.blocks += n
			case escalate:
				t.escalations += n
			}
		}
	}
	for d := range c.odd {
		n := c.odd[d].Load()
		t.evaluations += n
		switch pb.VerdictDecision(d) {
		case block:
			t.blocks += n
		case escalate:
			t.escalations += n
		}
	}
	return t
}

type latencyObservers struct {
	hit, miss prometheus.Observer
}

// latencyBuckets span a sub-microsecond cache hit to a slow Tier 2 call.
var latencyBuckets = []float64{
	0.0000005, 0.000001, 0.0000025, 0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
}

// Instrument exports the pipeline's counters through meter (OTel
// observable counters, read at collection) and its latency histogram on
// reg (a native Prometheus histogram: an atomic add per observation).
func (p *Pipeline) Instrument(meter metric.Meter, reg prometheus.Registerer) error {
	c := &p.counters
	decisions, err := meter.Int64ObservableCounter("parapet.shield.decisions",
		metric.WithDescription("Verdicts by deciding tier and decision."))
	if err != nil {
		return err
	}
	rules, err := meter.Int64ObservableCounter("parapet.shield.rule_decisions",
		metric.WithDescription("Evaluated (uncached) verdicts by the first deciding rule id."))
	if err != nil {
		return err
	}
	hits, err := meter.Int64ObservableCounter("parapet.shield.cache.hits",
		metric.WithDescription("Verdicts served from the decision cache."))
	if err != nil {
		return err
	}
	misses, err := meter.Int64ObservableCounter("parapet.shield.cache.misses",
		metric.WithDescription("Evaluations that missed the decision cache."))
	if err != nil {
		return err
	}
	errs, err := meter.Int64ObservableCounter("parapet.shield.errors",
		metric.WithDescription("Evaluations rejected as malformed or oversized."))
	if err != nil {
		return err
	}
	entries, err := meter.Int64ObservableGauge("parapet.shield.cache.entries",
		metric.WithDescription("Verdicts currently cached."))
	if err != nil {
		return err
	}
	ownBytes, err := meter.Int64ObservableGauge("parapet.shield.cache.own_bytes",
		metric.WithDescription("What the cached verdicts hold of their own actions, against the cache's byte budget."),
		metric.WithUnit("By"))
	if err != nil {
		return err
	}
	var attrs [4][4]metric.ObserveOption
	for t := range 4 {
		for d := range 4 {
			label := "unspecified" // counted apart, so that a broken verdict shows
			if dec := pb.VerdictDecision(d); dec.Decided() {
				label = dec.Word()
			}
			attrs[t][d] = metric.WithAttributeSet(attribute.NewSet(attribute.Int("tier", t), attribute.String("decision", label)))
		}
	}
	_, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for t := range 4 {
			for d := range 4 {
				if n := c.decisions[t][d].Load(); n > 0 {
					o.ObserveInt64(decisions, n, attrs[t][d])
				}
			}
		}
		c.rules.Range(func(id, n any) bool {
			o.ObserveInt64(rules, n.(*atomic.Int64).Load(), metric.WithAttributes(attribute.String("rule", id.(string))))
			return true
		})
		o.ObserveInt64(hits, c.hits.Load())
		o.ObserveInt64(misses, c.misses.Load())
		o.ObserveInt64(errs, c.errors.Load())
		if p.cache != nil {
			o.ObserveInt64(entries, int64(p.cache.Len()))
			o.ObserveInt64(ownBytes, p.cache.OwnBytes())
		}
		return nil
	}, decisions, rules, hits, misses, errs, entries, ownBytes)
	if err != nil {
		return err
	}
	hist := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "parapet_shield_evaluation_duration_seconds",
		Help:    "Time to evaluate one action in the pipeline, by cache result.",
		Buckets: latencyBuckets,
	}, []string{"cache_hit"})
	if err := reg.Register(hist); err != nil {
		return err
	}
	c.latency = &latencyObservers{hit: hist.WithLabelValues("true"), miss: hist.WithLabelValues("false")}
	return nil
}
