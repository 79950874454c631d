// Package crawbl serves crawbl.agentruntime.v1 (seed 003) over the
// engine: AgentRuntime.Converse runs turns through the engine's one gate
// and session store, and Memory keeps workspace memory entries in the
// session database. Every call carries the crawbl HMAC bearer token; the
// identity in it overrides the user and workspace a request names.
// docs/doors/crawbl.md.
package crawbl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/engine/doors"
	"github.com/parapet-dev/parapet/engine/store"
	"github.com/parapet-dev/parapet/internal/textcut"
	crpb "github.com/parapet-dev/parapet/proto/crawbl/agentruntime/v1"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// Frontend is how this door is named in events and the audit chain.
const Frontend = "crawbl"

// What an escalation does when it arrives through Converse, which has no
// way to ask the caller.
const (
	// OnEscalateDeny denies it at once.
	OnEscalateDeny = "deny"
	// OnEscalateWait leaves it to any other front-end (web page, agentctl
	// approve, another door) until the broker's deadline, which denies.
	OnEscalateWait = "wait"
)

// Options configure a Server.
type Options struct {
	// Engine runs the turns (required).
	Engine doors.Engine
	// Store keeps the memory entries (required for Memory).
	Store *store.Store
	// Verifier checks bearer tokens (required).
	Verifier Verifier
	// OnEscalate is OnEscalateDeny (default) or OnEscalateWait.
	OnEscalate string
	// AgentName is the agent_id of events when a request names none;
	// Model the model reported in DoneEvent and UsageEvent.
	AgentName, Model string
	Logger           *slog.Logger
}

// Server serves AgentRuntime and Memory.
type Server struct {
	crpb.UnimplementedAgentRuntimeServer
	crpb.UnimplementedMemoryServer
	opts Options
	log  *slog.Logger
}

// New checks opts and builds a Server.
func New(opts Options) (*Server, error) {
	if opts.Engine == nil || opts.Verifier == nil {
		return nil, errors.New("crawbl: an engine and a token verifier are required")
	}
	switch opts.OnEscalate {
	case "":
		opts.OnEscalate = OnEscalateDeny
	case OnEscalateDeny, OnEscalateWait:
	default:
		return nil, fmt.Errorf("crawbl: on-escalate %q: want deny or wait", opts.OnEscalate)
	}
	if opts.AgentName == "" {
		opts.AgentName = "parapet"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Server{opts: opts, log: opts.Logger}, nil
}

// Register adds both services to a gRPC server built with ServerOptions.
func (s *Server) Register(g *grpc.Server) {
	crpb.RegisterAgentRuntimeServer(g, s)
	crpb.RegisterMemoryServer(g, s)
}

// Converse answers each request of the stream in turn with its events
// and exactly one DoneEvent; a refused or failed request is a DoneEvent
// whose model is "ERROR: <code>: <message>", and the stream goes on.
func (s *Server) Converse(stream crpb.AgentRuntime_ConverseServer) error {
	ctx := stream.Context()
	id, _ := identityFrom(ctx)
	var workspace, user string // from the first request that names them
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if workspace == "" {
			workspace, user = req.GetWorkspaceId(), req.GetUserId()
		}
		if id.Workspace != "" {
			workspace, user = id.Workspace, id.User
		}
		c := converse{s: s, stream: stream, agentID: req.GetAgentId()}
		if c.agentID == "" {
			c.agentID = s.opts.AgentName
		}
		if err := c.run(ctx, req, workspace, user); err != nil {
			return err
		}
	}
}

// converse is one request's turn.
type converse struct {
	s       *Server
	stream  crpb.AgentRuntime_ConverseServer
	agentID string
	// pending is streamed text not yet sent: text is sent as chunks only
	// once a tool call follows it, so the final answer is not repeated.
	pending strings.Builder
}

func (c *converse) run(ctx context.Context, req *crpb.ConverseRequest, workspace, user string) error {
	if strings.TrimSpace(req.GetMessage()) == "" {
		return c.failed("INVALID_ARGUMENT", "message is empty")
	}
	if workspace == "" {
		return c.failed("INVALID_ARGUMENT", "workspace_id is required")
	}
	if req.GetSystemPrompt() != "" {
		c.s.log.Info("crawbl system_prompt ignored: the engine's agent keeps its own", "workspace", workspace)
	}
	sessionID := req.GetSessionId()
	if sessionID == "" {
		sessionID = workspace
	}
	turnCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	t, err := c.s.opts.Engine.Submit(turnCtx, engine.Message{
		// A workspace's sessions are its own: another workspace's token
		// cannot continue them.
		SessionID: workspace + ":" + sessionID, CreateNamed: true, Content: req.GetMessage(), Source: Frontend,
		// The agent's memory tools see the notes this workspace's Memory
		// calls see.
		MemoryWorkspace: workspace})
	if err != nil {
		code, msg := doors.Refusal(err)
		return c.failed(code, msg)
	}
	c.s.log.Debug("crawbl turn", "session", t.SessionID, "user", user)
	defer func() {
		cancel()
		go func() { // drain what a failed send left, so the forwarder ends
			for range t.Events {
			}
		}()
	}()
	for ev := range t.Events {
		done, err := c.event(t.SessionID, ev)
		if err != nil || done {
			return err
		}
	}
	return c.failed("INTERNAL", "the turn ended without an answer")
}

func (c *converse) send(ev *crpb.ConverseEvent) error { return c.stream.Send(ev) }

// failed ends a request in-band.
func (c *converse) failed(code, msg string) error {
	return c.send(&crpb.ConverseEvent{Event: &crpb.ConverseEvent_Done{Done: &crpb.DoneEvent{
		Model: "ERROR: " + code + ": " + textcut.Truncate(msg, 2000)}}})
}

// flushText sends the text held back, as one chunk.
func (c *converse) flushText() error {
	if c.pending.Len() == 0 {
		return nil
	}
	text := c.pending.String()
	c.pending.Reset()
	return c.send(&crpb.ConverseEvent{Event: &crpb.ConverseEvent_Chunk{Chunk: &crpb.ChunkEvent{AgentId: c.agentID, Text: text}}})
}

// event forwards one engine event; done reports the request's end.
func (c *converse) event(sessionID string, ev *pb.PipelineEvent) (done bool, err error) {
	switch ev.GetEventType() {
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_LLM_TOKEN:
		c.pending.WriteString(ev.GetLlmToken().GetText())
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTIONS_PLANNED:
		if err := c.flushText(); err != nil {
			return true, err
		}
		for _, a := range ev.GetActionsPlanned().GetActions() {
			err := c.send(&crpb.ConverseEvent{Event: &crpb.ConverseEvent_ToolCall{ToolCall: &crpb.ToolCallEvent{
				AgentId: c.agentID, Tool: a.GetPayload()["tool_name"], ArgsJson: a.GetPayloadJson(), CallId: a.GetRequestId()}}})
			if err != nil {
				return true, err
			}
		}
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_NEEDED:
		if c.s.opts.OnEscalate == OnEscalateDeny {
			// Not found: another front-end answered first.
			_ = c.s.opts.Engine.ResolveApproval(ev.GetApprovalNeeded().GetApprovalId(), sessionID, false, "crawbl:on-escalate=deny")
		}
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_COMPLETED:
		return false, c.send(&crpb.ConverseEvent{Event: &crpb.ConverseEvent_ToolResult{ToolResult: ToolResult(ev.GetActionCompleted())}})
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE:
		rc := ev.GetResponseComplete()
		// Text streamed before the final answer's (a round that only
		// loaded tools) is still news; the answer itself goes in the Turn.
		if held := c.pending.String(); len(held) > len(rc.GetContent()) && strings.HasSuffix(held, rc.GetContent()) {
			c.pending.Reset()
			c.pending.WriteString(held[:len(held)-len(rc.GetContent())])
			if err := c.flushText(); err != nil {
				return true, err
			}
		}
		for _, u := range Usage(rc.GetThoughts(), c.agentID, c.s.opts.Model) {
			if err := c.send(&crpb.ConverseEvent{Event: &crpb.ConverseEvent_Usage{Usage: u}}); err != nil {
				return true, err
			}
		}
		return true, c.send(&crpb.ConverseEvent{Event: &crpb.ConverseEvent_Done{Done: &crpb.DoneEvent{
			Model: c.s.opts.Model, Turns: []*crpb.Turn{{AgentId: c.agentID, Text: rc.GetContent()}}}}})
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR:
		pe := ev.GetPipelineError()
		return true, c.failed(pe.GetCode(), pe.GetMessage())
	}
	return false, nil
}

// ToolResult is the ToolResultEvent of a finished (or refused) call: the
// output as JSON {"output": ...}, or error and error_message.
func ToolResult(ac *pb.ActionCompleted) *crpb.ToolResultEvent {
	r := ac.GetResult()
	if !r.GetSuccess() {
		msg := r.GetError()
		if msg == "" {
			msg = r.GetOutput()
		}
		return &crpb.ToolResultEvent{CallId: ac.GetCallId(), Error: true, ErrorMessage: msg}
	}
	out, _ := json.Marshal(map[string]string{"output": r.GetOutput()})
	return &crpb.ToolResultEvent{CallId: ac.GetCallId(), ResultJson: string(out)}
}

// llmCall is the agent's per-round-trip usage Thought (stage "llm_call",
// agentctl/agent.LLMCall). It comes from the sandboxed agent: parsed
// strictly, and anything malformed is left out.
type llmCall struct {
	Sequence         int32 `json:"sequence"`
	InputTokens      int32 `json:"input_tokens"`
	OutputTokens     int32 `json:"output_tokens"`
	CacheReadTokens  int32 `json:"cache_read_tokens"`
	CacheWriteTokens int32 `json:"cache_write_tokens"`
}

// maxUsageEvents bounds the UsageEvents of one turn (an agent's turn has
// at most its max-turns round trips; a lying agent gets no more).
const maxUsageEvents = 1000

// Usage returns one UsageEvent per LLM round trip recorded in a turn's
// thoughts.
func Usage(thoughts []*pb.Thought, agentID, model string) []*crpb.UsageEvent {
	var out []*crpb.UsageEvent
	for _, th := range thoughts {
		if th.GetStage() != "llm_call" || len(out) >= maxUsageEvents {
			continue
		}
		var c llmCall
		if err := json.Unmarshal([]byte(th.GetDetailJson()), &c); err != nil || c.Sequence <= 0 ||
			c.InputTokens < 0 || c.OutputTokens < 0 || c.CacheReadTokens < 0 || c.CacheWriteTokens < 0 {
			continue
		}
		out = append(out, &crpb.UsageEvent{AgentId: agentID, Model: model, PromptTokens: c.InputTokens,
			CompletionTokens: c.OutputTokens, TotalTokens: sat(c.InputTokens, c.OutputTokens), CachedTokens: c.CacheReadTokens,
			CallSequence: c.Sequence})
	}
	return out
}

// sat adds without overflowing.
func sat(a, b int32) int32 {
	if s := int64(a) + int64(b); s <= 1<<31-1 {
		return int32(s)
	}
	return 1<<31 - 1
}

// workspaceOf is the workspace a Memory call acts on: the token's, else
// the request's; it must not be empty.
func workspaceOf(ctx context.Context, requested string) (string, error) {
	if id, ok := identityFrom(ctx); ok && id.Workspace != "" {
		return id.Workspace, nil
	}
	if requested == "" {
		return "", status.Error(codes.InvalidArgument, "workspace_id is required")
	}
	return requested, nil
}

func (s *Server) memoryStore() (*store.Store, error) {
	if s.opts.Store == nil {
		return nil, status.Error(codes.Unavailable, "this engine keeps no session database, so no memory")
	}
	return s.opts.Store, nil
}

// storeStatus turns a store error into a gRPC status.
func storeStatus(err error) error {
	switch {
	case errors.Is(err, store.ErrInvalid):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, store.ErrNotFound):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	}
	return status.Error(codes.Unavailable, "memory store: "+err.Error())
}

func entry(m store.Memory) *crpb.MemoryEntry {
	return &crpb.MemoryEntry{Key: m.Key, Content: m.Content, Category: m.Category,
		CreatedAt: timestamppb.New(m.Created), UpdatedAt: timestamppb.New(m.Updated)}
}

// ListMemories lists a workspace's entries, newest first.
func (s *Server) ListMemories(ctx context.Context, req *crpb.ListMemoriesRequest) (*crpb.ListMemoriesResponse, error) {
	ws, err := workspaceOf(ctx, req.GetWorkspaceId())
	if err != nil {
		return nil, err
	}
	st, err := s.memoryStore()
	if err != nil {
		return nil, err
	}
	list, err := st.Memories(ctx, ws, req.GetCategory(), int(req.GetOffset()), int(req.GetLimit()))
	if err != nil {
		return nil, storeStatus(err)
	}
	resp := &crpb.ListMemoriesResponse{Entries: make([]*crpb.MemoryEntry, 0, len(list))}
	for _, m := range list {
		resp.Entries = append(resp.Entries, entry(m))
	}
	return resp, nil
}

// CreateMemory creates or replaces an entry (its created_at is kept).
func (s *Server) CreateMemory(ctx context.Context, req *crpb.CreateMemoryRequest) (*crpb.CreateMemoryResponse, error) {
	ws, err := workspaceOf(ctx, req.GetWorkspaceId())
	if err != nil {
		return nil, err
	}
	if req.GetKey() == "" {
		return nil, status.Error(codes.InvalidArgument, "key is required")
	}
	st, err := s.memoryStore()
	if err != nil {
		return nil, err
	}
	m, err := st.PutMemory(ctx, store.Memory{Workspace: ws, Category: req.GetCategory(), Key: req.GetKey(), Content: req.GetContent()})
	if err != nil {
		return nil, storeStatus(err)
	}
	return &crpb.CreateMemoryResponse{Entry: entry(m)}, nil
}

// DeleteMemory deletes the entries named key; none is NotFound.
func (s *Server) DeleteMemory(ctx context.Context, req *crpb.DeleteMemoryRequest) (*crpb.DeleteMemoryResponse, error) {
	ws, err := workspaceOf(ctx, req.GetWorkspaceId())
	if err != nil {
		return nil, err
	}
	if req.GetKey() == "" {
		return nil, status.Error(codes.InvalidArgument, "key is required")
	}
	st, err := s.memoryStore()
	if err != nil {
		return nil, err
	}
	if err := st.DeleteMemory(ctx, ws, req.GetKey()); err != nil {
		return nil, storeStatus(err)
	}
	return &crpb.DeleteMemoryResponse{}, nil
}
