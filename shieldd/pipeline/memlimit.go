package pipeline

import (
	"context"
	"fmt"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// Memory budget of a pipeline, for the Go runtime's soft memory limit
// (runtime/debug.SetMemoryLimit). The limit counts the Go heap, stacks and
// runtime structures, not the binary's own pages (about 20 MiB of a
// shieldd's resident memory).
const (
	// memoryBase covers the pipeline, policies, servers and requests in
	// flight.
	memoryBase = 24 << 20
	// memoryPerVerdict covers one cached verdict whose shape is shared
	// (the verdicts of one rule without Tier 1 findings, or the same
	// action asked for from other workspaces): about 100 live bytes, its
	// LRU slot and index cell, with room for the garbage a busy cache
	// makes between collections. A verdict with evidence of its own holds
	// about 390 bytes; TuneMemoryLimit raises the limit when they fill
	// the cache.
	memoryPerVerdict = 160
)

// MemoryLimit returns the soft memory limit in bytes for a shieldd whose
// cache holds up to cacheSize verdicts (0 or less: no cache), given the
// --memory-limit setting: "auto", "off", or a size as GOMEMLIMIT writes
// it ("48MiB", "1GiB", "50000000"). 0 means leave the runtime as it is:
// "off", or "auto" when GOMEMLIMIT is set (envSet), which then decides.
//
// The limit is soft: the garbage collector works harder as the heap
// nears it (at most half the CPU), and nothing fails if the heap needs
// more. "auto" keeps a shieldd with 100 000 cached verdicts that share
// their shapes under 64 MiB resident instead of letting the heap double
// between collections. That the collector then runs often is cheap
// because the full cache is nearly free to mark (verdictLRU: one array,
// few pointers); with a cache of one heap node per entry the same limit
// had the collector take over a quarter of the CPU (benchmarks/README.md).
// Verdicts with evidence of their own need more than the budget: the
// caller runs TuneMemoryLimit for auto, which raises it.
func MemoryLimit(setting string, cacheSize int, envSet bool) (int64, error) {
	s := strings.TrimSpace(setting)
	switch {
	case s == "off":
		return 0, nil
	case IsAuto(s):
		if envSet {
			return 0, nil
		}
		return memoryBase + int64(max(cacheSize, 0))*memoryPerVerdict, nil
	default:
		n, err := parseByteSize(s)
		if err != nil {
			return 0, fmt.Errorf("memory limit %q: %w (want auto, off, or a size such as 64MiB)", setting, err)
		}
		if n < 8<<20 {
			return 0, fmt.Errorf("memory limit %q: below 8MiB, the collector would run without pause", setting)
		}
		return n, nil
	}
}

// IsAuto reports whether a --memory-limit setting is "auto" (or empty).
func IsAuto(setting string) bool {
	s := strings.TrimSpace(setting)
	return s == "" || s == "auto"
}

// liveHeapMetric is the heap the last collection found live.
const liveHeapMetric = "/gc/heap/live:bytes"

// AutoMemoryLimit is the soft memory limit for a budget (MemoryLimit's
// auto) and a live heap: the budget, or the live heap with half as much
// again for garbage (as GOGC=50 would allow) plus memoryBase for what is
// not heap, whichever is higher.
//
// A fixed budget cannot know what the cached verdicts hold. When the live
// heap reaches the limit, the collector runs without pause and takes
// half the CPU, which is worse than any memory it saves: with 100 000
// verdicts that carry evidence of their own (about 390 bytes each, where
// the budget counts 160), a shieldd on the budget alone spent 55 % of its
// CPU collecting and served a quarter of its cached throughput
// (benchmarks/README.md, "Eighth pass").
func AutoMemoryLimit(budget, live int64) int64 {
	return max(budget, memoryBase+live+live/2)
}

// TuneMemoryLimit keeps the runtime's soft memory limit at
// AutoMemoryLimit(budget, live heap) until ctx ends, reading the live
// heap every interval. It changes the limit only when the new one differs
// from the current by more than a sixteenth, and then calls changed (if
// not nil) with the new limit and the live heap.
func TuneMemoryLimit(ctx context.Context, budget int64, every time.Duration, changed func(limit, live int64)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if limit, live, ok := tuneMemoryLimit(budget); ok && changed != nil {
			changed(limit, live)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// tuneMemoryLimit is one step of TuneMemoryLimit; ok reports a change.
func tuneMemoryLimit(budget int64) (limit, live int64, ok bool) {
	sample := []metrics.Sample{{Name: liveHeapMetric}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0, 0, false // a runtime without the metric: keep the budget
	}
	live = int64(min(sample[0].Value.Uint64(), math.MaxInt64/2))
	limit = AutoMemoryLimit(budget, live)
	current := debug.SetMemoryLimit(-1)
	if diff := limit - current; diff > current/16 || -diff > current/16 {
		debug.SetMemoryLimit(limit)
		return limit, live, true
	}
	return current, live, false
}

// parseByteSize reads a byte count with an optional B, KiB, MiB, GiB or
// TiB suffix, as GOMEMLIMIT does.
func parseByteSize(s string) (int64, error) {
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}
	shift := uint(0)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, shift = rest, u.shift
			break
		}
	}
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, fmt.Errorf("not a number of bytes")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not a number of bytes")
	}
	if n > (1<<62)>>shift {
		return 0, fmt.Errorf("too large")
	}
	return n << shift, nil
}
