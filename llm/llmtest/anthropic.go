package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/parapet-dev/parapet/llm"
)

// anthropicWire is the Messages format.
type anthropicWire struct{}

type anReq struct {
	Model     string          `json:"model"`
	MaxTokens *int            `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	Stream      bool     `json:"stream"`
	Temperature *float64 `json:"temperature"`
}

type anBlk struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func (anthropicWire) decode(h http.Header, body []byte, rec *Recorded) (int, string) {
	bad := func(format string, args ...any) (int, string) {
		return http.StatusBadRequest, fmt.Sprintf(format, args...)
	}
	if h.Get("x-api-key") == "" && h.Get("Authorization") == "" {
		return http.StatusUnauthorized, "x-api-key header is required"
	}
	if h.Get("anthropic-version") == "" {
		return bad("anthropic-version: header is required")
	}
	var req anReq
	if err := json.Unmarshal(body, &req); err != nil {
		return bad("The request body is not valid JSON: %v", err)
	}
	rec.Model, rec.Stream, rec.Temperature = req.Model, req.Stream, req.Temperature
	if req.Model == "" {
		return bad("model: Field required")
	}
	if req.MaxTokens == nil {
		return bad("max_tokens: Field required")
	}
	if rec.MaxTokens = *req.MaxTokens; rec.MaxTokens < 1 {
		return bad("max_tokens: must be at least 1")
	}
	sys, ok := anText(req.System)
	if !ok {
		return bad("system: expected a string or a list of text blocks")
	}
	rec.System = sys
	if len(req.Messages) == 0 {
		return bad("messages: at least one message is required")
	}
	if req.Messages[0].Role != "user" {
		return bad("messages: first message must use the \"user\" role")
	}
	var owed []string // tool_use ids the next message must answer
	for i, m := range req.Messages {
		blocks, err := anBlocks(m.Content)
		if err != nil {
			return bad("messages.%d.content: %v", i, err)
		}
		answered := map[string]bool{}
		var msg *llm.Message // the current llm message being built
		switch m.Role {
		case "user":
			for j, b := range blocks {
				switch b.Type {
				case "text":
					if msg == nil || msg.Role != llm.RoleUser {
						rec.Messages = append(rec.Messages, llm.Message{Role: llm.RoleUser})
						msg = &rec.Messages[len(rec.Messages)-1]
					}
					msg.Content += *b.Text
				case "tool_result":
					if !contains(owed, b.ToolUseID) || answered[b.ToolUseID] {
						return bad("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, b.ToolUseID)
					}
					answered[b.ToolUseID] = true
					text, ok := anText(b.Content)
					if !ok {
						return bad("messages.%d.content.%d.content: expected a string or a list of text blocks", i, j)
					}
					rec.Messages = append(rec.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: b.ToolUseID, Content: text, IsError: b.IsError})
					msg = nil
				case "tool_use":
					return bad("messages.%d.content.%d: tool_use blocks belong in assistant messages", i, j)
				}
			}
		case "assistant":
			rec.Messages = append(rec.Messages, llm.Message{Role: llm.RoleAssistant})
			msg = &rec.Messages[len(rec.Messages)-1]
		default:
			return bad("messages.%d.role: Unexpected role %q. The Messages API accepts a top-level `system` parameter, not \"system\" as an input message role.", i, m.Role)
		}
		for _, id := range owed {
			if !answered[id] {
				return bad("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, id)
			}
		}
		owed = nil
		if m.Role != "assistant" {
			continue
		}
		for j, b := range blocks {
			switch b.Type {
			case "text":
				msg.Content += *b.Text
			case "tool_use":
				if b.ID == "" || b.Name == "" || !isObjectJSON(b.Input) {
					return bad("messages.%d.content.%d: a tool_use block needs id, name and an input object", i, j)
				}
				var args bytes.Buffer
				_ = json.Compact(&args, b.Input)
				msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: args.String()})
				owed = append(owed, b.ID)
			case "tool_result":
				return bad("messages.%d.content.%d: tool_result blocks belong in user messages", i, j)
			}
		}
	}
	if len(owed) > 0 {
		return bad("`tool_use` ids were found without `tool_result` blocks immediately after: %s.", strings.Join(owed, ", "))
	}
	for i, t := range req.Tools {
		if t.Type != "" && t.Type != "custom" {
			continue // a server tool: nothing we model
		}
		if t.Name == "" || !isObjectJSON(t.InputSchema) {
			return bad("tools.%d: needs name and an input_schema object", i)
		}
		rec.Tools = append(rec.Tools, llm.Tool{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
	}
	return 0, ""
}

// anBlocks reads message content: a non-empty string (one text block) or a
// non-empty list of blocks.
func anBlocks(raw json.RawMessage) ([]anBlk, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil, fmt.Errorf("text content must be non-empty")
		}
		return []anBlk{{Type: "text", Text: &s}}, nil
	}
	var blocks []anBlk
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, fmt.Errorf("expected a string or a list of content blocks: %v", err)
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("at least one content block is required")
	}
	for j, b := range blocks {
		if b.Type == "text" && (b.Text == nil || *b.Text == "") {
			return nil, fmt.Errorf("%d: text content blocks must be non-empty", j)
		}
	}
	return blocks, nil
}

// anText reads a system prompt or tool result: absent, a string, or a list
// of text blocks.
func anText(raw json.RawMessage) (string, bool) {
	if isNullJSON(raw) {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var blocks []anBlk
	if json.Unmarshal(raw, &blocks) != nil {
		return "", false
	}
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Type == "text" && bl.Text != nil {
			b.WriteString(*bl.Text)
		}
	}
	return b.String(), true
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func (anthropicWire) writeError(w http.ResponseWriter, status int, msg string) {
	typ := "invalid_request_error"
	switch {
	case status == 401:
		typ = "authentication_error"
	case status == 403:
		typ = "permission_error"
	case status == 404:
		typ = "not_found_error"
	case status == 413:
		typ = "request_too_large"
	case status == 429:
		typ = "rate_limit_error"
	case status == 529:
		typ = "overloaded_error"
	case status >= 500:
		typ = "api_error"
	}
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}

// anUsage is the wire usage: input_tokens excludes the cached part.
func anUsage(u llm.Usage) map[string]any {
	return map[string]any{
		"input_tokens":                max(0, u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens),
		"cache_creation_input_tokens": u.CacheWriteTokens,
		"cache_read_input_tokens":     u.CacheReadTokens,
		"output_tokens":               u.OutputTokens,
	}
}

func (a answer) anStop() string {
	switch {
	case a.stop != "":
		return a.stop
	case len(a.calls) > 0:
		return "tool_use"
	default:
		return "end_turn"
	}
}

func (anthropicWire) body(rec Recorded, a answer) any {
	content := []any{}
	if a.text != "" {
		content = append(content, map[string]any{"type": "text", "text": a.text})
	}
	for _, tc := range a.calls {
		content = append(content, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": json.RawMessage(tc.Arguments)})
	}
	return map[string]any{
		"id": fmt.Sprintf("msg_%d", a.id), "type": "message", "role": "assistant", "model": rec.Model,
		"content": content, "stop_reason": a.anStop(), "stop_sequence": nil, "usage": anUsage(a.usage),
	}
}

func (anthropicWire) events(rec Recorded, a answer) []string {
	start := anUsage(a.usage)
	start["output_tokens"] = 1 // as the API does: the final count comes in message_delta
	evs := []string{
		sse("message_start", map[string]any{"type": "message_start", "message": map[string]any{
			"id": fmt.Sprintf("msg_%d", a.id), "type": "message", "role": "assistant", "model": rec.Model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": start,
		}}),
		sse("ping", map[string]any{"type": "ping"}),
	}
	idx := 0
	if a.text != "" {
		evs = append(evs, sse("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}}))
		for _, p := range pieces(a.text, 8) {
			evs = append(evs, sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": p}}))
		}
		evs = append(evs, sse("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx}))
		idx++
	}
	for _, tc := range a.calls {
		evs = append(evs, sse("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": map[string]any{}}}))
		for _, p := range pieces(tc.Arguments, 6) {
			evs = append(evs, sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}}))
		}
		evs = append(evs, sse("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx}))
		idx++
	}
	return append(evs,
		sse("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": a.anStop(), "stop_sequence": nil}, "usage": map[string]any{"output_tokens": a.usage.OutputTokens}}),
		sse("message_stop", map[string]any{"type": "message_stop"}),
	)
}
