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
	if len(resp.ProtoReflect().GetUnknown()) > 0 || !utf8.ValidString(resp.GetRequestId()) {
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
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(n))
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

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
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
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
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
	valid := !check || utf8.ValidString(v.Reasoning) && utf8.ValidString(v.ActionHash) && utf8.ValidString(v.PolicyVersion) &&
		utf8.ValidString(v.ActionType)
	for _, id := range v.RuleIds {
		n += protowire.SizeTag(8) + protowire.SizeBytes(len(id))
		valid = valid && (!check || utf8.ValidString(id))
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
		valid = valid && (!check || utf8.ValidString(p))
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
		b = protowire.AppendTag(b, 3, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(v.Confidence))
	}
	b = appendString(b, 4, v.Reasoning)
	b = appendString(b, 5, v.ActionHash)
	b = appendInt(b, 6, v.EvaluatedAt)
	b = appendInt(b, 7, v.ExpiresAt)
	for _, id := range v.RuleIds {
		b = protowire.AppendTag(b, 8, protowire.BytesType)
		b = protowire.AppendString(b, id)
	}
	b = appendString(b, 9, v.PolicyVersion)
	if v.CacheHit {
		b = protowire.AppendTag(b, 10, protowire.VarintType)
		b = append(b, 1)
	}
	for _, f := range v.Findings {
		n, _ := findingSize(f, false)
		b = protowire.AppendTag(b, 11, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(n))
		b = appendFinding(b, f)
	}
	b = appendString(b, 12, v.ActionType)
	b = appendInt(b, 13, int64(v.RequiredTier))
	if c := v.Confinement; c != nil {
		n, _ := confinementSize(c, false)
		b = protowire.AppendTag(b, 14, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(n))
		b = appendInt(b, 1, int64(c.Write))
		if len(c.ConnectPorts) > 0 {
			b = protowire.AppendTag(b, 2, protowire.BytesType)
			b = protowire.AppendVarint(b, uint64(portsSize(c.ConnectPorts)))
			for _, p := range c.ConnectPorts {
				b = protowire.AppendVarint(b, uint64(p))
			}
		}
		for _, p := range c.ReadPaths {
			b = protowire.AppendTag(b, 4, protowire.BytesType)
			b = protowire.AppendString(b, p)
		}
	}
	return b
}

func findingSize(f *pb.Finding, check bool) (int, bool) {
	if f == nil || check && len(f.ProtoReflect().GetUnknown()) > 0 {
		return 0, false
	}
	valid := !check || utf8.ValidString(f.RuleId) && utf8.ValidString(f.Category) && utf8.ValidString(f.Message) &&
		utf8.ValidString(f.Evidence)
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
