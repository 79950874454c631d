package benchmarks

import (
	"context"
	"math"
	"runtime"
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
// The same figures are reported in CPU time of the benchmark's thread
// ("p50-cpu-ns", …), which other work on a shared machine does not
// inflate; the garbage collector's background work on other threads is
// not in them.
//
// Each sample times a batch of calls of one action (so the clock's own
// cost is spread out). b.N is the number of samples over the whole corpus,
// shared out evenly between actions, with at least minSamples and at most
// maxSamples per action: enough for a stable median, and bounded even
// under -benchtime=Nx with a large N. ns/op (about one batch) means
// little on its own.
func BenchmarkPipelinePerActionP50(b *testing.B) {
	in := inputs(loadWorkload(b))
	b.Run("uncached", func(b *testing.B) {
		perAction(b, newPipeline(b, cacheOff, true), in, 4)
	})
	b.Run("cache-hit", func(b *testing.B) {
		perAction(b, newPipeline(b, 0, true), in, 32)
	})
}

// Samples per action in BenchmarkPipelinePerActionP50, and the passes
// over the corpus they are spread across.
const (
	minSamples   = 5
	maxSamples   = 1000
	samplePasses = 20
)

func perAction(b *testing.B, p *pipeline.Pipeline, in []pipeline.Input, batch int) {
	perActionCtx(context.Background(), b, p, in, batch)
}

// perActionCtx is perAction with the context every call gets.
//
// The samples of each action are taken in samplePasses passes over the
// whole corpus, not all at once: this VM has slow spells (other tenants'
// load; the same binary runs up to 1.6 times slower for seconds to
// minutes), and the median of samples spread over the run is the
// machine's usual speed unless the spells fill half of it. Each pass
// starts an action with two untimed calls, so the batches it times run
// with warm caches, as when all its samples are taken at once (the
// second call also puts the verdict in the decision cache, which admits
// a request on its second sighting).
func perActionCtx(ctx context.Context, b *testing.B, p *pipeline.Pipeline, in []pipeline.Input, batch int) {
	// The thread CPU clock is per OS thread: stay on one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := min(max((b.N+len(in)-1)/len(in), minSamples), maxSamples)
	passes := min(samplePasses, n)
	wall := make([][]float64, len(in))
	cpu := make([][]float64, len(in))
	for k := range in {
		wall[k], cpu[k] = make([]float64, 0, n), make([]float64, 0, n)
	}
	_, haveCPU := threadCPU()
	b.ResetTimer()
	for pass := range passes {
		share := n / passes // this pass's share of the n samples
		if pass < n%passes {
			share++
		}
		for k, x := range in {
			cacheVerdict(ctx, b, p, x)
			for range share {
				c0, _ := threadCPU()
				start := time.Now()
				for range batch {
					if _, err := p.Evaluate(ctx, x); err != nil {
						b.Fatal(err)
					}
				}
				w := float64(time.Since(start).Nanoseconds()) / float64(batch)
				c1, _ := threadCPU()
				wall[k] = append(wall[k], w)
				cpu[k] = append(cpu[k], float64(c1-c0)/float64(batch))
			}
		}
	}
	b.StopTimer()
	wallMedians := make([]float64, len(in))
	cpuMedians := make([]float64, len(in))
	for k := range in {
		wallMedians[k], cpuMedians[k] = median(wall[k]), median(cpu[k])
	}
	report := func(medians []float64, suffix string) {
		slices.Sort(medians)
		b.ReportMetric(rank(medians, 0.50), "p50-"+suffix)
		b.ReportMetric(rank(medians, 0.90), "p90-"+suffix)
		b.ReportMetric(medians[len(medians)-1], "max-"+suffix)
	}
	report(wallMedians, "ns")
	if haveCPU {
		report(cpuMedians, "cpu-ns")
	}
}

// median sorts v in place.
func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

// rank is the nearest-rank percentile of sorted values.
func rank(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
