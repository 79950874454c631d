package workload

import (
	"strconv"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
)

// Requests are made distinct by suffixing the caller's workspace_id. The
// workspace id is part of the verdict cache key but not of the canonical
// action, so the Shield does the full uncached work and reaches the same
// decision: the variation is harmless to what is measured.

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

// Proto builds the wire request; workspaceID replaces the case's when
// non-empty.
func (it Item) Proto(workspaceID string) *pb.EvaluateRequest {
	c := it.Request.Caller
	if workspaceID != "" {
		c.WorkspaceID = workspaceID
	}
	req := &pb.EvaluateRequest{
		ActionType:  it.Request.Type,
		PayloadJson: string(it.Request.Payload),
		MinTier:     it.MinTier,
		SessionId:   c.SessionID,
		Caller: &pb.CallerContext{
			Tenant: c.Tenant, WorkspaceId: c.WorkspaceID, EngineId: c.EngineID, UserId: c.UserID,
			WorkspaceRoot: c.WorkspaceRoot, HomeDir: c.Home, AgentName: c.AgentName,
		},
	}
	// The scripts a case's command runs travel with it, as the engine
	// sends them: without them the shield judges a different action.
	for _, at := range it.Request.Attachments {
		req.Attachments = append(req.Attachments, &pb.Attachment{Path: at.Path, Content: at.Content, Unreadable: at.Unreadable})
	}
	return req
}
