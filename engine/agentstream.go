package engine

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parapet-dev/parapet/internal/textcut"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// readyTimeout bounds how long a new stream may take to send AgentReady.
const readyTimeout = 10 * time.Second

// maxCallsInFlight bounds concurrent tool calls of one agent: a runaway or
// compromised agent cannot queue unbounded work.
const maxCallsInFlight = 16

type agentService struct {
	pb.UnimplementedAgentServiceServer
	e *Engine
}

// agentConn is the one accepted agent stream. Sends are serialised: gRPC
// streams allow one sender at a time.
type agentConn struct {
	name   string
	stream pb.AgentService_RunSessionServer
	sendMu sync.Mutex
	slots  chan struct{}
}

func (a *agentConn) send(d *pb.EngineDirective) error {
	a.sendMu.Lock()
	defer a.sendMu.Unlock()
	return a.stream.Send(d)
}

// sandboxReport is the part of the agent's canary report the engine acts on.
type sandboxReport struct {
	Status string `json:"status"`
}

// RunSession authenticates the agent by its per-spawn token, checks its
// sandbox report, sends InitialToolDefs and then routes its events.
func (s *agentService) RunSession(stream pb.AgentService_RunSessionServer) error {
	e := s.e
	first, err := recvWithin(stream, readyTimeout)
	if err != nil {
		return status.Errorf(codes.Unauthenticated, "agent stream: no AgentReady: %v", err)
	}
	ready := first.GetReady()
	if ready == nil {
		return status.Error(codes.Unauthenticated, "agent stream: the first event must be AgentReady")
	}
	conn, err := e.acceptAgent(stream, ready)
	if err != nil {
		return err
	}
	defer e.dropAgent(conn)

	// acceptAgent returned with conn.sendMu held, so nothing (a Submit that
	// saw the agent connect, StopAgent) can be sent before InitialToolDefs.
	defs := &pb.InitialToolDefs{Tools: []*pb.ToolDef{toolDef(e.cfg.Tools.LoadToolsDef())}}
	err = stream.Send(&pb.EngineDirective{Directive: &pb.EngineDirective_InitialToolDefs{InitialToolDefs: defs}})
	conn.sendMu.Unlock()
	if err != nil {
		return err
	}
	e.log.Info("agent connected", "name", conn.name)

	for {
		ev, err := stream.Recv()
		if err != nil {
			return nil // EOF, cancellation or a broken stream: dropAgent fails the turn
		}
		e.route(conn, ev)
	}
}

// recvWithin receives one event or gives up after d.
func recvWithin(stream pb.AgentService_RunSessionServer, d time.Duration) (*pb.AgentEvent, error) {
	type result struct {
		ev  *pb.AgentEvent
		err error
	}
	ch := make(chan result, 1)
	go func() {
		ev, err := stream.Recv()
		ch <- result{ev, err}
	}()
	select {
	case r := <-ch:
		return r.ev, r.err
	case <-time.After(d):
		return nil, fmt.Errorf("nothing received within %s", d)
	}
}

// acceptAgent checks the token (constant time, single use) and the sandbox
// report, and makes the stream the engine's agent. The returned conn's
// sendMu is held: the caller sends InitialToolDefs and then unlocks it.
func (e *Engine) acceptAgent(stream pb.AgentService_RunSessionServer, ready *pb.AgentReady) (*agentConn, error) {
	// agent_id is "<name>:<token>"; the token is hex, so the last colon splits.
	var name, token string
	if id := ready.GetAgentId(); strings.LastIndexByte(id, ':') >= 0 {
		i := strings.LastIndexByte(id, ':')
		name, token = id[:i], id[i+1:]
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	want := e.expectedToken
	if token == "" || want == "" || subtle.ConstantTimeCompare([]byte(token), []byte(want)) != 1 {
		e.log.Warn("agent stream rejected: missing or wrong token", "agent_id_prefix", textcut.Truncate(name, 32))
		return nil, status.Error(codes.Unauthenticated, "agent token missing or wrong")
	}
	if e.agent != nil {
		return nil, status.Error(codes.AlreadyExists, "an agent is already connected")
	}
	e.expectedToken = "" // single use: a new spawn gets a new token

	var rep sandboxReport
	raw := ready.GetSandboxResultJson()
	if err := json.Unmarshal([]byte(raw), &rep); err != nil || rep.Status == "" {
		rep.Status = "unknown"
	}
	e.sandboxJSON, e.sandboxStatus = raw, rep.Status
	switch {
	case rep.Status == "sandboxed":
	case rep.Status == "unavailable" && e.cfg.AllowUnsandboxed:
		e.log.Warn("AGENT IS NOT SANDBOXED: this kernel offers no Landlock; running anyway because --allow-unsandboxed was given")
	default:
		e.rejection = &SandboxError{Status: rep.Status, Report: raw}
		e.notifyLocked()
		e.log.Error("agent refused: sandbox not verified", "status", rep.Status, "report", raw)
		_ = stream.Send(&pb.EngineDirective{Directive: &pb.EngineDirective_Shutdown{Shutdown: &pb.ShutdownDirective{Reason: "sandbox not verified: " + rep.Status}}})
		return nil, status.Errorf(codes.FailedPrecondition, "sandbox not verified: %s", rep.Status)
	}
	if name == "" {
		name = e.cfg.AgentName
	}
	conn := &agentConn{name: name, stream: stream, slots: make(chan struct{}, maxCallsInFlight)}
	conn.sendMu.Lock()
	e.agent = conn
	e.rejection = nil
	e.notifyLocked()
	return conn, nil
}

// SandboxError says the agent's sandbox could not be verified.
type SandboxError struct{ Status, Report string }

func (s *SandboxError) Error() string {
	return fmt.Sprintf("agent sandbox not verified (status %q); refusing to run it", s.Status)
}

func (e *Engine) dropAgent(conn *agentConn) {
	e.mu.Lock()
	if e.agent != conn {
		e.mu.Unlock()
		return
	}
	e.agent = nil
	// The turn goes with the agent in one step: a respawned agent's first
	// turn must neither see this one as busy nor be ended in its place.
	t := e.takeTurnLocked("", nil)
	e.notifyLocked()
	e.mu.Unlock()
	e.log.Info("agent disconnected", "name", conn.name)
	if t != nil {
		e.finishTurn(t, errorEvent("AGENT_DISCONNECTED", "the agent disconnected before finishing the message", true))
	}
}

// route handles one agent event.
func (e *Engine) route(conn *agentConn, ev *pb.AgentEvent) {
	switch x := ev.Event.(type) {
	case *pb.AgentEvent_LlmTokenEmitted:
		t := x.LlmTokenEmitted
		if e.currentTurn(t.GetSessionId(), t.GetMessageId()) == nil {
			return
		}
		e.bus.publish(&pb.PipelineEvent{SessionId: t.GetSessionId(), MessageId: t.GetMessageId(),
			EventType: pb.PipelineEventType_PIPELINE_EVENT_TYPE_LLM_TOKEN, LlmToken: &pb.LLMToken{Text: t.GetText()}})
	case *pb.AgentEvent_ToolProposal:
		p := x.ToolProposal
		select {
		case conn.slots <- struct{}{}:
		default:
			_ = conn.send(toolResult(p.GetCallId(), fmt.Sprintf("too many tool calls in flight (limit %d); wait for results first", maxCallsInFlight), true))
			return
		}
		go func() {
			defer func() { <-conn.slots }()
			content, isErr := e.handleProposal(p)
			if err := conn.send(toolResult(p.GetCallId(), content, isErr)); err != nil {
				e.log.Warn("could not deliver a tool result", "call", p.GetCallId(), "error", err)
			}
		}()
	case *pb.AgentEvent_ToolDefsRequest:
		defs, err := e.cfg.Tools.Defs(x.ToolDefsRequest.GetGroups()...)
		d := &pb.ToolDefsDelivery{}
		if err != nil {
			e.log.Warn("load_tools asked for an unknown group", "error", err)
		}
		for _, def := range defs {
			d.Tools = append(d.Tools, toolDef(def))
		}
		_ = conn.send(&pb.EngineDirective{Directive: &pb.EngineDirective_ToolDefs{ToolDefs: d}})
	case *pb.AgentEvent_MemoryFlush:
		if e.otrTurn() {
			e.log.Warn("memory flush during an off-the-record message; not written")
			return
		}
		if err := e.appendMemory(x.MemoryFlush.GetContent()); err != nil {
			e.log.Warn("memory flush failed", "error", err)
		}
	case *pb.AgentEvent_ResponseComplete:
		r := x.ResponseComplete
		text := r.GetContent()
		e.endTurn(r.GetMessageId(), &pb.PipelineEvent{
			EventType:        pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE,
			ResponseComplete: &pb.ResponseComplete{Content: text, Usage: r.GetUsage(), Thoughts: r.GetThoughts()},
		}, &text)
	case *pb.AgentEvent_AgentError:
		r := x.AgentError
		e.endTurn(r.GetMessageId(), errorEvent(r.GetCode(), r.GetMessage(), r.GetRecoverable()), nil)
	case *pb.AgentEvent_Ready:
		e.log.Warn("agent sent AgentReady twice; ignored")
	default:
		e.log.Warn("agent sent an unknown event; ignored")
	}
}

func toolResult(callID, content string, isErr bool) *pb.EngineDirective {
	return &pb.EngineDirective{Directive: &pb.EngineDirective_ToolResult{ToolResult: &pb.ToolResultDelivery{
		CallId: callID, Content: content, IsError: isErr,
	}}}
}
