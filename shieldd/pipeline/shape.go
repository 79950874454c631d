package pipeline

import (
	"hash/maphash"
	"math"
	"slices"
	"sync"

	"google.golang.org/protobuf/proto"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// verdictShape is everything in a verdict except the action hash and the
// evaluation time. It is immutable once interned.
type verdictShape struct {
	decision      pb.VerdictDecision
	tier          int32
	requiredTier  int32
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
// of distinct actions; past the bound new shapes are simply not shared.
const maxShapes = 4096

// shapeTable interns verdict shapes so cached verdicts share them.
type shapeTable struct {
	mu     sync.Mutex
	seed   maphash.Seed
	byHash map[uint64][]*verdictShape
	n      int
}

func (t *shapeTable) intern(s *verdictShape) *verdictShape {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byHash == nil {
		t.seed = maphash.MakeSeed()
		t.byHash = make(map[uint64][]*verdictShape)
	}
	h := s.fingerprint(t.seed)
	for _, known := range t.byHash[h] {
		if known.equal(s) {
			return known
		}
	}
	if t.n < maxShapes {
		t.byHash[h] = append(t.byHash[h], s)
		t.n++
	}
	return s
}

// reset forgets every shape (the policy changed: old shapes will not recur).
func (t *shapeTable) reset() {
	t.mu.Lock()
	t.byHash, t.n = nil, 0
	t.mu.Unlock()
}

func (s *verdictShape) fingerprint(seed maphash.Seed) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	writeInt := func(n int64) {
		var b [8]byte
		for i := range b {
			b[i] = byte(n >> (8 * i))
		}
		h.Write(b[:])
	}
	writeString := func(str string) {
		writeInt(int64(len(str)))
		h.WriteString(str)
	}
	writeInt(int64(s.decision))
	writeInt(int64(s.tier))
	writeInt(int64(s.requiredTier))
	writeInt(int64(math.Float64bits(s.confidence)))
	writeString(s.reasoning)
	writeString(s.policyVersion)
	writeString(s.actionType)
	writeInt(int64(len(s.ruleIDs)))
	for _, id := range s.ruleIDs {
		writeString(id)
	}
	writeInt(int64(s.confinement.GetWrite()))
	writeInt(int64(len(s.confinement.GetConnectPorts())))
	for _, p := range s.confinement.GetConnectPorts() {
		writeInt(int64(p))
	}
	writeInt(int64(len(s.confinement.GetReadPaths())))
	for _, p := range s.confinement.GetReadPaths() {
		writeString(p)
	}
	writeInt(int64(len(s.findings)))
	for _, f := range s.findings {
		writeString(f.RuleId)
		writeString(f.Category)
		writeInt(int64(f.Severity))
		writeInt(int64(f.Outcome))
		writeString(f.Message)
		writeInt(int64(f.Tier))
		writeString(f.Evidence)
	}
	return h.Sum64()
}

func (s *verdictShape) equal(o *verdictShape) bool {
	return s.decision == o.decision && s.tier == o.tier && s.requiredTier == o.requiredTier &&
		s.confidence == o.confidence && s.reasoning == o.reasoning && s.policyVersion == o.policyVersion &&
		s.actionType == o.actionType && slices.Equal(s.ruleIDs, o.ruleIDs) &&
		proto.Equal(s.confinement, o.confinement) &&
		slices.EqualFunc(s.findings, o.findings, func(a, b *pb.Finding) bool {
			return a.RuleId == b.RuleId && a.Category == b.Category && a.Severity == b.Severity &&
				a.Outcome == b.Outcome && a.Message == b.Message && a.Tier == b.Tier && a.Evidence == b.Evidence
		})
}
