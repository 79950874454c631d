package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"

	"github.com/parapet-dev/parapet/benchmarks/internal/workload"
	"github.com/parapet-dev/parapet/observability"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
)

// Result is what one measurement found.
type Result struct {
	Verdicts     int `json:"verdicts"`
	CacheEntries int `json:"cache_entries"`
	// CacheOwnBytes is what the cached verdicts hold of their own
	// actions, as the cache's byte budget counts it; CacheOwnBudget is
	// that budget.
	CacheOwnBytes  int64  `json:"cache_own_bytes"`
	CacheOwnBudget int64  `json:"cache_own_budget"`
	Workload       string `json:"workload"`
	Actions        int    `json:"actions"`
	// Vary is how the verdicts were made distinct (workload.Vary).
	Vary workload.Vary `json:"vary"`
	// OneOffs is how many verdicts varied by content were decided after
	// the baseline and before the fill (--one-offs); a fill of the
	// cache's size evicts them.
	OneOffs int `json:"one_offs,omitempty"`
	// Quoting is the padding of a quoting fill (see fill), 0 for the
	// corpus.
	Quoting int `json:"quoting,omitempty"`
	// Baseline is after the pipeline is built and has cached the
	// corpus's verdicts, before the fill.
	Baseline Memory `json:"baseline"`
	// AfterGC is after the fill and a garbage collection: the state the
	// brief's figure is about. Freed pages may still be resident.
	AfterGC Memory `json:"after_gc"`
	// AfterScavenge is after debug.FreeOSMemory returned freed pages to
	// the kernel: the live cost of the cache.
	AfterScavenge Memory `json:"after_scavenge"`
	// BytesPerVerdict is the live-heap growth per cached verdict.
	BytesPerVerdict float64          `json:"bytes_per_verdict"`
	Decisions       map[string]int64 `json:"decisions"`
	// MemoryLimit is the Go runtime's soft memory limit during the fill
	// (math.MaxInt64: none).
	MemoryLimit int64 `json:"memory_limit"`
	// MemoryLimitAfter is the limit once the cache is full: --memory-limit
	// auto raises it when the verdicts need more (TuneGC).
	MemoryLimitAfter int64 `json:"memory_limit_after"`
}

// cacheSizeFor is the cache size measure uses for n verdicts: all of
// them, and at least shieldd's default.
func cacheSizeFor(n int) int { return max(n, 100_000) }

// fill is what measure puts in the cache after its baseline: oneOffs
// verdicts varied by content, each with a shape of its own as in a
// server that has met such actions, then n verdicts made distinct as
// vary says, which are measured.
type fill struct {
	n       int
	vary    workload.Vary
	oneOffs int
	// quoting, when above 0, replaces the corpus in the measured fill:
	// reads of a private key whose distinct paths carry quoting bytes of
	// padding: blocks whose findings quote their actions at length,
	// 1.3 KiB of their own each, more than nearly every corpus verdict
	// (its largest holds 2.3 KiB). The cache's byte budget is what
	// bounds a cache of them.
	quoting int
}

// quotingRequest is request i of a quoting fill (see fill).
func quotingRequest(i, padding int) pipeline.Input {
	path := fmt.Sprintf("/home/dev/.ssh/id_ed25519-%d-%s", i, strings.Repeat("k", padding))
	return pipeline.Input{Request: action.Request{Type: "read_file", Payload: []byte(`{"path":"` + path + `"}`),
		Caller: action.Caller{WorkspaceID: "cachemem", WorkspaceRoot: "/home/dev/project", Home: "/home/dev"}}}
}

// decideDistinct decides corpus action i (round robin) made distinct as
// vary says, request i of run, twice: the cache keeps a verdict from its
// request's second sighting. A cache hit on the first is an error, since
// then the variation was not distinct. The second is a hit when the
// cache's doorkeeper took the first sighting for a second (a few in a
// thousand): the verdict was cached then.
func decideDistinct(ctx context.Context, p *pipeline.Pipeline, wl *workload.Workload, vary workload.Vary, run string, i int) (*pb.Verdict, error) {
	it := wl.Items[i%len(wl.Items)]
	v, err := decideTwice(ctx, p, pipeline.Input{Request: it.Distinct(vary, run, uint64(i)), MinTier: it.MinTier})
	if err != nil {
		return nil, fmt.Errorf("request %d (%s): %w", i, it.Name, err)
	}
	return v, nil
}

// decideTwice decides in twice (see decideDistinct) and returns the
// first verdict.
func decideTwice(ctx context.Context, p *pipeline.Pipeline, in pipeline.Input) (*pb.Verdict, error) {
	v, err := p.Evaluate(ctx, in)
	if err != nil {
		return nil, err
	}
	if v.CacheHit {
		return nil, fmt.Errorf("a cache hit: the request is not distinct")
	}
	if _, err := p.Evaluate(ctx, in); err != nil {
		return nil, fmt.Errorf("again: %w", err)
	}
	return v, nil
}

// measure builds the pipeline as shieldd serve does (metrics included),
// fills its cache as f says and reports memory before and after. With
// profile set it also writes a heap profile of the filled pipeline
// there, to show what a cached verdict is made of.
func measure(ctx context.Context, f fill, wl *workload.Workload, profile string) (*Result, error) {
	n, vary := f.n, f.vary
	m, err := observability.NewMetrics()
	if err != nil {
		return nil, err
	}
	p, err := pipeline.New(pipeline.Config{CacheSize: cacheSizeFor(n)})
	if err != nil {
		return nil, err
	}
	if err := p.Instrument(m.Meter("parapet/shieldd"), m.Registry); err != nil {
		return nil, err
	}
	res := &Result{Verdicts: n, Workload: wl.Source, Actions: len(wl.Items), Vary: vary, OneOffs: f.oneOffs, Quoting: f.quoting,
		Decisions: map[string]int64{}, MemoryLimit: debug.SetMemoryLimit(-1)}
	// Load code paths and lazy tables before the baseline, and cache the
	// corpus's verdicts (each decided twice: a verdict is kept from its
	// second sighting), so that their shapes are in the baseline, not in
	// the fill's figure.
	for range 2 {
		for _, it := range wl.Items {
			if _, err := p.Evaluate(ctx, pipeline.Input{Request: it.Request, MinTier: it.MinTier}); err != nil {
				return nil, fmt.Errorf("%s: %w", it.Name, err)
			}
		}
	}
	settle(true)
	if res.Baseline, err = snapshot(); err != nil {
		return nil, err
	}

	for i := range f.oneOffs {
		if _, err := decideDistinct(ctx, p, wl, workload.VaryContent, "once", i); err != nil {
			return nil, fmt.Errorf("one-off %w", err)
		}
	}
	for i := range n {
		var v *pb.Verdict
		if f.quoting > 0 {
			if v, err = decideTwice(ctx, p, quotingRequest(i, f.quoting)); err != nil {
				err = fmt.Errorf("quoting request %d: %w", i, err)
			}
		} else {
			v, err = decideDistinct(ctx, p, wl, vary, "mem", i)
		}
		if err != nil {
			return nil, err
		}
		res.Decisions[v.Decision.String()]++
	}

	settle(false)
	if res.AfterGC, err = snapshot(); err != nil {
		return nil, err
	}
	settle(true)
	if res.AfterScavenge, err = snapshot(); err != nil {
		return nil, err
	}
	if profile != "" {
		if err := writeHeapProfile(profile); err != nil {
			return nil, err
		}
	}
	st := p.Status()
	res.CacheEntries, res.CacheOwnBytes, res.CacheOwnBudget = st.CacheEntries, st.CacheOwnBytes, st.CacheOwnBudget
	res.MemoryLimitAfter = debug.SetMemoryLimit(-1)
	// A fill the byte budget cut short is counted by the entries it left.
	if kept := min(n, res.CacheEntries); kept > 0 {
		res.BytesPerVerdict = (float64(res.AfterScavenge.HeapAlloc) - float64(res.Baseline.HeapAlloc)) / float64(kept)
	}
	runtime.KeepAlive(p)
	return res, nil
}

// settle collects garbage twice (the second pass frees what finalisers
// released) and, with scavenge, returns free pages to the kernel.
func settle(scavenge bool) {
	runtime.GC()
	runtime.GC()
	if scavenge {
		debug.FreeOSMemory()
	}
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
