// Package engine is the privileged side of Parapet's agent loop: it serves
// AgentService to the sandboxed agent, asks the shield about every tool
// call the agent proposes, executes what is allowed, hands escalations to
// an Approver and publishes everything that happens as PipelineEvents.
// With a Config.Store, sessions and what happened in them (messages, tool
// calls, verdicts, approvals, usage) persist across restarts; off-the-record
// sessions never leave memory (sessions.go, engine/store).
package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"

	"github.com/parapet-dev/parapet/engine/store"
	"github.com/parapet-dev/parapet/engine/tools"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// Config configures an Engine. Zero values take the defaults.
type Config struct {
	// Workspace is the directory tools work in (required, absolute).
	Workspace string
	// Home is the agent's home directory as the shield should see it
	// (default: the engine user's home).
	Home string
	// AgentName names the agent in events and shield calls (default "parapet").
	AgentName string
	// EngineID identifies this engine to shieldd (default host-pid).
	EngineID string
	// Tenant is sent to shieldd as the caller's tenant (optional).
	Tenant string
	// Shield judges every tool call (required).
	Shield Shield
	// ShieldMode and ShieldAddress describe Shield for status output.
	ShieldMode, ShieldAddress string
	// Tools executes allowed tool calls (required).
	Tools *tools.Registry
	// Approver answers escalations alongside the engine's clients (the
	// agentctl prompt, or a FixedApprover policy). Nil: only clients
	// answer, through ResolveApproval, and the timeout denies.
	Approver Approver
	// ApprovalTimeout bounds a human's answer (default 300 s; timeout = deny).
	ApprovalTimeout time.Duration
	// ApprovalsPerHour bounds how many approval prompts may open in any
	// 60 minutes; past it, escalations are denied (default 10; negative:
	// no limit).
	ApprovalsPerHour int
	// AllowUnsandboxed accepts an agent whose sandbox is "unavailable" (no
	// Landlock on this kernel). Partial or unsandboxed agents are never accepted.
	AllowUnsandboxed bool
	// ExecutorStatus is the confined executor's state, for GetStatus
	// (sandboxed, unconfined, unavailable, partial).
	ExecutorStatus string
	// MaxMessageBytes bounds a user message (default 256 KiB).
	MaxMessageBytes int
	// MaxTurns bounds LLM round trips per message (0: the agent's default).
	MaxTurns int
	// SpawnSubAgent starts a sub-agent process for the spawn_agent tool, and
	// SubAgentLLM gives the LLM configuration of the sub-agent with a given
	// name. Without both, spawn_agent is refused (SUBAGENTS.md).
	SpawnSubAgent SubAgentSpawner
	SubAgentLLM   func(name string) (SubAgentLLM, error)
	// MaxSubAgents bounds the sub-agents running at once (default 3);
	// SubAgentMaxLLMCalls bounds each one's LLM calls (default 20);
	// SubAgentTimeout bounds each one's run (default 10 min).
	MaxSubAgents        int
	SubAgentMaxLLMCalls int
	SubAgentTimeout     time.Duration
	// Store persists sessions, their messages, tool calls, verdicts,
	// approvals and usage, so history survives restarts (agentctl always
	// gives one). Nil keeps sessions in memory, for tests and embedders.
	// Off-the-record sessions never reach it.
	Store *store.Store
	// ClientToken is what every ClientService call must carry
	// (clientauth.go). Empty: New makes a random one (see ClientToken).
	ClientToken string
	// Provider and Model describe the agent's LLM for status output.
	Provider, Model string
	Version         string
	Logger          *slog.Logger
}

// Errors of Submit; their Code is what clients see in an ERROR event.
var (
	ErrAgentUnavailable = &CodedError{Code: "AGENT_UNAVAILABLE", Msg: "no agent is connected"}
	ErrAgentBusy        = &CodedError{Code: "AGENT_BUSY", Msg: "the agent is busy with another message; wait for it to finish"}
)

// CodedError carries a stable code clients can switch on.
type CodedError struct{ Code, Msg string }

func (e *CodedError) Error() string { return e.Code + ": " + e.Msg }

// Engine is safe for concurrent use.
type Engine struct {
	cfg       Config
	log       *slog.Logger
	bus       *bus
	approvals *broker
	started   time.Time

	mu            sync.Mutex
	agent         *agentConn
	expectedToken string
	agentChanged  chan struct{} // closed and replaced on every agent state change
	sandboxJSON   string
	sandboxStatus string
	rejection     error // why the last agent was refused, if it was
	turn          *turn
	sessions      map[string]*session // in-memory sessions: all of them without a Store, else the OTR ones
	scopes        map[string]*Scope   // sessions confined to a workspace and rules of their own (scope.go)
	subAgents     subAgentTable

	grpcAddr, webURL string

	agentPID      atomic.Int64
	agentRestarts atomic.Int32
	restart       atomic.Bool
	shutdown      chan struct{}
	shutdownOnce  sync.Once
	// reports are escalation outcomes on their way to the shield.
	reports sync.WaitGroup

	recMu       sync.Mutex
	persisted   map[string]struct{} // stored sessions in use; see markPersisted
	storeErrors atomic.Int64
}

// session is a conversation's history, kept so every ProcessRequest can
// carry it: the sandboxed agent has no database. A persisted session's is
// loaded from the Store for each message (see sessions.go).
type session struct {
	id      string
	mode    pb.SessionMode
	history []*pb.ChatTurn
	created time.Time
	updated time.Time
	// persisted: the session lives in the Store; isNew: it is not written yet.
	persisted, isNew bool
}

// New validates cfg and builds an engine.
func New(cfg Config) (*Engine, error) {
	if cfg.Workspace == "" || !filepath.IsAbs(cfg.Workspace) {
		return nil, fmt.Errorf("engine: workspace must be an absolute path, got %q", cfg.Workspace)
	}
	if cfg.Shield == nil {
		return nil, errors.New("engine: no shield configured")
	}
	if cfg.Tools == nil {
		return nil, errors.New("engine: no tool registry configured")
	}
	if cfg.Home == "" {
		cfg.Home, _ = os.UserHomeDir()
	}
	if cfg.AgentName == "" {
		cfg.AgentName = "parapet"
	}
	if cfg.EngineID == "" {
		host, _ := os.Hostname()
		cfg.EngineID = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if cfg.ApprovalsPerHour == 0 {
		cfg.ApprovalsPerHour = 10
	}
	if cfg.ApprovalTimeout <= 0 {
		cfg.ApprovalTimeout = 300 * time.Second
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = 256 << 10
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ClientToken == "" {
		cfg.ClientToken = NewClientToken()
	}
	e := &Engine{
		cfg:          cfg,
		log:          cfg.Logger,
		bus:          newBus(),
		approvals:    newBroker(cfg.ApprovalsPerHour),
		started:      time.Now(),
		agentChanged: make(chan struct{}),
		sessions:     map[string]*session{},
		scopes:       map[string]*Scope{},
		persisted:    map[string]struct{}{},
		shutdown:     make(chan struct{}),
	}
	if cfg.Store != nil {
		e.bus.record = e.recordTo(cfg.Store)
	}
	return e, nil
}

// Register adds AgentService, ClientService and SubAgentService to a gRPC server.
//
// Serving both on one server lets the agent's connection reach
// ClientService, so a sandboxed agent could answer its own approvals:
// production hosts serve RegisterAgentServices and RegisterClientService
// on separate listeners and let the sandbox reach only the first.
func (e *Engine) Register(s *grpc.Server) {
	e.RegisterAgentServices(s)
	e.RegisterClientService(s)
}

// RegisterAgentServices adds what the agent process calls: AgentService.
// SubAgentService is not served on any listener: each sub-agent reaches it
// over a connection of its own (subagentconn.go).
func (e *Engine) RegisterAgentServices(s *grpc.Server) {
	pb.RegisterAgentServiceServer(s, &agentService{e: e})
}

// RegisterClientService adds ClientService: how people and programs
// drive the engine, approvals included. Every call must carry the client
// token (clientauth.go).
func (e *Engine) RegisterClientService(s *grpc.Server) {
	s.RegisterService(e.clientServiceDesc(), &clientService{e: e})
}

// NewAgentToken makes the per-spawn token for the next agent process and
// makes it the only one accepted. It is 128 random bits, handed to the
// agent through its environment and never written to disk.
func (e *Engine) NewAgentToken() string {
	tok := newToken()
	e.mu.Lock()
	e.expectedToken = tok
	e.mu.Unlock()
	return tok
}

// SetAddresses records where the engine serves, for status output.
func (e *Engine) SetAddresses(grpcAddr, webURL string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.grpcAddr, e.webURL = grpcAddr, webURL
}

// SetAgentPID records the agent process id for status output.
func (e *Engine) SetAgentPID(pid int) { e.agentPID.Store(int64(pid)) }

// CountAgentRestart records an agent restart for status output.
func (e *Engine) CountAgentRestart() { e.agentRestarts.Add(1) }

// AgentState is a snapshot of the agent connection.
type AgentState struct {
	Connected     bool
	Name          string
	SandboxStatus string
	SandboxJSON   string
	// Rejected is why the last agent was refused (bad token, unverified
	// sandbox), nil when it was not.
	Rejected error
}

func (e *Engine) agentStateLocked() (AgentState, <-chan struct{}) {
	st := AgentState{SandboxStatus: e.sandboxStatus, SandboxJSON: e.sandboxJSON, Rejected: e.rejection}
	if e.agent != nil {
		st.Connected, st.Name = true, e.agent.name
	}
	return st, e.agentChanged
}

// AgentState returns the current state and a channel closed at the next change.
func (e *Engine) AgentState() (AgentState, <-chan struct{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.agentStateLocked()
}

// WaitAgent blocks until an agent is connected, an agent was rejected, or
// ctx ends.
func (e *Engine) WaitAgent(ctx context.Context) (AgentState, error) {
	for {
		st, changed := e.AgentState()
		if st.Connected {
			return st, nil
		}
		if st.Rejected != nil {
			return st, st.Rejected
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return st, ctx.Err()
		}
	}
}

func (e *Engine) notifyLocked() {
	close(e.agentChanged)
	e.agentChanged = make(chan struct{})
}

// Subscribe follows a session's events ("" follows every session).
func (e *Engine) Subscribe(sessionID string) *Subscription { return e.bus.subscribe(sessionID) }

// ShutdownRequested is closed when a client asked the engine to stop.
func (e *Engine) ShutdownRequested() <-chan struct{} { return e.shutdown }

// RequestRestart marks the coming shutdown as a restart (exit code 75).
func (e *Engine) RequestRestart() { e.restart.Store(true) }

// RestartRequested reports whether the shutdown is a restart.
func (e *Engine) RestartRequested() bool { return e.restart.Load() }

// RequestShutdown asks whoever runs the engine to stop it.
func (e *Engine) RequestShutdown() { e.shutdownOnce.Do(func() { close(e.shutdown) }) }

// StopAgent sends the connected agent a ShutdownDirective.
func (e *Engine) StopAgent(reason string) {
	e.mu.Lock()
	a := e.agent
	e.mu.Unlock()
	if a != nil {
		_ = a.send(&pb.EngineDirective{Directive: &pb.EngineDirective_Shutdown{Shutdown: &pb.ShutdownDirective{Reason: reason}}})
	}
}

// Message is one user message for the agent.
type Message struct {
	SessionID string // empty: a new session
	Content   string
	Mode      pb.SessionMode
	Source    string
	// CreateNamed makes a session named SessionID when there is none:
	// front doors whose clients choose their own session ids
	// (engine/doors) continue or start a conversation with one request.
	CreateNamed bool
	// Scope gives the session a workspace and rules of its own (a gateway
	// thread); a session keeps its first scope for every later message.
	Scope *Scope
	// MemoryWorkspace is whose long-term memory the turn's memory tools
	// use ("": the registry's own, "local"): a crawbl caller's workspace.
	MemoryWorkspace string
}

// Turn is one message being processed. Events delivers the session's
// events for it and is closed after RESPONSE_COMPLETE or ERROR.
type Turn struct {
	SessionID, MessageID string
	Events               <-chan *pb.PipelineEvent
}

// turn is the engine's side of the message the agent is working on.
type turn struct {
	sessionID, messageID string
	mode                 pb.SessionMode
	content              string
	ctx                  context.Context
	cancel               context.CancelFunc
	calls                sync.WaitGroup
	blocked              atomic.Bool // an action was blocked or denied
	persisted            bool        // its session lives in the Store
	scope                *Scope      // the session's workspace and rules, if it has its own
}

// Submit hands a message to the agent. Only one message is processed at a
// time; the caller's ctx cancels the turn (pending approvals are denied and
// further tool calls refused).
func (e *Engine) Submit(ctx context.Context, m Message) (*Turn, error) {
	if m.Content == "" {
		return nil, &CodedError{Code: "INVALID_MESSAGE", Msg: "message is empty"}
	}
	if len(m.Content) > e.cfg.MaxMessageBytes {
		return nil, &CodedError{Code: "MESSAGE_TOO_LARGE", Msg: fmt.Sprintf("message is %d bytes, limit %d", len(m.Content), e.cfg.MaxMessageBytes)}
	}
	if !utf8.ValidString(m.Content) {
		return nil, &CodedError{Code: "INVALID_MESSAGE", Msg: "message is not valid UTF-8"}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	a := e.agent
	if a == nil {
		return nil, ErrAgentUnavailable
	}
	if e.turn != nil {
		return nil, ErrAgentBusy
	}
	s, err := e.sessionLocked(ctx, m.SessionID, m.Mode, m.CreateNamed)
	if err != nil {
		return nil, err
	}
	scope, err := e.scopeLocked(s.id, m.Scope)
	if err != nil {
		return nil, err
	}
	if scope == endedScope {
		return nil, &CodedError{Code: "SESSION_NOT_FOUND", Msg: fmt.Sprintf("session %q ran in a scope (a gateway thread) that has ended", s.id)}
	}
	maxTurns := e.cfg.MaxTurns
	if scope != nil && scope.MaxTurns > 0 {
		maxTurns = scope.MaxTurns
	}
	t := &turn{sessionID: s.id, messageID: "msg_" + randomID(), mode: s.mode, content: m.Content, persisted: s.persisted, scope: scope}
	t.ctx, t.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if m.MemoryWorkspace != "" {
		t.ctx = tools.WithMemoryWorkspace(t.ctx, m.MemoryWorkspace)
	}
	history := append([]*pb.ChatTurn(nil), trimHistory(s.history, historyBudget)...)
	if s.persisted {
		e.markPersisted(s.id)
	}
	sub := e.bus.subscribe(s.id)
	out := make(chan *pb.PipelineEvent, 64)
	go forwardTurn(sub, t.messageID, out)
	go func() {
		select {
		case <-ctx.Done():
			e.log.Info("turn cancelled by its client", "session", t.sessionID, "message", t.messageID)
			t.cancel()
		case <-t.ctx.Done():
		}
	}()
	e.turn = t
	err = a.send(&pb.EngineDirective{Directive: &pb.EngineDirective_Process{Process: &pb.ProcessRequest{
		SessionId: s.id, MessageId: t.messageID, Content: m.Content, Mode: s.mode, Source: m.Source,
		History: history, MaxTurns: int32(maxTurns),
	}}})
	if err != nil {
		e.turn = nil
		t.cancel()
		sub.Close()
		return nil, &CodedError{Code: "AGENT_UNAVAILABLE", Msg: "could not reach the agent: " + err.Error()}
	}
	e.recordUserLocked(ctx, s, t)
	return &Turn{SessionID: s.id, MessageID: t.messageID, Events: out}, nil
}

// forwardTurn copies a session's events to out until the turn's terminal
// event, then closes out.
func forwardTurn(sub *Subscription, messageID string, out chan<- *pb.PipelineEvent) {
	defer close(out)
	defer sub.Close()
	for ev := range sub.Events {
		if ev.MessageId != messageID && ev.MessageId != "" {
			continue
		}
		out <- ev
		switch ev.EventType {
		case pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE, pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR:
			if ev.MessageId == messageID {
				return
			}
		}
	}
}

// endTurn finishes the current turn if it is messageID's.
func (e *Engine) endTurn(messageID string, ev *pb.PipelineEvent, assistantText *string) {
	e.mu.Lock()
	t := e.takeTurnLocked(messageID, assistantText)
	e.mu.Unlock()
	if t != nil {
		e.finishTurn(t, ev)
	}
}

// takeTurnLocked detaches the current turn if it is messageID's ("": any)
// and records the answer, if there is one, in the session. The answer is
// recorded before the lock is released, so the next message's history
// has it.
func (e *Engine) takeTurnLocked(messageID string, assistantText *string) *turn {
	t := e.turn
	if t == nil || (messageID != "" && t.messageID != messageID) {
		return nil
	}
	e.turn = nil
	if assistantText != nil {
		e.recordAnswerLocked(t, *assistantText)
	}
	return t
}

// finishTurn cancels a detached turn and publishes its terminal event.
func (e *Engine) finishTurn(t *turn, ev *pb.PipelineEvent) {
	t.cancel()
	ev.SessionId, ev.MessageId = t.sessionID, t.messageID
	e.bus.publish(ev)
}

// currentTurn returns the turn a proposal belongs to, or nil.
func (e *Engine) currentTurn(sessionID, messageID string) *turn {
	e.mu.Lock()
	defer e.mu.Unlock()
	if t := e.turn; t != nil && t.sessionID == sessionID && t.messageID == messageID {
		return t
	}
	return nil
}

// otrTurn reports whether the message being processed is off the record.
func (e *Engine) otrTurn() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.turn != nil && e.turn.mode == pb.SessionMode_SESSION_MODE_OTR
}

// newToken is 128 random bits in hex: an agent's or a sub-agent's token.
func newToken() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // the runtime cannot recover from this either
	}
	return hex.EncodeToString(b[:])
}

// NewClientToken is 256 random bits in hex: a client token.
func NewClientToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func errorEvent(code, msg string, recoverable bool) *pb.PipelineEvent {
	return &pb.PipelineEvent{
		EventType:     pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR,
		PipelineError: &pb.PipelineError{Code: code, Message: msg, Recoverable: recoverable},
	}
}
