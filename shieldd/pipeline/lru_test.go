package pipeline

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestVerdictLRUMatchesModel replays random gets, adds and removes on
// verdictLRU and on a plain slice kept in recency order, and compares
// every answer and the order after each step.
func TestVerdictLRUMatchesModel(t *testing.T) {
	for _, size := range []int{1, 2, 7, 64} {
		rng := rand.New(rand.NewPCG(uint64(size), 1))
		l := newVerdictLRU(size)
		var model []cacheKey // least recently used first
		vals := map[cacheKey]int64{}
		find := func(k cacheKey) int { return slices.Index(model, k) }
		for step := range 5000 {
			k := cacheKey{uint64(rng.IntN(3 * size)), 0}
			switch op := rng.IntN(10); {
			case op < 4:
				v, ok := l.get(k)
				i := find(k)
				if ok != (i >= 0) || ok && v.evaluatedAt != vals[k] {
					t.Fatalf("size %d step %d: get(%v) = %v, %v; model has it: %v", size, step, k, v.evaluatedAt, ok, i >= 0)
				}
				if i >= 0 {
					model = append(slices.Delete(model, i, i+1), k)
				}
			case op < 8:
				l.add(k, cachedVerdict{evaluatedAt: int64(step)})
				vals[k] = int64(step)
				if i := find(k); i >= 0 {
					model = slices.Delete(model, i, i+1)
				} else if len(model) == size {
					model = model[1:]
				}
				model = append(model, k)
			default:
				l.remove(k)
				if i := find(k); i >= 0 {
					model = slices.Delete(model, i, i+1)
				}
			}
			if got := l.keys(); !slices.Equal(got, model) && !(len(got) == 0 && len(model) == 0) {
				t.Fatalf("size %d step %d: order %v; model %v", size, step, got, model)
			}
			if l.len() != len(model) || len(l.slots) > size {
				t.Fatalf("size %d step %d: len %d (%d slots); model %d", size, step, l.len(), len(l.slots), len(model))
			}
		}
	}
}
