package server

import (
	"math"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/parapet-dev/parapet/internal/textcut"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// appendEvaluateResponseProto appends resp in the protobuf wire format,
// byte for byte what proto.Marshal writes (fields in number order, proto3
// zero values left out), without its reflection: encoding the response
// was a sixth of a cached gRPC Evaluate's server CPU. It reports false,
// and the codec uses proto.Marshal, for what it does not cover: a nil
// finding, unknown fields, or a string that is not UTF-8 (which
// proto.Marshal refuses). Like the JSON path it is used only while
// fastJSON says the schema is the one it knows.
func appendEvaluateResponseProto(b []byte, resp *pb.EvaluateResponse) ([]byte, bool) {
	var sz wireSizes
	if !sz.measure(resp) {
		return nil, false
	}
	return sz.appendResponse(b, resp), true
}

// marshalEvaluateResponse is the codec's fast path: the response written
// into a buffer from gRPC's pool, which gRPC frees once the message is
// sent. Unlike the standard proto codec it pools messages under gRPC's
// pooling threshold (1 KiB) too: a verdict is typically 0.3–1 KiB, the
// pool lends those a 4 KiB buffer that it gets back, and the fresh slice
// per response (three allocations with its wrapping) cost more than the
// encoding (BenchmarkEvaluateJSON/proto: 450 against 630 ns).
func marshalEvaluateResponse(resp *pb.EvaluateResponse) (mem.BufferSlice, bool) {
	var sz wireSizes
	if !sz.measure(resp) {
		return nil, false
	}
	pool := mem.DefaultBufferPool()
	buf := pool.Get(sz.response)
	*buf = sz.appendResponse((*buf)[:0], resp)
	return mem.BufferSlice{mem.NewBuffer(buf, pool)}, true
}

// wireSizes holds what writing a response needs to know first: the sizes
// of its nested messages, for their length prefixes. measure works them
// out and checks the strings in one pass; the writer reads them back
// instead of sizing each message again.
type wireSizes struct {
	response, verdict, confinement int
	findings                       [8]int // the first findings' sizes
	moreFindings                   []int  // the rest (an array, not a slice of it, keeps sz on the stack)
}

func (sz *wireSizes) finding(i int) int {
	if i < len(sz.findings) {
		return sz.findings[i]
	}
	return sz.moreFindings[i-len(sz.findings)]
}

// measure sizes resp and reports false for what the fast path leaves to
// proto.Marshal.
func (sz *wireSizes) measure(resp *pb.EvaluateResponse) bool {
	if len(resp.ProtoReflect().GetUnknown()) > 0 || !textcut.ValidUTF8(resp.GetRequestId()) {
		return false
	}
	sz.response = stringSize(resp.GetRequestId())
	if v := resp.GetVerdict(); v != nil {
		if !sz.measureVerdict(v) {
			return false
		}
		sz.response += 1 + lenSize(sz.verdict)
	}
	return true
}

func (sz *wireSizes) measureVerdict(v *pb.Verdict) bool {
	if len(v.ProtoReflect().GetUnknown()) > 0 ||
		!textcut.ValidUTF8(v.Reasoning) || !textcut.ValidUTF8(v.ActionHash) || !textcut.ValidUTF8(v.PolicyVersion) || !textcut.ValidUTF8(v.ActionType) {
		return false
	}
	n := intSize(int64(v.Decision)) + intSize(int64(v.Tier))
	if v.Confidence != 0 || math.Signbit(v.Confidence) {
		n += 1 + 8
	}
	n += stringSize(v.Reasoning) + stringSize(v.ActionHash) + intSize(v.EvaluatedAt) + intSize(v.ExpiresAt)
	for _, id := range v.RuleIds {
		if !textcut.ValidUTF8(id) {
			return false
		}
		n += 1 + lenSize(len(id))
	}
	n += stringSize(v.PolicyVersion)
	if v.CacheHit {
		n += 1 + 1
	}
	for i, f := range v.Findings {
		fn, ok := findingSize(f)
		if !ok {
			return false
		}
		if i < len(sz.findings) {
			sz.findings[i] = fn
		} else {
			sz.moreFindings = append(sz.moreFindings, fn)
		}
		n += 1 + lenSize(fn)
	}
	n += stringSize(v.ActionType) + intSize(int64(v.RequiredTier))
	if c := v.Confinement; c != nil {
		cn, ok := confinementSize(c)
		if !ok {
			return false
		}
		sz.confinement = cn
		n += 1 + lenSize(cn)
	}
	sz.verdict = n
	return true
}

// appendResponse writes resp, which measure accepted.
func (sz *wireSizes) appendResponse(b []byte, resp *pb.EvaluateResponse) []byte {
	if v := resp.GetVerdict(); v != nil {
		b = appendTag(b, 1, protowire.BytesType)
		b = appendVarint(b, uint64(sz.verdict))
		b = sz.appendVerdict(b, v)
	}
	return appendString(b, 2, resp.GetRequestId())
}

// appendTag and appendVarint write the one-byte forms in line: every
// field number here is below 16 (schemaMatches turns the fast paths off
// otherwise) and most lengths below 128, and protowire's general forms
// (a call and a ten-way switch each) were a fifth of the instructions of
// writing a cached verdict.
func appendTag(b []byte, num protowire.Number, typ protowire.Type) []byte {
	return append(b, byte(num)<<3|byte(typ))
}

func appendVarint(b []byte, v uint64) []byte {
	if v < 0x80 {
		return append(b, byte(v))
	}
	return protowire.AppendVarint(b, v)
}

// appendLenString writes s with its length prefix.
func appendLenString(b []byte, s string) []byte {
	return append(appendVarint(b, uint64(len(s))), s...)
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = appendTag(b, num, protowire.BytesType)
	return appendLenString(b, s)
}

// The sizes below are of fields numbered under 16, whose tags take one
// byte, like every field these messages have.

// stringSize is the size of a string field (nothing when empty).
func stringSize(s string) int {
	if s == "" {
		return 0
	}
	return 1 + lenSize(len(s))
}

// lenSize is the size of n bytes with their length prefix.
func lenSize(n int) int { return varintSize(uint64(n)) + n }

func varintSize(v uint64) int {
	if v < 0x80 {
		return 1
	}
	return protowire.SizeVarint(v)
}

// appendInt writes an int32, enum or int64 field (negative int32 and enum
// values as their sign-extended 64-bit varint, as proto does).
func appendInt(b []byte, num protowire.Number, v int64) []byte {
	if v == 0 {
		return b
	}
	b = appendTag(b, num, protowire.VarintType)
	return appendVarint(b, uint64(v))
}

// intSize is the size of an int32, enum or int64 field (nothing when 0).
func intSize(v int64) int {
	if v == 0 {
		return 0
	}
	return 1 + varintSize(uint64(v))
}

// confinementSize is c's encoded size, false if the fast path leaves c
// to proto.Marshal; connect_ports is packed, as proto3 repeated scalars
// are.
func confinementSize(c *pb.Confinement) (int, bool) {
	if len(c.ProtoReflect().GetUnknown()) > 0 {
		return 0, false
	}
	n := intSize(int64(c.Write))
	if len(c.ConnectPorts) > 0 {
		n += 1 + lenSize(portsSize(c.ConnectPorts))
	}
	for _, p := range c.ReadPaths {
		if !textcut.ValidUTF8(p) {
			return 0, false
		}
		n += 1 + lenSize(len(p))
	}
	return n, true
}

func portsSize(ports []uint32) int {
	n := 0
	for _, p := range ports {
		n += varintSize(uint64(p))
	}
	return n
}

// appendVerdict writes v, which measureVerdict accepted.
func (sz *wireSizes) appendVerdict(b []byte, v *pb.Verdict) []byte {
	b = appendInt(b, 1, int64(v.Decision))
	b = appendInt(b, 2, int64(v.Tier))
	if v.Confidence != 0 || math.Signbit(v.Confidence) {
		b = appendTag(b, 3, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(v.Confidence))
	}
	b = appendString(b, 4, v.Reasoning)
	b = appendString(b, 5, v.ActionHash)
	b = appendInt(b, 6, v.EvaluatedAt)
	b = appendInt(b, 7, v.ExpiresAt)
	for _, id := range v.RuleIds {
		b = appendTag(b, 8, protowire.BytesType)
		b = appendLenString(b, id)
	}
	b = appendString(b, 9, v.PolicyVersion)
	if v.CacheHit {
		b = appendTag(b, 10, protowire.VarintType)
		b = append(b, 1)
	}
	for i, f := range v.Findings {
		b = appendTag(b, 11, protowire.BytesType)
		b = appendVarint(b, uint64(sz.finding(i)))
		b = appendFinding(b, f)
	}
	b = appendString(b, 12, v.ActionType)
	b = appendInt(b, 13, int64(v.RequiredTier))
	if c := v.Confinement; c != nil {
		b = appendTag(b, 14, protowire.BytesType)
		b = appendVarint(b, uint64(sz.confinement))
		b = appendInt(b, 1, int64(c.Write))
		if len(c.ConnectPorts) > 0 {
			b = appendTag(b, 2, protowire.BytesType)
			b = appendVarint(b, uint64(portsSize(c.ConnectPorts)))
			for _, p := range c.ConnectPorts {
				b = appendVarint(b, uint64(p))
			}
		}
		for _, p := range c.ReadPaths {
			b = appendTag(b, 4, protowire.BytesType)
			b = appendLenString(b, p)
		}
	}
	return b
}

// findingSize is f's encoded size, false if the fast path leaves f to
// proto.Marshal.
func findingSize(f *pb.Finding) (int, bool) {
	if f == nil || len(f.ProtoReflect().GetUnknown()) > 0 ||
		!textcut.ValidUTF8(f.RuleId) || !textcut.ValidUTF8(f.Category) || !textcut.ValidUTF8(f.Message) || !textcut.ValidUTF8(f.Evidence) {
		return 0, false
	}
	return stringSize(f.RuleId) + stringSize(f.Category) + intSize(int64(f.Severity)) +
		intSize(int64(f.Outcome)) + stringSize(f.Message) + intSize(int64(f.Tier)) + stringSize(f.Evidence), true
}

func appendFinding(b []byte, f *pb.Finding) []byte {
	b = appendString(b, 1, f.RuleId)
	b = appendString(b, 2, f.Category)
	b = appendInt(b, 3, int64(f.Severity))
	b = appendInt(b, 4, int64(f.Outcome))
	b = appendString(b, 5, f.Message)
	b = appendInt(b, 6, int64(f.Tier))
	return appendString(b, 7, f.Evidence)
}
