package engine_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parapet-dev/parapet/engine"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// TestExternalApprovalThroughTheBroker: an action judged outside the
// engine (agentctl mcp-proxy) is announced to every watcher as the agent's
// escalations are, and the first answer from any client decides it.
func TestExternalApprovalThroughTheBroker(t *testing.T) {
	h := newHarness(t, nil)
	escalate := &pb.Verdict{Decision: pb.VerdictDecision_VERDICT_DECISION_ESCALATE, Reasoning: "deploys to production",
		ActionHash: "ab", RuleIds: []string{"policy.unknown-action"}}
	for _, approve := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		w, err := h.client().WatchSession(ctx, &pb.WatchSessionRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Header(); err != nil { // subscribed: nothing published from here on is missed
			t.Fatal(err)
		}
		type answer struct {
			resp *pb.ExternalApprovalResponse
			err  error
		}
		done := make(chan answer, 1)
		go func() {
			resp, err := h.client().RequestApproval(context.Background(), &pb.ExternalApprovalRequest{
				Source: "mcp:deployer", ToolName: "deploy", ArgumentsJson: `{"env":"prod"}`, Verdict: escalate})
			done <- answer{resp, err}
		}()
		ev, err := w.Recv()
		n := ev.GetApprovalNeeded()
		if err != nil || n.GetToolName() != "deploy" || ev.GetSessionId() != "external:mcp:deployer" ||
			n.GetAction().GetPayloadJson() != `{"env":"prod"}` || n.GetShieldAssessment().GetReasoning() != "deploys to production" ||
			n.GetContextSummary() != "mcp:deployer wants to run deploy" {
			t.Fatalf("announcement %v, %v", ev, err)
		}
		if _, err := h.client().ResolveApproval(context.Background(), &pb.ApprovalResponse{ApprovalId: n.GetApprovalId(), Approved: approve}); err != nil {
			t.Fatal(err)
		}
		var a answer
		select {
		case a = <-done:
		case <-time.After(guard):
			t.Fatal("RequestApproval did not return after the answer")
		}
		want := pb.OutcomeDenied
		if approve {
			want = pb.OutcomeApproved
		}
		if a.err != nil || a.resp.GetApproved() != approve || a.resp.GetOutcome() != want || a.resp.GetApprovalId() != n.GetApprovalId() || a.resp.GetResolvedBy() == "" {
			t.Fatalf("approve=%v: answer %v, %v", approve, a.resp, a.err)
		}
		if ev, err := w.Recv(); err != nil || ev.GetApprovalResolved().GetApproved() != approve {
			t.Fatalf("resolution %v, %v", ev, err)
		}
		cancel()
	}
}

// TestExternalApprovalRefusesWhatIsNotAnEscalation: only an ESCALATE
// verdict, with a source and a tool, is put to a human.
func TestExternalApprovalRefusesWhatIsNotAnEscalation(t *testing.T) {
	h := newHarness(t, nil)
	esc := &pb.Verdict{Decision: pb.VerdictDecision_VERDICT_DECISION_ESCALATE}
	for name, req := range map[string]*pb.ExternalApprovalRequest{
		"allow verdict": {Source: "mcp:x", ToolName: "t", Verdict: &pb.Verdict{Decision: pb.VerdictDecision_VERDICT_DECISION_ALLOW}},
		"block verdict": {Source: "mcp:x", ToolName: "t", Verdict: &pb.Verdict{Decision: pb.VerdictDecision_VERDICT_DECISION_BLOCK}},
		"no verdict":    {Source: "mcp:x", ToolName: "t"},
		"no source":     {ToolName: "t", Verdict: esc},
		"no tool":       {Source: "mcp:x", Verdict: esc},
	} {
		if _, err := h.client().RequestApproval(context.Background(), req); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", name, err)
		}
	}
}

// A watcher that subscribes while an approval is being opened sees its
// announcement once: from the pending list or from the bus, not both.
func TestWatcherSeesAnApprovalOnce(t *testing.T) {
	const rounds = 200
	h := newHarness(t, func(c *engine.Config) { c.ApprovalsPerHour = rounds })
	escalate := &pb.Verdict{Decision: pb.VerdictDecision_VERDICT_DECISION_ESCALATE, ActionHash: "ab"}
	for i := range rounds {
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		done := make(chan error, 1)
		go func() { // races the subscription below
			_, err := h.client().RequestApproval(context.Background(), &pb.ExternalApprovalRequest{
				Source: "mcp:race", ToolName: "deploy", ArgumentsJson: `{}`, Verdict: escalate})
			done <- err
		}()
		w, err := h.client().WatchSession(ctx, &pb.WatchSessionRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Header(); err != nil {
			t.Fatal(err)
		}
		var id string
		for id == "" {
			ev, err := w.Recv()
			if err != nil {
				t.Fatal(err)
			}
			id = ev.GetApprovalNeeded().GetApprovalId()
		}
		if _, err := h.client().ResolveApproval(context.Background(), &pb.ApprovalResponse{ApprovalId: id, Approved: false}); err != nil {
			t.Fatal(err)
		}
		for {
			ev, err := w.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if ev.GetApprovalNeeded().GetApprovalId() == id {
				t.Fatalf("round %d: approval %s announced twice", i, id)
			}
			if ev.GetApprovalResolved() != nil {
				break
			}
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		cancel()
	}
}
