// Package subagent is the reasoning loop of a sandboxed sub-agent process
// (agentctl internal-subagent). It registers with the engine's
// SubAgentService using its single-use token, works on the task it is
// given with the tools it is given, proposes every tool call to the engine
// (which judges and runs it), and reports its final answer or its failure.
package subagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/grpc"

	"github.com/parapet-dev/parapet/internal/textcut"
	"github.com/parapet-dev/parapet/llm"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// reportTimeout bounds the final report, which is sent even when the
// run's context has ended.
const reportTimeout = 5 * time.Second

// Config configures Run.
type Config struct {
	// Token is the sub-agent's token (passed on --token-fd).
	Token string
	// SandboxReport is the canary result JSON sent with the registration.
	SandboxReport []byte
	// Provider is the LLM, prepared before the process sandboxed itself.
	Provider llm.Provider
	// Check, if set, vets the registration (the cmd compares the LLM
	// settings with the ones it prepared); an error fails the run.
	Check  func(*pb.SubAgentRegisterResponse) error
	Logger *slog.Logger
}

// Errors of Run.
var (
	// ErrRefused: the engine did not accept the registration (token or sandbox).
	ErrRefused = errors.New("the engine refused the sub-agent")
	// ErrStopped: the engine told the sub-agent to stop (its parent's turn
	// ended, its LLM-call budget or its time ran out).
	ErrStopped = errors.New("the engine stopped the sub-agent")
)

// Run registers, works on the task and reports. It returns nil once the
// answer was delivered with SubAgentComplete.
func Run(ctx context.Context, cc grpc.ClientConnInterface, cfg Config) error {
	if cfg.Provider == nil {
		return errors.New("subagent: no LLM provider")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	client := pb.NewSubAgentServiceClient(cc)
	reg, err := client.RegisterSubAgent(ctx, &pb.SubAgentRegisterRequest{Token: cfg.Token, SandboxResultJson: string(cfg.SandboxReport)})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrRefused, err)
	}
	r := &run{client: client, token: cfg.Token, log: log.With("sub_agent", reg.GetName())}
	if cfg.Check != nil {
		if err := cfg.Check(reg); err != nil {
			r.fail(ctx, err.Error())
			return err
		}
	}
	return r.loop(ctx, cfg.Provider, reg)
}

type run struct {
	client pb.SubAgentServiceClient
	token  string
	log    *slog.Logger
	seq    int
}

func (r *run) loop(ctx context.Context, provider llm.Provider, reg *pb.SubAgentRegisterResponse) error {
	budget := int(reg.GetMaxLlmCalls())
	if budget <= 0 {
		msg := "the engine granted no LLM calls"
		r.fail(ctx, msg)
		return errors.New(msg)
	}
	tools := make([]llm.Tool, 0, len(reg.GetTools()))
	for _, t := range reg.GetTools() {
		tools = append(tools, llm.Tool{Name: t.GetName(), Description: t.GetDescription(), Parameters: []byte(t.GetParametersJson())})
	}
	msgs := []llm.Message{{Role: llm.RoleUser, Content: reg.GetTask()}}
	var usage llm.Usage
	for range budget {
		// Ask before every LLM call: the engine counts these against the
		// budget and says when to stop.
		poll, err := r.client.SubAgentPollMessage(ctx, &pb.SubAgentPollRequest{Token: r.token})
		if err != nil {
			return fmt.Errorf("poll the engine: %w", err)
		}
		if poll.GetCancelled() {
			r.fail(ctx, "stopped by the engine: "+poll.GetMessage())
			return fmt.Errorf("%w: %s", ErrStopped, poll.GetMessage())
		}
		if m := poll.GetMessage(); m != "" {
			msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: m})
		}
		resp, err := provider.Complete(ctx, llm.Request{System: reg.GetSystemPrompt(), Messages: msgs, Tools: tools}, nil)
		if err != nil {
			r.fail(ctx, "LLM call failed: "+err.Error())
			return fmt.Errorf("LLM: %w", err)
		}
		usage = usage.Add(resp.Usage)
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls})
		if len(resp.ToolCalls) == 0 {
			_, err := r.client.SubAgentComplete(ctx, &pb.SubAgentCompleteRequest{Token: r.token, Result: resp.Text, Usage: &pb.TokenUsage{
				InputTokens: int32(usage.InputTokens), OutputTokens: int32(usage.OutputTokens),
				CacheReadTokens: int32(usage.CacheReadTokens), CacheWriteTokens: int32(usage.CacheWriteTokens)}})
			if err != nil {
				return fmt.Errorf("report the result: %w", err)
			}
			return nil
		}
		for _, call := range resp.ToolCalls {
			content, isErr, err := r.execute(ctx, call)
			if err != nil {
				r.fail(ctx, fmt.Sprintf("tool call %s: %v", call.Name, err))
				return err
			}
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Content: content, IsError: isErr})
		}
	}
	msg := fmt.Sprintf("no final answer within its limit of %d LLM calls", budget)
	r.fail(ctx, msg)
	return errors.New(msg)
}

// execute proposes one tool call; the engine judges it and runs it or
// says why not. Call ids are ours: the model's may repeat.
func (r *run) execute(ctx context.Context, call llm.ToolCall) (string, bool, error) {
	r.seq++
	id := fmt.Sprintf("c%d", r.seq)
	r.log.Debug("proposing a tool call", "call", id, "tool", call.Name)
	res, err := r.client.SubAgentExecuteTool(ctx, &pb.SubAgentToolRequest{Token: r.token, CallId: id, ToolName: call.Name, ArgumentsJson: call.Arguments})
	if err != nil {
		return "", false, err
	}
	return res.GetContent(), res.GetIsError(), nil
}

// fail reports a failure, best effort: the engine may already be gone.
func (r *run) fail(ctx context.Context, msg string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reportTimeout)
	defer cancel()
	if _, err := r.client.SubAgentFailed(ctx, &pb.SubAgentFailedRequest{Token: r.token, Error: textcut.Truncate(msg, 4000)}); err != nil {
		r.log.Warn("could not report the failure to the engine", "error", err)
	}
}
