package heuristics

import "strings"

// Coding agents' own configuration. A hijacked agent that rewrites its
// settings (or another agent's) outlives the turn that did it: every
// later session asks less, runs more, or talks to a server the attacker
// runs. What a change to such a file brings in is read from the line
// that makes it:
//
//   - approvals or the sandbox turned off (bypassPermissions, autoApprove,
//     yes-always, approval_policy "never", danger-full-access): as the
//     same flags on the command line (defense.agent-guard-off, block);
//   - the allow-list opened to programs that can do anything (Bash(curl:*),
//     Bash(*)) or the deny-list emptied, commands the agent runs by itself
//     (hooks, notify) that reach the network or credentials, and MCP
//     servers from a host outside trusted_hosts or from a package that is
//     not a known publisher's (defense.agent-config, escalate).
//
// A model setting, a style rule, a test command let through
// (Bash(npm run test:*)) and the official MCP servers are everyday.

// agentConfigPaths are the configuration files of coding agents, matched
// as the end of a path.
var agentConfigPaths = []string{
	".claude/settings.json", ".claude/settings.local.json", ".claude.json", ".mcp.json",
	"Claude/claude_desktop_config.json", ".cursor/mcp.json", "Cursor/User/settings.json", "Code/User/settings.json",
	"Code/User/mcp.json", ".vscode/mcp.json", ".vscode/settings.json", ".codex/config.toml", ".gemini/settings.json",
	".aider.conf.yml", ".codeium/windsurf/mcp_config.json", ".continue/config.json", ".continue/config.yaml",
	"goose/config.yaml", "zed/settings.json", ".aws/amazonq/mcp.json", "opencode/opencode.json", "opencode.json",
	"cline_mcp_settings.json",
}

// agentConfigNames are the base names of agentConfigPaths: a path whose
// name is none of them is turned away before its directories are read.
var agentConfigNames = func() map[string]bool {
	m := map[string]bool{}
	for _, p := range agentConfigPaths {
		m[baseName(p)] = true
	}
	return m
}()

// agentConfigNameSet finds those names in code.
var agentConfigNameSet = func() *foldSet {
	names := make([]string, 0, len(agentConfigNames))
	for n := range agentConfigNames {
		names = append(names, n)
	}
	return newFoldSet(names...)
}()

// agentConfigFile reports whether abs is a coding agent's configuration.
func agentConfigFile(abs string) bool {
	if !agentConfigNames[baseName(abs)] {
		return false
	}
	for _, p := range agentConfigPaths {
		if strings.HasSuffix(abs, "/"+p) || abs == p {
			return true
		}
	}
	return false
}

// Markers of a change that turns an agent's approvals or sandbox off.
var agentBypassMarkers = newFoldSet("bypasspermissions", "dangerously", "danger-full-access", "yolo", "yes-always: true",
	"yes_always", "autoapprove", "alwaysallow", "approval_policy = \"never\"", "approval_policy=\"never\"",
	"enableallprojectmcpservers", "trust_all_tools", "\"bash(*)\"", "bash(*:*)")

// Markers of an allow-list opened to programs that do anything.
var agentWideAllow = newFoldSet("bash(curl", "bash(wget", "bash(rm", "bash(ssh", "bash(scp", "bash(sudo", "bash(bash",
	"bash(sh:", "bash(sh ", "bash(python", "bash(node", "bash(eval", "bash(nc", "bash(env")

// hookReaches marks a hook's or notify command's text that talks to the
// network, reads credentials or runs fetched or decoded code: a hook that
// runs the project's linter is everyday.
var hookReaches = newFoldSet("curl", "wget", "http://", "https://", "/dev/tcp", "nc ", "ncat", "socat", "base64", ".aws", ".ssh",
	".env", "credential", "token", "auth.json", "ssh ", "scp ", "|sh", "| sh", "|bash", "| bash", "eval", "python -c", "python3 -c",
	"node -e", "npx -y", "nohup")

// officialMCPPackages are the publishers of MCP servers an agent may
// add without a question: the protocol's reference servers and the
// agents' and large vendors' own.
var officialMCPPackages = []string{"@modelcontextprotocol/", "@anthropic-ai/", "@playwright/mcp", "@github/", "@upstash/context7-mcp",
	"mcp-server-fetch", "mcp-server-git", "mcp-server-time", "mcp-server-sqlite"}

// checkAgentConfig judges a command line that changes a coding agent's
// configuration, and claude mcp add.
func (s *scan) checkAgentConfig(cs *cmdScan, v *cmdView) {
	if v.prog == "claude" {
		s.checkMCPAdd(v)
		return
	}
	if !s.enabled(rDefAgentConfig) && !s.enabled(rDefAgentGuard) || !cs.changesAgentConfig(v) {
		return
	}
	text := cs.act.Command
	ev := v.prog + " " + evJoin(v.args)
	switch {
	case agentBypassMarkers.in(text) && s.enabled(rDefAgentGuard):
		s.add(rDefAgentGuard, v.prog+" changes a coding agent's settings to skip its approvals or sandbox: whatever its prompt leads it to do would run unjudged; refuse it", ev)
	case !s.enabled(rDefAgentConfig):
	case agentWideAllow.in(text) || emptiesDenyList(text):
		s.add(rDefAgentConfig, v.prog+" opens a coding agent's allow-list to programs that can do anything (or empties its deny-list): later sessions would run them without asking; a human should approve it", ev)
	case (strings.Contains(text, "hooks") && strings.Contains(text, "command") || strings.Contains(text, "notify")) && hookReaches.in(text):
		s.add(rDefAgentConfig, v.prog+" gives a coding agent a command it runs by itself (a hook or notify command) that reaches the network, credentials or fetched code, at every step of every session; a human should approve it", ev)
	case mentionsMCP(text):
		if what := s.unknownMCPServer(text); what != "" {
			s.add(rDefAgentConfig, v.prog+" adds an MCP server "+what+" to a coding agent: its tools run with the agent's rights in every session; a human should approve it", ev)
		}
	}
}

// changesAgentConfig reports whether v writes a coding agent's
// configuration: among its write targets (a redirection, tee, sponge,
// cp/mv/install to it, an in-place edit), or by code that names the file
// and writes (a path built from expanduser is no write target).
func (cs *cmdScan) changesAgentConfig(v *cmdView) bool {
	for _, t := range cs.writeTargets(v) {
		if agentConfigNames[baseName(t)] && agentConfigFile(cs.resolveIn(v.c, t).Abs) {
			return true
		}
	}
	if v.codeAll(traitWrites|traitDataFile) && agentConfigNameSet.in(v.code) && codeWriteSet.in(v.code) {
		for _, p := range agentConfigPaths {
			if strings.Contains(v.code, p) {
				return true
			}
		}
	}
	return false
}

// emptiesDenyList reports a change that sets an agent's deny-list to
// nothing (.permissions.deny = [], "deny": []).
func emptiesDenyList(text string) bool {
	t := strings.Join(strings.Fields(text), "")
	return strings.Contains(t, "deny=[]") || strings.Contains(t, `"deny":[]`) || strings.Contains(t, "deny|=[]")
}

// mentionsMCP reports text that configures MCP servers.
func mentionsMCP(text string) bool {
	l := strings.ToLower(text)
	return strings.Contains(l, "mcpservers") || strings.Contains(l, "\"servers\"") || strings.Contains(l, ".servers") ||
		strings.Contains(l, "context_servers") || strings.Contains(l, "mcp")
}

// unknownMCPServer describes a server the text adds that runs from a
// host that is neither this machine nor in trusted_hosts, or from a
// package runner (npx, uvx, bunx) with no known publisher's package; "".
func (s *scan) unknownMCPServer(text string) string {
	for _, h := range urlHosts(text) {
		if !isLoopbackHost(h) && !s.an.trusted.match(h) {
			return "served from " + h + ", a host outside trusted_hosts"
		}
	}
	l := strings.ToLower(text)
	if !strings.Contains(l, "npx") && !strings.Contains(l, "uvx") && !strings.Contains(l, "bunx") && !strings.Contains(l, "pipx") {
		return ""
	}
	for _, p := range officialMCPPackages {
		if strings.Contains(l, p) {
			return ""
		}
	}
	return "run from a package of no known publisher"
}

// checkMCPAdd judges claude mcp add / add-json: a server from another
// host, or one a package runner fetches from no known publisher.
func (s *scan) checkMCPAdd(v *cmdView) {
	ops := v.plainOperands()
	if len(ops) < 3 || ops[0] != "mcp" || ops[1] != "add" && ops[1] != "add-json" || !s.enabled(rDefAgentConfig) {
		return
	}
	if what := s.unknownMCPServer(strings.Join(v.args, " ")); what != "" {
		s.add(rDefAgentConfig, "claude mcp "+ops[1]+" adds an MCP server "+what+": its tools run with the agent's rights in every session; a human should approve it",
			"claude "+evJoin(v.args))
	}
}
