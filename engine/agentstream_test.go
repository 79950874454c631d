package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/parapet-dev/parapet/engine"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

func TestRunSessionAcceptsTheSpawnTokenAndSendsLoadToolsFirst(t *testing.T) {
	h := newHarness(t, nil)
	a := h.connect(t)
	var names []string
	for _, td := range a.initial.GetTools() {
		names = append(names, td.GetName())
	}
	if len(names) != 1 || names[0] != "load_tools" {
		t.Fatalf("InitialToolDefs = %v, want exactly [load_tools]", names)
	}
	if a.initial.GetTools()[0].GetParametersJson() == "" {
		t.Error("load_tools has no parameter schema")
	}
	st, _ := h.eng.AgentState()
	if !st.Connected || st.Name != "atlas" || st.SandboxStatus != "sandboxed" || st.Rejected != nil {
		t.Fatalf("agent state %+v", st)
	}
}

func TestRunSessionRejectsBadCredentials(t *testing.T) {
	h := newHarness(t, nil)

	t.Run("no token issued", func(t *testing.T) {
		stream, _ := h.open(t, ready("atlas:", sandboxedJSON))
		_, err := recvErr(t, stream)
		wantCode(t, err, codes.Unauthenticated)
	})

	tok := h.eng.NewAgentToken()
	other := h.eng.NewAgentToken() // only the newest token counts
	cases := map[string]*pb.AgentEvent{
		"wrong token":          ready("atlas:"+strings.Repeat("0", len(tok)), sandboxedJSON),
		"superseded token":     ready("atlas:"+tok, sandboxedJSON),
		"token prefix":         ready("atlas:"+other[:len(other)-1], sandboxedJSON),
		"missing token":        ready("atlas", sandboxedJSON),
		"empty token":          ready("atlas:", sandboxedJSON),
		"token as name":        ready(other+":", sandboxedJSON),
		"empty agent id":       ready("", sandboxedJSON),
		"first not ready":      {Event: &pb.AgentEvent_MemoryFlush{MemoryFlush: &pb.MemoryFlush{Content: "planted " + other}}},
		"first a tool call":    proposal("s", "m", "c1", "execute_command", `{"command":"touch first.txt"}`),
		"first an empty event": {},
	}
	for name, first := range cases {
		t.Run(name, func(t *testing.T) {
			stream, _ := h.open(t, first)
			dirs, err := recvErr(t, stream)
			wantCode(t, err, codes.Unauthenticated)
			if len(dirs) != 0 {
				t.Fatalf("the engine sent %d directive(s) to an unauthenticated agent", len(dirs))
			}
		})
	}
	if _, err := os.Stat(filepath.Join(h.ws, "MEMORY.md")); !errors.Is(err, os.ErrNotExist) {
		t.Error("an unauthenticated stream's MemoryFlush reached the workspace")
	}
	if _, err := os.Stat(filepath.Join(h.ws, "first.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Error("an unauthenticated stream's tool call ran")
	}
	if st, _ := h.eng.AgentState(); st.Connected {
		t.Fatal("an agent is connected after rejections only")
	}
	// The failed attempts did not use up the current token.
	h.connectAs(t, "atlas:"+other, sandboxedJSON)
}

func TestRunSessionTokenIsSingleUse(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.eng.NewAgentToken()
	a := h.connectAs(t, "atlas:"+tok, sandboxedJSON)
	h.disconnect(t, a)

	stream, _ := h.open(t, ready("atlas:"+tok, sandboxedJSON))
	_, err := recvErr(t, stream)
	wantCode(t, err, codes.Unauthenticated)
}

func TestRunSessionRefusesASecondAgent(t *testing.T) {
	h := newHarness(t, nil)
	first := h.connect(t)

	stream, _ := h.open(t, ready("intruder:"+h.eng.NewAgentToken(), sandboxedJSON))
	dirs, err := recvErr(t, stream)
	wantCode(t, err, codes.AlreadyExists)
	if len(dirs) != 0 {
		t.Fatalf("the second agent got %d directive(s)", len(dirs))
	}

	// The first agent is still the engine's agent and still served.
	if st, _ := h.eng.AgentState(); !st.Connected || st.Name != "atlas" {
		t.Fatalf("agent state %+v", st)
	}
	tr, err := h.eng.Submit(context.Background(), engine.Message{Content: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if p := first.process(t); p.GetMessageId() != tr.MessageID {
		t.Fatalf("first agent got message %s, want %s", p.GetMessageId(), tr.MessageID)
	}
}

// Respawns as the process manager does them: an agent dies mid-message, a
// new one connects and a client submits the moment it is connected.
//   - The new agent must see InitialToolDefs first, even though Submit
//     races with it: the real agent treats any other first directive as a
//     protocol error.
//   - The dead agent's turn must be gone by then: the new agent is not
//     busy, and its turn is not ended as the old one's.
//
// Both were races; 200 rounds hit them in most runs before the fix.
func TestRespawnedAgentGetsInitialToolDefsFirstAndAFreshTurn(t *testing.T) {
	h := newHarness(t, nil)
	type submitted struct {
		tr  *engine.Turn
		err error
	}
	for i := range 200 {
		got := make(chan submitted, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			if _, err := h.eng.WaitAgent(ctx); err != nil {
				got <- submitted{err: err}
				return
			}
			tr, err := h.eng.Submit(context.Background(), engine.Message{Content: "race"})
			got <- submitted{tr, err}
		}()
		stream, cancel := h.open(t, ready("atlas:"+h.eng.NewAgentToken(), sandboxedJSON))
		d, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if d.GetInitialToolDefs() == nil {
			t.Fatalf("round %d: first directive %T, want InitialToolDefs", i, d.GetDirective())
		}
		sub := <-got
		if sub.err != nil {
			t.Fatalf("round %d: Submit: %v", i, sub.err)
		}
		d, err = stream.Recv()
		if err != nil || d.GetProcess().GetMessageId() != sub.tr.MessageID {
			t.Fatalf("round %d: second directive %v (%v), want ProcessRequest", i, d, err)
		}
		p := d.GetProcess()
		err = stream.Send(&pb.AgentEvent{Event: &pb.AgentEvent_ResponseComplete{ResponseComplete: &pb.AgentResponseComplete{
			SessionId: p.GetSessionId(), MessageId: p.GetMessageId(), Content: "ok"}}})
		if err != nil {
			t.Fatal(err)
		}
		if end := endEvent(t, sub.tr); end.GetEventType() != evComplete {
			t.Fatalf("round %d: the new agent's turn ended with %v", i, end)
		}

		// This agent dies in the middle of its next message.
		tr, err := h.eng.Submit(context.Background(), engine.Message{Content: "die"})
		if err != nil {
			t.Fatal(err)
		}
		if d, err := stream.Recv(); err != nil || d.GetProcess() == nil {
			t.Fatalf("round %d: %v (%v), want ProcessRequest", i, d, err)
		}
		go func() {
			for range tr.Events {
			}
		}()
		cancel()
		waitState(t, h.eng, func(st engine.AgentState) bool { return !st.Connected })
	}
}

func TestRunSessionRefusesAnUnverifiedSandbox(t *testing.T) {
	cases := []struct {
		name, report, status string
		allowUnsandboxed     bool
	}{
		{"partial", `{"status":"partial","probes":[]}`, "partial", false},
		{"partial even when unsandboxed agents are allowed", `{"status":"partial"}`, "partial", true},
		{"unsandboxed", `{"status":"unsandboxed"}`, "unsandboxed", false},
		{"unsandboxed even when allowed", `{"status":"unsandboxed"}`, "unsandboxed", true},
		{"unavailable without the opt-in", `{"status":"unavailable","error":"no landlock"}`, "unavailable", false},
		{"garbage", `not json`, "unknown", false},
		{"no report", ``, "unknown", true},
		{"no status", `{"landlock_abi":6}`, "unknown", false},
		{"status of the wrong type", `{"status":true}`, "unknown", false},
		{"unknown status", `{"status":"mostly"}`, "mostly", true},
		{"status in other case", `{"status":"SANDBOXED"}`, "SANDBOXED", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, func(cfg *engine.Config) { cfg.AllowUnsandboxed = c.allowUnsandboxed })
			stream, _ := h.open(t, ready("atlas:"+h.eng.NewAgentToken(), c.report))
			dirs, err := recvErr(t, stream)
			wantCode(t, err, codes.FailedPrecondition)
			for _, d := range dirs {
				if d.GetShutdown() == nil {
					t.Fatalf("a refused agent got %T", d.GetDirective())
				}
			}
			_, werr := h.eng.WaitAgent(context.Background())
			var se *engine.SandboxError
			if !errors.As(werr, &se) {
				t.Fatalf("WaitAgent = %v, want a *engine.SandboxError", werr)
			}
			if se.Status != c.status || se.Report != c.report {
				t.Fatalf("SandboxError %+v, want status %q", se, c.status)
			}
			if st, _ := h.eng.AgentState(); st.Connected {
				t.Fatal("refused agent counts as connected")
			}
			if _, err := h.eng.Submit(context.Background(), engine.Message{Content: "hi"}); !errors.Is(err, engine.ErrAgentUnavailable) {
				t.Fatalf("Submit to a refused agent: %v", err)
			}
		})
	}
}

func TestRunSessionAcceptsUnavailableSandboxOnlyWhenAllowed(t *testing.T) {
	h := newHarness(t, func(cfg *engine.Config) { cfg.AllowUnsandboxed = true })
	report := `{"status":"unavailable","error":"Landlock is not built into this kernel"}`
	h.connectAs(t, "atlas:"+h.eng.NewAgentToken(), report)
	st, _ := h.eng.AgentState()
	if !st.Connected || st.SandboxStatus != "unavailable" || st.SandboxJSON != report {
		t.Fatalf("agent state %+v", st)
	}
	resp, err := h.client().GetStatus(context.Background(), &pb.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetSandboxStatus() != "unavailable" {
		t.Fatalf("sandbox_status %q", resp.GetSandboxStatus())
	}
}

// A rejection is forgotten once a later agent is accepted.
func TestAcceptedAgentClearsAnEarlierSandboxRejection(t *testing.T) {
	h := newHarness(t, nil)
	stream, _ := h.open(t, ready("atlas:"+h.eng.NewAgentToken(), `{"status":"partial"}`))
	_, err := recvErr(t, stream)
	wantCode(t, err, codes.FailedPrecondition)
	h.connect(t)
	st, err := h.eng.WaitAgent(context.Background())
	if err != nil || !st.Connected || st.Rejected != nil || st.SandboxStatus != "sandboxed" {
		t.Fatalf("WaitAgent = %+v, %v", st, err)
	}
}

func TestMemoryFlushAppendsToMemoryFile(t *testing.T) {
	h := newHarness(t, nil)
	a := h.connect(t)
	flush := func(s string) {
		a.send(t, &pb.AgentEvent{Event: &pb.AgentEvent_MemoryFlush{MemoryFlush: &pb.MemoryFlush{Content: s}}})
	}
	flush("- the user prefers tabs")
	flush("   ") // nothing to keep
	flush("- the project builds with make")
	flush(strings.Repeat("x", 64<<10+1)) // over the limit: dropped whole
	a.loadTools(t, "files")              // events are handled in order: the flushes are done

	b, err := os.ReadFile(filepath.Join(h.ws, "MEMORY.md"))
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	i, j := strings.Index(got, "- the user prefers tabs"), strings.Index(got, "- the project builds with make")
	if i < 0 || j < i {
		t.Fatalf("MEMORY.md = %q", got)
	}
	if strings.Contains(got, "xxxx") {
		t.Fatal("an oversized flush was written")
	}

	// Appends keep what was there.
	flush("- third fact")
	a.loadTools(t, "files")
	b, err = os.ReadFile(filepath.Join(h.ws, "MEMORY.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), got) || !strings.Contains(string(b), "- third fact") {
		t.Fatalf("MEMORY.md after a second flush = %q", b)
	}
}

// Off the record means nothing persists, MEMORY.md included.
func TestMemoryFlushDuringAnOTRTurnIsNotWritten(t *testing.T) {
	h := newHarness(t, nil)
	a, tr, p := h.startTurn(t, context.Background(), engine.Message{Content: "secret plans", Mode: pb.SessionMode_SESSION_MODE_OTR})
	a.send(t, &pb.AgentEvent{Event: &pb.AgentEvent_MemoryFlush{MemoryFlush: &pb.MemoryFlush{Content: "- the secret plans"}}})
	a.loadTools(t, "files")
	a.complete(t, p, "ok", nil)
	endEvent(t, tr)
	if _, err := os.Stat(filepath.Join(h.ws, "MEMORY.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("MEMORY.md written during an OTR turn (stat: %v)", err)
	}
}

func TestRunSessionIgnoresEventsOfNoTurn(t *testing.T) {
	h := newHarness(t, nil)
	a := h.connect(t)
	sub := h.eng.Subscribe("")
	defer sub.Close()
	a.send(t, &pb.AgentEvent{Event: &pb.AgentEvent_LlmTokenEmitted{LlmTokenEmitted: &pb.LLMTokenEmitted{SessionId: "s", MessageId: "m", Text: "x"}}})
	a.send(t, &pb.AgentEvent{Event: &pb.AgentEvent_ResponseComplete{ResponseComplete: &pb.AgentResponseComplete{SessionId: "s", MessageId: "m", Content: "x"}}})
	a.send(t, ready("atlas:again", sandboxedJSON)) // a second AgentReady is ignored
	r := a.call(t, "s", "m", "c1", "execute_command", `{"command":"touch stray.txt"}`)
	if !r.GetIsError() || !strings.Contains(r.GetContent(), "does not belong") {
		t.Fatalf("stray proposal: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "stray.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a tool call outside any turn ran")
	}
	select {
	case ev := <-sub.Events:
		t.Fatalf("event %v published for no turn", ev.GetEventType())
	default:
	}
	if st, _ := h.eng.AgentState(); !st.Connected || st.Name != "atlas" {
		t.Fatalf("agent state %+v", st)
	}
}
