// Package llm talks to language models for Parapet: the sandboxed agent
// (streamed text and tool calls) and shieldd's Tier 2 evaluator (one JSON
// answer). Three providers share one interface: any OpenAI-compatible chat
// completions endpoint, Anthropic Messages, and a scripted provider that
// replays a YAML file for offline runs and tests.
//
// Every failure is an *Error whose kind callers test with errors.Is:
// ErrRateLimited, ErrUnavailable (which ErrTimeout also matches), ErrAuth,
// ErrBadRequest, ErrBadResponse. Nothing here guesses an answer when the
// provider's reply can't be read: it is an error, so callers fail closed.
package llm

import (
	"context"
	"encoding/json"
)

// Role is the author of a Message. The system prompt is not a message: it
// goes in Request.System, because Anthropic takes it outside the list.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool carries a tool's result back to the model; ToolCallID names
	// the call it answers.
	RoleTool Role = "tool"
)

// Message is one turn of the conversation.
type Message struct {
	Role    Role
	Content string
	// ToolCalls are the calls an assistant turn proposed; they must be sent
	// back unchanged so the model can match results to them.
	ToolCalls []ToolCall
	// ToolCallID, for RoleTool, is the ToolCall.ID being answered.
	ToolCallID string
	// IsError marks a tool result as a failure (Anthropic's is_error; the
	// OpenAI format has no such flag and ignores it).
	IsError bool
}

// ToolCall is a call the model asked for.
type ToolCall struct {
	ID   string
	Name string
	// Arguments is the JSON object text as the model produced it. It is not
	// validated: OpenAI-compatible models can emit broken JSON, and the
	// gate judging the call must treat that as hostile input anyway.
	Arguments string
}

// Tool is a function the model may call.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments object; nil means an
	// object with no properties.
	Parameters json.RawMessage
}

// Request is one round trip to the model.
type Request struct {
	// Model overrides the provider's configured model for this call.
	Model    string
	System   string
	Messages []Message
	Tools    []Tool
	// MaxTokens bounds the answer; 0 means the provider's default (Anthropic
	// requires a value, so 4096 is sent there).
	MaxTokens   int
	Temperature *float64
	// JSON asks for a JSON object answer where the provider has such a mode
	// (OpenAI's response_format json_object, which also requires the word
	// "JSON" somewhere in the prompt). Anthropic has none: say so in the prompt.
	JSON bool
}

// Usage counts the tokens of one call. InputTokens is every prompt token,
// cache reads and writes included, whatever the provider's own convention.
type Usage struct {
	InputTokens      int
	OutputTokens     int
	CacheReadTokens  int
	CacheWriteTokens int
}

// Add returns the sum of two usages, for totals over a session.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
	}
}

// Stop reasons, the same for every provider. A reason a provider sends that
// has no equivalent here is passed through as the provider spelled it.
const (
	StopEndTurn       = "end_turn"
	StopMaxTokens     = "max_tokens"
	StopToolCalls     = "tool_calls"
	StopContentFilter = "content_filter"
)

// Response is the model's answer to one Request.
type Response struct {
	Text       string
	ToolCalls  []ToolCall
	Usage      Usage
	StopReason string
}

// Provider is one configured model endpoint. Implementations are safe for
// concurrent use.
type Provider interface {
	// Name is "openai", "anthropic" or "scripted".
	Name() string
	// Model is the configured model name.
	Model() string
	// Complete performs one round trip. onText, if not nil, receives the
	// answer's text as it streams in, in order, on the calling goroutine.
	// Once onText has been called the call is never retried, so a caller
	// never sees text twice.
	Complete(ctx context.Context, req Request, onText func(string)) (Response, error)
}
