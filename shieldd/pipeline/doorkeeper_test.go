package pipeline

import (
	"sync"
	"testing"
)

// splitmix is a fixed stream of well-mixed fingerprints, as keyed hashes are.
type splitmix uint64

func (s *splitmix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// The doorkeeper's figures as its comment gives them, in the steady
// state of a long stream of one-offs: few first sightings are taken for
// second ones, and a fingerprint that recurs after a thousand others is
// nearly always recognised, after sixteen thousand most of the time.
func TestDoorkeeperFalsePositivesAndRecall(t *testing.T) {
	d := new(doorkeeper)
	rng := splitmix(1)
	const oneOffs = 1 << 21 // 8 per word: words fill and are cleared many times over
	seen := 0
	for range oneOffs {
		if d.sightedBefore(rng.next()) {
			seen++
		}
	}
	if rate := float64(seen) / oneOffs; rate > 0.01 {
		t.Errorf("%.4f of %d one-offs were taken for second sightings", rate, oneOffs)
	}

	for _, c := range []struct {
		between int
		least   float64
	}{{1000, 0.97}, {16384, 0.7}} {
		const n = 500
		recalled := 0
		for range n {
			x := rng.next()
			d.sightedBefore(x)
			for range c.between {
				d.sightedBefore(rng.next())
			}
			if d.sightedBefore(x) {
				recalled++
			}
		}
		if rate := float64(recalled) / n; rate < c.least {
			t.Errorf("%.3f of fingerprints recognised after %d others, want at least %.2f", rate, c.between, c.least)
		}
	}

	d.reset()
	if x := rng.next(); d.sightedBefore(x) || !d.sightedBefore(x) {
		t.Error("after a reset, a fingerprint is not new once, then known")
	}
}

// Two cores sighting a fingerprint at once: one of them is told it is
// the second sighting, so a request sent twice at once is still cached.
func TestDoorkeeperConcurrentSightings(t *testing.T) {
	d := new(doorkeeper)
	rng := splitmix(2)
	fps := make([]uint64, 1024) // far too few to fill a word: no mark is cleared
	for i := range fps {
		fps[i] = rng.next()
	}
	var told [2][]bool
	var wg sync.WaitGroup
	for g := range told {
		told[g] = make([]bool, len(fps))
		wg.Go(func() {
			for i, h := range fps {
				told[g][i] = d.sightedBefore(h)
			}
		})
	}
	wg.Wait()
	for i := range fps {
		if !told[0][i] && !told[1][i] {
			t.Fatalf("fingerprint %d: both sightings were taken for the first", i)
		}
	}
}
