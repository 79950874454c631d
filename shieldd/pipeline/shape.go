package pipeline

import (
	"bytes"
	"hash/maphash"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// verdictShape is everything in a verdict except the action hash and the
// evaluation time. It is immutable once interned.
type verdictShape struct {
	decision     pb.VerdictDecision
	tier         int32
	requiredTier int32
	// ownBytes is what the shape holds of its own action (ownCost), set
	// by detach: the verdict cache's byte budget counts it per entry.
	ownBytes      int32
	confidence    float64
	reasoning     string
	ruleIDs       []string
	policyVersion string
	actionType    string
	findings      []*pb.Finding
	confinement   *pb.Confinement // shared with the policy's rule; never modified
}

func shapeOf(v *pb.Verdict) *verdictShape {
	return &verdictShape{
		decision: v.Decision, tier: v.Tier, requiredTier: v.RequiredTier, confidence: v.Confidence,
		reasoning: v.Reasoning, ruleIDs: v.RuleIds, policyVersion: v.PolicyVersion,
		actionType: v.ActionType, findings: v.Findings, confinement: v.Confinement,
	}
}

// maxShapes bounds the intern table. Shapes are kept after the verdicts
// that used them are evicted, so the table must not grow with the number
// of distinct actions. A full table that must add a shape starts again
// empty: cached verdicts keep the shapes they point to, and the shapes
// that still recur come back on their next sighting.
const maxShapes = 4096

// shapeTable interns verdict shapes so cached verdicts share them. Every
// uncached decision asks it, from every core at once, and nearly always
// finds its shape already there: the fingerprint is taken outside the
// lock, lookups share a read lock, and a shape is copied to the heap only
// when it is added.
//
// A shape is added on its second sighting, not its first. Many verdicts
// carry evidence of their own action, and their shapes never recur: kept
// on first sight, they filled the table with one-offs within seconds of
// such traffic, and the shapes that do recur were never shared again.
type shapeTable struct {
	mu     sync.RWMutex
	byHash map[uint64][]*verdictShape
	n      int
	// sighted remembers the fingerprints of shapes that were missing
	// from the table: a shape is added on its next sighting.
	sighted doorkeeper
	// recent remembers shapes by where their parts live (see placement):
	// a verdict built from the same parts as an earlier one, as every
	// verdict of a rule without Tier 1 findings is (its rule ids, findings
	// and reasoning are prepared once per rule), finds its shape by
	// comparing pointers instead of hashing every string. Direct-mapped:
	// a slot holds the last shape stored there.
	recent [recentShapes]atomic.Pointer[verdictShape]
}

// recentShapes is the number of slots of shapeTable.recent.
const recentShapes = 256

// shapeSeed keys the fingerprints of every table (it never leaves the process).
var shapeSeed = maphash.MakeSeed()

// intern returns the table's shape equal to s, or s on the heap (added
// to the table while it has room).
func (t *shapeTable) intern(s *verdictShape) *verdictShape {
	slot := &t.recent[s.placement()%recentShapes]
	if known := slot.Load(); known != nil && known.sameParts(s) {
		return known
	}
	shape := t.lookup(s)
	if shape.sameParts(s) {
		// Only then can the slot serve the next verdict with s's parts:
		// a verdict with parts of its own (findings copied for it) would
		// take the slot from shapes that recur.
		slot.Store(shape)
	}
	return shape
}

// lookup is intern without the recent slots.
func (t *shapeTable) lookup(s *verdictShape) *verdictShape {
	h := s.fingerprint(shapeSeed)
	t.mu.RLock()
	known := t.find(h, s)
	t.mu.RUnlock()
	if known != nil {
		return known
	}
	fresh := s.detach()
	if !t.sighted.sightedBefore(h) {
		// A first sighting is not kept, and so takes no exclusive lock:
		// shapes of their own on every core do not queue for it.
		return fresh
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if known := t.find(h, s); known != nil { // added since the read lock
		return known
	}
	if t.byHash == nil || t.n >= maxShapes {
		t.byHash, t.n = make(map[uint64][]*verdictShape), 0
	}
	t.byHash[h] = append(t.byHash[h], fresh)
	t.n++
	return fresh
}

func (t *shapeTable) find(h uint64, s *verdictShape) *verdictShape {
	for _, known := range t.byHash[h] {
		if known.equal(s) {
			return known
		}
	}
	return nil
}

// reset forgets every shape (the policy changed: old shapes will not recur).
func (t *shapeTable) reset() {
	t.mu.Lock()
	t.byHash, t.n = nil, 0
	t.mu.Unlock()
	for i := range t.recent {
		t.recent[i].Store(nil)
	}
	t.sighted.reset()
}

// detach returns a copy of s on the heap that keeps no request alive.
// The findings Tier 1 or the evaluator made for one action quote it, and
// their evidence is a slice of the action's own strings: kept as they
// are, a cached verdict would hold its whole request (up to the payload
// limit) for as long as it stays cached, so a cache of a fixed number of
// verdicts had no bound on its memory. Those findings are copied, their
// text, the reasoning and the rule ids into one string (the rule ids
// too: decide allocates them in one block with the findings); the
// policy's findings are prepared once per rule and stay shared.
//
// A piece of text already in the copy is not copied again: the
// reasoning quotes the messages that explain the verdict, and the rule
// ids are the findings' own, so most verdicts would otherwise hold them
// twice.
func (s *verdictShape) detach() *verdictShape {
	fresh := new(verdictShape)
	*fresh = *s
	own, size := s.ownText()
	if own == 0 {
		return fresh
	}
	// The copy is laid out in scratch first, so that the string kept is
	// only as long as what it holds.
	var stack [1024]byte
	scratch := stack[:0]
	if size > len(stack) {
		scratch = make([]byte, 0, size)
	}
	var spanBuf [24]textSpan
	spans := spanBuf[:0]
	place := func(x string) {
		sp := textSpan{off: len(scratch), n: len(x)}
		if x != "" {
			if i := strings.Index(unsafe.String(unsafe.SliceData(scratch), len(scratch)), x); i >= 0 {
				sp.off = i
			} else {
				scratch = append(scratch, x...)
			}
		}
		spans = append(spans, sp)
	}
	place(s.reasoning)
	for _, id := range s.ruleIDs {
		place(id)
	}
	for _, f := range s.findings {
		if f.Tier != TierPolicy {
			place(f.RuleId)
			place(f.Category)
			place(f.Message)
			place(f.Evidence)
		}
	}
	text := string(scratch)
	fresh.ownBytes = int32(ownCost(own, len(text)))
	next := func() string {
		sp := spans[0]
		spans = spans[1:]
		return text[sp.off : sp.off+sp.n]
	}
	fresh.reasoning = next()
	fresh.ruleIDs = make([]string, len(s.ruleIDs))
	for i := range s.ruleIDs {
		fresh.ruleIDs[i] = next()
	}
	protos := make([]pb.Finding, own)
	fresh.findings = make([]*pb.Finding, len(s.findings))
	for i, f := range s.findings {
		if f.Tier == TierPolicy {
			fresh.findings[i] = f
			continue
		}
		c := &protos[0]
		protos = protos[1:]
		c.RuleId = next()
		c.Category = next()
		c.Message = next()
		c.Evidence = next()
		c.Severity, c.Outcome, c.Tier = f.Severity, f.Outcome, f.Tier
		fresh.findings[i] = c
	}
	return fresh
}

// textSpan is where detach put a piece of text in its copy.
type textSpan struct{ off, n int }

// ownText counts the findings s holds of its own action (every tier's
// but the policy's, which are prepared once per rule) and, when there
// are any, the bytes of text detach copies at most: theirs, the
// reasoning's and the rule ids' (a piece repeated is copied once).
func (s *verdictShape) ownText() (findings, bytes int) {
	for _, f := range s.findings {
		if f.Tier != TierPolicy {
			findings++
			bytes += len(f.RuleId) + len(f.Category) + len(f.Message) + len(f.Evidence)
		}
	}
	if findings == 0 {
		return 0, 0
	}
	bytes += len(s.reasoning)
	for _, id := range s.ruleIDs {
		bytes += len(id)
	}
	return findings, bytes
}

// ownFindingBytes is what detach allocates per finding besides its text.
const ownFindingBytes = int(unsafe.Sizeof(pb.Finding{}) + unsafe.Sizeof((*pb.Finding)(nil)))

// ownCost is the memory a shape with findings of its own (ownText) holds
// besides its fixed part: the copied findings and their text.
func ownCost(findings, text int) int { return findings*ownFindingBytes + text }

// placement picks s's slot in shapeTable.recent from where its parts
// live and its numbers, without reading a string: it only spreads
// shapes over the slots (sameParts decides), so a collision costs a
// lookup, never a wrong shape.
func (s *verdictShape) placement() uint64 {
	h := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(s.ruleIDs))))
	mix := func(n uint64) { h = bits.RotateLeft64((h^n)*0x9e3779b97f4a7c15, 29) }
	mix(uint64(uintptr(unsafe.Pointer(unsafe.SliceData(s.findings)))))
	mix(uint64(uintptr(unsafe.Pointer(unsafe.StringData(s.reasoning)))))
	mix(uint64(len(s.actionType))<<32 | uint64(s.decision)<<8 | uint64(uint8(s.requiredTier)))
	return h ^ h>>32
}

// sameParts reports whether s and o are built from the same parts: the
// same rule ids and findings (the same slices, which verdicts never
// change in place), equal strings, numbers and confinement. Then they
// are equal; shapes with equal parts kept elsewhere are not the same.
func (s *verdictShape) sameParts(o *verdictShape) bool {
	return s.decision == o.decision && s.tier == o.tier && s.requiredTier == o.requiredTier &&
		s.confidence == o.confidence && s.confinement == o.confinement &&
		sameSlice(s.ruleIDs, o.ruleIDs) && sameSlice(s.findings, o.findings) &&
		s.reasoning == o.reasoning && s.policyVersion == o.policyVersion && s.actionType == o.actionType
}

// sameSlice reports whether a and b are the same elements in memory.
func sameSlice[E any](a, b []E) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// fingerprint hashes every field equal compares. Each string is hashed
// on its own (maphash.String, keyed by seed) and folded in with the
// numbers by a multiply-rotate mix: strings, the part a caller can
// choose, are what the seed protects; a collision costs only an extra
// equal.
func (s *verdictShape) fingerprint(seed maphash.Seed) uint64 {
	h := uint64(len(s.ruleIDs))<<32 | uint64(len(s.findings))
	num := func(n uint64) { h = bits.RotateLeft64((h^n)*0x9e3779b97f4a7c15, 31) }
	str := func(x string) { num(maphash.String(seed, x)) }
	num(uint64(s.decision))
	num(uint64(s.tier)<<32 | uint64(uint32(s.requiredTier)))
	num(math.Float64bits(s.confidence))
	str(s.reasoning)
	str(s.policyVersion)
	str(s.actionType)
	for _, id := range s.ruleIDs {
		str(id)
	}
	if c := s.confinement; c != nil {
		num(uint64(c.GetWrite())<<32 | uint64(len(c.GetConnectPorts()))<<16 | uint64(len(c.GetReadPaths())))
		for _, p := range c.GetConnectPorts() {
			num(uint64(p))
		}
		for _, p := range c.GetReadPaths() {
			str(p)
		}
	}
	for _, f := range s.findings {
		str(f.RuleId)
		str(f.Category)
		num(uint64(uint32(f.Severity))<<32 | uint64(uint32(f.Outcome)))
		str(f.Message)
		num(uint64(f.Tier))
		str(f.Evidence)
	}
	return h
}

func (s *verdictShape) equal(o *verdictShape) bool {
	return s.decision == o.decision && s.tier == o.tier && s.requiredTier == o.requiredTier &&
		s.confidence == o.confidence && s.reasoning == o.reasoning && s.policyVersion == o.policyVersion &&
		s.actionType == o.actionType && slices.Equal(s.ruleIDs, o.ruleIDs) &&
		confinementEqual(s.confinement, o.confinement) &&
		slices.EqualFunc(s.findings, o.findings, func(a, b *pb.Finding) bool {
			return a.RuleId == b.RuleId && a.Category == b.Category && a.Severity == b.Severity &&
				a.Outcome == b.Outcome && a.Message == b.Message && a.Tier == b.Tier && a.Evidence == b.Evidence
		})
}

// confinementEqual is proto.Equal for confinements, without its
// reflection: most uncached verdicts carry a confinement of their own
// (narrowed for the action), so interning compares them field by field.
// TestConfinementEqualCoversSchema keeps the field list complete.
func confinementEqual(a, b *pb.Confinement) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	return a.Write == b.Write && slices.Equal(a.ConnectPorts, b.ConnectPorts) && slices.Equal(a.ReadPaths, b.ReadPaths) &&
		bytes.Equal(a.ProtoReflect().GetUnknown(), b.ProtoReflect().GetUnknown())
}
