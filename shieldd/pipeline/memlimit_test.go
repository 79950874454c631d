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

// TuneMemoryLimit raises the runtime's limit above a live heap that has
// outgrown the budget, and lowers it again once the heap is freed: read
// from the real runtime, with a real 64 MiB held live.
func TestTuneMemoryLimitFollowsLiveHeap(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	const budget = 16 << 20
	debug.SetMemoryLimit(budget)

	held := make([]byte, 64<<20)
	runtime.GC()
	ctx, cancel := context.WithCancel(t.Context())
	changes := make(chan [2]int64, 8)
	done := make(chan struct{})
	go func() {
		TuneMemoryLimit(ctx, budget, 10*time.Millisecond, func(limit, live int64) { changes <- [2]int64{limit, live} })
		close(done)
	}()
	got := <-changes
	raised := got[0]
	if limit, live := got[0], got[1]; live < 64<<20 || limit != AutoMemoryLimit(budget, live) || debug.SetMemoryLimit(-1) != limit {
		t.Errorf("live heap %d MiB: limit %d MiB (runtime's %d MiB), want %d MiB",
			live>>20, limit>>20, debug.SetMemoryLimit(-1)>>20, AutoMemoryLimit(budget, live)>>20)
	}
	runtime.KeepAlive(held)
	held = nil
	runtime.GC()
	got = <-changes
	if limit := got[0]; limit >= raised-48<<20 || debug.SetMemoryLimit(-1) != limit {
		t.Errorf("after 64 MiB were freed the limit is %d MiB, want it lowered from %d MiB by the 96 it added", limit>>20, raised>>20)
	}
	cancel()
	<-done
}
