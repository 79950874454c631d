package web_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/parapet-dev/parapet/engine/web"
	"github.com/parapet-dev/parapet/llm"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// TestApprovalsOverHTTP: an escalated action waits for an answer given
// over HTTP; approved it runs, denied it does not, and a client that
// leaves mid-stream cancels its turn and the approval it waits for.
func TestApprovalsOverHTTP(t *testing.T) {
	s := newStack(t, stackOptions{replies: []llm.Response{
		loadTools, escalated("approved.txt"), text("done one"),
		escalated("denied.txt"), text("done two"),
		escalated("abandoned.txt"), text("done three"),
	}})

	resp := s.do(t, request{method: "POST", path: "/api/sessions/new/messages", body: `{"content":"push it"}`})
	sid := resp.Header.Get(web.SessionIDHeader)
	stream := openSSE(t, resp)
	ev, _ := stream.until(evNeeded)
	need := ev.GetApprovalNeeded()
	if need.GetApprovalId() == "" || need.GetToolName() != "execute_command" || need.GetTimeoutAt() == 0 ||
		need.GetShieldAssessment().GetDecision() != pb.VerdictDecision_VERDICT_DECISION_ESCALATE ||
		!strings.Contains(need.GetAction().GetPayloadJson(), "approved.txt") {
		t.Fatalf("APPROVAL_NEEDED %v", need)
	}
	approve := func(id, body string) *http.Response {
		return s.do(t, request{method: "POST", path: "/api/approvals/" + id, body: body})
	}
	// An answer aimed at another session does not count.
	wantError(t, approve(need.GetApprovalId(), `{"approved":true,"session_id":"sess_other"}`), http.StatusNotFound, "NOT_FOUND")
	var ack pb.ApprovalAck
	readProto(t, approve(need.GetApprovalId(), `{"approved":true,"session_id":"`+sid+`"}`), http.StatusOK, &ack)
	if !ack.GetReceived() {
		t.Fatalf("ack %v", &ack)
	}
	// The first answer won; a second finds nothing.
	wantError(t, approve(need.GetApprovalId(), `{"approved":false}`), http.StatusNotFound, "NOT_FOUND")
	evs := stream.rest()
	res := find(evs, evResolved).GetApprovalResolved()
	if !res.GetApproved() || res.GetOutcome() != pb.OutcomeApproved || res.GetResolvedBy() != "http" {
		t.Fatalf("APPROVAL_RESOLVED %v", res)
	}
	if find(evs, evStarted) == nil || find(evs, evCompleted) == nil || evs[len(evs)-1].GetResponseComplete().GetContent() != "done one" {
		t.Fatalf("events after approval: %s", typeNames(evs))
	}
	if !exists(t, s.file("approved.txt")) {
		t.Fatal("the approved command did not run")
	}

	// Denied: the command does not run.
	stream = openSSE(t, s.do(t, request{method: "POST", path: "/api/sessions/" + sid + "/messages", body: `{"content":"push again"}`}))
	ev, _ = stream.until(evNeeded)
	readProto(t, approve(ev.GetApprovalNeeded().GetApprovalId(), `{"approved":false}`), http.StatusOK, &ack)
	evs = stream.rest()
	if res := find(evs, evResolved).GetApprovalResolved(); res.GetApproved() || res.GetOutcome() != pb.OutcomeDenied {
		t.Fatalf("APPROVAL_RESOLVED %v", res)
	}
	if find(evs, evStarted) != nil || evs[len(evs)-1].GetResponseComplete().GetContent() != "done two" {
		t.Fatalf("events after denial: %s", typeNames(evs))
	}
	if exists(t, s.file("denied.txt")) {
		t.Fatal("the denied command ran")
	}

	// While a turn waits, the agent is busy; a client that leaves cancels it.
	watch := s.eng.Subscribe(sid)
	defer watch.Close()
	ctx, drop := context.WithCancel(context.Background())
	defer drop()
	stream = openSSE(t, s.do(t, request{method: "POST", path: "/api/sessions/" + sid + "/messages", body: `{"content":"push once more"}`, ctx: ctx}))
	ev, _ = stream.until(evNeeded)
	wantError(t, s.do(t, request{method: "POST", path: "/api/sessions/new/messages", body: `{"content":"me too"}`}), http.StatusConflict, "AGENT_BUSY")
	drop()
	var outcome *pb.ApprovalResolved
	for outcome == nil {
		select {
		case e, ok := <-watch.Events:
			if !ok {
				t.Fatal("watch closed")
			}
			if e.GetEventType() == evStarted {
				t.Fatal("the abandoned command started")
			}
			outcome = e.GetApprovalResolved()
		case <-timeout():
			t.Fatal("the approval was not resolved after its client left")
		}
	}
	if outcome.GetApproved() || outcome.GetOutcome() != pb.OutcomeCancelled || outcome.GetApprovalId() != ev.GetApprovalNeeded().GetApprovalId() {
		t.Fatalf("APPROVAL_RESOLVED after the client left: %v", outcome)
	}
	wantError(t, approve(ev.GetApprovalNeeded().GetApprovalId(), `{"approved":true}`), http.StatusNotFound, "NOT_FOUND")
	if exists(t, s.file("abandoned.txt")) {
		t.Fatal("the abandoned command ran")
	}
	_, _ = io.Copy(io.Discard, stream.resp.Body)
}
