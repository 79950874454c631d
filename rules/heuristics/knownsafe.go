package heuristics

import (
	"strings"

	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/shell"
)

// Known-safe commands: shell command lines built only from everyday
// programs with harmless arguments (reading and listing, editing files in
// the workspace, building and testing with the usual tools, git, a plain
// download). The pipeline lets a policy send every other shell command to
// the Tier 2 evaluator (`second_opinion`), so a model sees what the rules
// cannot judge while everyday work costs no model call.
//
// Known-safe is an allow-list: anything it does not recognise (another
// program, a value only known at run time, a path outside the workspace
// for a program that writes, code handed to an interpreter, a host given
// as an IP address, …) is not known-safe. It says nothing about danger:
// Tier 1's findings decide that, and an action with findings is never
// asked about.

// programClass says how a known program's arguments are judged.
type programClass uint8

const (
	// classReader reads or prints: its paths may be anywhere that holds
	// no credentials.
	classReader programClass = iota + 1
	// classWriter changes files: its paths must be in the workspace or /tmp.
	classWriter
	// classBuild builds, tests or formats the workspace with a known tool;
	// its subcommand must be one of the tool's everyday ones.
	classBuild
)

var knownPrograms = map[string]programClass{
	"ls": classReader, "cat": classReader, "head": classReader, "tail": classReader, "wc": classReader, "grep": classReader,
	"egrep": classReader, "fgrep": classReader, "rg": classReader, "ag": classReader, "tree": classReader, "pwd": classReader,
	"echo": classReader, "printf": classReader, "true": classReader, "false": classReader, "test": classReader, "[": classReader,
	"[[": classReader, "stat": classReader, "file": classReader, "du": classReader, "df": classReader, "diff": classReader,
	"cmp": classReader, "sort": classReader, "uniq": classReader, "cut": classReader, "tr": classReader, "column": classReader,
	"nl": classReader, "basename": classReader, "dirname": classReader, "realpath": classReader, "readlink": classReader,
	"which": classReader, "type": classReader, "whoami": classReader, "id": classReader, "date": classReader, "uname": classReader,
	"hostname": classReader, "uptime": classReader, "nproc": classReader, "free": classReader, "jq": classReader, "yq": classReader,
	"md5sum": classReader, "sha256sum": classReader, "sha1sum": classReader, "sha512sum": classReader, "xxd": classReader,
	"od": classReader, "hexdump": classReader, "find": classReader, "fd": classReader, "cd": classReader, "pushd": classReader,
	"popd": classReader, "sleep": classReader, "seq": classReader, "tac": classReader, "rev": classReader, "paste": classReader,
	"join": classReader, "comm": classReader, "fold": classReader, "expand": classReader, "fmt": classReader, "strings": classReader,
	"set": classReader, "export": classReader, "curl": classReader, "wget": classReader, "sed": classReader,
	"mkdir": classWriter, "touch": classWriter, "cp": classWriter, "mv": classWriter, "rm": classWriter, "rmdir": classWriter,
	"ln": classWriter, "chmod": classWriter, "tee": classWriter,
	"go": classBuild, "gofmt": classBuild, "goimports": classBuild, "golangci-lint": classBuild, "staticcheck": classBuild,
	"npm": classBuild, "pnpm": classBuild, "yarn": classBuild, "pip": classBuild, "pip3": classBuild, "pytest": classBuild,
	"ruff": classBuild, "black": classBuild, "mypy": classBuild, "flake8": classBuild, "cargo": classBuild, "rustfmt": classBuild,
	"make": classBuild, "git": classBuild, "docker": classBuild, "python": classBuild, "python3": classBuild,
	"bash": classBuild, "sh": classBuild, "tsc": classBuild, "eslint": classBuild, "prettier": classBuild,
	"kubectl": classBuild, "helm": classBuild, "who": classReader, "w": classReader, "groups": classReader, "users": classReader,
}

// buildSubcommands are the everyday subcommands of the build tools; a
// tool not listed takes any operands (make targets, pytest paths).
var buildSubcommands = map[string]map[string]bool{
	"go":     setOf("build", "test", "vet", "fmt", "mod", "version", "env", "list", "doc", "clean", "run", "work"),
	"npm":    setOf("test", "t", "run", "run-script", "ci", "install", "i", "start", "build", "ls", "list", "outdated", "audit", "version", "view", "pack"),
	"pnpm":   setOf("test", "run", "install", "i", "build", "start", "ls", "list", "outdated", "audit"),
	"yarn":   setOf("test", "run", "install", "build", "start", "list", "outdated", "audit"),
	"pip":    setOf("install", "list", "show", "freeze", "check"),
	"pip3":   setOf("install", "list", "show", "freeze", "check"),
	"cargo":  setOf("build", "test", "check", "fmt", "clippy", "run", "doc", "tree", "update", "fetch", "bench", "clean", "metadata"),
	"docker": setOf("build", "compose", "ps", "images", "logs", "version", "info"),
	"git": setOf("status", "diff", "log", "show", "blame", "add", "commit", "push", "pull", "fetch", "checkout", "switch", "restore",
		"rebase", "merge", "stash", "branch", "tag", "rev-parse", "ls-files", "grep", "shortlog", "describe", "reflog", "cherry-pick",
		"revert", "reset", "mv", "rm", "init", "clone", "remote", "worktree", "bisect", "show-ref", "rev-list", "cat-file", "version"),
	"python":  {},
	"python3": {},
	// Read-only cluster views: Tier 1 judges secrets (kubectl get secret -o).
	"kubectl": setOf("get", "describe", "logs", "top", "version", "api-resources", "explain", "config", "rollout", "events", "cluster-info"),
	"helm":    setOf("list", "ls", "status", "version", "history", "search", "show", "lint", "template"),
}

// safePythonModules may be run with python -m.
var safePythonModules = setOf("pytest", "unittest", "pip", "venv", "black", "ruff", "mypy", "flake8", "pyflakes", "compileall", "json.tool", "build")

// harmlessAssigns may be set before a known-safe command.
var harmlessAssigns = setOf("CI", "NODE_ENV", "GOOS", "GOARCH", "CGO_ENABLED", "GOFLAGS", "RUST_LOG", "RUST_BACKTRACE", "DEBUG", "LANG",
	"LC_ALL", "TZ", "FORCE_COLOR", "NO_COLOR", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "GOTOOLCHAIN", "COLUMNS", "TERM")

func setOf(words ...string) map[string]bool { return wordSet(words...) }

// KnownSafe reports whether act is a shell command line built only from
// everyday programs with harmless arguments. Call it on an action Tier 1
// found nothing in.
func (a *Analyzer) KnownSafe(act *action.Action) bool {
	if act == nil || act.Type != "execute_command" || act.Script == nil {
		return false
	}
	sc := act.Script
	if sc.ParseError != "" || sc.TooDeep || len(sc.Commands) == 0 || len(sc.Evasions) > 0 || len(act.Evasions) > 0 {
		return false
	}
	for i := range act.Strings {
		if act.Strings[i].Layer > 0 {
			return false // something in it decodes to something else
		}
	}
	buf := getViews()
	defer putViews(buf)
	cs := newCmdScan(sc, act, buf)
	for i := range cs.views {
		if !a.safeView(&cs, &cs.views[i]) {
			return false
		}
	}
	return true
}

// safeView judges one command of a known-safe candidate.
func (a *Analyzer) safeView(cs *cmdScan, v *cmdView) bool {
	if v.elevated != "" || v.prog == "" || v.c.Background {
		return false
	}
	switch via := v.c.Via; {
	case via == "eval", via == "heredoc", via == "pipe", via == "coproc", via == "<()", via == ">()", strings.HasPrefix(via, "su"):
		return false
	}
	class, ok := knownPrograms[v.prog]
	if !ok {
		return false
	}
	for _, as := range v.c.Assigns {
		name, _, _ := strings.Cut(as, "=")
		if !harmlessAssigns[name] || strings.ContainsAny(as, "$`") {
			return false
		}
	}
	if !cs.safeRedirects(v) {
		return false
	}
	for _, arg := range v.args {
		// A value known only at run time could be anything.
		if strings.ContainsAny(arg, "$`") && v.prog != "echo" && v.prog != "printf" {
			return false
		}
		// Any program may be an X client: a display option is for
		// checkX11Display to judge, not a known-safe word.
		if arg == "-display" || arg == "--display" || strings.HasPrefix(arg, "--display=") {
			return false
		}
	}
	switch class {
	case classReader:
		return a.safeReader(cs, v)
	case classWriter:
		return cs.safeWriter(v)
	case classBuild:
		return a.safeBuild(cs, v)
	}
	return false
}

// safeRedirects allows output to /dev/null, descriptors, the workspace and
// /tmp, input from the workspace, and here-documents for data.
func (cs *cmdScan) safeRedirects(v *cmdView) bool {
	for _, r := range v.c.Redirects {
		switch {
		case strings.HasPrefix(r.Target, "&"), r.Target == "/dev/null", r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<":
		case isOutputRedirect(r.Op) || r.Op == "<":
			if !cs.inWorkspaceOrTmp(v.c, r.Target) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// inWorkspaceOrTmp reports whether a path argument stays in the
// workspace or /tmp, and is not a place that runs code later.
func (cs *cmdScan) inWorkspaceOrTmp(c *shell.Command, p string) bool {
	r := cs.resolveIn(c, p)
	if !(r.InWorkspace || underOrAt(r.Abs, "/tmp")) {
		return false
	}
	if _, _, persist := persistTarget(r, cs.home); persist {
		return false
	}
	// .git holds hooks and configuration that run programs.
	return !strings.Contains(r.Abs+"/", "/.git/")
}

// looksLikePath reports arguments a reader or writer would take as a path.
func looksLikePath(a string) bool {
	return a != "" && a[0] != '-' && (strings.ContainsAny(a, "/~") || a == "." || a == "..")
}

func (a *Analyzer) safeReader(cs *cmdScan, v *cmdView) bool {
	switch v.prog {
	case "find":
		// -delete and -exec change things: only below start points in the
		// workspace or /tmp (the program -exec runs is a command of its
		// own, judged like the others).
		changes := false
		for _, arg := range v.args {
			switch arg {
			case "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls":
				return false
			case "-exec", "-execdir", "-delete":
				changes = true
			}
		}
		if changes {
			for _, arg := range v.args {
				if arg == "" || arg[0] == '-' || arg == "(" || arg == "!" {
					break // the start points come first
				}
				if !cs.inWorkspaceOrTmp(v.c, arg) {
					return false
				}
			}
		}
	case "sed":
		if !safeSed(v.args) {
			return false
		}
	case "curl", "wget":
		return a.safeDownload(cs, v)
	case "set":
		for _, arg := range v.args {
			if arg != "-e" && arg != "-u" && arg != "-x" && arg != "-o" && arg != "pipefail" && arg != "-eu" && arg != "-euo" && arg != "-ex" {
				return false
			}
		}
	case "export":
		for _, arg := range v.args {
			name, _, _ := strings.Cut(arg, "=")
			if !harmlessAssigns[name] {
				return false
			}
		}
	case "cd", "pushd":
		for _, arg := range v.args {
			if looksLikePath(arg) && !cs.inWorkspaceOrTmp(v.c, arg) {
				return false
			}
		}
	}
	if v.prog == "sed" && (hasShortFlag(v.args, 'i') || hasLongFlag(v.args, "in-place")) {
		return cs.safeWriter(v)
	}
	for _, arg := range v.args {
		if arg == "" || arg[0] == '-' {
			continue
		}
		if sens, _ := cs.classifyArg(v.c, arg); sens != sensNone {
			return false
		}
		if looksLikePath(arg) && !cs.inWorkspaceOrTmp(v.c, arg) && !publicReadable(cs.resolveIn(v.c, arg).Abs) {
			return false // a sweep of /, a home or another project
		}
	}
	return true
}

// publicReadable are system locations whose contents are the same on
// every machine of a distribution or describe only the machine.
func publicReadable(abs string) bool {
	switch abs {
	case "/etc/os-release", "/usr/lib/os-release", "/etc/lsb-release", "/etc/debian_version", "/etc/redhat-release", "/etc/alpine-release",
		"/etc/issue", "/etc/timezone", "/proc/cpuinfo", "/proc/meminfo", "/proc/version", "/dev/null":
		return true
	}
	for _, d := range []string{"/usr/share", "/usr/include", "/usr/local/include", "/usr/lib/go", "/usr/local/go"} {
		if isBelow(abs, d) {
			return true
		}
	}
	return false
}

// safeSed allows printing (sed -n 'N,Mp'), deleting lines and plain
// substitutions, with or without -i on workspace files: no e, w or r
// commands, which run programs or touch other files.
func safeSed(args []string) bool {
	script := ""
	for _, a := range args {
		switch {
		case a == "-n" || a == "-E" || a == "-r" || a == "-i" || a == "--quiet" || a == "-z":
		case strings.HasPrefix(a, "-"):
			return false // -e, -f, -s…: keep the shape simple
		case script == "":
			script = a
		}
	}
	if script == "" {
		return false
	}
	for _, cmd := range strings.Split(script, ";") {
		cmd = strings.TrimSpace(cmd)
		// Line-range prefix: digits, $, commas.
		i := 0
		for i < len(cmd) && (cmd[i] >= '0' && cmd[i] <= '9' || cmd[i] == ',' || cmd[i] == '$') {
			i++
		}
		rest := cmd[i:]
		switch {
		case rest == "p" || rest == "d" || rest == "q" || rest == "":
		case strings.HasPrefix(rest, "s") && len(rest) > 1:
			delim := rest[1]
			parts := strings.Split(rest[2:], string(delim))
			if len(parts) != 3 || strings.Trim(parts[2], "gpiI0123456789") != "" {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// safeDownload allows a plain GET of a named host (not an IP address or a
// metadata service) whose body goes to the terminal, /dev/null or the
// workspace.
func (a *Analyzer) safeDownload(cs *cmdScan, v *cmdView) bool {
	urls := 0
	for i := 0; i < len(v.args); i++ {
		arg := v.args[i]
		switch {
		case arg == "-s" || arg == "-S" || arg == "-L" || arg == "-f" || arg == "-sL" || arg == "-fsSL" || arg == "-sSL" || arg == "-fsL" ||
			arg == "-q" || arg == "-I" || arg == "--silent" || arg == "--location" || arg == "--fail" || arg == "--show-error" ||
			arg == "--head" || arg == "--compressed" || arg == "-v" || arg == "-sS" || arg == "-sf" || arg == "-qO-" || arg == "--quiet":
		case arg == "-o" || arg == "-O" || arg == "--output" || arg == "--output-document":
			if i+1 >= len(v.args) {
				return false
			}
			i++
			if out := v.args[i]; out != "-" && out != "/dev/null" && !cs.inWorkspaceOrTmp(v.c, out) {
				return false
			}
		case arg == "-w" || arg == "--write-out" || arg == "-H" || arg == "--header" || arg == "-A" || arg == "--user-agent" ||
			arg == "--max-time" || arg == "-m" || arg == "--retry" || arg == "--connect-timeout":
			i++
		case strings.HasPrefix(arg, "https://") || strings.HasPrefix(arg, "http://"):
			h := urlHost(arg)
			if h == "" || h[0] >= '0' && h[0] <= '9' || strings.Contains(h, ":") || isLoopbackHost(h) {
				return false
			}
			if _, _, meta := metadataSpelling(h); meta {
				return false
			}
			urls++
		default:
			return false
		}
	}
	return urls > 0
}

// safeWriter allows file changes whose every path stays in the workspace
// or /tmp.
func (cs *cmdScan) safeWriter(v *cmdView) bool {
	if v.prog == "chmod" {
		ops := v.plainOperands()
		if len(ops) == 0 || setsID(ops[0]) || worldWritable(ops[0]) {
			return false
		}
		v2 := *v
		v2.args = ops[1:]
		v = &v2
	}
	n := 0
	dst := copyDestination(v)
	script := v.prog == "sed" // sed -i SCRIPT FILE…: the script is no path
	for i, arg := range v.args {
		if arg == "" || arg[0] == '-' {
			continue
		}
		if script {
			script = false
			continue
		}
		n++
		if !cs.inWorkspaceOrTmp(v.c, arg) {
			return false
		}
		// rm -r * at the workspace's root takes the whole workspace.
		if v.prog == "rm" && criticalDir(cs.resolveIn(v.c, arg), cs.root, cs.home) != "" {
			return false
		}
		// Reading a secret is Tier 1's to judge; writing over one, or
		// removing it, is still a change in the workspace.
		if sens, _ := cs.classifyArg(v.c, arg); sens != sensNone && v.prog != "rm" && i != dst {
			return false
		}
	}
	return n > 0
}

// safeBuild allows the build, test and git commands of everyday work.
func (a *Analyzer) safeBuild(cs *cmdScan, v *cmdView) bool {
	ops := operands(v.args, "Cfj", nil)
	for _, arg := range v.args {
		// URLs, git+ specs, version pins of remote tools and options that
		// run another program.
		if strings.Contains(arg, "://") && v.prog != "git" || strings.HasPrefix(arg, "git+") || strings.HasPrefix(arg, "-exec") ||
			strings.HasPrefix(arg, "-toolexec") || strings.HasPrefix(arg, "--exec") || arg == "-c" && v.prog == "git" {
			return false
		}
	}
	switch v.prog {
	case "bash", "sh":
		// Only as the runner of an inline script, whose commands are
		// judged one by one; running a script file is not known-safe.
		return v.hasCode && len(ops) == 1
	case "python", "python3":
		m := ""
		flagValues(v.args, 'm', "", func(x string) { m = x })
		return m != "" && safePythonModules[m] && !v.hasCode
	case "make":
		for i, arg := range v.args {
			if (arg == "-f" || arg == "--file") && i+1 < len(v.args) && isStdinPath(v.args[i+1]) {
				return false
			}
			if (arg == "-C" || arg == "--directory") && i+1 < len(v.args) && !cs.inWorkspaceOrTmp(v.c, v.args[i+1]) {
				return false
			}
		}
		return true
	case "git":
		if len(ops) == 0 {
			return false
		}
		for i, arg := range v.args {
			if arg == "-C" && i+1 < len(v.args) && !cs.inWorkspaceOrTmp(v.c, v.args[i+1]) {
				return false
			}
		}
		sub := ops[0]
		if !buildSubcommands["git"][sub] {
			return false
		}
		switch sub {
		case "push":
			// Forcing, deleting or mirroring rewrites the remote's history.
			for _, arg := range v.args {
				if arg == "-f" || strings.HasPrefix(arg, "--force") || arg == "--mirror" || arg == "--delete" || arg == "-d" || arg == "--prune" {
					return false
				}
			}
			for _, op := range ops[1:] {
				if strings.HasPrefix(op, "+") || strings.HasPrefix(op, ":") {
					return false
				}
			}
			// A repository given as a URL or host:path goes where the line
			// says (Tier 1's exfil.git-push), not to a configured remote.
			if len(ops) > 1 {
				if h := gitRemoteHost(ops[1]); h != "" && !a.trusted.match(h) {
					return false
				}
			}
		case "remote":
			return len(ops) == 1 || ops[1] == "show" || ops[1] == "-v" || ops[1] == "get-url"
		case "clone", "pull", "fetch":
			// From a URL given here, only a trusted host (configured
			// remotes are the repository's own).
			for _, op := range ops[1:] {
				if h := urlHost(op); h != "" && !a.trusted.match(h) {
					return false
				}
				if strings.Contains(op, "@") && remoteHost(op) != "" && !a.trusted.match(remoteHost(op)) {
					return false
				}
			}
		}
		return true
	}
	subs, listed := buildSubcommands[v.prog]
	if !listed {
		return true // make targets, pytest paths, linters
	}
	if len(ops) == 0 {
		return false // the tool's help, or an interactive mode
	}
	if !subs[ops[0]] {
		return false
	}
	switch v.prog {
	case "go":
		for _, op := range ops[1:] {
			if strings.Contains(op, "@") {
				return false // a remote module at a version
			}
		}
	case "kubectl":
		switch ops[0] {
		case "config":
			return len(ops) > 1 && (ops[1] == "get-contexts" || ops[1] == "current-context")
		case "rollout":
			return len(ops) > 1 && (ops[1] == "status" || ops[1] == "history")
		case "get", "describe":
			for _, op := range ops[1:] {
				if strings.Contains(strings.ToLower(op), "secret") {
					return false
				}
			}
		}
	case "docker":
		if ops[0] == "compose" && len(ops) > 1 && ops[1] == "run" || ops[0] == "compose" && len(ops) > 1 && ops[1] == "exec" {
			return false
		}
	case "npm", "pnpm", "yarn", "pip", "pip3":
		for _, op := range ops[1:] {
			if strings.HasPrefix(op, ".") || strings.HasPrefix(op, "/") || strings.HasPrefix(op, "~") || strings.HasSuffix(op, ".tgz") || strings.HasSuffix(op, ".whl") {
				return false // a local or downloaded package file
			}
		}
	}
	return true
}
