package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/parapet-dev/parapet/llm"
)

// openAIWire is the chat completions format.
type openAIWire struct{}

type oaReq struct {
	Model    string  `json:"model"`
	Messages []oaMsg `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           int      `json:"max_tokens"`
	MaxCompletionTokens int      `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
	ResponseFormat      *struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

type oaMsg struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
			// The API wants the arguments as a string of JSON, never the
			// object itself: the decoder refuses anything else.
			Arguments *string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ToolCallID string `json:"tool_call_id"`
}

func (openAIWire) decode(_ http.Header, body []byte, rec *Recorded) (int, string) {
	bad := func(format string, args ...any) (int, string) {
		return http.StatusBadRequest, fmt.Sprintf(format, args...)
	}
	var req oaReq
	if err := json.Unmarshal(body, &req); err != nil {
		return bad("We could not parse the JSON body of your request: %v", err)
	}
	rec.Model, rec.Stream, rec.Temperature = req.Model, req.Stream, req.Temperature
	rec.MaxTokens = max(req.MaxTokens, req.MaxCompletionTokens)
	rec.IncludeUsage = req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	if req.Model == "" {
		return bad("you must provide a model parameter")
	}
	if len(req.Messages) == 0 {
		return bad("'messages' must contain at least one message")
	}
	if req.StreamOptions != nil && !req.Stream {
		return bad("The 'stream_options' parameter is only allowed when 'stream' is enabled.")
	}
	var system []string
	pending := map[string]bool{} // tool calls still owed a tool message
	for i, m := range req.Messages {
		if len(pending) > 0 && m.Role != "tool" {
			return bad("messages[%d]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; missing: %s", i, keys(pending))
		}
		text, ok := oaContent(m.Content)
		if !ok {
			return bad("messages[%d].content: expected a string, null or an array of text parts", i)
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "user":
			if isNullJSON(m.Content) {
				return bad("messages[%d]: a user message needs content", i)
			}
			rec.Messages = append(rec.Messages, llm.Message{Role: llm.RoleUser, Content: text})
		case "assistant":
			if isNullJSON(m.Content) && len(m.ToolCalls) == 0 {
				return bad("messages[%d]: an assistant message needs content or tool_calls", i)
			}
			msg := llm.Message{Role: llm.RoleAssistant, Content: text}
			for j, tc := range m.ToolCalls {
				if tc.ID == "" || tc.Type != "function" || tc.Function.Name == "" || tc.Function.Arguments == nil {
					return bad("messages[%d].tool_calls[%d]: needs id, type \"function\", function.name and function.arguments", i, j)
				}
				pending[tc.ID] = true
				msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: *tc.Function.Arguments})
			}
			rec.Messages = append(rec.Messages, msg)
		case "tool":
			if !pending[m.ToolCallID] {
				return bad("messages[%d]: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id %q)", i, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
			rec.Messages = append(rec.Messages, llm.Message{Role: llm.RoleTool, Content: text, ToolCallID: m.ToolCallID})
		default:
			return bad("messages[%d]: invalid role %q", i, m.Role)
		}
	}
	if len(pending) > 0 {
		return bad("an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; missing: %s", keys(pending))
	}
	rec.System = strings.Join(system, "\n\n")
	for i, t := range req.Tools {
		if t.Type != "function" || t.Function.Name == "" {
			return bad("tools[%d]: needs type \"function\" and function.name", i)
		}
		if t.Function.Parameters != nil && !isObjectJSON(t.Function.Parameters) {
			return bad("tools[%d].function.parameters: must be a JSON Schema object", i)
		}
		rec.Tools = append(rec.Tools, llm.Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	if f := req.ResponseFormat; f != nil {
		switch f.Type {
		case "text", "json_schema":
		case "json_object":
			rec.JSONMode = true
			if !strings.Contains(strings.ToLower(rec.Prompt()), "json") {
				return bad("'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.")
			}
		default:
			return bad("response_format.type: invalid value %q", f.Type)
		}
	}
	return 0, ""
}

// oaContent reads message content: a string, null, or text parts.
func oaContent(raw json.RawMessage) (string, bool) {
	if isNullJSON(raw) {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), true
}

func (openAIWire) writeError(w http.ResponseWriter, status int, msg string) {
	typ, code := "invalid_request_error", any(nil)
	switch {
	case status == 401:
		code = "invalid_api_key"
	case status == 404:
		code = "model_not_found"
	case status == 429:
		typ, code = "requests", "rate_limit_exceeded"
	case status >= 500:
		typ = "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
}

func oaUsage(u llm.Usage) map[string]any {
	return map[string]any{
		"prompt_tokens":         u.InputTokens,
		"completion_tokens":     u.OutputTokens,
		"total_tokens":          u.InputTokens + u.OutputTokens,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.CacheReadTokens},
	}
}

func (a answer) oaFinish() string {
	switch {
	case a.stop != "":
		return a.stop
	case len(a.calls) > 0:
		return "tool_calls"
	default:
		return "stop"
	}
}

func (openAIWire) body(rec Recorded, a answer) any {
	msg := map[string]any{"role": "assistant", "content": nil}
	if a.text != "" || len(a.calls) == 0 {
		msg["content"] = a.text
	}
	if len(a.calls) > 0 {
		var calls []any
		for _, tc := range a.calls {
			calls = append(calls, map[string]any{"id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}})
		}
		msg["tool_calls"] = calls
	}
	return map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", a.id), "object": "chat.completion", "created": time.Now().Unix(), "model": rec.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": a.oaFinish()}},
		"usage":   oaUsage(a.usage),
	}
}

func (openAIWire) events(rec Recorded, a answer) []string {
	id, created := fmt.Sprintf("chatcmpl-%d", a.id), time.Now().Unix()
	chunk := func(delta map[string]any, finish any) string {
		return sse("", map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": rec.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})
	}
	evs := []string{chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
	for _, p := range pieces(a.text, 8) {
		evs = append(evs, chunk(map[string]any{"content": p}, nil))
	}
	for i, tc := range a.calls {
		// The first fragment names the call; the arguments follow in pieces.
		evs = append(evs, chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": ""},
		}}}, nil))
		for _, p := range pieces(tc.Arguments, 6) {
			evs = append(evs, chunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": p},
			}}}, nil))
		}
	}
	evs = append(evs, chunk(map[string]any{}, a.oaFinish()))
	if rec.IncludeUsage {
		evs = append(evs, sse("", map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": rec.Model,
			"choices": []any{}, "usage": oaUsage(a.usage),
		}))
	}
	return append(evs, "data: [DONE]\n\n")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func isNullJSON(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

func isObjectJSON(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

func keys(m map[string]bool) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}
