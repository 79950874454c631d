package server

import (
	"math"
	"unicode/utf8"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

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
	if _, ok := evaluateResponseSize(resp); !ok {
		return nil, false
	}
	return appendEvaluateResponseWire(b, resp), true
}

// evaluateResponseSize is resp's encoded size; false if resp holds what
// the fast path leaves to proto.Marshal (see appendEvaluateResponseProto).
func evaluateResponseSize(resp *pb.EvaluateResponse) (int, bool) {
	if len(resp.ProtoReflect().GetUnknown()) > 0 || !validUTF8(resp.GetRequestId()) {
		return 0, false
	}
	n := stringSize(2, resp.GetRequestId())
	if v := resp.GetVerdict(); v != nil {
		vn, ok := verdictSize(v, true)
		if !ok {
			return 0, false
		}
		n += protowire.SizeTag(1) + protowire.SizeBytes(vn)
	}
	return n, true
}

// appendEvaluateResponseWire writes resp, which evaluateResponseSize accepted.
func appendEvaluateResponseWire(b []byte, resp *pb.EvaluateResponse) []byte {
	if v := resp.GetVerdict(); v != nil {
		n, _ := verdictSize(v, false)
		b = appendTag(b, 1, protowire.BytesType)
		b = appendVarint(b, uint64(n))
		b = appendVerdict(b, v)
	}
	return appendString(b, 2, resp.GetRequestId())
}

// marshalEvaluateResponse is the codec's fast path: the response written
// into a buffer from gRPC's pool, which gRPC frees once the message is
// sent. Unlike the standard proto codec it pools messages under gRPC's
// pooling threshold (1 KiB) too: a verdict is typically 0.3–1 KiB, the
// pool lends those a 4 KiB buffer that it gets back, and the fresh slice
// per response (three allocations with its wrapping) cost more than the
// encoding (BenchmarkEvaluateJSON/proto: 450 against 630 ns).
func marshalEvaluateResponse(resp *pb.EvaluateResponse) (mem.BufferSlice, bool) {
	n, ok := evaluateResponseSize(resp)
	if !ok {
		return nil, false
	}
	pool := mem.DefaultBufferPool()
	buf := pool.Get(n)
	*buf = appendEvaluateResponseWire((*buf)[:0], resp)
	return mem.BufferSlice{mem.NewBuffer(buf, pool)}, true
}

// appendTag and appendVarint write the one-byte forms in line: every
// field number here is below 16 and most lengths below 128, and
// protowire's general forms (a call and a ten-way switch each) were a
// fifth of the instructions of writing a cached verdict.
func appendTag(b []byte, num protowire.Number, typ protowire.Type) []byte {
	if num < 16 {
		return append(b, byte(num)<<3|byte(typ))
	}
	return protowire.AppendTag(b, num, typ)
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

// validUTF8 is utf8.ValidString with a wider stride over ASCII: every
// string of every verdict is checked on every response (proto refuses
// invalid UTF-8), nearly all of them ASCII, and the standard check reads
// eight bytes a step.
func validUTF8(s string) bool {
	i := 0
	for ; i+32 <= len(s); i += 32 {
		w := s[i : i+32]
		if (le64(w[0:8])|le64(w[8:16])|le64(w[16:24])|le64(w[24:32]))&0x8080808080808080 != 0 {
			break
		}
	}
	return utf8.ValidString(s[i:])
}

// le64 reads eight bytes as a little-endian word (one load once compiled).
func le64(w string) uint64 {
	_ = w[7]
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = appendTag(b, num, protowire.BytesType)
	return appendLenString(b, s)
}

func stringSize(num protowire.Number, s string) int {
	if s == "" {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeBytes(len(s))
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

func intSize(num protowire.Number, v int64) int {
	if v == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeVarint(uint64(v))
}

// verdictSize is v's encoded size. With check, it also reports false if
// v holds what the fast path leaves to proto.Marshal; writing a verdict
// already checked sizes its parts without checking them again.
func verdictSize(v *pb.Verdict, check bool) (int, bool) {
	if check && len(v.ProtoReflect().GetUnknown()) > 0 {
		return 0, false
	}
	n := intSize(1, int64(v.Decision)) + intSize(2, int64(v.Tier))
	if v.Confidence != 0 || math.Signbit(v.Confidence) {
		n += protowire.SizeTag(3) + protowire.SizeFixed64()
	}
	n += stringSize(4, v.Reasoning) + stringSize(5, v.ActionHash) + intSize(6, v.EvaluatedAt) + intSize(7, v.ExpiresAt)
	valid := !check || validUTF8(v.Reasoning) && validUTF8(v.ActionHash) && validUTF8(v.PolicyVersion) &&
		validUTF8(v.ActionType)
	for _, id := range v.RuleIds {
		n += protowire.SizeTag(8) + protowire.SizeBytes(len(id))
		valid = valid && (!check || validUTF8(id))
	}
	n += stringSize(9, v.PolicyVersion)
	if v.CacheHit {
		n += protowire.SizeTag(10) + 1
	}
	for _, f := range v.Findings {
		fn, ok := findingSize(f, check)
		if !ok {
			return 0, false
		}
		n += protowire.SizeTag(11) + protowire.SizeBytes(fn)
	}
	n += stringSize(12, v.ActionType) + intSize(13, int64(v.RequiredTier))
	if c := v.Confinement; c != nil {
		cn, ok := confinementSize(c, check)
		if !ok {
			return 0, false
		}
		n += protowire.SizeTag(14) + protowire.SizeBytes(cn)
	}
	return n, valid
}

// confinementSize is c's encoded size; connect_ports is packed, as proto3
// repeated scalars are.
func confinementSize(c *pb.Confinement, check bool) (int, bool) {
	if check && len(c.ProtoReflect().GetUnknown()) > 0 {
		return 0, false
	}
	n := intSize(1, int64(c.Write))
	if len(c.ConnectPorts) > 0 {
		n += protowire.SizeTag(2) + protowire.SizeBytes(portsSize(c.ConnectPorts))
	}
	valid := true
	for _, p := range c.ReadPaths {
		n += protowire.SizeTag(4) + protowire.SizeBytes(len(p))
		valid = valid && (!check || validUTF8(p))
	}
	return n, valid
}

func portsSize(ports []uint32) int {
	n := 0
	for _, p := range ports {
		n += protowire.SizeVarint(uint64(p))
	}
	return n
}

func appendVerdict(b []byte, v *pb.Verdict) []byte {
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
	for _, f := range v.Findings {
		n, _ := findingSize(f, false)
		b = appendTag(b, 11, protowire.BytesType)
		b = appendVarint(b, uint64(n))
		b = appendFinding(b, f)
	}
	b = appendString(b, 12, v.ActionType)
	b = appendInt(b, 13, int64(v.RequiredTier))
	if c := v.Confinement; c != nil {
		n, _ := confinementSize(c, false)
		b = appendTag(b, 14, protowire.BytesType)
		b = appendVarint(b, uint64(n))
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

func findingSize(f *pb.Finding, check bool) (int, bool) {
	if f == nil || check && len(f.ProtoReflect().GetUnknown()) > 0 {
		return 0, false
	}
	valid := !check || validUTF8(f.RuleId) && validUTF8(f.Category) && validUTF8(f.Message) &&
		validUTF8(f.Evidence)
	return stringSize(1, f.RuleId) + stringSize(2, f.Category) + intSize(3, int64(f.Severity)) +
		intSize(4, int64(f.Outcome)) + stringSize(5, f.Message) + intSize(6, int64(f.Tier)) + stringSize(7, f.Evidence), valid
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
