package benchmarks

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/shieldd/pipeline"
)

// BenchmarkPipelinePerActionP50 times each corpus action on its own and
// reports the distribution across actions of their median latency:
// "p50-ns" is the median action's median, "p90-ns" the 90th percentile's,
// "max-ns" the slowest action's. A mean over the corpus (ns/op of the
// benchmarks above) hides slow actions; this does not.
//
// Each sample times a batch of calls of one action (so the clock's own
// cost is spread out), and b.N is the number of samples per action: the
// benchmark grows it like any other. Its ns/op is one sample of every
// action and means little on its own.
func BenchmarkPipelinePerActionP50(b *testing.B) {
	in := inputs(loadWorkload(b))
	b.Run("uncached", func(b *testing.B) {
		perAction(b, newPipeline(b, cacheOff, true), in, 4)
	})
	b.Run("cache-hit", func(b *testing.B) {
		perAction(b, newPipeline(b, 0, true), in, 32)
	})
}

func perAction(b *testing.B, p *pipeline.Pipeline, in []pipeline.Input, batch int) {
	ctx := context.Background()
	samples := make([]float64, b.N)
	medians := make([]float64, len(in))
	b.ResetTimer()
	for k, x := range in {
		if _, err := p.Evaluate(ctx, x); err != nil { // also fills the cache
			b.Fatalf("%s: %v", x.Request.Type, err)
		}
		for s := range samples {
			start := time.Now()
			for range batch {
				if _, err := p.Evaluate(ctx, x); err != nil {
					b.Fatal(err)
				}
			}
			samples[s] = float64(time.Since(start).Nanoseconds()) / float64(batch)
		}
		slices.Sort(samples)
		medians[k] = samples[len(samples)/2]
	}
	b.StopTimer()
	slices.Sort(medians)
	b.ReportMetric(rank(medians, 0.50), "p50-ns")
	b.ReportMetric(rank(medians, 0.90), "p90-ns")
	b.ReportMetric(medians[len(medians)-1], "max-ns")
}

// rank is the nearest-rank percentile of sorted values.
func rank(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
