// Package openclaude serves openclaude.v1.AgentService.Chat (seed 002) over
// the engine: an openclaude client drives a Parapet engine unchanged, and
// every tool call it causes passes the engine's one gate.
//
// A stream carries one request at a time. Engine events map one to one:
// LLM tokens → text_chunk; a planned tool call → tool_start, its end (run,
// blocked or denied) → tool_result with the same tool_use_id; an
// escalation → action_required{prompt_id = the approval id}, answered by a
// UserInput through the engine's approval broker (the first answer from
// any front-end wins); the turn's answer → done. docs/doors/openclaude.md.
package openclaude

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/grpc"

	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/engine/doors"
	"github.com/parapet-dev/parapet/internal/textcut"
	ocpb "github.com/parapet-dev/parapet/proto/openclaude/v1"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// Frontend is how approvals answered through this door are attributed
// in events and the shield's audit chain.
const Frontend = "openclaude"

// Error codes of ErrorResponse.
const (
	CodeAlreadyExists   = "ALREADY_EXISTS"
	CodeInvalidArgument = "INVALID_ARGUMENT"
	CodeUnavailable     = "UNAVAILABLE"
	CodeInternal        = "INTERNAL"
)

// Options configure a Server.
type Options struct {
	// Engine runs the turns (required).
	Engine doors.Engine
	// Workspace is the engine's workspace (absolute, required): a
	// request's working_directory must be inside it.
	Workspace string
	// Models lists the models the engine's provider offers; a request
	// naming another is refused. Empty: only requests without a model.
	Models []string
	Logger *slog.Logger
}

// Server is the openclaude AgentService.
type Server struct {
	ocpb.UnimplementedAgentServiceServer
	opts Options
	// root is Workspace with its symbolic links resolved.
	root string
	log  *slog.Logger
}

// New checks opts and builds a Server.
func New(opts Options) (*Server, error) {
	if opts.Engine == nil {
		return nil, errors.New("openclaude: no engine")
	}
	if !filepath.IsAbs(opts.Workspace) {
		return nil, fmt.Errorf("openclaude: workspace must be an absolute path, got %q", opts.Workspace)
	}
	root, err := filepath.EvalSymlinks(opts.Workspace)
	if err != nil {
		return nil, fmt.Errorf("openclaude: workspace: %w", err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Server{opts: opts, root: root, log: opts.Logger}, nil
}

// Register adds the service to a gRPC server.
func (s *Server) Register(g *grpc.Server) { ocpb.RegisterAgentServiceServer(g, s) }

// chat is one Chat stream's state; only its handler goroutine touches it.
type chat struct {
	s      *Server
	stream ocpb.AgentService_ChatServer
	// The running turn, if any.
	turn    *engine.Turn
	events  <-chan *pb.PipelineEvent
	cancel  context.CancelFunc
	prompts []string // approval ids announced to this client and not yet resolved
	// halfClosed: the client sends no more; its prompts are denied.
	halfClosed bool
}

type received struct {
	msg *ocpb.ClientMessage
	err error
}

// Chat serves one stream until the client cancels, half-closes with no
// turn running, leaves, or an internal failure ends it.
func (s *Server) Chat(stream ocpb.AgentService_ChatServer) error {
	c := &chat{s: s, stream: stream}
	defer c.abandon()
	ctx := stream.Context()
	in := make(chan received)
	go func() {
		for {
			m, err := stream.Recv()
			select {
			case in <- received{m, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		inbox := in
		if c.halfClosed {
			inbox = nil
		}
		select {
		case <-ctx.Done():
			return nil
		case r := <-inbox:
			done, err := c.client(ctx, r)
			if done || err != nil {
				return err
			}
		case ev, ok := <-c.events:
			if !ok {
				c.endTurn()
				if c.halfClosed {
					return nil
				}
				continue
			}
			done, err := c.engineEvent(ev)
			if done || err != nil {
				return err
			}
		}
	}
}

// client handles one message (or the end) of the client's side.
func (c *chat) client(ctx context.Context, r received) (done bool, err error) {
	if errors.Is(r.err, io.EOF) {
		c.halfClosed = true
		c.denyAll()
		return c.turn == nil, nil
	}
	if r.err != nil {
		return true, nil // the client left; abandon cancels the turn
	}
	switch p := r.msg.GetPayload().(type) {
	case *ocpb.ClientMessage_Request:
		if c.turn != nil {
			return false, c.sendError(CodeAlreadyExists, "a request is already running on this stream; wait for its done, or cancel it")
		}
		return c.start(ctx, p.Request)
	case *ocpb.ClientMessage_Input:
		c.answer(p.Input)
		return false, nil
	case *ocpb.ClientMessage_Cancel:
		if c.turn != nil {
			c.s.log.Info("turn cancelled by the openclaude client", "session", c.turn.SessionID, "reason", textcut.Truncate(p.Cancel.GetReason(), 200))
		}
		return true, nil
	default:
		return false, c.sendError(CodeInvalidArgument, "a ClientMessage must carry a request, an input or a cancel")
	}
}

// start submits a request to the engine.
func (c *chat) start(ctx context.Context, req *ocpb.ChatRequest) (done bool, err error) {
	content, err := c.s.message(req)
	if err != nil {
		return false, c.sendError(CodeInvalidArgument, err.Error())
	}
	turnCtx, cancel := context.WithCancel(ctx)
	t, err := c.s.opts.Engine.Submit(turnCtx, engine.Message{
		SessionID: req.GetSessionId(), CreateNamed: req.GetSessionId() != "", Content: content, Source: Frontend})
	if err != nil {
		cancel()
		code, msg := doors.Refusal(err)
		switch {
		case doors.ClientFault(code):
			return false, c.sendError(CodeInvalidArgument, code+": "+msg)
		case doors.Transient(code):
			return false, c.sendError(CodeUnavailable, code+": "+msg)
		}
		c.s.log.Error("openclaude request failed", "error", err)
		return true, c.sendError(CodeInternal, code+": "+msg)
	}
	c.turn, c.events, c.cancel, c.prompts = t, t.Events, cancel, nil
	return false, nil
}

// message is the text the agent gets for a request: its message, told
// where to work when that is not the workspace root. A working directory
// outside the workspace, or a model the engine does not offer, is refused.
func (s *Server) message(req *ocpb.ChatRequest) (string, error) {
	if req.Model != nil && req.GetModel() != "" && !slices.Contains(s.opts.Models, req.GetModel()) {
		if len(s.opts.Models) == 0 {
			return "", fmt.Errorf("model %q is not offered: this engine uses its provider's default model (send no model)", textcut.Truncate(req.GetModel(), 80))
		}
		return "", fmt.Errorf("model %q is not offered; this engine offers %s", textcut.Truncate(req.GetModel(), 80), strings.Join(s.opts.Models, ", "))
	}
	rel, err := s.workingDir(req.GetWorkingDirectory())
	if err != nil {
		return "", err
	}
	if rel == "." || req.GetMessage() == "" {
		return req.GetMessage(), nil // an empty message is the engine's to refuse
	}
	return fmt.Sprintf("[working directory: %s]\n\n%s", filepath.ToSlash(rel), req.GetMessage()), nil
}

// workingDir resolves a request's working directory (absolute, or
// relative to the workspace; empty is the workspace) to a path relative
// to the workspace root, refusing anything that is not an existing
// directory inside it once symbolic links are resolved.
func (s *Server) workingDir(dir string) (string, error) {
	if dir == "" {
		return ".", nil
	}
	p := dir
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.root, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("working_directory %q: %v", textcut.Truncate(dir, 200), errors.Unwrap(err))
	}
	rel, err := filepath.Rel(s.root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("working_directory %q is outside the engine's workspace %s", textcut.Truncate(dir, 200), s.opts.Workspace)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("working_directory %q is not a directory", textcut.Truncate(dir, 200))
	}
	return rel, nil
}

// answer resolves one of this stream's prompts; an id this stream was not
// asked (unknown, or already answered) is ignored.
func (c *chat) answer(in *ocpb.UserInput) {
	i := slices.Index(c.prompts, in.GetPromptId())
	if i < 0 || c.turn == nil {
		return
	}
	c.prompts = slices.Delete(c.prompts, i, i+1)
	reply := strings.ToLower(strings.TrimSpace(in.GetReply()))
	approved := reply == "y" || reply == "yes"
	// Not found: another front-end answered first, or the deadline passed.
	_ = c.s.opts.Engine.ResolveApproval(in.GetPromptId(), c.turn.SessionID, approved, Frontend)
}

// denyAll denies every prompt still waiting for this client.
func (c *chat) denyAll() {
	for _, id := range c.prompts {
		_ = c.s.opts.Engine.ResolveApproval(id, c.turn.SessionID, false, Frontend)
	}
	c.prompts = nil
}

// engineEvent forwards one event of the running turn.
func (c *chat) engineEvent(ev *pb.PipelineEvent) (done bool, err error) {
	switch ev.GetEventType() {
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_NEEDED:
		id := ev.GetApprovalNeeded().GetApprovalId()
		if c.halfClosed {
			// Nobody can answer through this stream any more.
			_ = c.s.opts.Engine.ResolveApproval(id, c.turn.SessionID, false, Frontend)
			return false, nil
		}
		c.prompts = append(c.prompts, id)
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_RESOLVED:
		if i := slices.Index(c.prompts, ev.GetApprovalResolved().GetApprovalId()); i >= 0 {
			c.prompts = slices.Delete(c.prompts, i, i+1)
		}
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR:
		pe := ev.GetPipelineError()
		c.s.log.Warn("openclaude turn failed", "session", ev.GetSessionId(), "code", pe.GetCode(), "error", pe.GetMessage())
		return true, c.sendError(CodeInternal, pe.GetCode()+": "+pe.GetMessage())
	}
	if m := Translate(ev); m != nil {
		if err := c.stream.Send(m); err != nil {
			return true, err
		}
	}
	return false, nil
}

// Translate maps an engine event to the openclaude message a client sees,
// or nil for events it has no counterpart for (verdicts, resolutions,
// sub-agent news) and for turn errors, which the stream reports itself.
func Translate(ev *pb.PipelineEvent) *ocpb.ServerMessage {
	switch ev.GetEventType() {
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_LLM_TOKEN:
		return &ocpb.ServerMessage{Event: &ocpb.ServerMessage_TextChunk{TextChunk: &ocpb.TextChunk{Text: ev.GetLlmToken().GetText()}}}
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTIONS_PLANNED:
		a := ev.GetActionsPlanned().GetActions()
		if len(a) == 0 {
			return nil
		}
		return &ocpb.ServerMessage{Event: &ocpb.ServerMessage_ToolStart{ToolStart: &ocpb.ToolCallStart{
			ToolName: a[0].GetPayload()["tool_name"], ArgumentsJson: a[0].GetPayloadJson(), ToolUseId: a[0].GetRequestId()}}}
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_COMPLETED:
		ac := ev.GetActionCompleted()
		r := ac.GetResult()
		out := r.GetOutput()
		if out == "" {
			out = r.GetError()
		}
		return &ocpb.ServerMessage{Event: &ocpb.ServerMessage_ToolResult{ToolResult: &ocpb.ToolCallResult{
			ToolName: ac.GetToolName(), Output: out, IsError: !r.GetSuccess(), ToolUseId: ac.GetCallId()}}}
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_NEEDED:
		n := ev.GetApprovalNeeded()
		return &ocpb.ServerMessage{Event: &ocpb.ServerMessage_ActionRequired{ActionRequired: &ocpb.ActionRequired{
			PromptId: n.GetApprovalId(), Question: Question(n), Type: ocpb.ActionRequired_CONFIRM_COMMAND}}}
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE:
		rc := ev.GetResponseComplete()
		return &ocpb.ServerMessage{Event: &ocpb.ServerMessage_Done{Done: &ocpb.FinalResponse{
			FullText: rc.GetContent(), PromptTokens: rc.GetUsage().GetInputTokens(), CompletionTokens: rc.GetUsage().GetOutputTokens()}}}
	}
	return nil
}

// Question is the yes/no question of an escalation: the action and why
// the shield wants a human to decide.
func Question(n *pb.ApprovalNeeded) string {
	return fmt.Sprintf("Run %s %s? The Parapet shield asks a human to decide: %s (reply y to approve, anything else denies)",
		n.GetToolName(), textcut.Truncate(n.GetAction().GetPayloadJson(), 500), n.GetShieldAssessment().GetReasoning())
}

func (c *chat) sendError(code, msg string) error {
	return c.stream.Send(&ocpb.ServerMessage{Event: &ocpb.ServerMessage_Error{Error: &ocpb.ErrorResponse{Code: code, Message: msg}}})
}

// endTurn forgets the turn whose events have ended.
func (c *chat) endTurn() {
	c.cancel()
	c.turn, c.events, c.cancel, c.prompts = nil, nil, nil, nil
}

// abandon cancels a turn the stream leaves behind (cancel, the client
// gone, a failure) and drains its events so the engine's forwarder ends.
func (c *chat) abandon() {
	if c.turn == nil {
		return
	}
	c.cancel()
	go func(events <-chan *pb.PipelineEvent) {
		for range events {
		}
	}(c.events)
	c.turn = nil
}
