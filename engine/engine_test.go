package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/engine/tools"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

func TestNewValidatesConfig(t *testing.T) {
	reg, err := tools.New(tools.Options{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	shield := failingShield{}
	for name, cfg := range map[string]engine.Config{
		"relative workspace": {Workspace: "ws", Shield: shield, Tools: reg},
		"no workspace":       {Shield: shield, Tools: reg},
		"no shield":          {Workspace: t.TempDir(), Tools: reg},
		"no tools":           {Workspace: t.TempDir(), Shield: shield},
	} {
		if _, err := engine.New(cfg); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}

func TestSubmitRefusals(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.MaxMessageBytes = 1024 })
	ctx := context.Background()

	if _, err := h.eng.Submit(ctx, engine.Message{Content: "hello"}); !errors.Is(err, engine.ErrAgentUnavailable) {
		t.Fatalf("no agent: %v", err)
	}
	a := h.connect(t)
	for name, c := range map[string]struct {
		msg  engine.Message
		code string
	}{
		"empty":           {engine.Message{}, "INVALID_MESSAGE"},
		"oversized":       {engine.Message{Content: strings.Repeat("a", 1025)}, "MESSAGE_TOO_LARGE"},
		"invalid UTF-8":   {engine.Message{Content: "caf\xe9"}, "INVALID_MESSAGE"},
		"unknown session": {engine.Message{SessionID: "sess_nope", Content: "hi"}, "SESSION_NOT_FOUND"},
	} {
		_, err := h.eng.Submit(ctx, c.msg)
		t.Logf("%s: %v", name, err)
		wantCoded(t, err, c.code)
	}
	// None of them reached the agent: the next directive is this message.
	tr, err := h.eng.Submit(ctx, engine.Message{Content: strings.Repeat("a", 1024)})
	if err != nil {
		t.Fatalf("a message at the limit: %v", err)
	}
	if p := a.process(t); p.GetMessageId() != tr.MessageID {
		t.Fatalf("agent got %s, want %s", p.GetMessageId(), tr.MessageID)
	}
	if _, err := h.eng.Submit(ctx, engine.Message{Content: "another"}); !errors.Is(err, engine.ErrAgentBusy) {
		t.Fatalf("while busy: %v", err)
	}
	if _, err := h.eng.Submit(ctx, engine.Message{SessionID: tr.SessionID, Content: "another"}); !errors.Is(err, engine.ErrAgentBusy) {
		t.Fatalf("while busy, same session: %v", err)
	}
}

func TestAgentDisconnectEndsTheTurn(t *testing.T) {
	h := newHarness(t, nil)
	a, tr, p := h.startTurn(t, context.Background(), engine.Message{Content: "work"})
	a.send(t, &pb.AgentEvent{Event: &pb.AgentEvent_LlmTokenEmitted{LlmTokenEmitted: &pb.LLMTokenEmitted{
		SessionId: p.GetSessionId(), MessageId: p.GetMessageId(), Text: "thinking"}}})
	if ev := nextEvent(t, tr); ev.GetEventType() != evToken {
		t.Fatalf("event %v", ev.GetEventType())
	}
	a.cancel()
	end := endEvent(t, tr)
	if end.GetEventType() != evError || end.GetPipelineError().GetCode() != "AGENT_DISCONNECTED" {
		t.Fatalf("terminal event %v", end)
	}
	waitState(t, h.eng, func(st engine.AgentState) bool { return !st.Connected })
	if _, err := h.eng.Submit(context.Background(), engine.Message{Content: "again"}); !errors.Is(err, engine.ErrAgentUnavailable) {
		t.Fatalf("Submit after the agent left: %v", err)
	}

	// A respawned agent takes messages again, in the same session.
	b := h.connect(t)
	tr2, err := h.eng.Submit(context.Background(), engine.Message{SessionID: tr.SessionID, Content: "again"})
	if err != nil {
		t.Fatal(err)
	}
	p2 := b.process(t)
	b.complete(t, p2, "back", nil)
	if ev := endEvent(t, tr2); ev.GetEventType() != evComplete {
		t.Fatalf("terminal %v", ev)
	}
}

// An agent that leaves while one of its calls waits for a human: the turn
// ends, the approval is denied and nothing runs.
func TestAgentDisconnectDuringAnApproval(t *testing.T) {
	asked := make(chan engine.ApprovalRequest, 1)
	h := newHarness(t, func(c *engine.Config) { c.Approver = blockingApprover{asked} })
	sub := h.eng.Subscribe("")
	defer sub.Close()
	a, tr, p := h.startTurn(t, context.Background(), engine.Message{Content: "push"})
	a.send(t, proposal(p.GetSessionId(), p.GetMessageId(), "c1", "execute_command", `{"command":"touch esc.txt && git push --force origin main"}`))
	select {
	case <-asked:
	case <-time.After(guard):
		t.Fatal("the approver was never asked")
	}
	a.cancel()
	end := endEvent(t, tr)
	if end.GetPipelineError().GetCode() != "AGENT_DISCONNECTED" {
		t.Fatalf("terminal event %v", end)
	}
	// The session's own stream still reports how the call ended.
	timeout := time.After(guard)
	for {
		var ev *pb.PipelineEvent
		select {
		case ev = <-sub.Events:
		case <-timeout:
			t.Fatal("no ACTION_COMPLETED for the pending call")
		}
		if ev.GetEventType() == evResolved && ev.GetApprovalResolved().GetApproved() {
			t.Fatal("approved after the agent left")
		}
		if ev.GetEventType() == evStarted {
			t.Fatal("the call ran after the agent left")
		}
		if ev.GetEventType() == evCompleted {
			break
		}
	}
	if exists(t, filepath.Join(h.ws, "esc.txt")) {
		t.Fatal("esc.txt exists")
	}
}

func TestAgentErrorEndsTheTurn(t *testing.T) {
	h := newHarness(t, nil)
	a, tr, p := h.startTurn(t, context.Background(), engine.Message{Content: "work"})
	// An error for another message does not end this one.
	a.send(t, &pb.AgentEvent{Event: &pb.AgentEvent_AgentError{AgentError: &pb.AgentError{
		SessionId: p.GetSessionId(), MessageId: "msg_other", Code: "LLM_CALL_FAILED"}}})
	a.send(t, &pb.AgentEvent{Event: &pb.AgentEvent_AgentError{AgentError: &pb.AgentError{
		SessionId: p.GetSessionId(), MessageId: p.GetMessageId(), Code: "TURN_LIMIT", Message: "too many turns", Recoverable: true}}})
	end := endEvent(t, tr)
	if e := end.GetPipelineError(); end.GetEventType() != evError || e.GetCode() != "TURN_LIMIT" || !e.GetRecoverable() {
		t.Fatalf("terminal event %v", end)
	}
	if _, err := h.eng.Submit(context.Background(), engine.Message{Content: "next"}); err != nil {
		t.Fatalf("the engine stayed busy after the error: %v", err)
	}
}

func TestShutdownAndRestartRequests(t *testing.T) {
	h := newHarness(t, nil)
	select {
	case <-h.eng.ShutdownRequested():
		t.Fatal("shutdown requested before anyone asked")
	default:
	}
	h.eng.RequestShutdown()
	h.eng.RequestShutdown() // twice is fine
	<-h.eng.ShutdownRequested()
	if h.eng.RestartRequested() {
		t.Fatal("a plain shutdown reads as a restart")
	}
}

func TestStopAgentSendsShutdown(t *testing.T) {
	h := newHarness(t, nil)
	h.eng.StopAgent("nobody home") // no agent: nothing to do
	a := h.connect(t)
	h.eng.StopAgent("bye")
	if d := a.next(t); d.GetShutdown().GetReason() != "bye" {
		t.Fatalf("directive %v", d)
	}
}

func TestMemoryFileStaysInTheWorkspace(t *testing.T) {
	h := newHarness(t, nil)
	// A MEMORY.md symlink pointing out of the workspace is not followed.
	outside := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(outside, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(h.ws, "MEMORY.md")); err != nil {
		t.Fatal(err)
	}
	a := h.connect(t)
	a.send(t, &pb.AgentEvent{Event: &pb.AgentEvent_MemoryFlush{MemoryFlush: &pb.MemoryFlush{Content: "escaped"}}})
	a.loadTools(t, "files")
	if b, _ := os.ReadFile(outside); string(b) != "keep\n" {
		t.Fatalf("a memory flush wrote outside the workspace: %q", b)
	}
}
