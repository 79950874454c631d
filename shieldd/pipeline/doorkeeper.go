package pipeline

import (
	"math/bits"
	"sync/atomic"
)

// doorkeeper remembers, roughly, which 64-bit fingerprints it has seen
// lately, so that a table can keep what recurs and pass over one-offs:
// the verdict cache admits a verdict on its action's second sighting,
// the shape table a shape on its second (the admission filter of
// TinyLFU, without the frequency counts).
//
// It is a blocked Bloom filter: three bits in one word per fingerprint.
// A word holding doorkeeperPerWord bits is cleared before it takes more,
// so it forgets old sightings a word at a time, never lets one-offs set
// more than 14 bits of a word, and at worst about one first sighting in
// 100 finds all three of its bits set (it is then admitted one sighting
// early). No counter is shared by every core. At 25 000 first sightings
// a second a word fills in about 2.6 s: what recurs within that is
// recognised.
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
	old := word.Load()
	if old&mask == mask {
		return true
	}
	if bits.OnesCount64(old) >= doorkeeperPerWord {
		// A fingerprint whose mark goes (here, or in a race with
		// another core) needs one more sighting.
		word.Store(mask)
	} else {
		word.Or(mask)
	}
	return false
}

// reset forgets every sighting.
func (d *doorkeeper) reset() {
	for i := range d {
		d[i].Store(0)
	}
}
