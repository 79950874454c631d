package workload

import (
	"encoding/json"
	"fmt"
	"strconv"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
)

// Requests are made distinct in one of two ways (Vary).
//
// VaryWorkspace suffixes the caller's workspace_id. The workspace id is
// part of the verdict cache key but not of the canonical action, so the
// Shield does the full uncached work and reaches the same decision. But
// the verdicts repeat the corpus's: the same findings, evidence and
// reasoning, so the cache shares their shapes, as it cannot for distinct
// actions in production.
//
// VaryContent makes the action's own text distinct instead: its longest
// string argument gets a token appended, after a space. A command gains
// an argument, a path another name, a message another word. The verdicts
// then carry evidence of their own, as distinct actions' do, which is
// what the cache's memory must be measured with. The decisions shift a
// little (a few percent of the corpus), and payloads without a string
// argument vary by workspace only.

// DistinctID returns the varied workspace id for request number i. run is
// a per-process nonce so that two runs against one server do not share
// cache entries.
func DistinctID(base, run string, i uint64) string {
	return base + "/bench-" + run + "-" + strconv.FormatUint(i, 10)
}

// Varied returns a copy of the item's request whose workspace id is id.
func (it Item) Varied(id string) action.Request {
	r := it.Request
	r.Caller.WorkspaceID = id
	return r
}

// Vary is how requests are made distinct: by workspace id alone, or by
// the action's content too (see above).
type Vary string

const (
	VaryWorkspace Vary = "workspace"
	VaryContent   Vary = "content"
)

// ParseVary reads a --vary flag value.
func ParseVary(s string) (Vary, error) {
	switch v := Vary(s); v {
	case VaryWorkspace, VaryContent:
		return v, nil
	}
	return "", fmt.Errorf("vary %q: want %q or %q", s, VaryWorkspace, VaryContent)
}

// Distinct returns the item's request number i of run made distinct as
// vary says. By content, the workspace id carries only the run (the
// content keeps requests apart) and the token appended to the content is
// ContentToken(run, i), whose width does not depend on i: a load tool can
// encode a request once and overwrite the digits. A payload without a
// string argument varies by workspace id instead.
func (it Item) Distinct(vary Vary, run string, i uint64) action.Request {
	base := it.Request.Caller.WorkspaceID
	if vary == VaryContent {
		if p, ok := distinctPayload(it.Request.Payload, ContentToken(run, i)); ok {
			r := it.Varied(base + "/bench-" + run)
			r.Payload = p
			return r
		}
	}
	return it.Varied(DistinctID(base, run, i))
}

// ContentDigits is the width of the number in a ContentToken.
const ContentDigits = 12

// ContentToken is what VaryContent appends to request i's content: the
// run, a dash and i in ContentDigits digits.
func ContentToken(run string, i uint64) string {
	return fmt.Sprintf("%s-%0*d", run, ContentDigits, i)
}

// distinctPayload returns payload with " "+token appended to its longest
// top-level string member; ok is false when it has none (or is not a JSON
// object). Members are re-encoded in key order, which does not change the
// canonical action.
func distinctPayload(payload []byte, token string) (varied []byte, ok bool) {
	var members map[string]json.RawMessage
	if json.Unmarshal(payload, &members) != nil {
		return nil, false
	}
	longest, value, found := "", "", false
	for k, raw := range members {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			continue
		}
		// Ties go to the first key in order, so the choice is stable.
		if !found || len(s) > len(value) || (len(s) == len(value) && k < longest) {
			longest, value, found = k, s, true
		}
	}
	if !found {
		return nil, false
	}
	member, err := json.Marshal(value + " " + token)
	if err != nil {
		return nil, false
	}
	members[longest] = member
	out, err := json.Marshal(members)
	if err != nil {
		return nil, false
	}
	return out, true
}

// Proto builds the wire request; workspaceID replaces the case's when
// non-empty.
func (it Item) Proto(workspaceID string) *pb.EvaluateRequest {
	r := it.Request
	if workspaceID != "" {
		r.Caller.WorkspaceID = workspaceID
	}
	return RequestProto(r, it.MinTier)
}

// RequestProto builds the wire form of r.
func RequestProto(r action.Request, minTier int32) *pb.EvaluateRequest {
	c := r.Caller
	req := &pb.EvaluateRequest{
		ActionType:  r.Type,
		PayloadJson: string(r.Payload),
		MinTier:     minTier,
		SessionId:   c.SessionID,
		Caller: &pb.CallerContext{
			Tenant: c.Tenant, WorkspaceId: c.WorkspaceID, EngineId: c.EngineID, UserId: c.UserID,
			WorkspaceRoot: c.WorkspaceRoot, HomeDir: c.Home, AgentName: c.AgentName,
		},
	}
	// The scripts a case's command runs travel with it, as the engine
	// sends them: without them the shield judges a different action.
	for _, at := range r.Attachments {
		req.Attachments = append(req.Attachments, &pb.Attachment{Path: at.Path, Content: at.Content, Unreadable: at.Unreadable})
	}
	return req
}
