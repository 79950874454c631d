package engine

import (
	"context"
	"time"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// ApprovalRequest is a tool call the shield escalated to a human (Tier 3).
type ApprovalRequest struct {
	ID            string
	SessionID     string
	MessageID     string
	CallID        string
	ToolName      string
	ArgumentsJSON string
	Verdict       *pb.Verdict
	Deadline      time.Time
}

// Outcome names of an escalation, as reported to shieldd's audit chain.
const (
	OutcomeApproved    = "approved"
	OutcomeDenied      = "denied"
	OutcomeTimeout     = "timeout"
	OutcomeCancelled   = "cancelled"
	OutcomeRateLimited = "rate_limited"
)

// ApprovalResult is what became of an ApprovalRequest.
type ApprovalResult struct {
	Approved bool
	// Outcome is one of the Outcome constants.
	Outcome string
	// By names who decided: "cli", "grpc", "http", "policy:deny", ...
	By string
}

// Approver decides escalated tool calls. It must return when ctx ends
// (a cancelled turn) with a denying result.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) ApprovalResult
}

// FixedApprover answers every escalation the same way without asking:
// --on-escalate=deny (the headless default) or, when an operator writes
// it, allow.
type FixedApprover struct{ Allow bool }

// Approve implements Approver.
func (f FixedApprover) Approve(ctx context.Context, _ ApprovalRequest) ApprovalResult {
	if ctx.Err() != nil {
		return ApprovalResult{Outcome: OutcomeCancelled, By: "engine"}
	}
	if f.Allow {
		return ApprovalResult{Approved: true, Outcome: OutcomeApproved, By: "policy:on-escalate=allow"}
	}
	return ApprovalResult{Outcome: OutcomeDenied, By: "policy:on-escalate=deny"}
}
