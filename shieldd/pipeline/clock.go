package pipeline

import (
	"sync/atomic"
	"time"
)

// instant is when an evaluation started: the unix second (verdict times,
// cache expiry, the day of the daily counters) and a monotonic reading
// for its latency.
type instant struct {
	unix int64
	mono int64 // nanoseconds since the clock's anchor
}

// clock reads the time for the hot path with one monotonic clock read.
// time.Now reads both the wall and the monotonic clock, and in a VM each
// read costs as much as a tenth of a cache hit; the wall clock is instead
// derived from a recent time.Now, taken again every reanchorAfter so that
// a stepped system clock is followed within that time.
type clock struct {
	anchor atomic.Pointer[clockAnchor]
	// now, when set, replaces the wall clock (tests).
	now func() time.Time
}

type clockAnchor struct {
	at   time.Time // carries a monotonic reading
	unix int64     // at's wall time in nanoseconds since the epoch
	// mono is at's offset from the first anchor, so readings stay
	// comparable across re-anchoring.
	mono int64
}

const reanchorAfter = time.Second

func newClock(now func() time.Time) *clock {
	c := &clock{now: now}
	t := time.Now()
	c.anchor.Store(&clockAnchor{at: t, unix: t.UnixNano()})
	return c
}

func (c *clock) read() instant {
	a := c.anchor.Load()
	d := time.Since(a.at) // monotonic only
	if d >= reanchorAfter || d < 0 {
		a = c.reanchor(a)
		d = time.Since(a.at)
	}
	in := instant{unix: (a.unix + int64(d)) / int64(time.Second), mono: a.mono + int64(d)}
	if c.now != nil {
		in.unix = c.now().Unix()
	}
	return in
}

// reanchor takes a fresh wall clock reading; concurrent callers may each
// store one, which is harmless.
func (c *clock) reanchor(old *clockAnchor) *clockAnchor {
	t := time.Now()
	a := &clockAnchor{at: t, unix: t.UnixNano(), mono: old.mono + int64(t.Sub(old.at))}
	c.anchor.Store(a)
	return a
}

// since is the time elapsed from start.
func (c *clock) since(start instant) time.Duration {
	a := c.anchor.Load()
	return time.Duration(a.mono + int64(time.Since(a.at)) - start.mono)
}

// unixNow is the current unix second.
func (c *clock) unixNow() int64 { return c.read().unix }
