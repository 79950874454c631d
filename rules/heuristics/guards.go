package heuristics

import (
	"strconv"
	"strings"
)

// Guards the agent would slip past, and traces it would erase.
//
// An AI coding agent started by this one with its approvals or sandbox
// off (claude --dangerously-skip-permissions, gemini --yolo, codex
// --dangerously-bypass-approvals-and-sandbox, q chat --trust-all-tools)
// runs whatever its prompt leads it to, and none of it is judged: it is
// defense.agent-guard-off, blocked. The same agents asked a question, or
// run with their own checks on, are everyday.
//
// Anti-forensics (defense.anti-forensics, escalated): backdating a file
// outside the workspace (touch -r / -d / -t), naming a process after a
// kernel thread or daemon (exec -a '[kworker/0:1]'), running a program
// from /dev/shm, and running a program then deleting it in the same
// line. Touching files in the workspace, exec in scripts and cleaning up
// build output are everyday.

// agentGuardOff says which option of an AI agent CLI turns its approvals
// or sandbox off, or "".
func agentGuardOff(v *cmdView) string {
	found := ""
	has := func(flags ...string) {
		for _, f := range flags {
			if long, ok := strings.CutPrefix(f, "--"); found == "" && (ok && hasLongFlag(v.args, long) || !ok && containsArg(v.args, f)) {
				found = f
			}
		}
	}
	value := func(short byte, long string, bad ...string) {
		flagValues(v.args, short, long, func(val string) {
			for _, b := range bad {
				if found == "" && strings.EqualFold(val, b) {
					found = "--" + long + " " + val
				}
			}
		})
	}
	switch v.prog {
	case "claude":
		has("--dangerously-skip-permissions", "--allow-dangerously-skip-permissions")
		value(0, "permission-mode", "bypassPermissions")
	case "gemini", "qwen":
		has("--yolo", "-y")
		value(0, "approval-mode", "yolo")
	case "codex":
		has("--dangerously-bypass-approvals-and-sandbox", "--yolo")
		value('s', "sandbox", "danger-full-access")
	case "q", "kiro-cli":
		has("--trust-all-tools")
	case "cursor-agent":
		has("--force", "-f")
	case "copilot":
		has("--allow-all-tools", "--allow-all-paths")
	case "amp":
		has("--dangerously-allow-all")
	case "crush", "opencode":
		has("--yolo", "--dangerously-skip-permissions")
	case "aider":
		has("--yes-always")
	}
	return found
}

// checkGuards judges one command for agents run unguarded and for
// anti-forensics.
func (s *scan) checkGuards(cs *cmdScan, v *cmdView) {
	if flag := agentGuardOff(v); flag != "" {
		s.add(rDefAgentGuard, "runs the "+v.prog+" agent with its approvals off ("+flag+"): whatever its prompt leads it to do runs unjudged; refuse it, or run it with its checks on",
			v.prog+" "+evJoin(v.args))
	}
	if !s.enabled(rDefAntiForensics) {
		return
	}
	if what := antiForensics(cs, v); what != "" {
		s.add(rDefAntiForensics, what+": that only hides what happened; a human should approve it", v.c.Name+" "+evJoin(v.c.Args))
	}
}

// antiForensics says how v hides activity, or "".
func antiForensics(cs *cmdScan, v *cmdView) string {
	if strings.HasPrefix(v.c.Name, "/dev/shm/") {
		return "runs " + v.c.Name + " from shared memory, where nothing is left on disk"
	}
	if strings.IndexByte(v.c.Name, '/') >= 0 { // a program run by its path
		if name := baseName(v.c.Name); len(name) > 2 && name[0] == '[' && masqueradeName(name) {
			return "runs " + v.c.Name + ", a program named like a kernel thread"
		}
		if dir := dotsOnlyDir(v.c.Name); dir != "" {
			return "runs " + v.c.Name + " from a directory named " + strconv.Quote(dir) + ", made to be overlooked"
		}
		// A hidden program, or one in a hidden directory, in a temporary
		// directory (/tmp/.x, /var/tmp/.cache/agent): a build's or a
		// test's output has a name it shows.
		if p := cs.resolveIn(v.c, v.c.Name).Abs; (strings.HasPrefix(p, "/tmp/") || strings.HasPrefix(p, "/var/tmp/")) &&
			(hiddenName(baseName(p)) || hiddenName(baseName(parentDir(p)))) {
			return "runs " + v.c.Name + ", a hidden program in a temporary directory"
		}
	}
	if v.c.Program == "exec" { // the view's program is the one exec runs
		name := ""
		flagValues(v.c.Args, 'a', "", func(n string) { name = n })
		if masqueradeName(name) {
			return "runs a program under the name " + name + ", a kernel thread's or a system daemon's"
		}
	}
	switch v.prog {
	case "git":
		ops := v.plainOperands()
		switch {
		case len(ops) >= 2 && ops[0] == "reflog" && ops[1] == "expire" && (containsArg(v.args, "--expire=now") || containsArg(v.args, "--expire-unreachable=now")):
			return "erases git's reflog, the record of where every branch has been"
		case len(ops) >= 1 && ops[0] == "update-index" && (containsArg(v.args, "--assume-unchanged") || containsArg(v.args, "--skip-worktree")):
			return "hides a file's changes from git status, diff and review (update-index " + v.args[1] + ")"
		}
	case "touch":
		stamped := hasShortFlag(v.args, 'r') || hasShortFlag(v.args, 'd') || hasShortFlag(v.args, 't') ||
			hasLongFlag(v.args, "reference") || hasLongFlag(v.args, "date")
		if !stamped {
			return ""
		}
		for _, op := range operands(v.args, "rdt", []string{"--reference", "--date"}) {
			if !cs.inWorkspaceOrTmp(v.c, op) {
				return "backdates " + op + " outside the workspace"
			}
		}
		// A project file stamped with a system file's times (touch -r
		// /bin/ls deploy.sh) is made to look as old as the system: the
		// only reason is to hide that it changed.
		ref := ""
		flagValues(v.args, 'r', "reference", func(r string) { ref = r })
		if ref != "" {
			if cs.outsideProject(v, cs.resolveIn(v.c, ref).Abs) {
				return "stamps a file with the times of the system file " + ref + ", to hide that it changed"
			}
		}
	case "rm", "shred", "srm", "unlink":
		for _, op := range v.plainOperands() {
			if ranBefore(cs, v, op) && !builtBefore(cs, v, op) {
				return "deletes " + op + " right after running it"
			}
		}
	}
	return ""
}

// builtBefore reports whether a compiler or build tool earlier in the line
// wrote path (go build -o /tmp/app … && /tmp/app && rm /tmp/app is a
// cleanup, not a trace removed).
func builtBefore(cs *cmdScan, v *cmdView, path string) bool {
	for i := range cs.views {
		u := &cs.views[i]
		if u.idx >= v.idx {
			break
		}
		switch u.prog {
		case "go", "gcc", "cc", "clang", "g++", "c++", "rustc", "cargo", "zig", "tcc", "javac", "swiftc", "ghc", "nim", "make", "ld":
			if containsArg(u.args, path) || containsArg(u.args, "-o"+path) {
				return true
			}
		}
	}
	return false
}

// dotsOnlyDir returns a directory of path named only with dots and
// blanks beyond "." and ".." ("...", ". ", ".. "), or "": a name that
// ls -a lists as if it were one of those two.
func dotsOnlyDir(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return ""
	}
	for part := range strings.SplitSeq(path[:i], "/") {
		if part != "." && part != ".." && part != "" && strings.Trim(part, ". \t") == "" {
			return part
		}
	}
	return ""
}

// masqueradeName reports process names that pose as a kernel thread
// ([kworker/0:1]) or a system daemon.
func masqueradeName(n string) bool {
	if strings.HasPrefix(n, "[") && strings.HasSuffix(n, "]") {
		return true
	}
	switch baseName(n) {
	case "sshd", "systemd", "systemd-journald", "kworker", "kthreadd", "cron", "crond", "dbus-daemon", "rsyslogd", "init", "udevd", "systemd-udevd":
		return true
	}
	return false
}

// ranBefore reports whether a command before v in the line ran the
// program at path (as written, or resolved alike).
func ranBefore(cs *cmdScan, v *cmdView, path string) bool {
	if !strings.Contains(path, "/") {
		return false // a bare name runs from PATH, not from here
	}
	target := cs.resolveIn(v.c, path).Abs
	for i := range cs.views {
		u := &cs.views[i]
		if u.idx >= v.idx {
			break
		}
		// A wrapper's program (nohup ./x) is a view of its own.
		if u.c.Name == path || strings.Contains(u.c.Name, "/") && cs.resolveIn(u.c, u.c.Name).Abs == target {
			return true
		}
	}
	return false
}

// agentSettingsOff says how a written settings file of an AI agent or
// editor turns its approvals off, or "": Claude Code's bypassPermissions
// mode or an allow rule for every command, VS Code's auto-approved chat
// tools or disabled workspace trust, Gemini CLI's auto-accept.
func agentSettingsOff(abs, content string) string {
	base, p := baseName(abs), "/"+abs // a path relative to an unknown workspace has no leading /
	if base == "config.toml" && strings.Contains(p, "/.codex/") {
		// Codex CLI: approval_policy = "never", sandbox_mode = "danger-full-access".
		c := strings.ToLower(strings.Join(strings.Fields(content), ""))
		switch {
		case strings.Contains(c, `sandbox_mode="danger-full-access"`):
			return "turns the agent's sandbox off"
		case strings.Contains(c, `approval_policy="never"`):
			return "makes the agent run every command without asking"
		}
		return ""
	}
	if !strings.HasSuffix(base, ".json") || !strings.Contains(p, "/.claude/") && !strings.Contains(p, "/.vscode/") &&
		!strings.Contains(p, "/.gemini/") && !strings.Contains(p, "/.cursor/") && base != ".claude.json" && !editorUserSettings(p) {
		return ""
	}
	// A JSON text or a jq filter alike: ."git.path" = "x" is "git.path": "x".
	c := strings.ReplaceAll(strings.Join(strings.Fields(content), ""), `"=`, `":`)
	switch {
	case strings.Contains(c, `"http.proxyStrictSSL":false`):
		return "turns off the editor's certificate checks for its proxy"
	case strings.Contains(c, `"http.proxy":"http`) && !strings.Contains(c, `"http.proxy":"http://localhost`) && !strings.Contains(c, `"http.proxy":"http://127.`):
		return "sends the editor's and its agent's web traffic through a proxy elsewhere"
	case strings.Contains(c, `"git.path":"`) && !strings.Contains(c, `"git.path":"/usr/`) && !strings.Contains(c, `"git.path":"/opt/homebrew/`):
		return "makes the editor run another program as git"
	case strings.Contains(c, `"bypassPermissions"`):
		return "sets the agent's permission mode to bypassPermissions"
	case strings.Contains(c, `"Bash(*)"`) || strings.Contains(c, `"Bash"`) && strings.Contains(c, `"allow"`):
		return "allows the agent every shell command without asking"
	case strings.Contains(c, `"chat.tools.autoApprove":true`):
		return "auto-approves every tool the editor's agent calls"
	case strings.Contains(c, `"security.workspace.trust.enabled":false`):
		return "turns off the editor's workspace trust"
	case strings.Contains(c, `"autoAccept":true`) || strings.Contains(c, `"yolo":true`):
		return "makes the agent accept its own tool calls"
	}
	return ""
}

// agentEndpoint returns the host of the model API an agent's settings
// point it at (Codex's base_url, ANTHROPIC_BASE_URL or OPENAI_BASE_URL
// in an agent's env) when it is not the vendor's own or this machine,
// else "".
func agentEndpoint(abs, content string) string {
	if !strings.Contains(abs, ".codex/") && !strings.Contains(abs, ".claude/") && !strings.Contains(abs, ".gemini/") && baseName(abs) != ".claude.json" {
		return ""
	}
	for _, key := range []string{"base_url", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL"} {
		i := strings.Index(content, key)
		if i < 0 {
			continue
		}
		rest := strings.TrimLeft(content[i+len(key):], "\" \t")
		if rest == "" || rest[0] != '=' && rest[0] != ':' {
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t\"'")
		end := strings.IndexAny(rest, "\"' \n")
		if end < 0 {
			end = len(rest)
		}
		h := urlHost(rest[:end])
		switch {
		case h == "" || isLoopbackHost(h):
		case h == "api.openai.com" || h == "api.anthropic.com" || h == "generativelanguage.googleapis.com" ||
			strings.HasSuffix(h, ".openai.azure.com") || strings.HasSuffix(h, ".amazonaws.com") || strings.HasSuffix(h, "-aiplatform.googleapis.com"):
		default:
			return h
		}
	}
	return ""
}

// editorUserSettings reports an editor's user settings file (VS Code's
// and its forks', on Linux and macOS).
func editorUserSettings(p string) bool {
	return baseName(p) == "settings.json" && (strings.Contains(p, "/Code/User/") || strings.Contains(p, "/Code - Insiders/User/") ||
		strings.Contains(p, "/Cursor/User/") || strings.Contains(p, "/VSCodium/User/") || strings.Contains(p, "/Windsurf/User/"))
}

// hiddenName reports a file name that hides itself (.x), not . or ..
func hiddenName(name string) bool {
	return len(name) > 1 && name[0] == '.' && name != ".."
}
