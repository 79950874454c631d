// Command cachemem measures the memory of the Shield pipeline holding N
// cached verdicts (100 000 by default, shieldd's cache size): it builds
// the pipeline as shieldd serve does, evaluates N distinct actions (each
// twice, for the cache keeps a verdict from its second sighting), and
// prints resident memory (VmRSS) and Go heap figures before and after.
// For a running shieldd, use loadgen --distinct 100000 --metrics-url.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"

	"github.com/parapet-dev/parapet/benchmarks/internal/workload"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
)

// targetRSS is the budget for a pipeline holding 100 000 verdicts.
const targetRSS = 64 << 20

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cachemem", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 100_000, "distinct verdicts to cache")
	corpusDir := fs.String("corpus", "", "directory of case files (default: the embedded rules/corpus)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	memProfile := fs.String("memprofile", "", "write a heap profile of the filled pipeline to `FILE` (go tool pprof -sample_index=inuse_space)")
	memLimit := fs.String("memory-limit", "auto", "the Go runtime's soft memory limit, as shieldd serve --memory-limit (auto, off or a `SIZE`)")
	oneOffs := fs.Int("one-offs", 0, "before the measured fill, cache the verdicts of `N` actions varied by content (each decided twice: the cache keeps a verdict from its request's second sighting), each with a shape of its own, as a server that has met such actions first (a fill of the cache size, the default, evicts them)")
	varyFlag := fs.String("vary", string(workload.VaryWorkspace), "how the verdicts are made distinct: `workspace` (the corpus's verdicts, shapes shared) or content (each action's text distinct, as in production)")
	quoting := fs.Int("quoting", 0, "fill with reads of a private key whose distinct paths carry `BYTES` of padding instead of the corpus: verdicts that quote their actions at length, the worst case the cache's byte budget bounds (0: the corpus)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *n < 0 || *oneOffs < 0 || *quoting < 0 || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "cachemem: usage: cachemem [--n N] [--corpus DIR] [--json] [--memprofile FILE] [--memory-limit SIZE] [--vary workspace|content] [--one-offs N] [--quoting BYTES]")
		return 2
	}
	vary, err := workload.ParseVary(*varyFlag)
	if err != nil {
		fmt.Fprintf(stderr, "cachemem: %v\n", err)
		return 2
	}
	// As shieldd serve sets it for its cache size.
	limit, err := pipeline.MemoryLimit(*memLimit, cacheSizeFor(*n), os.Getenv("GOMEMLIMIT") != "")
	if err != nil {
		fmt.Fprintf(stderr, "cachemem: %v\n", err)
		return 2
	}
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
	wl, err := workload.Load(*corpusDir)
	if err != nil {
		fmt.Fprintf(stderr, "cachemem: %v\n", err)
		return 2
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go pipeline.TuneAutoGC(ctx, *memLimit, limit, nil) // as shieldd serve does
	res, err := measure(ctx, fill{n: *n, vary: vary, oneOffs: *oneOffs, quoting: *quoting}, wl, *memProfile)
	if err != nil {
		fmt.Fprintf(stderr, "cachemem: %v\n", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return 2
		}
		return 0
	}
	printText(stdout, res)
	return 0
}

func printText(w io.Writer, r *Result) {
	mib := func(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
	if r.Quoting > 0 {
		fmt.Fprintf(w, "pipeline that cached %d distinct verdicts (cache entries %d); reads of a private key whose paths carry %d bytes of padding\n",
			r.Verdicts, r.CacheEntries, r.Quoting)
	} else {
		fmt.Fprintf(w, "pipeline with %d distinct cached verdicts (cache entries %d); workload %d actions from %s, varied by %s\n",
			r.Verdicts, r.CacheEntries, r.Actions, r.Workload, r.Vary)
	}
	if r.OneOffs > 0 {
		fmt.Fprintf(w, "before the fill: %d one-off verdicts (varied by content)\n", r.OneOffs)
	}
	fmt.Fprintf(w, "decisions: %v\n\n", r.Decisions)
	fmt.Fprintf(w, "%-22s %12s %12s %12s %12s %12s %12s %12s\n", "", "VmRSS", "anonymous", "files", "VmHWM", "heap alloc", "heap inuse", "Go sys")
	for _, row := range []struct {
		name string
		m    Memory
	}{{"baseline", r.Baseline}, {"filled, after GC", r.AfterGC}, {"filled, scavenged", r.AfterScavenge}} {
		fmt.Fprintf(w, "%-22s %12s %12s %12s %12s %12s %12s %12s\n", row.name,
			mib(row.m.RSS), mib(row.m.RSSAnon), mib(row.m.RSSFile), mib(row.m.HWM), mib(row.m.HeapAlloc), mib(row.m.HeapInuse), mib(row.m.Sys))
	}
	fmt.Fprintf(w, "\nlive heap per cached verdict: %.0f bytes\n", r.BytesPerVerdict)
	if r.CacheEntries > 0 {
		fmt.Fprintf(w, "held of their own actions: %s of the cache's budget of %s, %.0f bytes per entry\n",
			mib(uint64(r.CacheOwnBytes)), mib(uint64(r.CacheOwnBudget)), float64(r.CacheOwnBytes)/float64(r.CacheEntries))
	}
	if r.MemoryLimit > 0 && r.MemoryLimit < math.MaxInt64 {
		fmt.Fprintf(w, "Go runtime memory limit: %s at the start, %s at the end (shieldd serve --memory-limit)\n",
			mib(uint64(r.MemoryLimit)), mib(uint64(r.MemoryLimitAfter)))
	} else {
		fmt.Fprintf(w, "Go runtime memory limit: none\n")
	}
	if r.Verdicts == 100_000 && r.Quoting == 0 {
		verdict := "met"
		if r.AfterGC.RSS > targetRSS {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "target: VmRSS ≤ 64 MiB with 100 000 verdicts (after GC): %s\n", verdict)
	}
}
