package pipeline

import (
	"testing"
	"time"
)

func TestClockFollowsWallClock(t *testing.T) {
	c := newClock(nil)
	check := func(when string) instant {
		t.Helper()
		before := time.Now().Unix()
		in := c.read()
		after := time.Now().Unix()
		if in.unix < before || in.unix > after {
			t.Fatalf("%s: clock says %d, wall clock %d..%d", when, in.unix, before, after)
		}
		return in
	}
	first := check("fresh")
	// An anchor older than reanchorAfter is replaced; readings stay
	// ordered and latencies non-negative across the change.
	old := c.anchor.Load()
	c.anchor.Store(&clockAnchor{at: old.at.Add(-2 * reanchorAfter), unix: old.unix - int64(2*reanchorAfter), mono: old.mono})
	second := check("stale anchor")
	if c.anchor.Load().at.Equal(old.at.Add(-2 * reanchorAfter)) {
		t.Fatal("stale anchor kept")
	}
	if second.mono < first.mono {
		t.Fatalf("monotonic reading went back: %d then %d", first.mono, second.mono)
	}
	if d := c.since(first); d < 0 {
		t.Fatalf("since = %v", d)
	}
}

func TestClockOverride(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	c := newClock(func() time.Time { return at })
	if got := c.read().unix; got != at.Unix() {
		t.Fatalf("unix = %d, want %d", got, at.Unix())
	}
	if got := c.unixNow(); got != at.Unix() {
		t.Fatalf("unixNow = %d, want %d", got, at.Unix())
	}
}
