package pipeline

import (
	"context"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		setting string
		cache   int
		env     bool
		want    int64
	}{
		{"auto", 100_000, false, 24<<20 + 100_000*160},
		{"", 0, false, 24 << 20},
		{"auto", -1, false, 24 << 20},
		{"auto", 100_000, true, 0}, // GOMEMLIMIT decides
		{"off", 100_000, false, 0},
		{"64MiB", 100_000, true, 64 << 20},
		{"1GiB", 0, false, 1 << 30},
		{"50000000", 0, false, 50_000_000},
		{"9000KiB", 0, false, 9000 << 10},
		{"16777216B", 0, false, 16 << 20},
	} {
		got, err := MemoryLimit(c.setting, c.cache, c.env)
		if err != nil || got != c.want {
			t.Errorf("MemoryLimit(%q, %d, %v) = %d, %v; want %d", c.setting, c.cache, c.env, got, err, c.want)
		}
	}
	for _, bad := range []string{"lots", "-5MiB", "64mb", "1MiB", "MiB", "99999999TiB", "1.5GiB", " 12 MiB"} {
		if _, err := MemoryLimit(bad, 0, false); err == nil || !strings.Contains(err.Error(), "memory limit") {
			t.Errorf("MemoryLimit(%q) = %v; want an error naming the setting", bad, err)
		}
	}
}

// FuzzMemoryLimit: any setting either fails with an error or gives a
// limit of at least 8 MiB (or 0 for off/auto with GOMEMLIMIT set); sizes
// read back as written.
func FuzzMemoryLimit(f *testing.F) {
	for _, s := range []string{"auto", "off", "64MiB", "1GiB", "123", "9223372036854775807", "8TiB", "0B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := MemoryLimit(s, 1000, true)
		if err != nil {
			return
		}
		if n != 0 && n < 8<<20 {
			t.Fatalf("%q: limit %d below 8 MiB", s, n)
		}
		if v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil && n != v {
			t.Fatalf("%q: read %d", s, n)
		}
	})
}

func TestAutoMemoryLimit(t *testing.T) {
	budget := int64(24<<20 + 100_000*160)
	if got := AutoMemoryLimit(budget, 10<<20); got != budget {
		t.Errorf("a live heap of 10 MiB moved the limit to %d, want the budget %d", got, budget)
	}
	if got, want := AutoMemoryLimit(budget, 40<<20), int64(24<<20+60<<20); got != want {
		t.Errorf("a live heap of 40 MiB: limit %d, want %d", got, want)
	}
}

func TestAutoGC(t *testing.T) {
	const budget = int64(24<<20 + 100_000*160)
	for _, tc := range []struct {
		live      int64
		limit     int64
		gcPercent int
	}{
		{0, budget, -1},
		{8 << 20, budget, -1},                          // GOGC=100 would collect at 16 MiB
		{budget / 2, budget, -1},                       // both collect at the budget
		{budget/2 + 1, 24<<20 + (budget/2+1)*3/2, 100}, // GOGC=100 collects at about the budget, under the limit
		{40 << 20, 24<<20 + 60<<20, 100},
	} {
		limit, percent := AutoGC(budget, tc.live)
		if limit != tc.limit || percent != tc.gcPercent {
			t.Errorf("live heap %d: limit %d, GC percent %d; want %d, %d", tc.live, limit, percent, tc.limit, tc.gcPercent)
		}
	}
}

// readGC is the limit and GC percent the runtime has in force.
func readGC() (limit int64, gcPercent int) {
	st, _ := readGCState()
	return st.limit, st.percent
}

// step is one tuneGC step from the runtime's state now.
func step(t *testing.T, budget int64, keepPercent bool) (GCSetting, bool) {
	t.Helper()
	st, ok := readGCState()
	if !ok {
		t.Fatal("the runtime reports none of the collector's metrics")
	}
	return tuneGC(budget, keepPercent, st)
}

// TuneGC raises the runtime's limit above a live heap that has outgrown
// the budget (with GOGC back at 100), and once the heap is freed lowers
// it to the budget and turns the GC percent off, so that a small heap is
// collected at the budget: read from the real runtime, with a real
// 96 MiB held live.
func TestTuneGCFollowsLiveHeap(t *testing.T) {
	oldLimit := debug.SetMemoryLimit(-1)
	oldPercent := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetMemoryLimit(oldLimit); debug.SetGCPercent(oldPercent) })
	const budget = 64 << 20
	debug.SetMemoryLimit(budget)

	held := make([]byte, 96<<20)
	runtime.GC()
	ctx, cancel := context.WithCancel(t.Context())
	changes := make(chan GCSetting, 8)
	done := make(chan struct{})
	go func() {
		TuneGC(ctx, budget, 10*time.Millisecond, false, func(s GCSetting) { changes <- s })
		close(done)
	}()
	got := <-changes
	limit, percent := readGC()
	if got.Live < 96<<20 || got.Limit != AutoMemoryLimit(budget, got.Live) || got.GCPercent != 100 || limit != got.Limit || percent != 100 {
		t.Errorf("live heap %d MiB: set limit %d MiB, GC percent %d (runtime's: %d MiB, %d); want %d MiB, 100",
			got.Live>>20, got.Limit>>20, got.GCPercent, limit>>20, percent, AutoMemoryLimit(budget, got.Live)>>20)
	}
	runtime.KeepAlive(held)
	held = nil
	runtime.GC()
	got = <-changes
	limit, percent = readGC()
	if got.Live > budget/2 || got.Limit != budget || got.GCPercent != -1 || limit != budget || percent != -1 {
		t.Errorf("after 96 MiB were freed (live heap %d MiB): set limit %d MiB, GC percent %d (runtime's: %d MiB, %d); want the budget, %d MiB, and off",
			got.Live>>20, got.Limit>>20, got.GCPercent, limit>>20, percent, budget>>20)
	}
	cancel()
	<-done
}

// Turning the percent off, TuneGC lowers the limit to the budget even
// when it is within the sixteenth it otherwise leaves alone: with the
// percent off the limit alone bounds the heap.
func TestTuneGCOffTakesTheBudgetExactly(t *testing.T) {
	oldLimit := debug.SetMemoryLimit(-1)
	oldPercent := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetMemoryLimit(oldLimit); debug.SetGCPercent(oldPercent) })
	const budget = 256 << 20 // far above this test binary's live heap
	debug.SetMemoryLimit(budget + budget/32)
	runtime.GC()
	set, ok := step(t, budget, false)
	limit, percent := readGC()
	if !ok || set.GCPercent != -1 || percent != -1 || set.Limit != budget || limit != budget {
		t.Errorf("changed %v: GC percent %d (runtime's %d), limit %d (runtime's %d); want off and the budget %d",
			ok, set.GCPercent, percent, set.Limit, limit, int64(budget))
	}
}

func TestIdleCollectorDue(t *testing.T) {
	var c idleCollector
	t0 := time.Unix(1000, 0)
	steps := []struct {
		at         time.Duration
		cycles     uint64
		percentOff bool
		want       bool
	}{
		{0, 5, true, false},               // first sight
		{time.Minute, 5, true, false},     // not yet
		{2 * time.Minute, 5, true, true},  // two minutes without a collection
		{3 * time.Minute, 6, true, false}, // the collection it ran
		{4 * time.Minute, 7, true, false}, // the heap is collected on its own
		{5*time.Minute + 59*time.Second, 7, true, false},
		{6 * time.Minute, 7, false, false}, // the percent is on: the runtime's own timer
		{7 * time.Minute, 7, true, false},  // off again: counted from the last look with it on
		{8 * time.Minute, 7, true, true},
	}
	for i, s := range steps {
		if got := c.due(t0.Add(s.at), s.cycles, s.percentOff, 2*time.Minute); got != s.want {
			t.Errorf("step %d (%v, %d cycles, off %v): due %v, want %v", i, s.at, s.cycles, s.percentOff, got, s.want)
		}
	}
}

// When it is due, collectIfDue really collects: the runtime's count of
// collections moves.
func TestIdleCollectorCollects(t *testing.T) {
	cycles := func() uint64 {
		st, _ := readGCState()
		return st.cycles
	}
	var c idleCollector
	now := time.Now()
	if c.collectIfDue(now, cycles(), true, time.Minute) {
		t.Fatal("collected at first sight")
	}
	// No collection is due with the percent on, however long ago.
	if c.collectIfDue(now.Add(time.Hour), cycles(), false, time.Minute) {
		t.Fatal("collected with the percent on")
	}
	c = idleCollector{cycles: cycles(), since: now}
	before := cycles()
	if !c.collectIfDue(now.Add(time.Hour), cycles(), true, time.Minute) {
		t.Fatal("an hour without a collection, percent off: nothing collected")
	}
	if cycles() == before {
		t.Error("collectIfDue reported a collection the runtime did not count")
	}
}

// With GOGC set by the operator, TuneGC tunes the limit alone.
func TestTuneGCKeepsOperatorsPercent(t *testing.T) {
	oldLimit := debug.SetMemoryLimit(-1)
	oldPercent := debug.SetGCPercent(300)
	t.Cleanup(func() { debug.SetMemoryLimit(oldLimit); debug.SetGCPercent(oldPercent) })
	const budget = 64 << 20
	debug.SetMemoryLimit(1 << 40)
	runtime.GC()
	set, ok := step(t, budget, true)
	limit, percent := readGC()
	if !ok || set.GCPercent != 300 || percent != 300 || limit != AutoMemoryLimit(budget, set.Live) {
		t.Errorf("changed %v: GC percent %d (runtime's %d), limit %d MiB; want 300 kept and the limit %d MiB",
			ok, set.GCPercent, percent, limit>>20, AutoMemoryLimit(budget, set.Live)>>20)
	}
}

// TuneAutoGC tunes only for auto with a budget: an explicit size, off,
// or auto under GOMEMLIMIT (no budget) leave the runtime alone, so it
// returns at once although its context never ends.
func TestTuneAutoGCOnlyForAuto(t *testing.T) {
	for _, tc := range []struct {
		setting string
		budget  int64
	}{{"256MiB", 256 << 20}, {"off", 0}, {"auto", 0}} {
		done := make(chan struct{})
		go func() {
			TuneAutoGC(t.Context(), tc.setting, tc.budget, func(GCSetting) { t.Errorf("%q: the collector was tuned", tc.setting) })
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("%q with budget %d: TuneAutoGC kept running", tc.setting, tc.budget)
		}
	}
}
