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
type verdictLRU struct {
	mu    sync.Mutex
	index map[cacheKey]int32 // key → slot
	slots []lruSlot          // grows as entries come, then slots are reused
	// total counts the entries of every shard sharing this cache's
	// capacity, size (one shard: just this one's).
	total *atomic.Int64
	size  int64
	head  int32    // most recently used, or none
	tail  int32    // least recently used, or none
	free  int32    // slots removed and not yet reused, linked by next
	_     [64]byte // keeps the next shard's mutex off this one's cache line
}

const none int32 = -1

type lruSlot struct {
	key        cacheKey
	value      cachedVerdict
	prev, next int32
}

func newVerdictLRU(size int) *verdictLRU { return newSharedLRU(size, new(atomic.Int64)) }

func newSharedLRU(size int, total *atomic.Int64) *verdictLRU {
	return &verdictLRU{index: make(map[cacheKey]int32), size: int64(size), total: total, head: none, tail: none, free: none}
}

// get returns k's value and makes it the most recently used.
func (l *verdictLRU) get(k cacheKey) (cachedVerdict, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.index[k]
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
	i, ok := l.index[k]
	if !ok {
		return cachedVerdict{}, false
	}
	return l.slots[i].value, true
}

// add sets k's value and makes it the most recently used, evicting the
// least recently used entry when the cache is full.
func (l *verdictLRU) add(k cacheKey, v cachedVerdict) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i, ok := l.index[k]; ok {
		l.slots[i].value = v
		l.unlink(i)
		l.pushFront(i)
		return
	}
	var i int32
	switch {
	case l.total.Load() >= l.size && l.tail != none: // full: reuse the least recently used slot
		i = l.tail
		l.unlink(i)
		delete(l.index, l.slots[i].key)
	case l.free != none:
		i, l.free = l.free, l.slots[l.free].next
		l.total.Add(1)
	default:
		l.slots = append(l.slots, lruSlot{})
		i = int32(len(l.slots) - 1)
		l.total.Add(1)
	}
	l.slots[i] = lruSlot{key: k, value: v}
	l.index[k] = i
	l.pushFront(i)
}

// remove drops k, if cached.
func (l *verdictLRU) remove(k cacheKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.index[k]
	if !ok {
		return
	}
	delete(l.index, k)
	l.total.Add(-1)
	l.unlink(i)
	l.slots[i] = lruSlot{next: l.free} // drop the shape pointer too
	l.free = i
}

// len is the number of cached entries.
func (l *verdictLRU) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.index)
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

func newShardedLRU(size int) *shardedLRU {
	n := 1
	if size >= lruShards*lruShardMin {
		n = lruShards
	}
	s := &shardedLRU{mask: uint64(n - 1)}
	total := new(atomic.Int64)
	for range n {
		s.shards = append(s.shards, newSharedLRU(size, total))
	}
	return s
}

func (s *shardedLRU) shard(k cacheKey) *verdictLRU { return s.shards[k[1]&s.mask] }

func (s *shardedLRU) get(k cacheKey) (cachedVerdict, bool)  { return s.shard(k).get(k) }
func (s *shardedLRU) peek(k cacheKey) (cachedVerdict, bool) { return s.shard(k).peek(k) }
func (s *shardedLRU) add(k cacheKey, v cachedVerdict)       { s.shard(k).add(k, v) }
func (s *shardedLRU) remove(k cacheKey)                     { s.shard(k).remove(k) }

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
