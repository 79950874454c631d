package openparallaxv1

// Hand-written: request validation called by the go-grpc-middleware
// validator interceptor (it looks for a Validate() error method).

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// decodeErrorField is an out-of-range field number (above the 2^29-1
// limit no real field uses) under which a server codec records why a
// request could not be decoded, so Validate can reject it as
// InvalidArgument instead of gRPC's generic Internal error.
const decodeErrorField protowire.Number = protowire.MaxValidNumber

// MarkDecodeError resets r and records that its wire form was invalid.
func MarkDecodeError(r *EvaluateRequest, err error) {
	r.Reset()
	var b []byte
	b = protowire.AppendTag(b, decodeErrorField, protowire.BytesType)
	b = protowire.AppendString(b, err.Error())
	r.ProtoReflect().SetUnknown(b)
}

func decodeError(r *EvaluateRequest) string {
	b := r.ProtoReflect().GetUnknown()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		if num == decodeErrorField && typ == protowire.BytesType {
			s, _ := protowire.ConsumeString(b)
			return s
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return ""
		}
		b = b[n:]
	}
	return ""
}

// Validate checks what can be checked without evaluating: the Shield
// pipeline validates the payload itself.
func (r *EvaluateRequest) Validate() error {
	if msg := decodeError(r); msg != "" {
		return fmt.Errorf("request could not be decoded: %s", msg)
	}
	if strings.TrimSpace(r.GetActionType()) == "" && strings.TrimSpace(r.GetToolName()) == "" {
		return errors.New("action_type is empty (MCP-style callers set tool_name instead)")
	}
	if r.GetMinTier() < 0 || r.GetMinTier() > 3 {
		return fmt.Errorf("min_tier must be between 0 and 3, got %d", r.GetMinTier())
	}
	return nil
}
