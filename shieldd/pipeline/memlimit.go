package pipeline

import (
	"context"
	"fmt"
	"math"
	"os"
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
	// about 390 bytes; TuneGC raises the limit when they fill
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
// caller runs TuneGC for auto, which raises it (and lets a small heap
// grow to the budget before collecting), as far as the cache's byte
// budget lets the live heap grow (ownBytesPerEntry).
func MemoryLimit(setting string, cacheSize int, envSet bool) (int64, error) {
	s := strings.TrimSpace(setting)
	switch {
	case s == "off":
		return 0, nil
	case isAuto(s):
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

// isAuto reports whether a --memory-limit setting is "auto" (or empty).
func isAuto(setting string) bool {
	s := strings.TrimSpace(setting)
	return s == "" || s == "auto"
}

// gcState is what the tuner reads of the collector: the heap the last
// collection found live, the GC percent (-1: off) and soft memory limit
// in force, and the collections completed.
type gcState struct {
	live, limit int64
	percent     int
	cycles      uint64
}

// readGCState reads gcState from runtime/metrics, in one read per tuner
// step; ok is false on a runtime without these metrics.
func readGCState() (st gcState, ok bool) {
	sample := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"}, {Name: "/gc/gogc:percent"},
		{Name: "/gc/gomemlimit:bytes"}, {Name: "/gc/cycles/total:gc-cycles"},
	}
	metrics.Read(sample)
	for _, s := range sample {
		if s.Value.Kind() != metrics.KindUint64 {
			return gcState{}, false
		}
	}
	// The runtime reports a percent of off as a negative number cast to
	// uint64, and no limit as math.MaxInt64.
	return gcState{
		live:    int64(min(sample[0].Value.Uint64(), math.MaxInt64/2)),
		percent: int(int64(sample[1].Value.Uint64())),
		limit:   int64(min(sample[2].Value.Uint64(), math.MaxInt64)),
		cycles:  sample[3].Value.Uint64(),
	}, true
}

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

// AutoGC is the collector's setting under auto for a budget and a live
// heap: the soft memory limit and the GC percent (GOGC; -1 is off).
//
// While the live heap is at most half the budget, GOGC=100 would collect
// every time the heap doubles: a busy shieldd with a small heap (a cache
// not yet full, or one of shared shapes) allocates a few KiB per request
// and collected 45 times a second, a sixth of its CPU, with the budget's
// memory unused. So then the collector runs only when the heap reaches
// the budget (percent off, limit the budget). Past half the budget
// GOGC=100's goal is above it; the percent is back to 100 and the limit
// is AutoMemoryLimit's. At the switch both collect at about the budget,
// and neither lets the heap grow beyond the larger of the budget and
// what GOGC=100 under AutoMemoryLimit would.
func AutoGC(budget, live int64) (limit int64, gcPercent int) {
	if 2*live <= budget {
		return budget, -1
	}
	return AutoMemoryLimit(budget, live), 100
}

// GCSetting is what TuneGC set: the limit and GC percent in force, and
// the live heap they were worked out for.
type GCSetting struct {
	Limit, Live int64
	GCPercent   int
}

// TuneGC keeps the collector at AutoGC(budget, live heap) until ctx ends,
// reading the live heap every interval. keepPercent leaves the GC percent
// as it is (the operator set GOGC): then only the limit is tuned. The
// limit is raised only by more than a sixteenth, and lowered so too
// unless the percent is off. changed (if not nil) is called after each
// change.
//
// With the percent off, the runtime's own collection every two minutes
// does not run, so a server gone idle would hold up to the budget for
// good; TuneGC collects and returns the memory itself when no collection
// has run for idleCollectAfter (not when the operator turned it off).
func TuneGC(ctx context.Context, budget int64, every time.Duration, keepPercent bool, changed func(GCSetting)) {
	t := time.NewTicker(every)
	defer t.Stop()
	var idle idleCollector
	for {
		// A runtime without the metrics keeps the budget.
		if st, ok := readGCState(); ok {
			set, ok := tuneGC(budget, keepPercent, st)
			if ok && changed != nil {
				changed(set)
			}
			idle.collectIfDue(time.Now(), st.cycles, !keepPercent && set.GCPercent < 0, idleCollectAfter)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// TuneAutoGC runs TuneGC, checking every second, when the
// --memory-limit setting is auto and MemoryLimit gave it a budget (not
// when GOMEMLIMIT is set); a GOGC the operator set is kept. Otherwise it
// returns at once.
func TuneAutoGC(ctx context.Context, setting string, budget int64, changed func(GCSetting)) {
	if budget <= 0 || !isAuto(setting) {
		return
	}
	TuneGC(ctx, budget, time.Second, os.Getenv("GOGC") != "", changed)
}

// idleCollectAfter is how long TuneGC lets a heap go uncollected with the
// GC percent off: the period of the runtime's forced collection.
const idleCollectAfter = 2 * time.Minute

// idleCollector remembers when the count of collections last moved.
type idleCollector struct {
	cycles uint64
	since  time.Time
}

// due reports whether a collection is due at now, given the collections
// completed so far: the percent is off and none has run for after.
func (c *idleCollector) due(now time.Time, cycles uint64, percentOff bool, after time.Duration) bool {
	if !percentOff || cycles != c.cycles || c.since.IsZero() {
		c.cycles, c.since = cycles, now
		return false
	}
	if now.Sub(c.since) < after {
		return false
	}
	c.since = now
	return true
}

// collectIfDue collects and returns freed memory to the system
// (debug.FreeOSMemory) when due says so, and reports whether it did.
func (c *idleCollector) collectIfDue(now time.Time, cycles uint64, percentOff bool, after time.Duration) bool {
	if !c.due(now, cycles, percentOff, after) {
		return false
	}
	debug.FreeOSMemory()
	return true
}

// tuneGC is one step of TuneGC, from the collector's state st; ok
// reports a change.
func tuneGC(budget int64, keepPercent bool, st gcState) (set GCSetting, ok bool) {
	set.Live = st.live
	if keepPercent {
		// The operator's percent decides below the budget.
		set.Limit, set.GCPercent = AutoMemoryLimit(budget, set.Live), st.percent
	} else {
		set.Limit, set.GCPercent = AutoGC(budget, set.Live)
	}
	// A sixteenth either way is left alone, so that the limit does not
	// follow every wobble of the live heap; but with the percent off the
	// limit alone bounds the heap, so a lower one is always taken.
	diff := set.Limit - st.limit
	if diff > st.limit/16 || -diff > st.limit/16 || (set.GCPercent < 0 && diff < 0) {
		debug.SetMemoryLimit(set.Limit)
		ok = true
	} else {
		set.Limit = st.limit
	}
	if set.GCPercent != st.percent {
		// The limit first: turning the percent off before the limit is
		// lowered could let the heap outgrow the budget meanwhile.
		debug.SetGCPercent(set.GCPercent)
		ok = true
	}
	return set, ok
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
