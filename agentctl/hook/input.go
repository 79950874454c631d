// Package hook makes Parapet the pre-tool hook of agents people already
// run: Claude Code (PreToolUse) and Gemini CLI (BeforeTool). The agent
// starts `agentctl hook AGENT` before every tool call with the call as
// JSON on stdin; the hook maps the tool to a Parapet action, asks the
// shield and answers in the agent's own format. Anything that goes wrong
// is a deny (or, when configured, an ask): never an allow.
//
// docs/hooks.md records the agents' schemas and the versions followed.
package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Agent names an agent whose hook protocol we speak.
type Agent string

const (
	ClaudeCode Agent = "claude-code"
	GeminiCLI  Agent = "gemini-cli"
)

// Agents lists the supported agents, for usage messages.
var Agents = []Agent{ClaudeCode, GeminiCLI}

// event is the hook event each agent fires before a tool runs.
func (a Agent) event() string {
	if a == GeminiCLI {
		return "BeforeTool"
	}
	return "PreToolUse"
}

// MaxInputBytes bounds the hook input read from stdin. A Write of a large
// file arrives whole; past this the call is denied, never cut short.
const MaxInputBytes = 16 << 20

// Call is one proposed tool call as the agent's hook reports it.
type Call struct {
	Agent     Agent
	SessionID string
	// Cwd is the agent's working directory: the workspace the action's
	// relative paths resolve against.
	Cwd       string
	ToolName  string
	ToolUseID string // Claude Code only
	// ToolInput is the tool's arguments, a JSON object as sent.
	ToolInput []byte
	// MCPServer and MCPTool name an MCP tool when the agent says so
	// (Gemini CLI's mcp_context).
	MCPServer, MCPTool string
}

// InputError is hook input that cannot be judged; it names what is wrong.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return "hook input: " + e.Msg }

func inputErrorf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// Parse reads and validates one hook input. Unknown fields are ignored
// (agents add them between versions); the fields the decision depends on
// must be present and well-formed.
func Parse(agent Agent, data []byte) (*Call, error) {
	if len(data) > MaxInputBytes {
		return nil, inputErrorf("larger than %d bytes", MaxInputBytes)
	}
	if !utf8.Valid(data) {
		return nil, inputErrorf("not valid UTF-8")
	}
	members, err := objectMembers(data)
	if err != nil {
		return nil, inputErrorf("%v", err)
	}
	c := &Call{Agent: agent}
	var event string
	var sawInput bool
	for _, m := range members {
		switch m.key {
		case "hook_event_name":
			event, err = stringValue(m)
		case "session_id":
			c.SessionID, err = stringValue(m)
		case "cwd":
			c.Cwd, err = stringValue(m)
		case "tool_name":
			c.ToolName, err = stringValue(m)
		case "tool_use_id":
			c.ToolUseID, err = stringValue(m)
		case "tool_input":
			sawInput = true
			if _, err = objectMembers(m.value); err != nil {
				err = fmt.Errorf("tool_input: %w", err)
			}
			c.ToolInput = m.value
		case "mcp_context":
			c.MCPServer, c.MCPTool, err = mcpContext(m.value)
		}
		if err != nil {
			return nil, inputErrorf("%v", err)
		}
	}
	switch {
	case event != agent.event():
		if event == "" {
			return nil, inputErrorf("hook_event_name is missing (want %s)", agent.event())
		}
		return nil, inputErrorf("hook_event_name is %q; %s hooks judge %s", event, agent, agent.event())
	case strings.TrimSpace(c.ToolName) == "":
		return nil, inputErrorf("tool_name is missing or empty")
	case !sawInput:
		return nil, inputErrorf("tool_input is missing")
	case c.Cwd == "":
		return nil, inputErrorf("cwd is missing: relative paths could not be resolved")
	case !filepath.IsAbs(c.Cwd):
		return nil, inputErrorf("cwd %q is not an absolute path", c.Cwd)
	}
	c.Cwd = filepath.Clean(c.Cwd)
	return c, nil
}

func stringValue(m member) (string, error) {
	var s string
	if err := json.Unmarshal(m.value, &s); err != nil {
		return "", fmt.Errorf("%s must be a string", m.key)
	}
	return s, nil
}

// mcpContext reads Gemini CLI's mcp_context: only the server and tool
// names matter here (the connection details are for humans).
func mcpContext(raw []byte) (server, tool string, err error) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return "", "", nil
	}
	members, err := objectMembers(raw)
	if err != nil {
		return "", "", fmt.Errorf("mcp_context: %w", err)
	}
	for _, m := range members {
		switch m.key {
		case "server_name":
			server, err = stringValue(m)
		case "tool_name":
			tool, err = stringValue(m)
		}
		if err != nil {
			return "", "", fmt.Errorf("mcp_context.%w", err)
		}
	}
	return server, tool, nil
}

// member is one name/value pair of a JSON object, the value as sent.
type member struct {
	key   string
	value json.RawMessage
}

// objectMembers splits a JSON object into its members in order. A value
// that is not an object, trailing data, or a name given twice is an error:
// two "command" members could be read differently by the agent and by
// the shield, so such input is refused rather than guessed at.
func objectMembers(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, errors.New("not JSON")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, errors.New("malformed JSON object")
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("malformed JSON object")
		}
		if seen[key] {
			return nil, fmt.Errorf("member %q appears twice", key)
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("member %q: malformed value", key)
		}
		out = append(out, member{key: key, value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, errors.New("malformed JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return out, nil
}
