package engine_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/parapet-dev/parapet/engine"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// Every ClientService RPC, unary and streaming, is refused without the
// client token, with a wrong one, or with it in the wrong form; with it,
// the same calls work. The refusal happens before anything runs: the
// approval stays pending and the engine keeps running.
func TestClientServiceNeedsTheToken(t *testing.T) {
	h := newHarness(t, nil)
	a, tr, p := h.startTurn(t, context.Background(), engine.Message{Content: "push it"})
	a.send(t, proposal(p.GetSessionId(), p.GetMessageId(), "c1", "execute_command", `{"command":"git push --force origin main"}`))
	var approvalID string
	for approvalID == "" {
		if ev := nextEvent(t, tr); ev.GetEventType() == pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_NEEDED {
			approvalID = ev.GetApprovalNeeded().GetApprovalId()
		}
	}

	tok := h.eng.ClientToken()
	if len(tok) != 64 {
		t.Fatalf("client token %q: want 256 bits in hex", tok)
	}
	bare, err := grpc.NewClient(h.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	c := pb.NewClientServiceClient(bare)
	calls := func(ctx context.Context) map[string]error {
		errs := map[string]error{}
		_, errs["ResolveApproval"] = c.ResolveApproval(ctx, &pb.ApprovalResponse{ApprovalId: approvalID, Approved: true})
		_, errs["GetStatus"] = c.GetStatus(ctx, &pb.StatusRequest{})
		_, errs["ListSessions"] = c.ListSessions(ctx, &pb.ListSessionsRequest{})
		_, errs["GetHistory"] = c.GetHistory(ctx, &pb.GetHistoryRequest{SessionId: p.GetSessionId()})
		_, errs["RequestApproval"] = c.RequestApproval(ctx, &pb.ExternalApprovalRequest{Source: "mcp:x", ToolName: "t",
			Verdict: &pb.Verdict{Decision: pb.VerdictDecision_VERDICT_DECISION_ESCALATE}})
		for name, open := range map[string]func() (grpc.ClientStream, error){
			"SendMessage": func() (grpc.ClientStream, error) {
				return c.SendMessage(ctx, &pb.ClientMessageRequest{Content: "hi"})
			},
			"WatchSession": func() (grpc.ClientStream, error) { return c.WatchSession(ctx, &pb.WatchSessionRequest{}) },
		} {
			s, err := open()
			if err == nil {
				err = s.RecvMsg(&pb.PipelineEvent{})
			}
			errs[name] = err
		}
		return errs
	}
	wrong := strings.Repeat("0", len(tok))
	for what, md := range map[string]metadata.MD{
		"no token":          nil,
		"wrong token":       metadata.Pairs(engine.ClientAuthKey, "Bearer "+wrong),
		"token, not Bearer": metadata.Pairs(engine.ClientAuthKey, tok),
		"other key":         metadata.Pairs("x-parapet-token", tok),
		"two values":        metadata.Pairs(engine.ClientAuthKey, "Bearer "+wrong, engine.ClientAuthKey, "Bearer "+tok),
		"token prefix":      metadata.Pairs(engine.ClientAuthKey, "Bearer "+tok[:32]),
	} {
		ctx := metadata.NewOutgoingContext(context.Background(), md)
		for call, err := range calls(ctx) {
			if err == nil || !strings.Contains(err.Error(), "Unauthenticated") {
				t.Errorf("%s: %s: %v, want Unauthenticated", what, call, err)
			}
		}
		// Shutdown last, and only refused: the engine must keep running.
		_, err := c.Shutdown(ctx, &pb.ShutdownRequest{Reason: "not yours"})
		wantCode(t, err, codes.Unauthenticated)
	}
	select {
	case <-h.eng.ShutdownRequested():
		t.Fatal("a call without the token shut the engine down")
	default:
	}

	// With the token, the approval is answered (denied here) and the call
	// does not run.
	authed := pb.NewClientServiceClient(h.conn)
	if _, err := authed.ResolveApproval(context.Background(), &pb.ApprovalResponse{ApprovalId: approvalID, Approved: false}); err != nil {
		t.Fatalf("ResolveApproval with the token: %v", err)
	}
	if r := a.next(t).GetToolResult(); !r.GetIsError() {
		t.Fatalf("the denied call ran: %+v", r)
	}
	if _, err := authed.GetStatus(context.Background(), &pb.StatusRequest{}); err != nil {
		t.Fatalf("GetStatus with the token: %v", err)
	}
}

// A token given in the configuration is the one required.
func TestClientTokenFromConfig(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.ClientToken = "given-token" })
	if h.eng.ClientToken() != "given-token" {
		t.Fatalf("ClientToken %q", h.eng.ClientToken())
	}
	if _, err := h.client().GetStatus(context.Background(), &pb.StatusRequest{}); err != nil {
		t.Fatal(err)
	}
}
