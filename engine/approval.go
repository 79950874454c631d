package engine

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

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

// ApprovalResult is what became of an ApprovalRequest.
type ApprovalResult struct {
	Approved bool
	// Outcome is one of the Outcome constants.
	Outcome string
	// By names who decided: "cli", "grpc", "http", "policy:deny", ...
	By string
}

// Approver is a front-end that answers escalations itself (the agentctl
// terminal prompt, or a fixed policy). It answers alongside the engine's
// clients, through the same broker: the first answer wins. It must return
// when ctx ends; what it returns then no longer counts.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) ApprovalResult
}

// FixedApprover answers every escalation the same way without asking:
// --on-escalate=deny (the headless default) or, when an operator writes
// it, allow. Nobody is prompted, so it is not held to the hourly limit of
// prompts.
type FixedApprover struct{ Allow bool }

// Approve implements Approver.
func (f FixedApprover) Approve(ctx context.Context, _ ApprovalRequest) ApprovalResult {
	if ctx.Err() != nil {
		return ApprovalResult{Outcome: pb.OutcomeCancelled, By: "engine"}
	}
	if f.Allow {
		return ApprovalResult{Approved: true, Outcome: pb.OutcomeApproved, By: "policy:on-escalate=allow"}
	}
	return ApprovalResult{Outcome: pb.OutcomeDenied, By: "policy:on-escalate=deny"}
}

// ErrApprovalNotFound is ResolveApproval's answer for an id that is not
// waiting for an answer: unknown, already answered, timed out or cancelled.
var ErrApprovalNotFound = errors.New("no pending approval with that id (unknown, already answered, timed out or cancelled)")

// broker is the one place escalations wait for a human, whichever
// front-end answers (gRPC, HTTP, the agentctl prompt). The first answer
// wins; later ones find nothing.
type broker struct {
	perHour int // prompts allowed in any 60 minutes; < 0 means no limit
	now     func() time.Time

	mu      sync.Mutex
	pending map[string]*pendingApproval
	prompts []time.Time // when recent prompts opened, oldest first
}

type pendingApproval struct {
	req    ApprovalRequest
	needed *pb.PipelineEvent   // the APPROVAL_NEEDED announcement, replayed to late watchers
	answer chan ApprovalResult // buffered: resolve never blocks
}

func newBroker(perHour int) *broker {
	return &broker{perHour: perHour, now: time.Now, pending: map[string]*pendingApproval{}}
}

// open registers req as waiting. It reports false, registering nothing,
// when the hourly limit of prompts is reached.
func (b *broker) open(req ApprovalRequest, needed *pb.PipelineEvent) (*pendingApproval, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	cut := 0
	for cut < len(b.prompts) && now.Sub(b.prompts[cut]) >= time.Hour {
		cut++
	}
	b.prompts = b.prompts[cut:]
	if b.perHour >= 0 && len(b.prompts) >= b.perHour {
		return nil, false
	}
	b.prompts = append(b.prompts, now)
	p := &pendingApproval{req: req, needed: needed, answer: make(chan ApprovalResult, 1)}
	b.pending[req.ID] = p
	return p, true
}

// resolve answers a pending approval. sessionID, when not empty, must be
// the approval's session: an answer aimed at another session finds nothing.
func (b *broker) resolve(id, sessionID string, res ApprovalResult) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.pending[id]
	if !ok || (sessionID != "" && sessionID != p.req.SessionID) || !b.now().Before(p.req.Deadline) {
		return ErrApprovalNotFound
	}
	delete(b.pending, id)
	p.answer <- res
	return nil
}

// close withdraws a pending approval and returns the answer it got before
// being withdrawn, if any.
func (b *broker) close(p *pendingApproval) (ApprovalResult, bool) {
	b.mu.Lock()
	delete(b.pending, p.req.ID)
	b.mu.Unlock()
	select {
	case res := <-p.answer:
		return res, true
	default:
		return ApprovalResult{}, false
	}
}

func (b *broker) list() []ApprovalRequest {
	b.mu.Lock()
	out := make([]ApprovalRequest, 0, len(b.pending))
	for _, p := range b.pending {
		out = append(out, p.req)
	}
	b.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Deadline.Before(out[j].Deadline) })
	return out
}

// announcements returns the APPROVAL_NEEDED events still waiting for an
// answer, of one session or ("") of all.
func (b *broker) announcements(sessionID string) []*pb.PipelineEvent {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*pb.PipelineEvent
	for _, p := range b.pending {
		if sessionID == "" || p.req.SessionID == sessionID {
			out = append(out, p.needed)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetTimestampMs() < out[j].GetTimestampMs() })
	return out
}

func (b *broker) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending)
}

// ResolveApproval answers a pending escalation; by names the front-end
// ("grpc", "http", "cli", ...). It returns ErrApprovalNotFound for an id
// that is not waiting, including one another client answered first.
func (e *Engine) ResolveApproval(id, sessionID string, approved bool, by string) error {
	res := ApprovalResult{Approved: approved, Outcome: pb.OutcomeDenied, By: by}
	if approved {
		res.Outcome = pb.OutcomeApproved
	}
	return e.approvals.resolve(id, sessionID, res)
}

// PendingApprovals lists the escalations waiting for an answer, the one
// closest to its deadline first.
func (e *Engine) PendingApprovals() []ApprovalRequest { return e.approvals.list() }

// awaitApproval holds an escalated call until the first answer, its
// deadline or the end of its turn. needed (APPROVAL_NEEDED) is published
// only once the approval can be answered, so no client sees an id that is
// not there; watchers that arrive later get it replayed.
func (e *Engine) awaitApproval(ctx context.Context, req ApprovalRequest, needed *pb.PipelineEvent, publish func(*pb.PipelineEvent)) ApprovalResult {
	if fixed, ok := e.cfg.Approver.(FixedApprover); ok {
		publish(needed)
		return fixed.Approve(ctx, req)
	}
	// The broker keeps its own copy: the published event is shared with
	// subscribers, the copy is replayed to watchers that come later.
	p, ok := e.approvals.open(req, proto.Clone(needed).(*pb.PipelineEvent))
	if !ok {
		e.log.Warn("escalation denied: hourly limit of approval prompts reached", "call", req.CallID, "limit", e.cfg.ApprovalsPerHour)
		return ApprovalResult{Outcome: pb.OutcomeRateLimited, By: "engine"}
	}
	publish(needed)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // also tells a front-end Approver its question is closed
	if a := e.cfg.Approver; a != nil {
		go func() {
			res := a.Approve(ctx, req)
			if ctx.Err() == nil {
				_ = e.approvals.resolve(req.ID, "", res)
			}
		}()
	}
	select {
	case res := <-p.answer:
		return res
	case <-ctx.Done():
	}
	if res, answered := e.approvals.close(p); answered {
		return res // answered just as the deadline passed; escalate decides
	}
	return ApprovalResult{}
}
