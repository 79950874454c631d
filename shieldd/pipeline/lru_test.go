package pipeline

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parapet-dev/parapet/rules/action"
)

// TestVerdictLRUMatchesModel replays random gets, adds and removes on
// verdictLRU and on a plain slice kept in recency order, and compares
// every answer and the order after each step. The keys are placed in the
// index next to each other, all at one home position with one tag (so
// that every probe reads slots and every removal moves cells), all at
// the last cell (runs wrap around), or at three homes, interleaved.
func TestVerdictLRUMatchesModel(t *testing.T) {
	keyings := map[string]func(n int) cacheKey{
		"adjacent":  func(n int) cacheKey { return cacheKey{uint64(n), 0} },
		"one home":  func(n int) cacheKey { return cacheKey{uint64(n) << 40, 0} },
		"last cell": func(n int) cacheKey { return cacheKey{uint64(n)<<40 | 0xffffffff, 0} },
		"three homes": func(n int) cacheKey {
			return cacheKey{[]uint64{0, 5, 0xffffffff}[n%3] | uint64(n)<<36, uint64(n)}
		},
	}
	for name, keyOf := range keyings {
		for _, size := range []int{1, 2, 7, 64} {
			t.Run(fmt.Sprintf("%s/%d", name, size), func(t *testing.T) { checkLRUModel(t, size, keyOf) })
		}
	}
}

func checkLRUModel(t *testing.T, size int, keyOf func(n int) cacheKey) {
	{
		rng := rand.New(rand.NewPCG(uint64(size), 1))
		l := newVerdictLRU(size, math.MaxInt64)
		var model []cacheKey // least recently used first
		vals := map[cacheKey]int64{}
		find := func(k cacheKey) int { return slices.Index(model, k) }
		for step := range 5000 {
			k := keyOf(rng.IntN(3 * size))
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
			for _, k := range model {
				if _, i, ok := l.index.find(k, l.slots); !ok || l.slots[i].key != k {
					t.Fatalf("size %d step %d: the index lost %v", size, step, k)
				}
			}
			if 2*l.index.n > len(l.index.cells) {
				t.Fatalf("size %d step %d: index more than half full (%d of %d)", size, step, l.index.n, len(l.index.cells))
			}
		}
	}
}

// TestShardedLRU: a large cache spreads over shards that share its
// capacity exactly (hashing need not fill them evenly), each evicting
// its own oldest entry once the cache is full; a small one keeps one
// shard.
func TestShardedLRU(t *testing.T) {
	if n := len(newShardedLRU(lruShards*lruShardMin-1, math.MaxInt64).shards); n != 1 {
		t.Fatalf("small cache: %d shards", n)
	}
	size := lruShards*lruShardMin + 5
	s := newShardedLRU(size, math.MaxInt64)
	if len(s.shards) != lruShards {
		t.Fatalf("%d shards; want %d", len(s.shards), lruShards)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var keys []cacheKey
	for i := range 3 * size {
		k := cacheKey{rng.Uint64(), rng.Uint64()}
		keys = append(keys, k)
		s.add(k, cachedVerdict{evaluatedAt: int64(i)})
		if i == size-1 && s.len() != size {
			t.Fatalf("len %d after %d distinct adds; want all of them", s.len(), size)
		}
	}
	if s.len() != size {
		t.Fatalf("len %d after overfilling; want %d", s.len(), size)
	}
	last := keys[len(keys)-1]
	if v, ok := s.get(last); !ok || v.evaluatedAt != int64(len(keys)-1) {
		t.Errorf("newest entry: %v, %v", v, ok)
	}
	if _, ok := s.peek(keys[0]); ok {
		t.Error("the oldest entry survived three times the capacity")
	}
	s.remove(last)
	if _, ok := s.get(last); ok || s.len() != size-1 {
		t.Errorf("after remove: present %v, len %d", ok, s.len())
	}
	s.add(last, cachedVerdict{})
	if s.len() != size {
		t.Errorf("re-added after a remove: len %d; want %d", s.len(), size)
	}
}

// Every part of a request is in its cache key, and moving bytes from one
// field to the next makes another key; so does a request too large for
// the stack buffer.
func TestCacheKeySeparatesFields(t *testing.T) {
	base := func() Input {
		in := input("read_file", `{"path":"src/main.go"}`)
		in.Request.Caller = action.Caller{
			Tenant: "acme", WorkspaceID: "ws", EngineID: "en", UserID: "us", AgentName: "ag",
			WorkspaceRoot: "/w", Home: "/h",
		}
		return in
	}
	large := base()
	large.Request.Payload = []byte(`{"path":"` + strings.Repeat("x", 2*smallKey) + `"}`)
	variants := map[string]func(in *Input){
		"base":             func(*Input) {},
		"policy-sized":     func(in *Input) { in.Request.Caller.Tenant = "acmesha256:x" },
		"type":             func(in *Input) { in.Request.Type = "write_file" },
		"payload":          func(in *Input) { in.Request.Payload = []byte(`{"path":"src/main.gp"}`) },
		"tenant":           func(in *Input) { in.Request.Caller.Tenant = "globex" },
		"workspace id":     func(in *Input) { in.Request.Caller.WorkspaceID = "wx" },
		"engine id":        func(in *Input) { in.Request.Caller.EngineID = "ex" },
		"user id":          func(in *Input) { in.Request.Caller.UserID = "ux" },
		"agent":            func(in *Input) { in.Request.Caller.AgentName = "ax" },
		"root":             func(in *Input) { in.Request.Caller.WorkspaceRoot = "/x" },
		"home":             func(in *Input) { in.Request.Caller.Home = "/y" },
		"shifted ids":      func(in *Input) { in.Request.Caller.WorkspaceID, in.Request.Caller.EngineID = "wse", "n" },
		"min tier":         func(in *Input) { in.MinTier = 2 },
		"attachment":       func(in *Input) { in.Request.Attachments = []action.Attachment{{Path: "a.sh", Content: "ls"}} },
		"attachment path":  func(in *Input) { in.Request.Attachments = []action.Attachment{{Path: "b.sh", Content: "ls"}} },
		"unreadable":       func(in *Input) { in.Request.Attachments = []action.Attachment{{Path: "a.sh", Unreadable: true}} },
		"two attachments":  func(in *Input) { in.Request.Attachments = []action.Attachment{{Path: "a.sh"}, {Path: "ls"}} },
		"shifted contents": func(in *Input) { in.Request.Attachments = []action.Attachment{{Path: "a.s", Content: "hls"}} },
		"large":            func(in *Input) { *in = large },
		"large, tier":      func(in *Input) { *in = large; in.MinTier = 1 },
	}
	seen := map[cacheKey]string{}
	for name, change := range variants {
		in := base()
		change(&in)
		k := makeCacheKey("sha256:x", &in)
		if again := makeCacheKey("sha256:x", &in); again != k {
			t.Fatalf("%s: the key changed between two calls", name)
		}
		if other, dup := seen[k]; dup {
			t.Errorf("%s and %s share a key", name, other)
		}
		seen[k] = name
	}
	in := base()
	if makeCacheKey("sha256:x", &in) == makeCacheKey("sha256:y", &in) {
		t.Error("the policy version is not in the key")
	}
}

// TestLRUKeepsWithinItsBudget replays random gets, adds and removes of
// entries of random weights on verdictLRU and on a model kept in recency
// order, which evicts its oldest entries (never the one just added) while
// the entries weigh more than the budget. The order, the entries and the
// weight the cache counts must match the model's after every step.
// Two shapes: one where the budget binds first, one where the count
// mostly does.
func TestLRUKeepsWithinItsBudget(t *testing.T) {
	evicted, full := 0, 0
	for _, tc := range []struct{ size, budget, heaviest int }{{32, 2000, 900}, {8, 3000, 600}} {
		t.Run(fmt.Sprintf("%d entries, %d bytes", tc.size, tc.budget), func(t *testing.T) {
			e, f := checkLRUBudget(t, tc.size, int64(tc.budget), tc.heaviest)
			evicted, full = evicted+e, full+f
		})
	}
	if evicted == 0 || full == 0 {
		t.Fatalf("the budget evicted %d entries, a full cache %d: the test must exercise both", evicted, full)
	}
}

// checkLRUBudget runs the replay; it returns how many entries the model
// evicted for the budget and how many for a full cache.
func checkLRUBudget(t *testing.T, size int, budget int64, heaviest int) (evicted, full int) {
	rng := rand.New(rand.NewPCG(uint64(size), 8))
	l := newVerdictLRU(size, budget)
	var model []cacheKey // least recently used first
	weights := map[cacheKey]int64{}
	total := func() (sum int64) {
		for _, k := range model {
			sum += weights[k]
		}
		return sum
	}
	drop := func(i int) {
		delete(weights, model[i])
		model = slices.Delete(model, i, i+1)
	}
	for step := range 20000 {
		k := cacheKey{uint64(rng.IntN(3 * size)), 1}
		switch op := rng.IntN(10); {
		case op < 3:
			_, ok := l.get(k)
			i := slices.Index(model, k)
			if ok != (i >= 0) {
				t.Fatalf("step %d: get(%v) = %v; model has it: %v", step, k, ok, i >= 0)
			}
			if i >= 0 {
				model = append(slices.Delete(model, i, i+1), k)
			}
		case op < 9:
			w := int64(0)
			if rng.IntN(4) > 0 {
				w = int64(rng.IntN(heaviest + 1))
			}
			l.add(k, cachedVerdict{evaluatedAt: int64(step), shape: &verdictShape{ownBytes: int32(w)}})
			if i := slices.Index(model, k); i >= 0 {
				drop(i)
			} else if len(model) == size {
				drop(0)
				full++
			}
			model = append(model, k)
			weights[k] = w
			for total() > budget && len(model) > 1 {
				drop(0)
				evicted++
			}
		default:
			l.remove(k)
			if i := slices.Index(model, k); i >= 0 {
				drop(i)
			}
		}
		if got := l.keys(); !slices.Equal(got, model) && !(len(got) == 0 && len(model) == 0) {
			t.Fatalf("step %d: order %v; model %v", step, got, model)
		}
		if got, want := l.bytes.Load(), total(); got != want || got > budget {
			t.Fatalf("step %d: the cache counts %d bytes; its entries weigh %d (budget %d)", step, got, want, budget)
		}
		if l.len() != len(model) || l.total.Load() != int64(len(model)) {
			t.Fatalf("step %d: len %d, total %d; model %d", step, l.len(), l.total.Load(), len(model))
		}
	}
	return evicted, full
}

// The shards of a large cache share its budget: after concurrent adds of
// weighted entries, the count of bytes is exactly what the entries
// weigh, and over the budget by no more than one entry per shard.
func TestShardedLRUSharesItsBudget(t *testing.T) {
	const heaviest = 4096
	size := lruShards * lruShardMin
	budget := int64(size) * 64 // far less than size entries of the mean weight
	s := newShardedLRU(size, budget)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 3))
			for range size {
				w := int32(rng.IntN(heaviest + 1))
				s.add(cacheKey{rng.Uint64(), rng.Uint64()}, cachedVerdict{shape: &verdictShape{ownBytes: w}})
			}
		}()
	}
	wg.Wait()
	var sum int64
	for _, k := range s.keys() {
		v, ok := s.peek(k)
		if !ok {
			t.Fatalf("listed key %v is not cached", k)
		}
		sum += v.weight()
	}
	if got := s.ownBytes(); got != sum {
		t.Fatalf("the cache counts %d bytes; its %d entries weigh %d", got, s.len(), sum)
	}
	if sum > budget+lruShards*heaviest {
		t.Fatalf("the entries weigh %d, over the budget %d by more than one entry per shard", sum, budget)
	}
	if n := s.len(); n >= size || n == 0 {
		t.Fatalf("%d entries of a mean weight of %d within %d bytes", n, heaviest/2, budget)
	}
}
