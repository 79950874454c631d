package pipeline

import (
	"math/bits"
	"sync/atomic"
)

// doorkeeper remembers, roughly, which 64-bit fingerprints it has seen
// lately, so that a table can keep what recurs and pass over one-offs:
// the verdict cache admits a verdict on its request's second sighting,
// the shape table a shape on its second (the admission filter of
// TinyLFU, without the frequency counts).
//
// It is a blocked Bloom filter: three bits in one word per fingerprint.
// A word holding doorkeeperPerWord bits is cleared before it takes more,
// so it forgets old sightings a word at a time, and no counter is shared
// by every core. In the steady state of a long stream of one-offs
// (TestDoorkeeperFalsePositivesAndRecall), 0.3 % of first sightings are
// taken for second ones (and admitted one sighting early), and a
// fingerprint is recognised 99 % of the time after 1 000 other first
// sightings, 78 % after 16 000, 55 % after 32 000. At 25 000 one-offs a
// second: what recurs within 40 ms nearly always, within 0.65 s four
// times in five.
type doorkeeper [doorkeeperBits / 64]atomic.Uint64

// doorkeeperBits is a doorkeeper's size (128 KiB), a power of two.
const (
	doorkeeperBits    = 1 << 20
	doorkeeperPerWord = 12
)

// sightedBefore reports whether fingerprint h was sighted before, as far
// as d remembers, and marks that it was. h must be a keyed hash: the
// word comes from its low bits, the three bits from its top 18.
func (d *doorkeeper) sightedBefore(h uint64) bool {
	word := &d[h&(uint64(len(d))-1)]
	mask := uint64(1)<<(h>>46&63) | uint64(1)<<(h>>52&63) | uint64(1)<<(h>>58)
	old := word.Load() // a read first: a known fingerprint takes no store
	if old&mask == mask {
		return true
	}
	if bits.OnesCount64(old) >= doorkeeperPerWord {
		// A fingerprint whose mark goes (here, or in a race with
		// another core) needs one more sighting.
		word.Store(mask)
		return false
	}
	// Of two cores sighting a fingerprint at once, one is told it is
	// the second.
	return word.Or(mask)&mask == mask
}

// reset forgets every sighting.
func (d *doorkeeper) reset() {
	for i := range d {
		d[i].Store(0)
	}
}
