package pipeline

import (
	"encoding/binary"
	"encoding/hex"
	"hash/maphash"
	"sync"
	"time"
	"unsafe"

	lru "github.com/hashicorp/golang-lru/v2"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// cacheKey identifies a cached verdict: a 128-bit keyed hash over the
// tenant, the policy version and the exact request (action type, payload
// bytes, caller identity and directories, minimum tier). Identical requests
// hit without being canonicalised again; the verdict still carries the
// canonical SHA-256 action hash computed on the miss. Length prefixes keep
// fields from running into each other.
//
// Why not SHA-256 here: on a cache hit hashing the request is most of the
// work, and SHA-256 costs ~0.4 µs for a typical payload where two
// AES-based hash/maphash passes cost ~0.05 µs. The seeds are random per
// process and the key never leaves it, so an attacker who wants two
// requests to share a verdict can only guess blindly: with 100 000 cached
// verdicts a guess succeeds with probability about 2^-111.
type cacheKey [2]uint64

var cacheSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// keyBufPool holds scratch buffers for the key material.
var keyBufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func makeCacheKey(policyVersion string, in *Input) cacheKey {
	bp := keyBufPool.Get().(*[]byte)
	b := (*bp)[:0]
	field := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	c := &in.Request.Caller
	field("parapet.cache.v1")
	field(c.Tenant)
	field(policyVersion)
	field(in.Request.Type)
	b = binary.AppendUvarint(b, uint64(len(in.Request.Payload)))
	b = append(b, in.Request.Payload...)
	field(c.WorkspaceID)
	field(c.EngineID)
	field(c.UserID)
	field(c.AgentName)
	field(c.WorkspaceRoot)
	field(c.Home)
	b = binary.AppendVarint(b, int64(in.MinTier))
	k := cacheKey{maphash.Bytes(cacheSeeds[0], b), maphash.Bytes(cacheSeeds[1], b)}
	if cap(b) <= 64<<10 { // don't keep huge payload buffers alive
		*bp = b
		keyBufPool.Put(bp)
	}
	return k
}

// cachedVerdict is what the cache holds per action: its hash and time,
// and a pointer to the verdict's shape. Many actions share one shape (every
// action the same allow rule admitted reads the same), so 100 000 cached
// verdicts cost little more than the LRU's own bookkeeping.
type cachedVerdict struct {
	hash        [32]byte
	evaluatedAt int64
	shape       *verdictShape
}

type verdictCache struct {
	lru    *lru.Cache[cacheKey, cachedVerdict]
	ttl    time.Duration
	shapes shapeTable
}

func newVerdictCache(size int, ttl time.Duration) *verdictCache {
	c, err := lru.New[cacheKey, cachedVerdict](size)
	if err != nil {
		panic(err) // only for size <= 0, which New never passes
	}
	return &verdictCache{lru: c, ttl: ttl}
}

// get returns a fresh verdict built from the cached entry.
func (c *verdictCache) get(k cacheKey, now time.Time) (*pb.Verdict, bool) {
	e, ok := c.lru.Get(k)
	if !ok {
		return nil, false
	}
	if now.Unix() >= c.expiresAt(e) {
		c.lru.Remove(k)
		return nil, false
	}
	return c.verdict(e, true), true
}

// expiresAt is when an entry stops being served, in unix seconds.
func (c *verdictCache) expiresAt(e cachedVerdict) int64 {
	return e.evaluatedAt + int64(c.ttl/time.Second)
}

// verdict builds a response from an entry. Rule ids and findings are
// shared with the cache: callers may replace a verdict's fields but must
// not modify its slices or findings in place.
func (c *verdictCache) verdict(e cachedVerdict, cacheHit bool) *pb.Verdict {
	s := e.shape
	// One allocation holds the verdict and its hex hash: on a cache hit
	// the second allocation was a sixth of the cost.
	r := &verdictWithHash{}
	for i, c := range e.hash {
		r.hash[2*i], r.hash[2*i+1] = hexDigits[c>>4], hexDigits[c&0xf]
	}
	r.v = pb.Verdict{
		Decision: s.decision, Tier: s.tier, Confidence: s.confidence, Reasoning: s.reasoning,
		ActionHash: unsafe.String(&r.hash[0], len(r.hash)), EvaluatedAt: e.evaluatedAt,
		ExpiresAt: c.expiresAt(e), RuleIds: s.ruleIDs,
		PolicyVersion: s.policyVersion, CacheHit: cacheHit, Findings: s.findings,
		ActionType: s.actionType, RequiredTier: s.requiredTier,
	}
	return &r.v
}

const hexDigits = "0123456789abcdef"

// verdictWithHash co-allocates a verdict and the bytes of its ActionHash
// string; the bytes are written once, before the string exists, and never
// again, so the string is immutable as Go requires.
type verdictWithHash struct {
	v    pb.Verdict
	hash [64]byte
}

// put caches v and returns the verdict to answer with, built from the
// cached entry so that the caller holds no reference the cache relies on.
func (c *verdictCache) put(k cacheKey, v *pb.Verdict) *pb.Verdict {
	e := cachedVerdict{evaluatedAt: v.EvaluatedAt, shape: c.shapes.intern(shapeOf(v))}
	if _, err := hex.Decode(e.hash[:], []byte(v.ActionHash)); err != nil {
		return v // not a hash we made; never cache what we cannot reproduce
	}
	c.lru.Add(k, e)
	return c.verdict(e, false)
}

// Len is the number of cached verdicts.
func (c *verdictCache) Len() int { return c.lru.Len() }
