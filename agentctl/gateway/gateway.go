// Package gateway makes Parapet an agent of a parallax control plane (seed
// 004): it dials out (AgentGateway.Connect), says hello, sends heartbeats
// at the announced interval, answers pings, reconnects with backoff after
// a broken stream, runs the control plane's tasks as one-shot engine
// turns, and serves its threads (thread.go): long-lived sessions, each in
// a fresh workspace under its own rules — all through the engine's one
// gate, like every front door. docs/doors/gateway.md.
package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/engine/doors"
	"github.com/parapet-dev/parapet/engine/tools"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	gwpb "github.com/parapet-dev/parapet/proto/parallax/gateway"
)

// Defaults of Config.
const (
	DefaultHeartbeat  = 10 * time.Second
	DefaultMinBackoff = 500 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
	// maxQueuedTasks bounds the tasks waiting for the engine, which runs
	// one turn at a time; more are refused with TaskError BUSY.
	maxQueuedTasks = 64
)

// Heartbeat statuses.
const (
	StatusHealthy  = "healthy"
	StatusDegraded = "degraded"
	StatusDraining = "draining"
)

// Frontend names this gateway in events and the audit chain.
const Frontend = "gateway"

// Config configures a Gateway.
type Config struct {
	// Conn reaches the control plane (required); the caller dials it.
	Conn grpc.ClientConnInterface
	// AgentID is required: a hello without one is rejected.
	AgentID, AgentName string
	Capabilities       []string
	Metadata           map[string]string
	// Heartbeat is the announced heartbeat interval (default 10 s).
	Heartbeat time.Duration
	// MinBackoff and MaxBackoff bound the wait before a reconnect; it
	// doubles after each failed attempt, with jitter.
	MinBackoff, MaxBackoff time.Duration
	// Engine runs the tasks and threads (required).
	Engine Engine
	// Tools is the engine's tool registry: each thread gets one like it
	// in its own workspace. ThreadsDir is where those workspaces are made.
	// Without both, spawns are refused.
	Tools      *tools.Registry
	ThreadsDir string
	// CloneFrom are the directories a thread's repository may be cloned
	// from when it is local (a path or a file URL): a local clone reads
	// with the engine's rights and is not judged by the shield, so the
	// control plane may only name repositories the operator offered.
	// Network repositories need nothing here.
	CloneFrom []string
	Logger    *slog.Logger
}

// Engine is what the gateway needs of *engine.Engine.
type Engine interface {
	doors.Engine
	Act(ctx context.Context, sessionID string, scope *engine.Scope, tool, argumentsJSON string) (content string, isErr, ran bool, err error)
	ForgetScope(sessionID string)
	Subscribe(sessionID string) *engine.Subscription
}

// Gateway is one agent's connection to a control plane.
type Gateway struct {
	cfg Config
	log *slog.Logger
	// out carries everything but heartbeats to whichever stream is up:
	// results produced while the stream is down wait here.
	out   *outbox
	tasks chan *task
	// slot is held by whoever runs an engine turn (a task or a thread's
	// turn): the engine runs one turn at a time.
	slot chan struct{}

	mu       sync.Mutex
	running  map[string]*task   // queued or running, by task id
	threads  map[string]*thread // by thread id; nil while one is being spawned
	draining bool
	runCtx   context.Context // Run's: threads live as long as it
}

type task struct {
	req    *gwpb.TaskRequest
	reqID  string
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// errCancelled is the cause of a CancelTask.
var errCancelled = errors.New("cancelled by the control plane")

// New checks cfg and builds a Gateway.
func New(cfg Config) (*Gateway, error) {
	if cfg.Conn == nil || cfg.Engine == nil {
		return nil, errors.New("gateway: a control-plane connection and an engine are required")
	}
	if cfg.AgentID == "" {
		return nil, errors.New("gateway: an agent id is required")
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(DefaultMaxBackoff, cfg.MinBackoff)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Gateway{cfg: cfg, log: cfg.Logger, out: newOutbox(), slot: make(chan struct{}, 1),
		tasks: make(chan *task, maxQueuedTasks), running: map[string]*task{}, threads: map[string]*thread{}}, nil
}

// Run keeps a stream to the control plane until ctx ends, reconnecting
// with backoff; tasks keep running across reconnects.
func (g *Gateway) Run(ctx context.Context) error {
	g.mu.Lock()
	g.runCtx = ctx
	g.mu.Unlock()
	go g.worker(ctx)
	backoff := g.cfg.MinBackoff
	for {
		start := time.Now()
		err := g.connect(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if time.Since(start) > 2*g.cfg.Heartbeat {
			backoff = g.cfg.MinBackoff // it was up for a while: start over
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		g.log.Warn("control-plane stream ended; reconnecting", "error", err, "in", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		backoff = min(2*backoff, g.cfg.MaxBackoff)
	}
}

// connect runs one stream until it breaks or ctx ends. Queued messages
// are sent once the control plane accepted the hello (a ServerAck with
// accepted, or any other message), or after a short settling time for
// control planes that answer nothing; a ServerAck refusing the agent
// ends the stream with nothing sent, so nothing queued is lost on it.
func (g *Gateway) connect(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := gwpb.NewAgentGatewayClient(g.cfg.Conn).Connect(ctx)
	if err != nil {
		return err
	}
	if err := stream.Send(&gwpb.AgentToControlPlane{Payload: &gwpb.AgentToControlPlane_Hello{Hello: &gwpb.AgentHello{
		AgentId: g.cfg.AgentID, AgentName: g.cfg.AgentName, Capabilities: g.cfg.Capabilities, Metadata: g.cfg.Metadata,
		HeartbeatIntervalMs: int32(g.cfg.Heartbeat / time.Millisecond)}}}); err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	pings := make(chan struct{}, 1)
	accepted := make(chan struct{}, 1)
	recvErr := make(chan error, 1)
	go func() {
		for {
			m, err := stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			if a := m.GetAck(); a != nil && !a.GetAccepted() {
				g.log.Error("the control plane refused this agent", "message", a.GetMessage())
				recvErr <- fmt.Errorf("the control plane refused this agent: %s", a.GetMessage())
				return
			}
			select {
			case accepted <- struct{}{}:
			default:
			}
			if m.GetPing() != nil {
				select {
				case pings <- struct{}{}:
				default:
				}
				continue
			}
			g.handle(ctx, m)
		}
	}()
	tick := time.NewTicker(g.cfg.Heartbeat)
	defer tick.Stop()
	settle := time.NewTimer(min(g.cfg.Heartbeat, time.Second))
	defer settle.Stop()
	var ready <-chan struct{} // the outbox's, once the stream may carry it
	waitAccept := (<-chan struct{})(accepted)
	for {
		var msg *gwpb.AgentToControlPlane
		queued := false
		select {
		case <-ctx.Done():
			g.setDraining()
			_ = stream.Send(g.heartbeat())
			_ = stream.CloseSend()
			return ctx.Err()
		case err := <-recvErr:
			return err
		case <-tick.C:
			msg = g.heartbeat()
		case <-pings:
			msg = g.heartbeat()
		case <-waitAccept:
			ready, waitAccept = g.out.ready, nil
		case <-settle.C:
			ready = g.out.ready
		case <-ready:
			queued = true
		}
		if msg != nil {
			if err := stream.Send(msg); err != nil {
				return err
			}
		}
		if !queued {
			continue
		}
		// Send what is queued, oldest first; a message leaves the outbox
		// only once the stream took it.
		for m := g.out.peek(); m != nil; m = g.out.peek() {
			if err := stream.Send(m); err != nil {
				g.out.wake() // for the next stream: the queue is not empty
				return err
			}
			g.out.pop()
		}
	}
}

// send queues a message for the control plane.
func (g *Gateway) send(m *gwpb.AgentToControlPlane) {
	if !g.out.push(m) {
		g.log.Error("outbox full; a message to the control plane is lost", "request_id", m.GetRequestId())
	}
}

func (g *Gateway) setDraining() {
	g.mu.Lock()
	g.draining = true
	g.mu.Unlock()
}

// heartbeat reports load (queued and running tasks and running threads
// over the task queue's capacity) and status.
func (g *Gateway) heartbeat() *gwpb.AgentToControlPlane {
	g.mu.Lock()
	n, draining := len(g.running)+len(g.threads), g.draining
	g.mu.Unlock()
	status := StatusHealthy
	switch {
	case draining:
		status = StatusDraining
	case n >= maxQueuedTasks:
		status = StatusDegraded
	}
	return &gwpb.AgentToControlPlane{Payload: &gwpb.AgentToControlPlane_Heartbeat{Heartbeat: &gwpb.AgentHeartbeat{
		AgentId: g.cfg.AgentID, Load: float64(n) / maxQueuedTasks, Status: status}}}
}

// handle acts on one message of the control plane.
func (g *Gateway) handle(ctx context.Context, m *gwpb.ControlPlaneToAgent) {
	switch p := m.GetPayload().(type) {
	case *gwpb.ControlPlaneToAgent_Ack:
		if !p.Ack.GetAccepted() {
			g.log.Error("the control plane refused this agent", "message", p.Ack.GetMessage())
		}
	case *gwpb.ControlPlaneToAgent_TaskRequest:
		g.enqueue(ctx, m.GetRequestId(), p.TaskRequest)
	case *gwpb.ControlPlaneToAgent_CancelTask:
		g.mu.Lock()
		t := g.running[p.CancelTask.GetTaskId()]
		g.mu.Unlock()
		if t != nil {
			t.cancel(errCancelled)
		}
	case *gwpb.ControlPlaneToAgent_ThreadSpawn:
		go g.spawn(m.GetRequestId(), p.ThreadSpawn)
	case *gwpb.ControlPlaneToAgent_ThreadInput:
		if t := g.thread(p.ThreadInput.GetThreadId()); t != nil {
			t.input(p.ThreadInput.GetInputType(), p.ThreadInput.GetInput())
		} else {
			g.log.Warn("input for a thread this agent does not run; ignored", "thread", p.ThreadInput.GetThreadId())
		}
	case *gwpb.ControlPlaneToAgent_ThreadStop:
		if t := g.thread(p.ThreadStop.GetThreadId()); t != nil {
			t.stop(p.ThreadStop.GetReason(), p.ThreadStop.GetForce())
		} else {
			g.log.Warn("stop for a thread this agent does not run; ignored", "thread", p.ThreadStop.GetThreadId())
		}
	}
}

// enqueue queues a task; a duplicate id or a full queue is a TaskError.
func (g *Gateway) enqueue(ctx context.Context, reqID string, req *gwpb.TaskRequest) {
	fail := func(code, msg string) {
		g.send(&gwpb.AgentToControlPlane{RequestId: reqID, Payload: &gwpb.AgentToControlPlane_TaskError{TaskError: &gwpb.TaskError{
			TaskId: req.GetTaskId(), ErrorCode: code, ErrorMessage: msg}}})
	}
	if req.GetTaskId() == "" || req.GetTaskDescription() == "" {
		fail("INVALID_ARGUMENT", "task_id and task_description are required")
		return
	}
	// The task outlives the stream it came on: it is tied to Run's context.
	tctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	t := &task{req: req, reqID: reqID, ctx: tctx, cancel: cancel}
	g.mu.Lock()
	_, dup := g.running[req.GetTaskId()]
	if !dup {
		g.running[req.GetTaskId()] = t
	}
	g.mu.Unlock()
	if dup {
		cancel(nil)
		fail("ALREADY_EXISTS", "a task with this id is already queued or running")
		return
	}
	select {
	case g.tasks <- t:
	default:
		g.forget(t)
		fail("BUSY", fmt.Sprintf("%d tasks are already waiting; try again later", maxQueuedTasks))
	}
}

func (g *Gateway) forget(t *task) {
	t.cancel(nil)
	g.mu.Lock()
	delete(g.running, t.req.GetTaskId())
	g.mu.Unlock()
}

// worker runs the queued tasks one at a time: the engine runs one turn
// at a time.
func (g *Gateway) worker(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case t := <-g.tasks:
			select {
			case g.slot <- struct{}{}:
			case <-ctx.Done():
				return
			}
			g.send(g.run(ctx, t))
			<-g.slot
			g.forget(t)
		}
	}
}

// run is one task: a one-shot turn in a fresh session. Nobody can answer
// an escalation through the gateway, so it is denied at once.
func (g *Gateway) run(ctx context.Context, t *task) *gwpb.AgentToControlPlane {
	id := t.req.GetTaskId()
	fail := func(code, msg string) *gwpb.AgentToControlPlane {
		return &gwpb.AgentToControlPlane{RequestId: t.reqID, Payload: &gwpb.AgentToControlPlane_TaskError{TaskError: &gwpb.TaskError{
			TaskId: id, ErrorCode: code, ErrorMessage: msg}}}
	}
	tctx := t.ctx
	if ms := t.req.GetTimeoutMs(); ms > 0 {
		var cancel context.CancelFunc
		tctx, cancel = context.WithTimeout(tctx, time.Duration(ms)*time.Millisecond)
		defer cancel()
	}
	stop := context.AfterFunc(ctx, func() { t.cancel(errors.New("the gateway is stopping")) })
	defer stop()
	if err := context.Cause(tctx); err != nil {
		return fail(causeCode(tctx), err.Error())
	}
	turn, err := g.cfg.Engine.Submit(tctx, engine.Message{Content: TaskMessage(t.req), Source: Frontend})
	if err != nil {
		code, msg := doors.Refusal(err)
		return fail(code, msg)
	}
	for ev := range turn.Events {
		switch ev.GetEventType() {
		case pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_NEEDED:
			_ = g.cfg.Engine.ResolveApproval(ev.GetApprovalNeeded().GetApprovalId(), turn.SessionID, false, "gateway:no-approver")
		case pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE:
			if tctx.Err() != nil {
				return fail(causeCode(tctx), context.Cause(tctx).Error())
			}
			value, _ := json.Marshal(ev.GetResponseComplete().GetContent())
			return &gwpb.AgentToControlPlane{RequestId: t.reqID, Payload: &gwpb.AgentToControlPlane_TaskResult{TaskResult: &gwpb.TaskResult{
				TaskId: id, ValueJson: string(value), Confidence: 1, Metadata: map[string]string{"session_id": turn.SessionID}}}}
		case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR:
			if tctx.Err() != nil {
				return fail(causeCode(tctx), context.Cause(tctx).Error())
			}
			pe := ev.GetPipelineError()
			return fail(pe.GetCode(), pe.GetMessage())
		}
	}
	return fail("INTERNAL", "the turn ended without an answer")
}

// causeCode names why a task's context ended.
func causeCode(ctx context.Context) string {
	switch {
	case errors.Is(context.Cause(ctx), errCancelled):
		return "CANCELLED"
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "TIMEOUT"
	}
	return "CANCELLED"
}

// TaskMessage is the message the agent gets for a task: its description,
// then its context and data as JSON when there are any.
func TaskMessage(req *gwpb.TaskRequest) string {
	msg := req.GetTaskDescription()
	if len(req.GetContext()) > 0 {
		b, _ := json.Marshal(req.GetContext())
		msg += "\n\nContext: " + string(b)
	}
	if d := req.GetData(); d != nil && len(d.GetFields()) > 0 {
		b, err := d.MarshalJSON()
		if err == nil {
			msg += "\n\nData: " + string(b)
		}
	}
	return msg
}
