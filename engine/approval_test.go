package engine_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/parapet-dev/parapet/engine"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// escalating is a command the default policy escalates; it leaves a file
// behind only if it ran.
func escalating(file string) string {
	return `{"command":"touch ` + file + ` && git push --force origin main"}`
}

// awaitNeeded reads the turn's events up to APPROVAL_NEEDED.
func awaitNeeded(t *testing.T, tr *engine.Turn) *pb.ApprovalNeeded {
	t.Helper()
	for {
		ev := nextEvent(t, tr)
		if n := ev.GetApprovalNeeded(); n != nil {
			return n
		}
	}
}

// The first answer over gRPC decides; a second answer, an unknown id and
// an answer aimed at another session are NotFound.
func TestApprovalResolvedOverGRPC(t *testing.T) {
	for _, approve := range []bool{true, false} {
		h := newHarness(t, nil)
		a, tr, p := h.startTurn(t, context.Background(), engine.Message{Content: "push it"})
		file := "approved.txt"
		if !approve {
			file = "denied.txt"
		}
		a.send(t, proposal(p.GetSessionId(), p.GetMessageId(), "c1", "execute_command", escalating(file)))
		n := awaitNeeded(t, tr)
		if n.GetCallId() != "c1" || n.GetShieldAssessment().GetReasoning() == "" || n.GetTimeoutAt() <= time.Now().Unix() {
			t.Fatalf("APPROVAL_NEEDED %+v", n)
		}
		if st, err := h.client().GetStatus(context.Background(), &pb.StatusRequest{}); err != nil || st.GetPendingApprovals() != 1 {
			t.Fatalf("status while pending: %v %v", st, err)
		}
		_, err := h.client().ResolveApproval(context.Background(), &pb.ApprovalResponse{ApprovalId: n.GetApprovalId(), SessionId: "sess_other", Approved: true})
		wantCode(t, err, codes.NotFound)
		_, err = h.client().ResolveApproval(context.Background(), &pb.ApprovalResponse{ApprovalId: "appr_unknown", Approved: true})
		wantCode(t, err, codes.NotFound)
		_, err = h.client().ResolveApproval(context.Background(), &pb.ApprovalResponse{})
		wantCode(t, err, codes.InvalidArgument)

		ctx := metadata.AppendToOutgoingContext(context.Background(), engine.FrontendMetadataKey, "http")
		ack, err := h.client().ResolveApproval(ctx, &pb.ApprovalResponse{ApprovalId: n.GetApprovalId(), SessionId: p.GetSessionId(), Approved: approve})
		if err != nil || !ack.GetReceived() {
			t.Fatalf("first answer: %v %v", ack, err)
		}
		_, err = h.client().ResolveApproval(context.Background(), &pb.ApprovalResponse{ApprovalId: n.GetApprovalId(), Approved: !approve})
		wantCode(t, err, codes.NotFound)

		r := a.next(t).GetToolResult()
		evs := callEvents(t, tr, "c1")
		res := find(evs, evResolved).GetApprovalResolved()
		if res.GetApproved() != approve || res.GetResolvedBy() != "http" {
			t.Fatalf("APPROVAL_RESOLVED %+v", res)
		}
		ran := exists(t, filepath.Join(h.ws, file))
		if ran != approve || (find(evs, evStarted) != nil) != approve {
			t.Fatalf("approve=%v: ran=%v result %+v", approve, ran, r)
		}
		if !approve && !strings.Contains(r.GetContent(), "not run") {
			t.Fatalf("denied result %+v", r)
		}
		if st, _ := h.client().GetStatus(context.Background(), &pb.StatusRequest{}); st.GetPendingApprovals() != 0 {
			t.Fatalf("pending after the answer: %d", st.GetPendingApprovals())
		}
		a.complete(t, p, "done", nil)
		endEvent(t, tr)
	}
}

// A client may answer while a front-end Approver (the terminal prompt) is
// still asking: the client's answer wins and the prompt is closed.
func TestClientAnswersBeforeTheApprover(t *testing.T) {
	asked := make(chan engine.ApprovalRequest, 1)
	h := newHarness(t, func(c *engine.Config) { c.Approver = blockingApprover{asked} })
	a, tr, p := h.startTurn(t, context.Background(), engine.Message{Content: "push it"})
	a.send(t, proposal(p.GetSessionId(), p.GetMessageId(), "c1", "execute_command", escalating("esc.txt")))
	req := <-asked
	if pending := h.eng.PendingApprovals(); len(pending) != 1 || pending[0].ID != req.ID {
		t.Fatalf("pending %+v", pending)
	}
	if _, err := h.client().ResolveApproval(context.Background(), &pb.ApprovalResponse{ApprovalId: req.ID, Approved: true}); err != nil {
		t.Fatal(err)
	}
	a.next(t)
	evs := callEvents(t, tr, "c1")
	if res := find(evs, evResolved).GetApprovalResolved(); !res.GetApproved() || res.GetResolvedBy() != "grpc" {
		t.Fatalf("APPROVAL_RESOLVED %+v", res)
	}
	if !exists(t, filepath.Join(h.ws, "esc.txt")) {
		t.Fatal("the approved call did not run")
	}
}

// Nobody answers: the deadline denies, and a late answer is NotFound.
func TestUnansweredApprovalTimesOut(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.ApprovalTimeout = 200 * time.Millisecond })
	a, tr, p := h.startTurn(t, context.Background(), engine.Message{Content: "push it"})
	r := a.call(t, p.GetSessionId(), p.GetMessageId(), "c1", "execute_command", escalating("esc.txt"))
	evs := callEvents(t, tr, "c1")
	res := find(evs, evResolved).GetApprovalResolved()
	if res.GetApproved() || res.GetOutcome() != pb.OutcomeTimeout || !r.GetIsError() || exists(t, filepath.Join(h.ws, "esc.txt")) {
		t.Fatalf("APPROVAL_RESOLVED %+v, result %+v", res, r)
	}
	_, err := h.client().ResolveApproval(context.Background(), &pb.ApprovalResponse{ApprovalId: res.GetApprovalId(), Approved: true})
	wantCode(t, err, codes.NotFound)
}

// Past the hourly limit of prompts an escalation is denied without
// asking anyone.
func TestApprovalPromptsAreRateLimited(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.ApprovalsPerHour = 1 })
	a, tr, p := h.startTurn(t, context.Background(), engine.Message{Content: "push it"})
	a.send(t, proposal(p.GetSessionId(), p.GetMessageId(), "c1", "execute_command", escalating("one.txt")))
	n := awaitNeeded(t, tr)
	if _, err := h.client().ResolveApproval(context.Background(), &pb.ApprovalResponse{ApprovalId: n.GetApprovalId(), Approved: false}); err != nil {
		t.Fatal(err)
	}
	a.next(t)
	callEvents(t, tr, "c1")

	r := a.call(t, p.GetSessionId(), p.GetMessageId(), "c2", "execute_command", escalating("two.txt"))
	evs := callEvents(t, tr, "c2")
	if find(evs, evNeeded) != nil {
		t.Fatal("a prompt opened past the hourly limit")
	}
	if res := find(evs, evResolved).GetApprovalResolved(); res.GetApproved() || res.GetOutcome() != pb.OutcomeRateLimited {
		t.Fatalf("APPROVAL_RESOLVED %+v", res)
	}
	if !strings.Contains(r.GetContent(), "too many approval prompts") || exists(t, filepath.Join(h.ws, "two.txt")) {
		t.Fatalf("result %+v", r)
	}
}

// A client that starts watching while a call waits for a human is told
// about it and can answer it.
func TestLateWatcherSeesThePendingApproval(t *testing.T) {
	h := newHarness(t, nil)
	a, tr, p := h.startTurn(t, context.Background(), engine.Message{Content: "push it"})
	a.send(t, proposal(p.GetSessionId(), p.GetMessageId(), "c1", "execute_command", escalating("late.txt")))
	n := awaitNeeded(t, tr)

	for _, session := range []string{p.GetSessionId(), ""} {
		ctx, cancel := context.WithCancel(context.Background())
		w, err := h.client().WatchSession(ctx, &pb.WatchSessionRequest{SessionId: session})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := w.Recv()
		if err != nil || ev.GetApprovalNeeded().GetApprovalId() != n.GetApprovalId() || ev.GetSessionId() != p.GetSessionId() {
			t.Fatalf("watching %q: first event %v, %v", session, ev, err)
		}
		cancel()
	}
	if _, err := h.client().ResolveApproval(context.Background(), &pb.ApprovalResponse{ApprovalId: n.GetApprovalId(), Approved: true}); err != nil {
		t.Fatal(err)
	}
	a.next(t)
	callEvents(t, tr, "c1")
	if !exists(t, filepath.Join(h.ws, "late.txt")) {
		t.Fatal("the call approved by the late watcher did not run")
	}
	// Once answered, it is not replayed.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	w, err := h.client().WatchSession(ctx, &pb.WatchSessionRequest{SessionId: p.GetSessionId()})
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := w.Recv(); err == nil {
		t.Fatalf("replayed after the answer: %v", ev)
	}
}
