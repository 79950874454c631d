// Package agent is the reasoning loop of the sandboxed agent process. It
// talks to the LLM and proposes tool calls to the engine over
// AgentService.RunSession; it never executes anything itself.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/parapet-dev/parapet/internal/textcut"
	"github.com/parapet-dev/parapet/llm"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// Defaults of Config.
const (
	DefaultMaxTurns     = 25
	DefaultReadyTimeout = 10 * time.Second
	// toolDefsTimeout bounds the engine's answer to load_tools.
	toolDefsTimeout = 30 * time.Second
	// loadToolsName is the meta-tool the engine answers with tool definitions.
	loadToolsName = "load_tools"
)

// Config configures Run.
type Config struct {
	// Name and Token form AgentReady.agent_id ("<name>:<token>").
	Name, Token string
	Provider    llm.Provider
	// SandboxReport is the canary result JSON sent in AgentReady.
	SandboxReport []byte
	// MaxTurns bounds LLM round trips per message (a ProcessRequest may lower it).
	MaxTurns int
	// System is the system prompt (default: DefaultSystemPrompt).
	System string
	// ReadyTimeout bounds the wait for InitialToolDefs.
	ReadyTimeout time.Duration
	Logger       *slog.Logger
}

// DefaultSystemPrompt tells the model how this agent works.
const DefaultSystemPrompt = `You are a coding agent working in a project workspace on behalf of a developer.
Tools come in groups; call load_tools with the groups you need (files, shell, git, http) before using them.
Every tool call is checked by the Parapet security gate before it runs. A call that is blocked or denied
returns an error that says why: do not try to get around it, explain to the user what you could not do.
Finish with a short summary of what you did.`

// ErrShutdown is returned when the engine sent a ShutdownDirective.
var ErrShutdown = errors.New("the engine asked the agent to shut down")

// Run connects, announces the agent, waits for InitialToolDefs and then
// processes messages until the engine shuts it down or the stream breaks.
func Run(ctx context.Context, cc grpc.ClientConnInterface, cfg Config) error {
	if cfg.Provider == nil {
		return errors.New("agent: no LLM provider")
	}
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = DefaultMaxTurns
	}
	if cfg.ReadyTimeout <= 0 {
		cfg.ReadyTimeout = DefaultReadyTimeout
	}
	if cfg.System == "" {
		cfg.System = DefaultSystemPrompt
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := pb.NewAgentServiceClient(cc).RunSession(ctx)
	if err != nil {
		return fmt.Errorf("open RunSession: %w", err)
	}
	a := &agent{cfg: cfg, stream: stream, log: cfg.Logger, results: map[string]chan *pb.ToolResultDelivery{},
		toolDefs: make(chan *pb.ToolDefsDelivery, 1), loaded: map[string]*pb.ToolDef{}}
	if err := a.send(&pb.AgentEvent{Event: &pb.AgentEvent_Ready{Ready: &pb.AgentReady{
		AgentId: cfg.Name + ":" + cfg.Token, SandboxResultJson: string(cfg.SandboxReport),
	}}}); err != nil {
		return fmt.Errorf("send AgentReady: %w", err)
	}
	if err := a.awaitInitialToolDefs(); err != nil {
		return err
	}

	process := make(chan *pb.ProcessRequest, 16)
	readErr := make(chan error, 1)
	go func() { readErr <- a.readLoop(process) }()
	for {
		select {
		case req := <-process:
			a.processMessage(ctx, req)
		case err := <-readErr:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

type agent struct {
	cfg    Config
	stream pb.AgentService_RunSessionClient
	log    *slog.Logger
	sendMu sync.Mutex

	mu       sync.Mutex
	results  map[string]chan *pb.ToolResultDelivery
	toolDefs chan *pb.ToolDefsDelivery
	loaded   map[string]*pb.ToolDef // tools the model may call, by name
	order    []string
	seq      int
}

func (a *agent) send(ev *pb.AgentEvent) error {
	a.sendMu.Lock()
	defer a.sendMu.Unlock()
	return a.stream.Send(ev)
}

// awaitInitialToolDefs waits for the engine's first directive, which must
// be InitialToolDefs: a rejected token or sandbox arrives as an error or a
// ShutdownDirective instead.
func (a *agent) awaitInitialToolDefs() error {
	type recv struct {
		d   *pb.EngineDirective
		err error
	}
	ch := make(chan recv, 1)
	go func() {
		d, err := a.stream.Recv()
		ch <- recv{d, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return fmt.Errorf("engine refused the agent: %w", r.err)
		}
		switch d := r.d.Directive.(type) {
		case *pb.EngineDirective_InitialToolDefs:
			for _, t := range d.InitialToolDefs.GetTools() {
				a.addTool(t)
			}
			return nil
		case *pb.EngineDirective_Shutdown:
			return fmt.Errorf("%w: %s", ErrShutdown, d.Shutdown.GetReason())
		default:
			return fmt.Errorf("protocol error: the engine's first directive was %T, not InitialToolDefs", r.d.Directive)
		}
	case <-time.After(a.cfg.ReadyTimeout):
		return fmt.Errorf("no InitialToolDefs from the engine within %s", a.cfg.ReadyTimeout)
	}
}

func (a *agent) addTool(t *pb.ToolDef) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.loaded[t.GetName()]; !ok {
		a.order = append(a.order, t.GetName())
	}
	a.loaded[t.GetName()] = t
}

// readLoop receives directives and hands each to whoever waits for it.
func (a *agent) readLoop(process chan<- *pb.ProcessRequest) error {
	for {
		d, err := a.stream.Recv()
		if err == io.EOF {
			return errors.New("the engine closed the stream")
		}
		if err != nil {
			return fmt.Errorf("stream: %w", err)
		}
		switch x := d.Directive.(type) {
		case *pb.EngineDirective_Process:
			process <- x.Process
		case *pb.EngineDirective_ToolResult:
			a.mu.Lock()
			ch := a.results[x.ToolResult.GetCallId()]
			delete(a.results, x.ToolResult.GetCallId())
			a.mu.Unlock()
			if ch != nil {
				ch <- x.ToolResult
			} else {
				a.log.Warn("tool result for an unknown call; ignored", "call", x.ToolResult.GetCallId())
			}
		case *pb.EngineDirective_ToolDefs:
			select {
			case a.toolDefs <- x.ToolDefs:
			default:
				a.log.Warn("unrequested tool definitions; ignored")
			}
		case *pb.EngineDirective_Shutdown:
			return fmt.Errorf("%w: %s", ErrShutdown, x.Shutdown.GetReason())
		case *pb.EngineDirective_InitialToolDefs:
			a.log.Warn("InitialToolDefs sent twice; ignored")
		}
	}
}

// processMessage runs the reasoning loop for one user message and always
// ends it with AgentResponseComplete or AgentError.
func (a *agent) processMessage(ctx context.Context, req *pb.ProcessRequest) {
	sid, mid := req.GetSessionId(), req.GetMessageId()
	fail := func(code, msg string, recoverable bool) {
		_ = a.send(&pb.AgentEvent{Event: &pb.AgentEvent_AgentError{AgentError: &pb.AgentError{
			SessionId: sid, MessageId: mid, Code: code, Message: msg, Recoverable: recoverable}}})
	}
	maxTurns := a.cfg.MaxTurns
	if n := int(req.GetMaxTurns()); n > 0 && n < maxTurns {
		maxTurns = n
	}
	var msgs []llm.Message
	for _, h := range req.GetHistory() {
		role := llm.RoleUser
		if h.GetRole() == "assistant" {
			role = llm.RoleAssistant
		}
		msgs = append(msgs, llm.Message{Role: role, Content: h.GetContent()})
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: req.GetContent()})

	var usage llm.Usage
	var thoughts []*pb.Thought
	onText := func(s string) {
		_ = a.send(&pb.AgentEvent{Event: &pb.AgentEvent_LlmTokenEmitted{LlmTokenEmitted: &pb.LLMTokenEmitted{
			SessionId: sid, MessageId: mid, Text: s}}})
	}
	for call := range maxTurns {
		resp, err := a.cfg.Provider.Complete(ctx, llm.Request{System: a.cfg.System, Messages: msgs, Tools: a.tools()}, onText)
		if err != nil {
			fail("LLM_CALL_FAILED", err.Error(), errors.Is(err, llm.ErrUnavailable) || errors.Is(err, llm.ErrRateLimited))
			return
		}
		usage = usage.Add(resp.Usage)
		// Each round trip's usage, for front doors that report it per
		// call (crawbl's UsageEvent).
		thoughts = append(thoughts, llmCallThought(call, resp.Usage))
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls})
		if resp.Text != "" && len(resp.ToolCalls) > 0 {
			thoughts = append(thoughts, &pb.Thought{Stage: "reasoning", Summary: textcut.Truncate(resp.Text, 200)})
		}
		if len(resp.ToolCalls) == 0 {
			_ = a.send(&pb.AgentEvent{Event: &pb.AgentEvent_ResponseComplete{ResponseComplete: &pb.AgentResponseComplete{
				SessionId: sid, MessageId: mid, Content: resp.Text, Thoughts: thoughts, Usage: &pb.TokenUsage{
					InputTokens: int32(usage.InputTokens), OutputTokens: int32(usage.OutputTokens),
					CacheReadTokens: int32(usage.CacheReadTokens), CacheWriteTokens: int32(usage.CacheWriteTokens)},
			}}})
			return
		}
		results, err := a.runToolCalls(ctx, sid, mid, resp.ToolCalls)
		if err != nil {
			fail("STREAM_ERROR", err.Error(), false)
			return
		}
		for i, call := range resp.ToolCalls {
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Content: results[i].GetContent(), IsError: results[i].GetIsError()})
			detail, _ := json.Marshal(map[string]any{"tool": call.Name, "is_error": results[i].GetIsError()})
			thoughts = append(thoughts, &pb.Thought{Stage: "tool_call", Summary: call.Name, DetailJson: string(detail)})
		}
	}
	fail("TURN_LIMIT", fmt.Sprintf("stopped after %d LLM round trips without a final answer", maxTurns), false)
}

// LLMCallStage names the Thought that carries one LLM round trip's usage;
// its DetailJSON is an LLMCall.
const LLMCallStage = "llm_call"

// LLMCall is one LLM round trip's usage, numbered from 1 within the turn.
type LLMCall struct {
	Sequence         int `json:"sequence"`
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	CacheReadTokens  int `json:"cache_read_tokens"`
	CacheWriteTokens int `json:"cache_write_tokens"`
}

func llmCallThought(n int, u llm.Usage) *pb.Thought {
	detail, _ := json.Marshal(LLMCall{Sequence: n + 1, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens})
	return &pb.Thought{Stage: LLMCallStage, Summary: fmt.Sprintf("LLM call %d", n+1), DetailJson: string(detail)}
}

// runToolCalls proposes every call of one model answer, then waits for all
// results. load_tools is answered through ToolDefsRequest.
func (a *agent) runToolCalls(ctx context.Context, sid, mid string, calls []llm.ToolCall) ([]*pb.ToolResultDelivery, error) {
	results := make([]*pb.ToolResultDelivery, len(calls))
	waits := make([]chan *pb.ToolResultDelivery, len(calls))
	for i, call := range calls {
		if call.Name == loadToolsName {
			results[i] = a.loadTools(ctx, call.Arguments)
			continue
		}
		a.mu.Lock()
		a.seq++
		callID := fmt.Sprintf("%s.%d", mid, a.seq) // unique per engine; the model's ids may repeat
		ch := make(chan *pb.ToolResultDelivery, 1)
		a.results[callID] = ch
		a.mu.Unlock()
		waits[i] = ch
		if err := a.send(&pb.AgentEvent{Event: &pb.AgentEvent_ToolProposal{ToolProposal: &pb.ToolCallProposed{
			SessionId: sid, MessageId: mid, CallId: callID, ToolName: call.Name, ArgumentsJson: call.Arguments,
		}}}); err != nil {
			return nil, fmt.Errorf("propose %s: %w", call.Name, err)
		}
	}
	for i, ch := range waits {
		if ch == nil {
			continue
		}
		select {
		case r := <-ch:
			results[i] = r
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return results, nil
}

// loadTools asks the engine for tool groups and makes them callable.
func (a *agent) loadTools(ctx context.Context, argsJSON string) *pb.ToolResultDelivery {
	var args struct {
		Groups []string `json:"groups"`
	}
	if err := json.Unmarshal([]byte(argsJSON), &args); err != nil || len(args.Groups) == 0 {
		return &pb.ToolResultDelivery{IsError: true, Content: `load_tools needs {"groups": [...]}, e.g. ["files","shell","git","http"]`}
	}
	if err := a.send(&pb.AgentEvent{Event: &pb.AgentEvent_ToolDefsRequest{ToolDefsRequest: &pb.ToolDefsRequest{Groups: args.Groups}}}); err != nil {
		return &pb.ToolResultDelivery{IsError: true, Content: "could not reach the engine: " + err.Error()}
	}
	select {
	case d := <-a.toolDefs:
		var names []string
		for _, t := range d.GetTools() {
			a.addTool(t)
			names = append(names, t.GetName())
		}
		if len(names) == 0 {
			return &pb.ToolResultDelivery{IsError: true, Content: fmt.Sprintf("no tools in groups %v; known groups: files, shell, git, http", args.Groups)}
		}
		return &pb.ToolResultDelivery{Content: "loaded tools: " + strings.Join(names, ", ")}
	case <-time.After(toolDefsTimeout):
		return &pb.ToolResultDelivery{IsError: true, Content: "the engine did not answer load_tools"}
	case <-ctx.Done():
		return &pb.ToolResultDelivery{IsError: true, Content: "cancelled"}
	}
}

func (a *agent) tools() []llm.Tool {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]llm.Tool, 0, len(a.order))
	for _, name := range a.order {
		t := a.loaded[name]
		out = append(out, llm.Tool{Name: t.GetName(), Description: t.GetDescription(), Parameters: json.RawMessage(t.GetParametersJson())})
	}
	return out
}
