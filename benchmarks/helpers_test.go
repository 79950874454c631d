package benchmarks

import (
	"context"
	"flag"
	"testing"

	"github.com/parapet-dev/parapet/benchmarks/internal/workload"
	"github.com/parapet-dev/parapet/observability"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
)

// corpusDir replaces the embedded corpus:
// go test -bench . ./benchmarks -args -corpus DIR
var corpusDir = flag.String("corpus", "", "directory of case files to benchmark with (default: the embedded corpus)")

func loadWorkload(tb testing.TB) *workload.Workload {
	tb.Helper()
	wl, err := workload.Load(*corpusDir)
	if err != nil {
		tb.Fatal(err)
	}
	return wl
}

func inputs(wl *workload.Workload) []pipeline.Input {
	in := make([]pipeline.Input, len(wl.Items))
	for i, it := range wl.Items {
		in[i] = pipeline.Input{Request: it.Request, MinTier: it.MinTier}
	}
	return in
}

// newPipeline builds a pipeline on the embedded default policy. With
// metrics it is wired as shieldd serve wires it, so the instrumentation's
// cost is part of every decision measured.
func newPipeline(tb testing.TB, cacheSize int, withMetrics bool) *pipeline.Pipeline {
	tb.Helper()
	cfg := pipeline.Config{CacheSize: cacheSize}
	p, err := pipeline.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if withMetrics {
		m, err := observability.NewMetrics()
		if err != nil {
			tb.Fatal(err)
		}
		if err := p.Instrument(m.Meter("parapet/shieldd"), m.Registry); err != nil {
			tb.Fatal(err)
		}
	}
	return p
}

// metricsModes runs a benchmark with production instrumentation and
// without, to show what the instrumentation costs.
var metricsModes = []struct {
	name string
	on   bool
}{{"metrics=on", true}, {"metrics=off", false}}

const cacheOff = -1 // pipeline.Config.CacheSize that disables the cache

// cacheVerdict decides in twice, so that p's cache holds its verdict:
// the cache keeps a verdict from its request's second sighting.
func cacheVerdict(ctx context.Context, b *testing.B, p *pipeline.Pipeline, in pipeline.Input) {
	b.Helper()
	for range 2 {
		if _, err := p.Evaluate(ctx, in); err != nil {
			b.Fatalf("%s: %v", in.Request.Type, err)
		}
	}
}
