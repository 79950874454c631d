package hook

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// toolMapping says which Parapet action an agent's tool is, and which of
// its argument names carry a role under another name than the shield
// reads (Gemini CLI's dir_path is a directory; the shield knows path).
type toolMapping struct {
	action  string
	renames map[string]string
}

// claudeTools are Claude Code's built-in tools (tool_input fields in
// docs/hooks.md). Their argument names (file_path, notebook_path, path,
// command, url) are already ones the shield reads.
var claudeTools = map[string]toolMapping{
	"Bash":         {action: "execute_command"},
	"Read":         {action: "read_file"},
	"NotebookRead": {action: "read_file"},
	"Write":        {action: "write_file"},
	"Edit":         {action: "edit_file"},
	"MultiEdit":    {action: "edit_file"},
	"NotebookEdit": {action: "edit_file"},
	"Glob":         {action: "glob_files"},
	"Grep":         {action: "search_files"},
	"LS":           {action: "list_directory"},
	"WebFetch":     {action: "web_fetch"},
	"WebSearch":    {action: "web_search"},
	"Task":         {action: "spawn_agent"},
}

// geminiDir is Gemini CLI's directory argument: dir_path since the file
// system tools were renamed, directory or path before.
var geminiDir = map[string]string{"dir_path": "path"}

// geminiTools are Gemini CLI's built-in tools.
var geminiTools = map[string]toolMapping{
	"run_shell_command":   {action: "execute_command", renames: map[string]string{"dir_path": "cwd"}},
	"read_file":           {action: "read_file", renames: map[string]string{"absolute_path": "path"}},
	"read_many_files":     {action: "read_file"},
	"write_file":          {action: "write_file"},
	"replace":             {action: "edit_file"},
	"list_directory":      {action: "list_directory", renames: geminiDir},
	"glob":                {action: "glob_files", renames: geminiDir},
	"search_file_content": {action: "search_files", renames: geminiDir},
	"grep_search":         {action: "search_files", renames: geminiDir},
	"web_fetch":           {action: "web_fetch"},
	"google_web_search":   {action: "web_search"},
	"save_memory":         {action: "memory_write"},
}

// Mapped is the action a tool call becomes.
type Mapped struct {
	Action  string
	Payload []byte
}

// Map turns a tool call into a Parapet action. A tool this table does not
// know is an action of its own name (its arguments as sent), which the
// policy judges by its defaults for unknown actions. MCP tools become
// "mcp:SERVER/TOOL", the name the MCP gateway gives them, so one policy
// rule covers a tool however the agent reaches it.
func Map(c *Call) (Mapped, error) {
	if server, tool, ok := mcpName(c); ok {
		return Mapped{Action: "mcp:" + server + "/" + tool, Payload: c.ToolInput}, nil
	}
	tools := claudeTools
	if c.Agent == GeminiCLI {
		tools = geminiTools
	}
	m, known := tools[c.ToolName]
	if !known {
		return Mapped{Action: c.ToolName, Payload: c.ToolInput}, nil
	}
	payload := c.ToolInput
	if len(m.renames) > 0 || (c.Agent == GeminiCLI && c.ToolName == "web_fetch") {
		var err error
		if payload, err = rewrite(payload, m.renames, c.Agent == GeminiCLI && c.ToolName == "web_fetch"); err != nil {
			return Mapped{}, err
		}
	}
	return Mapped{Action: m.action, Payload: payload}, nil
}

// mcpName finds the server and tool of an MCP tool: from Gemini CLI's
// mcp_context, else from the mcp__SERVER__TOOL name both agents use.
func mcpName(c *Call) (server, tool string, ok bool) {
	if c.MCPServer != "" && c.MCPTool != "" {
		return c.MCPServer, c.MCPTool, true
	}
	rest, found := strings.CutPrefix(c.ToolName, "mcp__")
	if !found {
		return "", "", false
	}
	server, tool, found = strings.Cut(rest, "__")
	if !found || server == "" || tool == "" {
		return "", "", false
	}
	return server, tool, true
}

// rewrite renames arguments to the names the shield reads (unless the
// target name is already taken: then both stay, and the shield sees both)
// and, for Gemini CLI's web_fetch, lists the URLs its prompt names under
// "urls", because that tool has no URL argument of its own.
func rewrite(input []byte, renames map[string]string, promptURLs bool) ([]byte, error) {
	members, err := objectMembers(input)
	if err != nil {
		return nil, &InputError{Msg: "tool_input: " + err.Error()}
	}
	taken := make(map[string]bool, len(members))
	for _, m := range members {
		taken[m.key] = true
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	write := func(key string, value []byte) {
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(value)
	}
	var urls []string
	for _, m := range members {
		key := m.key
		if to, ok := renames[key]; ok && !taken[to] {
			key = to
		}
		write(key, m.value)
		if promptURLs && m.key == "prompt" {
			var prompt string
			if json.Unmarshal(m.value, &prompt) == nil {
				urls = append(urls, findURLs(prompt)...)
			}
		}
	}
	if len(urls) > 0 && !taken["urls"] {
		v, _ := json.Marshal(urls)
		write("urls", v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// findURLs lists the http(s) URLs written in free text: from the scheme
// (any case) to the first space, quote or bracket, without trailing
// punctuation.
func findURLs(text string) []string {
	var out []string
	for i := 0; i < len(text); i++ {
		if !hasPrefixFold(text[i:], "http://") && !hasPrefixFold(text[i:], "https://") {
			continue
		}
		end := i
		for end < len(text) && !strings.ContainsRune(" \t\r\n\"'<>()[]{}`", rune(text[end])) {
			end++
		}
		if u := strings.TrimRight(text[i:end], ".,;:!?"); len(u) > len("https://") {
			out = append(out, u)
		}
		i = end
	}
	return out
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// Env is who runs the agent, and where.
type Env struct {
	Home, User, Tenant string
	// ProjectDir is the project root as the agent gives it to its hooks
	// (CLAUDE_PROJECT_DIR, GEMINI_PROJECT_DIR). It is the workspace even
	// after the agent's shell has changed directory; without it, cwd is.
	ProjectDir string
}

// Request builds the EvaluateRequest for a call: the project (else cwd) is
// the workspace, home is the user's, and the agent's session id and tool
// call id travel along so that the audit log shows them. A shell command
// run away from the workspace carries its directory as "cwd".
func Request(c *Call, m Mapped, env Env) *pb.EvaluateRequest {
	workspace := c.Cwd
	if filepath.IsAbs(env.ProjectDir) {
		workspace = filepath.Clean(env.ProjectDir)
	}
	payload := m.Payload
	if workspace != c.Cwd && m.Action == "execute_command" {
		payload = withWorkingDir(payload, c.Cwd)
	}
	return &pb.EvaluateRequest{
		ActionType:  m.Action,
		PayloadJson: string(payload),
		SessionId:   c.SessionID,
		RequestId:   c.ToolUseID,
		Caller: &pb.CallerContext{
			Tenant:        env.Tenant,
			UserId:        env.User,
			WorkspaceRoot: workspace,
			HomeDir:       env.Home,
			AgentName:     string(c.Agent),
		},
		Context: map[string]string{"hook_agent": string(c.Agent), "hook_tool": c.ToolName},
	}
}

// withWorkingDir adds "cwd": dir to a command's arguments unless they
// already name a working directory.
func withWorkingDir(payload []byte, dir string) []byte {
	members, err := objectMembers(payload)
	if err != nil {
		return payload // the shield reports what is wrong with it
	}
	for _, m := range members {
		switch m.key {
		case "cwd", "working_dir", "workdir", "dir", "directory":
			return payload
		}
	}
	return encodeObject(append(members, member{key: "cwd", value: marshal(dir)}))
}
