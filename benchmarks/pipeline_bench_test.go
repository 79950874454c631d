package benchmarks

import (
	"context"
	"testing"
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

// BenchmarkPipelineCacheHit replays the corpus after one pass has filled
// the cache, so every measured decision is a hit.
func BenchmarkPipelineCacheHit(b *testing.B) {
	in := inputs(loadWorkload(b))
	for _, mode := range metricsModes {
		b.Run(mode.name, func(b *testing.B) {
			p := newPipeline(b, 0, mode.on)
			ctx := context.Background()
			for _, x := range in {
				if _, err := p.Evaluate(ctx, x); err != nil {
					b.Fatalf("%s: %v", x.Request.Type, err)
				}
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
