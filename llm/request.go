package llm

import (
	"bytes"
	"encoding/json"
)

// emptySchema is the parameters schema of a tool declared without one:
// both providers require an object schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// checkRequest refuses, before anything is sent, a request no provider
// could accept, naming the message or tool at fault.
func checkRequest(provider string, req Request) error {
	if len(req.Messages) == 0 {
		return badRequest(provider, "request has no messages")
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleUser:
		case RoleAssistant:
			for j, tc := range m.ToolCalls {
				if tc.Name == "" || tc.ID == "" {
					return badRequest(provider, "message %d (assistant): tool call %d needs both an ID and a name", i, j)
				}
			}
		case RoleTool:
			if m.ToolCallID == "" {
				return badRequest(provider, "message %d (tool): ToolCallID is empty", i)
			}
		case "system":
			return badRequest(provider, "message %d: the system prompt goes in Request.System, not in Messages", i)
		default:
			return badRequest(provider, "message %d: unknown role %q (want user, assistant or tool)", i, m.Role)
		}
		if m.Role != RoleAssistant && len(m.ToolCalls) > 0 {
			return badRequest(provider, "message %d (%s): only assistant messages carry tool calls", i, m.Role)
		}
		if m.Role != RoleTool && m.ToolCallID != "" {
			return badRequest(provider, "message %d (%s): only tool messages carry a ToolCallID", i, m.Role)
		}
	}
	for i, t := range req.Tools {
		if t.Name == "" {
			return badRequest(provider, "tool %d has no name", i)
		}
		if t.Parameters != nil && !isJSONObject(t.Parameters) {
			return badRequest(provider, "tool %d (%s): Parameters is not a JSON object", i, t.Name)
		}
	}
	if req.MaxTokens < 0 {
		return badRequest(provider, "MaxTokens is negative")
	}
	return nil
}

// schema is a tool's parameters, defaulted.
func (t Tool) schema() json.RawMessage {
	if t.Parameters == nil {
		return emptySchema
	}
	return t.Parameters
}

// isJSONObject reports whether b is one valid JSON object.
func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// stopReason maps a provider's stop reason to ours. Some OpenAI-compatible
// servers say "stop" even when they called tools.
func stopReason(raw string, hasToolCalls bool) string {
	var r string
	switch raw {
	case "stop", "end_turn", "stop_sequence":
		r = StopEndTurn
	case "length", "max_tokens", "model_context_window_exceeded":
		r = StopMaxTokens
	case "tool_calls", "function_call", "tool_use":
		r = StopToolCalls
	case "content_filter", "refusal":
		r = StopContentFilter
	default:
		r = raw
	}
	if hasToolCalls && (r == StopEndTurn || r == "") {
		r = StopToolCalls
	}
	return r
}
