package pipeline

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"strconv"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// cacheKey identifies a cached verdict: SHA-256 over the tenant, the policy
// version and the exact request (action type, payload bytes, caller
// identity and directories, minimum tier). Identical requests hit without
// being canonicalised again; the verdict still carries the canonical action
// hash computed on the miss. Length prefixes keep fields from running into
// each other.
type cacheKey [32]byte

var hasherPool = sync.Pool{New: func() any { return sha256.New() }}

func makeCacheKey(policyVersion string, in *Input) cacheKey {
	h := hasherPool.Get().(hash.Hash)
	h.Reset()
	var lenBuf [binary.MaxVarintLen64]byte
	field := func(s string) {
		n := binary.PutUvarint(lenBuf[:], uint64(len(s)))
		h.Write(lenBuf[:n])
		h.Write([]byte(s))
	}
	c := &in.Request.Caller
	field("parapet.cache.v1")
	field(c.Tenant)
	field(policyVersion)
	field(in.Request.Type)
	n := binary.PutUvarint(lenBuf[:], uint64(len(in.Request.Payload)))
	h.Write(lenBuf[:n])
	h.Write(in.Request.Payload)
	field(c.WorkspaceID)
	field(c.EngineID)
	field(c.UserID)
	field(c.AgentName)
	field(c.WorkspaceRoot)
	field(c.Home)
	field(strconv.Itoa(int(in.MinTier)))
	var k cacheKey
	h.Sum(k[:0])
	hasherPool.Put(h)
	return k
}

// cachedVerdict is the immutable template of a verdict.
type cachedVerdict struct {
	v       *pb.Verdict
	expires time.Time
}

type verdictCache struct {
	lru *lru.Cache[cacheKey, cachedVerdict]
	ttl time.Duration
}

func newVerdictCache(size int, ttl time.Duration) *verdictCache {
	c, err := lru.New[cacheKey, cachedVerdict](size)
	if err != nil {
		panic(err) // only for size <= 0, which New never passes
	}
	return &verdictCache{lru: c, ttl: ttl}
}

// get returns a fresh verdict built from the cached template.
func (c *verdictCache) get(k cacheKey, now time.Time) (*pb.Verdict, bool) {
	e, ok := c.lru.Get(k)
	if !ok {
		return nil, false
	}
	if !now.Before(e.expires) {
		c.lru.Remove(k)
		return nil, false
	}
	return copyVerdict(e.v, true), true
}

// copyVerdict returns a new verdict with t's fields. Slices and findings are
// shared read-only with t, so callers must not modify them.
func copyVerdict(t *pb.Verdict, cacheHit bool) *pb.Verdict {
	return &pb.Verdict{
		Decision: t.Decision, Tier: t.Tier, Confidence: t.Confidence, Reasoning: t.Reasoning,
		ActionHash: t.ActionHash, EvaluatedAt: t.EvaluatedAt, ExpiresAt: t.ExpiresAt, RuleIds: t.RuleIds,
		PolicyVersion: t.PolicyVersion, CacheHit: cacheHit, Findings: t.Findings, ActionType: t.ActionType,
		RequiredTier: t.RequiredTier,
	}
}

func (c *verdictCache) put(k cacheKey, v *pb.Verdict) {
	c.lru.Add(k, cachedVerdict{v: v, expires: time.Unix(v.EvaluatedAt, 0).Add(c.ttl)})
}

// Len is the number of cached verdicts.
func (c *verdictCache) Len() int { return c.lru.Len() }
