package engine_test

import (
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/engine/tools"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/sandbox"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/shield"
)

// guard bounds every wait in these tests. It is a deadlock guard, not a
// timing assertion: nothing here takes more than milliseconds when the
// code is right.
const guard = 30 * time.Second

const sandboxedJSON = `{"status":"sandboxed","landlock_abi":6}`

// harness is one engine with the real shield pipeline and the real tool
// registry, served over gRPC on 127.0.0.1:0, and a client connection to it.
type harness struct {
	eng    *engine.Engine
	reg    *tools.Registry
	ws     string
	addr   string
	conn   *grpc.ClientConn
	shield *shield.Local
	cfg    engine.Config // as given to engine.New
}

// TestMain makes the test binary the confined executor's helper, or the
// token thief of subagentproc_test.go, when it is re-executed as one.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.ExecHelperArg {
		sandbox.ExecMain()
	}
	if os.Getenv(envThief) == "1" {
		os.Exit(thief(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// confinedOptions runs commands in the confined executor over the test
// binary, or unconfined where the host cannot confine them.
func confinedOptions(ws string) tools.Options {
	o := tools.Options{Workspace: ws}
	self, err := os.Executable()
	if err == nil {
		o.Executor, err = sandbox.NewExecutor(self)
	}
	o.AllowUnconfined = err != nil
	return o
}

// newHarness builds a harness; mod may adjust the engine configuration
// (its Shield defaults to the embedded pipeline).
func newHarness(t testing.TB, mod func(*engine.Config)) *harness {
	t.Helper()
	ws := t.TempDir()
	opts := confinedOptions(ws)
	reg, err := tools.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Executor != nil {
		t.Cleanup(func() { opts.Executor.Close() })
	}
	t.Cleanup(func() { reg.Close() })
	p, err := pipeline.New(pipeline.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{reg: reg, ws: ws, shield: shield.NewLocal(&shield.Shield{Pipeline: p})}
	cfg := engine.Config{Workspace: ws, Home: t.TempDir(), AgentName: "atlas", Shield: h.shield, Tools: reg,
		ShieldMode: "embedded", Version: "test"}
	if mod != nil {
		mod(&cfg)
	}
	h.cfg = cfg
	h.eng, err = engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	h.eng.Register(srv)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	h.addr = lis.Addr().String()
	h.conn, err = grpc.NewClient(h.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(engine.ClientCredentials(h.eng.ClientToken())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.conn.Close() })
	return h
}

func (h *harness) client() pb.ClientServiceClient { return pb.NewClientServiceClient(h.conn) }

// testAgent speaks AgentService.RunSession as the sandboxed agent does.
type testAgent struct {
	stream  pb.AgentService_RunSessionClient
	cancel  context.CancelFunc
	dirs    chan *pb.EngineDirective
	done    chan struct{} // closed when the stream ends; err says why
	err     error
	initial *pb.InitialToolDefs
}

// open starts a RunSession stream and sends one first event, without
// reading anything.
func (h *harness) open(t testing.TB, first *pb.AgentEvent) (pb.AgentService_RunSessionClient, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stream, err := pb.NewAgentServiceClient(h.conn).RunSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(first); err != nil {
		t.Fatal(err)
	}
	return stream, cancel
}

func ready(agentID, sandboxJSON string) *pb.AgentEvent {
	return &pb.AgentEvent{Event: &pb.AgentEvent_Ready{Ready: &pb.AgentReady{AgentId: agentID, SandboxResultJson: sandboxJSON}}}
}

// recvErr receives until the stream fails and returns the failure,
// collecting the directives sent before it.
func recvErr(t testing.TB, stream pb.AgentService_RunSessionClient) ([]*pb.EngineDirective, error) {
	t.Helper()
	type res struct {
		dirs []*pb.EngineDirective
		err  error
	}
	ch := make(chan res, 1)
	go func() {
		var dirs []*pb.EngineDirective
		for {
			d, err := stream.Recv()
			if err != nil {
				ch <- res{dirs, err}
				return
			}
			dirs = append(dirs, d)
		}
	}()
	select {
	case r := <-ch:
		return r.dirs, r.err
	case <-time.After(guard):
		t.Fatal("the engine neither answered nor closed the stream")
		return nil, nil
	}
}

// wantCode fails unless err is a gRPC status with code c.
func wantCode(t testing.TB, err error, c codes.Code) {
	t.Helper()
	if got := status.Code(err); got != c {
		t.Fatalf("got %v (%v), want code %v", got, err, c)
	}
}

// connect authenticates a sandboxed agent with a fresh token and checks
// that the first directive is InitialToolDefs.
func (h *harness) connect(t testing.TB) *testAgent {
	t.Helper()
	return h.connectAs(t, "atlas:"+h.eng.NewAgentToken(), sandboxedJSON)
}

func (h *harness) connectAs(t testing.TB, agentID, sandboxJSON string) *testAgent {
	t.Helper()
	stream, cancel := h.open(t, ready(agentID, sandboxJSON))
	first, err := stream.Recv()
	if err != nil {
		t.Fatalf("agent refused: %v", err)
	}
	a := &testAgent{stream: stream, cancel: cancel, dirs: make(chan *pb.EngineDirective, 256), done: make(chan struct{}),
		initial: first.GetInitialToolDefs()}
	if a.initial == nil {
		t.Fatalf("first directive is %T, want InitialToolDefs", first.GetDirective())
	}
	go func() {
		defer close(a.done)
		for {
			d, err := stream.Recv()
			if err != nil {
				a.err = err
				return
			}
			a.dirs <- d
		}
	}()
	ctx, cancelWait := context.WithTimeout(context.Background(), guard)
	defer cancelWait()
	if _, err := h.eng.WaitAgent(ctx); err != nil {
		t.Fatalf("WaitAgent: %v", err)
	}
	return a
}

// disconnect ends the agent's stream and waits until the engine has
// noticed.
func (h *harness) disconnect(t testing.TB, a *testAgent) {
	t.Helper()
	a.cancel()
	waitState(t, h.eng, func(st engine.AgentState) bool { return !st.Connected })
}

// waitState waits until the engine's agent state satisfies ok.
func waitState(t testing.TB, eng *engine.Engine, ok func(engine.AgentState) bool) engine.AgentState {
	t.Helper()
	timeout := time.After(guard)
	for {
		st, changed := eng.AgentState()
		if ok(st) {
			return st
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("agent state never reached the expected condition; last %+v", st)
		}
	}
}

func (a *testAgent) send(t testing.TB, ev *pb.AgentEvent) {
	t.Helper()
	if err := a.stream.Send(ev); err != nil {
		t.Fatalf("agent send: %v", err)
	}
}

// next returns the next directive.
func (a *testAgent) next(t testing.TB) *pb.EngineDirective {
	t.Helper()
	select {
	case d := <-a.dirs:
		return d
	case <-a.done:
		select {
		case d := <-a.dirs:
			return d
		default:
		}
		t.Fatalf("agent stream ended: %v", a.err)
	case <-time.After(guard):
		t.Fatal("no directive from the engine")
	}
	return nil
}

// process waits for the next ProcessRequest.
func (a *testAgent) process(t testing.TB) *pb.ProcessRequest {
	t.Helper()
	d := a.next(t)
	p := d.GetProcess()
	if p == nil {
		t.Fatalf("got %T, want ProcessRequest", d.GetDirective())
	}
	return p
}

// loadTools asks for tool groups and returns the delivered names.
func (a *testAgent) loadTools(t testing.TB, groups ...string) []string {
	t.Helper()
	a.send(t, &pb.AgentEvent{Event: &pb.AgentEvent_ToolDefsRequest{ToolDefsRequest: &pb.ToolDefsRequest{Groups: groups}}})
	d := a.next(t)
	defs := d.GetToolDefs()
	if defs == nil {
		t.Fatalf("got %T, want ToolDefsDelivery", d.GetDirective())
	}
	var names []string
	for _, td := range defs.GetTools() {
		names = append(names, td.GetName())
	}
	return names
}

func proposal(sid, mid, callID, tool, args string) *pb.AgentEvent {
	return &pb.AgentEvent{Event: &pb.AgentEvent_ToolProposal{ToolProposal: &pb.ToolCallProposed{
		SessionId: sid, MessageId: mid, CallId: callID, ToolName: tool, ArgumentsJson: args}}}
}

// call proposes a tool call and waits for its result.
func (a *testAgent) call(t testing.TB, sid, mid, callID, tool, args string) *pb.ToolResultDelivery {
	t.Helper()
	a.send(t, proposal(sid, mid, callID, tool, args))
	d := a.next(t)
	r := d.GetToolResult()
	if r == nil {
		t.Fatalf("got %T, want ToolResultDelivery", d.GetDirective())
	}
	if r.GetCallId() != callID {
		t.Fatalf("result for call %q, want %q", r.GetCallId(), callID)
	}
	return r
}

func (a *testAgent) complete(t testing.TB, p *pb.ProcessRequest, content string, usage *pb.TokenUsage) {
	t.Helper()
	a.send(t, &pb.AgentEvent{Event: &pb.AgentEvent_ResponseComplete{ResponseComplete: &pb.AgentResponseComplete{
		SessionId: p.GetSessionId(), MessageId: p.GetMessageId(), Content: content, Usage: usage}}})
}

// nextEvent returns the turn's next event; it fails when Events closed.
func nextEvent(t testing.TB, tr *engine.Turn) *pb.PipelineEvent {
	t.Helper()
	select {
	case ev, ok := <-tr.Events:
		if !ok {
			t.Fatal("turn events closed early")
		}
		if ev.GetSessionId() != tr.SessionID || ev.GetMessageId() != tr.MessageID {
			t.Fatalf("event %v for %s/%s, want %s/%s", ev.GetEventType(), ev.GetSessionId(), ev.GetMessageId(), tr.SessionID, tr.MessageID)
		}
		return ev
	case <-time.After(guard):
		t.Fatal("no event")
	}
	return nil
}

// endEvent reads to the turn's terminal event and checks Events closes
// after it.
func endEvent(t testing.TB, tr *engine.Turn) *pb.PipelineEvent {
	t.Helper()
	for {
		ev := nextEvent(t, tr)
		switch ev.GetEventType() {
		case pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE, pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR:
			select {
			case extra, ok := <-tr.Events:
				if ok {
					t.Fatalf("event %v after the terminal event", extra.GetEventType())
				}
			case <-time.After(guard):
				t.Fatal("Events not closed after the terminal event")
			}
			return ev
		}
	}
}

// callID returns the call an event is about ("" for none).
func callID(ev *pb.PipelineEvent) string {
	switch {
	case ev.GetActionsPlanned() != nil && len(ev.GetActionsPlanned().GetActions()) > 0:
		return ev.GetActionsPlanned().GetActions()[0].GetRequestId()
	case ev.GetShieldVerdict() != nil:
		return ev.GetShieldVerdict().GetCallId()
	case ev.GetActionStarted() != nil:
		return ev.GetActionStarted().GetCallId()
	case ev.GetActionCompleted() != nil:
		return ev.GetActionCompleted().GetCallId()
	case ev.GetApprovalNeeded() != nil:
		return ev.GetApprovalNeeded().GetCallId()
	case ev.GetOtrBlocked() != nil:
		return ev.GetOtrBlocked().GetCallId()
	}
	return ""
}

// callEvents reads one tool call's events, up to its ACTION_COMPLETED.
// Calls are made one at a time, so every event read belongs to it.
func callEvents(t testing.TB, tr *engine.Turn, id string) []*pb.PipelineEvent {
	t.Helper()
	var evs []*pb.PipelineEvent
	for {
		ev := nextEvent(t, tr)
		if c := callID(ev); c != "" && c != id {
			t.Fatalf("event %v for call %q while waiting for %q", ev.GetEventType(), c, id)
		}
		evs = append(evs, ev)
		if ev.GetEventType() == pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_COMPLETED {
			return evs
		}
	}
}

const (
	evPlanned   = pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTIONS_PLANNED
	evVerdict   = pb.PipelineEventType_PIPELINE_EVENT_TYPE_SHIELD_VERDICT
	evStarted   = pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_STARTED
	evCompleted = pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_COMPLETED
	evNeeded    = pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_NEEDED
	evResolved  = pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_RESOLVED
	evOTR       = pb.PipelineEventType_PIPELINE_EVENT_TYPE_OTR_BLOCKED
	evToken     = pb.PipelineEventType_PIPELINE_EVENT_TYPE_LLM_TOKEN
	evComplete  = pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE
	evError     = pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR
)

// wantTypes checks an event sequence.
func wantTypes(t testing.TB, evs []*pb.PipelineEvent, want ...pb.PipelineEventType) {
	t.Helper()
	got := make([]pb.PipelineEventType, len(evs))
	for i, ev := range evs {
		got[i] = ev.GetEventType()
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", names(got), names(want))
	}
}

func names(ts []pb.PipelineEventType) string {
	s := make([]string, len(ts))
	for i, x := range ts {
		s[i] = strings.TrimPrefix(x.String(), "PIPELINE_EVENT_TYPE_")
	}
	return strings.Join(s, " ")
}

// find returns the first event of type typ.
func find(evs []*pb.PipelineEvent, typ pb.PipelineEventType) *pb.PipelineEvent {
	for _, ev := range evs {
		if ev.GetEventType() == typ {
			return ev
		}
	}
	return nil
}

// wantCoded fails unless err is a *engine.CodedError with code.
func wantCoded(t testing.TB, err error, code string) {
	t.Helper()
	var ce *engine.CodedError
	if !errors.As(err, &ce) || ce.Code != code {
		t.Fatalf("got %v, want a CodedError %s", err, code)
	}
}

// startTurn connects an agent, submits msg and returns the turn and the
// ProcessRequest the agent received, with the files and shell tools loaded.
func (h *harness) startTurn(t testing.TB, ctx context.Context, msg engine.Message) (*testAgent, *engine.Turn, *pb.ProcessRequest) {
	t.Helper()
	a := h.connect(t)
	tr, err := h.eng.Submit(ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	p := a.process(t)
	if p.GetSessionId() != tr.SessionID || p.GetMessageId() != tr.MessageID {
		t.Fatalf("ProcessRequest for %s/%s, turn is %s/%s", p.GetSessionId(), p.GetMessageId(), tr.SessionID, tr.MessageID)
	}
	a.loadTools(t, "files", "shell")
	return a, tr, p
}
