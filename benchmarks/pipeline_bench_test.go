package benchmarks

import (
	"context"
	"fmt"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/parapet-dev/parapet/benchmarks/internal/workload"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
)

// BenchmarkPipelineUncached is the full decision path (canonicalise,
// Tier 0, Tier 1) with the cache disabled, over the corpus round-robin.
func BenchmarkPipelineUncached(b *testing.B) {
	in := inputs(loadWorkload(b))
	for _, mode := range metricsModes {
		b.Run(mode.name, func(b *testing.B) {
			p := newPipeline(b, cacheOff, mode.on)
			ctx := context.Background()
			b.ReportAllocs()
			cpu := processCPU(b)
			for i := 0; b.Loop(); i++ {
				v, err := p.Evaluate(ctx, in[i%len(in)])
				if err != nil {
					b.Fatalf("%s: %v", in[i%len(in)].Request.Type, err)
				}
				if v.CacheHit {
					b.Fatal("cache hit with the cache disabled")
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkPipelineMiss is an uncached decision as shieldd serve makes
// it: the cache on at its default size and full, every request distinct
// (another workspace id). A request seen once is not cached (see
// verdictCache.put), so these one-offs leave the cache as it is; the
// /admitted variant sights each request once beforehand, off the clock,
// so that each measured decision inserts its verdict (interning its
// shape) and evicts the oldest. The ids are made before the timer starts.
func BenchmarkPipelineMiss(b *testing.B) {
	for _, admitted := range []bool{false, true} {
		name := "one-off"
		if admitted {
			name = "admitted"
		}
		b.Run(name, func(b *testing.B) {
			m := newMissStream(b, "miss-"+name, admitted)
			b.ReportAllocs()
			cpu := processCPU(b)
			for i := 0; b.Loop(); i++ {
				m.evaluate(b, m.input(b, i))
			}
			if !admitted {
				reportCPU(b, cpu)
				return
			}
			// The process's CPU time would include the first sightings
			// made off the clock, so only wall time is reported. A first
			// sighting the doorkeeper took for a second (its false
			// positives) was cached: its measured decision hit.
			b.ReportMetric(float64(m.hits)/float64(b.N), "hits/op")
		})
	}
}

// missStream is a pipeline whose cache, at shieldd's default size, is
// full of distinct verdicts, and the requests that miss it: the corpus
// over and over, each request with a workspace id of its own, made a
// batch at a time with the timer stopped. When sighted, each request of
// a batch is also decided once as it is made, so that its measured
// decision is its second sighting, which the cache admits.
type missStream struct {
	p       *pipeline.Pipeline
	items   []workload.Item
	tag     string
	batch   []pipeline.Input
	seq     uint64
	sighted bool
	hits    int // a sighted stream's measured decisions served from the cache
}

// sightedBatch is a sighted stream's batch: small enough that the
// cache's doorkeeper still remembers a batch's first sightings when its
// requests are measured (a word of it is cleared after about four).
const sightedBatch = 2048

func newMissStream(b *testing.B, tag string, sighted bool) *missStream {
	const size = 100_000
	n := 1 << 16
	if sighted {
		n = sightedBatch
	}
	m := &missStream{p: newPipeline(b, size, true), items: loadWorkload(b).Items, tag: tag, batch: make([]pipeline.Input, n), sighted: sighted}
	for range size {
		cacheVerdict(context.Background(), b, m.p, m.distinct())
	}
	m.refill(b)
	return m
}

// distinct is the next corpus action with a workspace id not sent before.
func (m *missStream) distinct() pipeline.Input {
	it := m.items[m.seq%uint64(len(m.items))]
	m.seq++
	return pipeline.Input{Request: it.Varied(workload.DistinctID(it.Request.Caller.WorkspaceID, m.tag, m.seq)), MinTier: it.MinTier}
}

func (m *missStream) refill(b *testing.B) {
	for j := range m.batch {
		m.batch[j] = m.distinct()
		if m.sighted {
			m.decide(b, m.batch[j])
		}
	}
}

// input is request i of a benchmark loop; a new batch is made, off the
// clock, each time the last one is used up.
func (m *missStream) input(b *testing.B, i int) pipeline.Input {
	if i > 0 && i%len(m.batch) == 0 {
		b.StopTimer()
		m.refill(b)
		b.StartTimer()
	}
	return m.batch[i%len(m.batch)]
}

// evaluate decides in, the stream's next request: a one-off must miss
// the cache; a sighted request misses unless its first sighting was
// cached (counted in hits).
func (m *missStream) evaluate(b *testing.B, in pipeline.Input) {
	if !m.sighted {
		m.decide(b, in)
		return
	}
	v, err := m.p.Evaluate(context.Background(), in)
	if err != nil {
		b.Fatal(err)
	}
	if v.CacheHit {
		m.hits++
	}
}

// decide decides in, which must miss the cache.
func (m *missStream) decide(b *testing.B, in pipeline.Input) {
	v, err := m.p.Evaluate(context.Background(), in)
	if err != nil {
		b.Fatal(err)
	}
	if v.CacheHit {
		b.Fatal("a distinct request hit the cache")
	}
}

// BenchmarkPipelineCacheHit replays the corpus after its verdicts have
// been cached (cacheVerdict), so every measured decision is a hit.
func BenchmarkPipelineCacheHit(b *testing.B) {
	in := inputs(loadWorkload(b))
	for _, mode := range metricsModes {
		b.Run(mode.name, func(b *testing.B) {
			p := newPipeline(b, 0, mode.on)
			ctx := context.Background()
			for _, x := range in {
				cacheVerdict(ctx, b, p, x)
			}
			b.ReportAllocs()
			cpu := processCPU(b)
			for i := 0; b.Loop(); i++ {
				v, err := p.Evaluate(ctx, in[i%len(in)])
				if err != nil {
					b.Fatal(err)
				}
				if !v.CacheHit {
					b.Fatalf("%s: cache miss after warming", in[i%len(in)].Request.Type)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkPipelineTracing is BenchmarkPipelinePerActionP50 (p50-ns,
// p50-cpu-ns, … as there) with a span in the context, as shieldd's
// evaluation span is: none, one that is not recording (an unsampled
// trace, --trace-sample-ratio 0), and a recording one, whose stage spans
// the pipeline then makes (exported nowhere, so this is their making
// alone). The first two must match the figures without tracing.
func BenchmarkPipelineTracing(b *testing.B) {
	in := inputs(loadWorkload(b))
	modes := []struct {
		name    string
		sampler sdktrace.Sampler // nil: no span at all
	}{{"no-span", nil}, {"unsampled", sdktrace.NeverSample()}, {"recording", sdktrace.AlwaysSample()}}
	for _, cache := range []struct {
		name  string
		size  int
		batch int
	}{{"uncached", cacheOff, 4}, {"cache-hit", 0, 32}} {
		for _, m := range modes {
			b.Run(cache.name+"/"+m.name, func(b *testing.B) {
				ctx := context.Background()
				if m.sampler != nil {
					tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(m.sampler))
					b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
					var span interface{ End(...trace.SpanEndOption) }
					ctx, span = tp.Tracer("benchmark").Start(ctx, "shieldd.evaluate")
					defer span.End()
				}
				perActionCtx(ctx, b, newPipeline(b, cache.size, true), in, cache.batch)
			})
		}
	}
}

// BenchmarkPipelineMissCold is BenchmarkPipelineMiss with the CPU's
// caches disturbed before each decision, as they are in shieldd serve:
// between two decisions a core runs gRPC, HTTP/2 framing, the kernel's
// socket code and other requests, which evict much of what the last
// decision left in L1 and L2. Before each decision the loop writes one
// byte in every 64 of a buffer of the sub-benchmark's size (0: none);
// decision-ns/op is the mean wall time of the decisions alone, timed one
// by one, so the sweep itself is not in it. The loop's decision at 0 and
// the same decision after a sweep of about L2's size bound what an
// uncached decision costs inside the server (benchmarks/README.md).
func BenchmarkPipelineMissCold(b *testing.B) {
	m := newMissStream(b, "cold", false)
	for _, sweep := range []int{0, 512 << 10, 1 << 20, 2 << 20} {
		b.Run(fmt.Sprintf("sweep=%dKiB", sweep>>10), func(b *testing.B) {
			buf := make([]byte, sweep)
			m.refill(b)
			var spent time.Duration
			for i := 0; b.Loop(); i++ {
				in := m.input(b, i)
				for j := 0; j < len(buf); j += 64 {
					buf[j]++
				}
				start := time.Now()
				m.evaluate(b, in)
				spent += time.Since(start)
			}
			b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N), "decision-ns/op")
		})
	}
}
