package pipeline

import (
	"sync"
	"sync/atomic"
)

// verdictLRU is the verdict cache's least-recently-used index, laid out
// for the garbage collector: the entries live in one slice, linked by
// int32 slot numbers, and the map from key to slot holds no pointers, so
// the collector scans one array (whose only pointers are the few shared
// verdict shapes) instead of following a list node and a map slot per
// entry. With the cache full of 100 000 verdicts, marking the cache was
// most of every collection; a general-purpose LRU (one node per entry)
// made it so.
//
// Besides its entries, the cache bounds their weight: what each holds of
// its own action (verdictShape.ownBytes). Adding an entry evicts the
// least recently used ones while the total is over the budget.
type verdictLRU struct {
	mu    sync.Mutex
	index slotIndex // key → slot
	slots []lruSlot // grows as entries come, then slots are reused
	// total counts the entries of every shard sharing this cache's
	// capacity, size (one shard: just this one's).
	total *atomic.Int64
	size  int64
	// bytes is the weight of every shard's entries, budget its bound.
	bytes  *atomic.Int64
	budget int64
	head   int32    // most recently used, or none
	tail   int32    // least recently used, or none
	free   int32    // slots removed and not yet reused, linked by next
	_      [64]byte // keeps the next shard's mutex off this one's cache line
}

const none int32 = -1

type lruSlot struct {
	key        cacheKey
	value      cachedVerdict
	prev, next int32
}

func newVerdictLRU(size int, budget int64) *verdictLRU {
	return newSharedLRU(size, new(atomic.Int64), budget, new(atomic.Int64))
}

func newSharedLRU(size int, total *atomic.Int64, budget int64, bytes *atomic.Int64) *verdictLRU {
	return &verdictLRU{size: int64(size), total: total, budget: budget, bytes: bytes, head: none, tail: none, free: none}
}

// weight is what an entry counts against the byte budget.
func (v *cachedVerdict) weight() int64 {
	if v.shape == nil {
		return 0
	}
	return int64(v.shape.ownBytes)
}

// get returns k's value and makes it the most recently used.
func (l *verdictLRU) get(k cacheKey) (cachedVerdict, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, i, ok := l.index.find(k, l.slots)
	if !ok {
		return cachedVerdict{}, false
	}
	l.unlink(i)
	l.pushFront(i)
	return l.slots[i].value, true
}

// peek returns k's value without touching its recency (tests).
func (l *verdictLRU) peek(k cacheKey) (cachedVerdict, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, i, ok := l.index.find(k, l.slots)
	if !ok {
		return cachedVerdict{}, false
	}
	return l.slots[i].value, true
}

// add sets k's value and makes it the most recently used, evicting the
// least recently used entry when the cache is full, and more while the
// entries weigh more than the budget.
func (l *verdictLRU) add(k cacheKey, v cachedVerdict) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, i, ok := l.index.find(k, l.slots); ok {
		l.bytes.Add(v.weight() - l.slots[i].value.weight())
		l.slots[i].value = v
		l.unlink(i)
		l.pushFront(i)
		l.trim(i)
		return
	}
	var i int32
	switch {
	case l.total.Load() >= l.size && l.tail != none: // full: reuse the least recently used slot
		i = l.tail
		l.unlink(i)
		l.index.remove(l.slots[i].key, l.slots)
		l.bytes.Add(-l.slots[i].value.weight())
	case l.free != none:
		i, l.free = l.free, l.slots[l.free].next
		l.total.Add(1)
	default:
		l.slots = append(l.slots, lruSlot{})
		i = int32(len(l.slots) - 1)
		l.total.Add(1)
	}
	l.slots[i] = lruSlot{key: k, value: v}
	l.index.insert(k, i)
	l.pushFront(i)
	l.bytes.Add(v.weight())
	l.trim(i)
}

// trim evicts this shard's least recently used entries, never keep,
// while every shard's entries together weigh more than the budget. A
// shard left with keep alone stops: the next add to another shard trims
// there, so the total passes the budget by at most about one entry per
// shard.
func (l *verdictLRU) trim(keep int32) {
	for l.bytes.Load() > l.budget && l.tail != none && l.tail != keep {
		l.drop(l.tail)
	}
}

// drop removes slot i's entry and frees the slot.
func (l *verdictLRU) drop(i int32) {
	l.index.remove(l.slots[i].key, l.slots)
	l.release(i)
}

// release frees slot i, whose entry the index no longer holds.
func (l *verdictLRU) release(i int32) {
	l.total.Add(-1)
	l.bytes.Add(-l.slots[i].value.weight())
	l.unlink(i)
	l.slots[i] = lruSlot{next: l.free} // drop the shape pointer too
	l.free = i
}

// remove drops k, if cached.
func (l *verdictLRU) remove(k cacheKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i, ok := l.index.remove(k, l.slots); ok {
		l.release(i)
	}
}

// len is the number of cached entries.
func (l *verdictLRU) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.index.n
}

// keys lists the keys from least to most recently used (tests).
func (l *verdictLRU) keys() []cacheKey {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ks []cacheKey
	for i := l.tail; i != none; i = l.slots[i].prev {
		ks = append(ks, l.slots[i].key)
	}
	return ks
}

func (l *verdictLRU) unlink(i int32) {
	s := &l.slots[i]
	if s.prev != none {
		l.slots[s.prev].next = s.next
	} else {
		l.head = s.next
	}
	if s.next != none {
		l.slots[s.next].prev = s.prev
	} else {
		l.tail = s.prev
	}
	s.prev, s.next = none, none
}

func (l *verdictLRU) pushFront(i int32) {
	s := &l.slots[i]
	s.prev, s.next = none, l.head
	if l.head != none {
		l.slots[l.head].prev = i
	}
	l.head = i
	if l.tail == none {
		l.tail = i
	}
}

// slotIndex maps keys to slots: an open-addressing table with linear
// probing, placed by the key itself. A key is already a keyed 128-bit
// hash (random per process, see cacheKey), so it needs no hashing again,
// and no caller can choose keys that crowd one part of the table. A map
// hashed every key on each of the three or four lookups, inserts and
// deletes of a cache miss.
//
// A cell is 0 when empty, else the slot number plus one in the high 32
// bits and the low 32 bits of key[0] (the cell's home position and a tag
// that spares most slot reads) in the low 32 bits. The table is at most
// half full, so every probe ends at an empty cell.
type slotIndex struct {
	cells []uint64
	mask  uint64 // len(cells) - 1
	n     int    // keys held
}

// find returns the cell holding k and its slot, or, when k is absent,
// the empty cell where its probe ended.
func (x *slotIndex) find(k cacheKey, slots []lruSlot) (cell uint64, slot int32, ok bool) {
	if x.n == 0 {
		return 0, 0, false
	}
	tag := uint32(k[0])
	for p := uint64(tag) & x.mask; ; p = (p + 1) & x.mask {
		c := x.cells[p]
		if c == 0 {
			return p, 0, false
		}
		if uint32(c) == tag {
			if s := int32(c>>32) - 1; slots[s].key == k {
				return p, s, true
			}
		}
	}
}

// insert adds k, which the index does not hold, at slot.
func (x *slotIndex) insert(k cacheKey, slot int32) {
	if 2*(x.n+1) > len(x.cells) {
		x.grow()
	}
	tag := uint32(k[0])
	p := uint64(tag) & x.mask
	for x.cells[p] != 0 {
		p = (p + 1) & x.mask
	}
	x.cells[p] = uint64(slot+1)<<32 | uint64(tag)
	x.n++
}

// grow doubles the table (16 cells at first) and places every key again.
func (x *slotIndex) grow() {
	old := x.cells
	x.cells = make([]uint64, max(16, 2*len(old)))
	x.mask = uint64(len(x.cells) - 1)
	for _, c := range old {
		if c == 0 {
			continue
		}
		p := uint64(uint32(c)) & x.mask
		for x.cells[p] != 0 {
			p = (p + 1) & x.mask
		}
		x.cells[p] = c
	}
}

// remove drops k and returns its slot, if the index holds it.
func (x *slotIndex) remove(k cacheKey, slots []lruSlot) (int32, bool) {
	p, slot, ok := x.find(k, slots)
	if !ok {
		return 0, false
	}
	x.n--
	// Close the gap: a later cell of the same run moves into it when the
	// gap lies between that cell's home and the cell, so that no probe
	// stops short of it (Knuth's algorithm R; no tombstones).
	for {
		x.cells[p] = 0
		q := p
		for {
			q = (q + 1) & x.mask
			c := x.cells[q]
			if c == 0 {
				return slot, true
			}
			home := uint64(uint32(c)) & x.mask
			if (q-home)&x.mask >= (q-p)&x.mask {
				x.cells[p] = c
				p = q
				break
			}
		}
	}
}

// shardedLRU splits a large cache over LRUs by key, so that concurrent
// calls on many cores do not all queue on one mutex (every hit takes it,
// to move its entry to the front). The shards share one capacity (a
// count of all their entries): once it is reached, a shard adding an
// entry evicts its own least recently used one. Recency is kept per
// shard, which for uniformly hashed keys is the whole cache's to within
// a shard's share; concurrent adds to empty shards can pass the capacity
// by at most the shard count. Small caches keep one shard and exact
// order.
type shardedLRU struct {
	shards []*verdictLRU
	mask   uint64
}

// lruShards is the shard count for caches of at least lruShardMin entries
// per shard.
const (
	lruShards   = 16
	lruShardMin = 1024
)

// newShardedLRU returns a cache of size entries that together weigh at
// most budget (see verdictLRU).
func newShardedLRU(size int, budget int64) *shardedLRU {
	n := 1
	if size >= lruShards*lruShardMin {
		n = lruShards
	}
	s := &shardedLRU{mask: uint64(n - 1)}
	total, bytes := new(atomic.Int64), new(atomic.Int64)
	for range n {
		s.shards = append(s.shards, newSharedLRU(size, total, budget, bytes))
	}
	return s
}

func (s *shardedLRU) shard(k cacheKey) *verdictLRU { return s.shards[k[1]&s.mask] }

func (s *shardedLRU) get(k cacheKey) (cachedVerdict, bool)  { return s.shard(k).get(k) }
func (s *shardedLRU) peek(k cacheKey) (cachedVerdict, bool) { return s.shard(k).peek(k) }
func (s *shardedLRU) add(k cacheKey, v cachedVerdict)       { s.shard(k).add(k, v) }
func (s *shardedLRU) remove(k cacheKey)                     { s.shard(k).remove(k) }

// ownBytes is the weight of every entry (see verdictLRU), and ownBudget
// its bound; the shards share both.
func (s *shardedLRU) ownBytes() int64  { return s.shards[0].bytes.Load() }
func (s *shardedLRU) ownBudget() int64 { return s.shards[0].budget }

func (s *shardedLRU) len() int {
	n := 0
	for _, sh := range s.shards {
		n += sh.len()
	}
	return n
}

// keys lists every shard's keys, each shard least recently used first (tests).
func (s *shardedLRU) keys() []cacheKey {
	var ks []cacheKey
	for _, sh := range s.shards {
		ks = append(ks, sh.keys()...)
	}
	return ks
}
