package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/parapet-dev/parapet/benchmarks/internal/workload"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// The lean client is how evaluate mode calls Evaluate unless
// --full-client: a request the corpus sends again and again is encoded
// once, and of each response only the wire structure and the verdict's
// decision are read, which is all the tally looks at. On a machine where
// the load tool shares the cores with shieldd, decoding every ~1 KB
// verdict in full (a dozen strings, each validated and allocated) took
// CPU from the server it measures, and more of it for Evaluate than for
// the health check it is compared with.

const evaluateMethod = "/openparallax.v1.ShieldService/Evaluate"

// encodedRequest is an EvaluateRequest already in its wire form.
type encodedRequest []byte

// decisionReply is what the lean client reads of an EvaluateResponse.
type decisionReply struct {
	hasVerdict bool
	decision   pb.VerdictDecision
}

// leanCodec sends encodedRequests as they are and reads decisionReplies
// with readDecision; other messages go through proto as usual.
type leanCodec struct{}

func (leanCodec) Name() string { return "proto" }

func (leanCodec) Marshal(v any) (mem.BufferSlice, error) {
	if b, ok := v.(encodedRequest); ok {
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("cannot marshal %T", v)
	}
	b, err := proto.Marshal(m)
	return mem.BufferSlice{mem.SliceBuffer(b)}, err
}

func (leanCodec) Unmarshal(data mem.BufferSlice, v any) error {
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	if r, ok := v.(*decisionReply); ok {
		var err error
		*r, err = readDecision(buf.ReadOnlyData())
		return err
	}
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("cannot unmarshal into %T", v)
	}
	return proto.Unmarshal(buf.ReadOnlyData(), m)
}

var errBadWire = errors.New("malformed EvaluateResponse")

// readDecision reads an EvaluateResponse's verdict decision, checking
// that the whole message is well-formed protobuf wire data. Like
// proto.Unmarshal, a repeated verdict is merged (its last decision wins).
func readDecision(b []byte) (decisionReply, error) {
	var r decisionReply
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return r, errBadWire
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return r, errBadWire
			}
			r.hasVerdict = true
			if err := readVerdictDecision(v, &r.decision); err != nil {
				return r, err
			}
			b = b[n:]
			continue
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return r, errBadWire
		}
		b = b[n:]
	}
	return r, nil
}

func readVerdictDecision(b []byte, d *pb.VerdictDecision) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errBadWire
		}
		b = b[n:]
		if num == 1 && typ == protowire.VarintType {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return errBadWire
			}
			*d = pb.VerdictDecision(int32(v))
			b = b[n:]
			continue
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return errBadWire
		}
		b = b[n:]
	}
	return nil
}

// leanEvaluate calls Evaluate on cc with req (an encodedRequest or an
// *pb.EvaluateRequest) and returns the decision.
func leanEvaluate(ctx context.Context, cc *grpc.ClientConn, req any) (decisionReply, error) {
	var r decisionReply
	err := cc.Invoke(ctx, evaluateMethod, req, &r, grpc.ForceCodecV2(leanCodec{}))
	return r, err
}

// distinctWire is a corpus request in wire form without its caller, and
// its caller without the workspace id, so that a request made distinct
// (workload.DistinctID) is a few appends instead of building and
// encoding a message per call: field order does not matter on the wire,
// so the caller goes last with the workspace id at its end.
type distinctWire struct {
	rest, callerRest []byte
	baseID           string // the case's own workspace id
}

var (
	callerField    = (&pb.EvaluateRequest{}).ProtoReflect().Descriptor().Fields().ByName("caller").Number()
	workspaceField = (&pb.CallerContext{}).ProtoReflect().Descriptor().Fields().ByName("workspace_id").Number()
)

func newDistinctWire(req *pb.EvaluateRequest) (distinctWire, error) {
	noCaller := proto.Clone(req).(*pb.EvaluateRequest)
	c := noCaller.GetCaller()
	noCaller.Caller = nil
	rest, err := proto.Marshal(noCaller)
	if err != nil {
		return distinctWire{}, err
	}
	var callerRest []byte
	if c != nil {
		c = proto.Clone(c).(*pb.CallerContext)
		c.WorkspaceId = ""
		if callerRest, err = proto.Marshal(c); err != nil {
			return distinctWire{}, err
		}
	}
	return distinctWire{rest: rest, callerRest: callerRest, baseID: req.GetCaller().GetWorkspaceId()}, nil
}

// encode returns the request with workspace id workload.DistinctID(baseID, run, i),
// in dst's storage when it has room.
func (d distinctWire) encode(dst []byte, run string, i uint64) encodedRequest {
	var num [20]byte
	n := strconv.AppendUint(num[:0], i, 10)
	idLen := len(d.baseID) + len("/bench-") + len(run) + 1 + len(n)
	inner := len(d.callerRest) + protowire.SizeTag(workspaceField) + protowire.SizeBytes(idLen)
	b := slices.Grow(dst[:0], len(d.rest)+protowire.SizeTag(callerField)+protowire.SizeBytes(inner))
	b = append(b, d.rest...)
	b = protowire.AppendTag(b, callerField, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(inner))
	b = append(b, d.callerRest...)
	b = protowire.AppendTag(b, workspaceField, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(idLen))
	b = append(b, d.baseID...)
	b = append(b, "/bench-"...)
	b = append(b, run...)
	b = append(b, '-')
	return append(b, n...)
}

// contentWire is a corpus request made distinct by content
// (workload.VaryContent) in wire form, for request number 0: the token's
// digits have a fixed width, so request i is a copy with its digits
// written over those at at. at is -1 when the payload has no string
// argument to vary, and the request varies by workspace id instead.
type contentWire struct {
	wire []byte
	at   int
}

func newContentWire(it workload.Item, run string) (contentWire, error) {
	b, err := proto.Marshal(workload.RequestProto(it.Distinct(workload.VaryContent, run, 0), it.MinTier))
	if err != nil {
		return contentWire{}, err
	}
	token := []byte(workload.ContentToken(run, 0))
	at := bytes.Index(b, token)
	if at < 0 {
		return contentWire{at: -1}, nil
	}
	if bytes.Index(b[at+1:], token) >= 0 {
		return contentWire{}, fmt.Errorf("the content token %s appears twice in the request", token)
	}
	return contentWire{wire: b, at: at + len(token) - workload.ContentDigits}, nil
}

// encode returns request number i, in dst's storage when it has room.
func (c contentWire) encode(dst []byte, i uint64) encodedRequest {
	b := append(dst[:0], c.wire...)
	digits := b[c.at : c.at+workload.ContentDigits]
	for j := len(digits) - 1; j >= 0; j-- {
		digits[j] = byte('0' + i%10)
		i /= 10
	}
	return b
}
