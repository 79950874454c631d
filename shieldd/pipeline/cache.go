package pipeline

import (
	"encoding/binary"
	"encoding/hex"
	"hash/maphash"
	"math/bits"
	"sync"
	"time"
	"unsafe"

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

// keyBufPool holds scratch buffers for requests too large for the stack.
var keyBufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// smallKey is the key material that fits a stack buffer: most requests.
const smallKey = 512

func makeCacheKey(policyVersion string, in *Input) cacheKey {
	c := &in.Request.Caller
	n := len(policyVersion) + len(in.Request.Type) + len(in.Request.Payload) + len(c.Tenant) + len(c.WorkspaceID) +
		len(c.EngineID) + len(c.UserID) + len(c.AgentName) + len(c.WorkspaceRoot) + len(c.Home) + len(keyVersion) +
		keyFields*8 + 8 + 4
	for _, at := range in.Request.Attachments {
		n += len(at.Path) + len(at.Content) + 2*8 + 1
	}
	if n <= smallKey {
		var buf [smallKey]byte
		return hashKey(appendKey(buf[:0], policyVersion, in))
	}
	bp := keyBufPool.Get().(*[]byte)
	b := appendKey((*bp)[:0], policyVersion, in)
	k := hashKey(b)
	if cap(b) <= 64<<10 { // don't keep huge payload buffers alive
		*bp = b
		keyBufPool.Put(bp)
	}
	return k
}

func hashKey(b []byte) cacheKey {
	return cacheKey{maphash.Bytes(cacheSeeds[0], b), maphash.Bytes(cacheSeeds[1], b)}
}

// keyVersion starts the key material; keyFields is the number of
// strings appendKey writes before the attachments.
const (
	keyVersion = "parapet.cache.v2"
	keyFields  = 11
)

// appendKey appends the key material: each string prefixed with its
// length, then the attachments (counted) and the minimum tier. The
// fields go through one loop, so that the code stays small: on an
// uncached decision it runs once, its instructions not in cache.
func appendKey(b []byte, policyVersion string, in *Input) []byte {
	c := &in.Request.Caller
	payload := unsafe.String(unsafe.SliceData(in.Request.Payload), len(in.Request.Payload))
	fields := [keyFields]string{
		keyVersion, c.Tenant, policyVersion, in.Request.Type, payload,
		c.WorkspaceID, c.EngineID, c.UserID, c.AgentName, c.WorkspaceRoot, c.Home,
	}
	for _, f := range fields {
		b = appendField(b, f)
	}
	// A script's content is part of what is judged: the same command
	// running a changed script is another action.
	b = binary.LittleEndian.AppendUint64(b, uint64(len(in.Request.Attachments)))
	for _, at := range in.Request.Attachments {
		b = appendField(b, at.Path)
		b = appendField(b, at.Content)
		if at.Unreadable {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	return binary.LittleEndian.AppendUint32(b, uint32(in.MinTier))
}

func appendField(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
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
	lru    *shardedLRU
	ttl    time.Duration
	shapes shapeTable
	// sighted remembers the keys of decisions not cached: a verdict is
	// cached on its request's second sighting (see put).
	sighted *doorkeeper
}

func newVerdictCache(size int, ttl time.Duration) *verdictCache {
	if size <= 0 {
		panic("verdict cache size must be positive") // New never passes one
	}
	return &verdictCache{lru: newShardedLRU(size, cacheBudget(size)), ttl: ttl, sighted: new(doorkeeper)}
}

// get returns a fresh verdict built from the cached entry.
func (c *verdictCache) get(k cacheKey, unixNow int64) (*pb.Verdict, bool) {
	e, ok := c.lru.get(k)
	if !ok {
		return nil, false
	}
	if unixNow >= c.expiresAt(e.evaluatedAt) {
		c.lru.remove(k)
		return nil, false
	}
	return c.verdict(e, true), true
}

// expiresAt is when a verdict evaluated at evaluatedAt stops being
// served, in unix seconds.
func (c *verdictCache) expiresAt(evaluatedAt int64) int64 {
	return evaluatedAt + int64(c.ttl/time.Second)
}

// verdict builds a response from an entry. Rule ids and findings are
// shared with the cache: callers may replace a verdict's fields but must
// not modify its slices or findings in place.
func (c *verdictCache) verdict(e cachedVerdict, cacheHit bool) *pb.Verdict {
	s := e.shape
	v := newVerdict(&e.hash)
	v.Decision, v.Tier, v.Confidence, v.Reasoning = s.decision, s.tier, s.confidence, s.reasoning
	v.EvaluatedAt, v.ExpiresAt, v.RuleIds = e.evaluatedAt, c.expiresAt(e.evaluatedAt), s.ruleIDs
	v.PolicyVersion, v.CacheHit, v.Findings = s.policyVersion, cacheHit, s.findings
	v.ActionType, v.RequiredTier, v.Confinement = s.actionType, s.requiredTier, s.confinement
	return v
}

// newVerdict returns an empty verdict whose ActionHash is hash in hex.
// One allocation holds the verdict and the hex: on a cache hit the
// second allocation was a sixth of the cost.
func newVerdict(hash *[32]byte) *pb.Verdict {
	r := &verdictWithHash{}
	for i := 0; i < len(hash); i += 4 {
		binary.LittleEndian.PutUint64(r.hash[2*i:], hexDigits(binary.BigEndian.Uint32(hash[i:])))
	}
	r.v.ActionHash = unsafe.String(&r.hash[0], len(r.hash))
	return &r.v
}

// hexDigits returns the eight lower-case hex digits of x, the first in
// the lowest byte, computed in one register: a byte-by-byte table lookup
// was a tenth of the pipeline's own instructions per decision.
func hexDigits(x uint32) uint64 {
	// Spread the nibbles to one per byte, the first in the highest byte.
	n := uint64(x)
	n = (n | n<<16) & 0x0000ffff0000ffff
	n = (n | n<<8) & 0x00ff00ff00ff00ff
	n = (n | n<<4) & 0x0f0f0f0f0f0f0f0f
	n = bits.ReverseBytes64(n)
	// A nibble of 10 or more carries into bit 4 when 6 is added (no byte
	// overflows into the next): those digits are letters, 'a' being 39
	// past '0'+10.
	letters := (n + 0x0606060606060606) >> 4 & 0x0101010101010101
	return n + 0x3030303030303030 + letters*39
}

// verdictWithHash co-allocates a verdict and the bytes of its ActionHash
// string; the bytes are written once, before the string exists, and never
// again, so the string is immutable as Go requires.
type verdictWithHash struct {
	v    pb.Verdict
	hash [64]byte
}

// put caches v, the verdict for the action whose canonical hash is hash,
// and returns the verdict to answer with: v itself with its expiry set.
// The cache shares the parts of v the policy prepared, which verdicts
// never change in place (see verdict), and copies what v holds of its
// own action (verdictShape.detach).
//
// A verdict is cached on its request's second sighting, not its first.
// Most actions an agent proposes are one-offs: cached on sight, each
// evicted a verdict that might have been asked for again, and with the
// cache full the insert, its shape and the garbage it left cost the
// server about 5 µs, a third of what an uncached decision cost beyond a
// hit. A request that recurs is decided once more than before, then
// served from the cache. Only deterministic verdicts come here, which
// cost microseconds to decide again; the evaluator's are cached at once
// (putForeign).
func (c *verdictCache) put(k cacheKey, v *pb.Verdict, hash *[32]byte) *pb.Verdict {
	v.ExpiresAt = c.expiresAt(v.EvaluatedAt)
	if c.sighted.sightedBefore(k[0]) {
		c.store(k, v, hash)
	}
	return v
}

// putForeign caches v, a verdict another component made (the Tier 2
// evaluator), on its request's first sighting (a model call is worth
// keeping), and returns a fresh verdict built from the cached entry, so
// that the answer holds exactly what a later cache hit will.
func (c *verdictCache) putForeign(k cacheKey, v *pb.Verdict, hash *[32]byte) *pb.Verdict {
	if v.ActionHash != hex.EncodeToString(hash[:]) {
		return v // not the action we judged; never cache what we cannot reproduce
	}
	e, ok := c.store(k, v, hash)
	if !ok {
		return v
	}
	return c.verdict(e, false)
}

// maxCachedOwnBytes bounds the memory a cached verdict holds of its own
// action: the findings not prepared by the policy and their text, the
// reasoning and the rule ids (verdictShape.ownText). The cache bounds its
// entries; this bounds what one entry costs, whatever the request made
// its findings say. The corpus's largest is 2.3 KiB. A verdict above it
// is not cached: asked again, the action is decided again.
const maxCachedOwnBytes = 4 << 10

// ownBytesPerEntry is the cache's byte budget per verdict it may hold:
// what the cached verdicts hold of their own actions together
// (verdictShape.ownBytes, counted for each entry even where entries share
// a shape) stays under this times the cache size. maxCachedOwnBytes
// bounds one entry; this bounds them all, so that verdicts quoting their
// actions at length cannot fill a whole cache: 100 000 of them held
// 161 MiB of heap (benchmarks/cachemem --quoting 400), and verdicts near
// maxCachedOwnBytes would hold over 400 MiB. The corpus's verdicts count
// 234 bytes per entry when each action is distinct (--vary content) and
// 239 when the same actions come from many workspaces, so a cache of
// them fills to its size; heavier verdicts fill it to fewer.
const ownBytesPerEntry = 512

// cacheBudget is the byte budget of a cache of size verdicts: room for at
// least one verdict of the largest kind a cache takes.
func cacheBudget(size int) int64 {
	return max(int64(size)*ownBytesPerEntry, maxCachedOwnBytes)
}

// store adds v, with its shape interned, to the cache under k, unless v
// holds more than maxCachedOwnBytes of its own.
func (c *verdictCache) store(k cacheKey, v *pb.Verdict, hash *[32]byte) (cachedVerdict, bool) {
	s := shapeOf(v)
	if ownCost(s.ownText()) > maxCachedOwnBytes {
		return cachedVerdict{}, false
	}
	e := cachedVerdict{hash: *hash, evaluatedAt: v.EvaluatedAt, shape: c.shapes.intern(s)}
	c.lru.add(k, e)
	return e, true
}

// Len is the number of cached verdicts.
func (c *verdictCache) Len() int { return c.lru.len() }

// OwnBytes is what the cached verdicts hold of their own actions, as the
// byte budget counts it.
func (c *verdictCache) OwnBytes() int64 { return c.lru.ownBytes() }

// OwnBudget is the bound OwnBytes is kept to.
func (c *verdictCache) OwnBudget() int64 { return c.lru.ownBudget() }
