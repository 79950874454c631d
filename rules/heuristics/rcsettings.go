package heuristics

import (
	"strings"

	"github.com/parapet-dev/parapet/rules/shell"
)

// Settings appended to a shell startup file. Every login runs the file,
// so what a command appends to ~/.bashrc is persistence (BLOCK) — unless
// the line shows that all it appends is a setting that runs nothing:
//
//   - export or assignment of a variable that only tunes the shell or
//     names where tools live (PATH extended with directories under the
//     home or the system's, EDITOR, LANG, HISTSIZE, GOPATH, JAVA_HOME, …);
//   - an alias whose name is not a command that handles credentials (sudo,
//     ssh, git, gpg, …) and whose value is one simple command that
//     neither raises privileges nor fetches, sends or interprets;
//   - a tool's shell integration: source <(kubectl completion bash),
//     eval "$(direnv hook bash)", eval "$(starship init zsh)";
//   - shopt, set -o and zsh setopt options that leave history on, and
//     completion specs that run nothing (complete without -C).
//
// Anything else — a command, a substitution, PROMPT_COMMAND, a PATH entry
// in /tmp, an alias for sudo — and a text the line does not show keep
// the finding.

// rcVariables are the variables a startup file may set without running
// anything.
var rcVariables = map[string]bool{
	"PATH": true, "EDITOR": true, "VISUAL": true, "LANG": true, "LANGUAGE": true, "LC_ALL": true, "TZ": true,
	"HISTSIZE": true, "HISTFILESIZE": true, "HISTTIMEFORMAT": true, "SAVEHIST": true, "GOPATH": true, "GOBIN": true,
	"CARGO_HOME": true, "RUSTUP_HOME": true, "NVM_DIR": true, "PNPM_HOME": true, "BUN_INSTALL": true, "DENO_INSTALL": true,
	"PYENV_ROOT": true, "JAVA_HOME": true, "ANDROID_HOME": true, "ANDROID_SDK_ROOT": true, "DOTNET_ROOT": true,
	"KUBE_EDITOR": true, "GIT_EDITOR": true, "PAGER": true, "HISTCONTROL": true,
	"TERM": true, "COLORTERM": true, "CLICOLOR": true, "LSCOLORS": true, "LS_COLORS": true,
}

// credentialCommands are commands an alias must not stand in for: they
// take passwords, keys or tokens.
var credentialCommands = map[string]bool{
	"sudo": true, "su": true, "doas": true, "ssh": true, "scp": true, "sftp": true, "git": true, "gpg": true, "gpg2": true,
	"passwd": true, "kinit": true, "aws": true, "gcloud": true, "az": true, "gh": true, "op": true, "pass": true, "vault": true,
	"docker": true, "npm": true, "pip": true, "curl": true, "wget": true, "ssh-add": true, "keychain": true,
}

// aliasRefused are the programs an alias's value must not run: those
// that raise privileges or fetch and send. An alias that runs git or
// kubectl with options (gs='git status -sb') is a shortcut.
var aliasRefused = map[string]bool{
	"sudo": true, "su": true, "doas": true, "pkexec": true, "curl": true, "wget": true, "nc": true, "ncat": true, "socat": true,
	"scp": true, "rsync": true, "eval": true, "source": true, ".": true, "bash": true, "sh": true, "zsh": true, "python": true,
	"python3": true, "perl": true, "node": true, "ruby": true, "base64": true,
}

// integrationVerbs are the subcommands that print a tool's shell
// integration (completion, hooks, PATH setup).
var integrationVerbs = map[string]bool{
	"completion": true, "completions": true, "init": true, "hook": true, "env": true, "shellenv": true, "activate": true,
}

// declarativeRC reports whether text, appended to a shell startup file,
// only sets variables, aliases, options and tool integrations (see
// above). home is the user's home directory.
func declarativeRC(text, home string) bool {
	if strings.TrimSpace(text) == "" {
		return false
	}
	sc := shell.Parse(text)
	defer sc.Release()
	if sc.ParseError != "" || sc.TooDeep || len(sc.Commands) == 0 {
		return false
	}
	// The walker also lists what the settings would run later (an
	// alias's value, $EDITOR, eval's text): the top-level commands are
	// what the file holds, and substitutions must be integrations.
	integrations := 0
	for i := range sc.Commands {
		c := &sc.Commands[i]
		if c.Via == "$()" || c.Via == "<()" {
			if !toolIntegration(c) {
				return false
			}
			integrations++
		}
	}
	for i := range sc.Commands {
		c := &sc.Commands[i]
		if c.Depth > 0 {
			continue
		}
		if len(c.Redirects) > 0 || c.Background {
			return false
		}
		switch c.Program {
		case "":
			if !rcAssignments(c.Assigns, home) {
				return false
			}
		case "export":
			if len(c.Assigns) > 0 || !rcAssignments(c.Args, home) {
				return false
			}
		case "alias":
			if len(c.Assigns) > 0 || !rcAliases(c.Args) {
				return false
			}
		case "shopt":
			if strings.Contains(strings.Join(c.Args, " "), "hist") && !containsArg(c.Args, "histappend") {
				return false
			}
		case "set":
			if len(c.Args) == 2 && c.Args[0] == "-o" && (c.Args[1] == "vi" || c.Args[1] == "emacs") {
				break
			}
			if !fishSet(c.Args, home) {
				return false
			}
		case "setxkbmap", "xset", "xrandr", "xmodmap", "xrdb", "numlockx", "xsetroot":
			// Desktop settings an X session file sets at login (keyboard
			// layout, key repeat, screens, resources): they run nothing
			// else.
			for _, a := range c.Args {
				if strings.ContainsAny(a, "$`") {
					return false
				}
			}
		case "fish_add_path":
			if len(c.Args) == 0 || !safePathValue(strings.Join(c.Args, ":"), home) {
				return false
			}
		case "setopt", "unsetopt":
			// zsh options; those that stop saving the history
			// (NO_HIST_SAVE…, unsetopt HIST_…) help commands hide.
			// HIST_IGNORE_SPACE, like bash's ignoreboth, is a common
			// default and keeps the history on.
			for _, a := range c.Args {
				o := strings.ToLower(strings.ReplaceAll(a, "_", ""))
				if c.Program == "setopt" && strings.HasPrefix(o, "nohist") ||
					c.Program == "unsetopt" && strings.HasPrefix(o, "hist") || strings.HasPrefix(o, "-") {
					return false
				}
			}
		case "complete", "compdef":
			// Completion specs; complete -C runs a command on each
			// completion.
			for _, a := range c.Args {
				if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "C") {
					return false
				}
			}
		case "source", ".", "eval":
			// source <(kubectl completion bash), eval "$(direnv hook bash)".
			if len(c.Args) != 1 || integrations == 0 || !strings.HasPrefix(c.Args[0], "$(") && !strings.HasPrefix(c.Args[0], "<(") {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// fishSet reports fish's set -gx NAME VALUE… (set -Ux, set -g, set
// --export …) of an rcVariables name, judged as NAME=VALUE is: a list
// value (PATH) as its entries joined by colons.
func fishSet(args []string, home string) bool {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		switch a := args[i]; a {
		case "--global", "--universal", "--export", "--local", "--path":
		default:
			if strings.HasPrefix(a, "--") || strings.Trim(a[1:], "gUxlp") != "" {
				return false // --erase, -e, --query: not a setting
			}
		}
		i++
	}
	if i == 0 || i >= len(args) {
		return false
	}
	return rcAssignments([]string{args[i] + "=" + strings.Join(args[i+1:], ":")}, home)
}

// rcAssignments reports NAME=VALUE words that set only rcVariables, to
// values without substitutions; PATH only gains directories under home or
// the system's.
func rcAssignments(words []string, home string) bool {
	if len(words) == 0 {
		return false
	}
	for _, w := range words {
		name, value, ok := strings.Cut(w, "=")
		if !ok || !rcVariables[name] || strings.ContainsAny(value, "`") || strings.Contains(value, "$(") {
			return false
		}
		if name == "HISTSIZE" || name == "HISTFILESIZE" || name == "SAVEHIST" {
			if value == "" || strings.Trim(value, "0") == "" {
				return false // history turned off
			}
		}
		if name == "PATH" && !safePathValue(value, home) {
			return false
		}
	}
	return true
}

// safePathValue reports a PATH whose entries are $PATH itself, or
// directories under home or the system's (/usr/local/…, /opt/…, /snap/bin),
// or a tool's directory named by a variable after $PATH ($PATH:$GOBIN):
// searched last, it cannot stand in for a program already found.
func safePathValue(value, home string) bool {
	appended := false
	for _, dir := range strings.Split(value, ":") {
		switch {
		case dir == "$PATH" || dir == "${PATH}":
			appended = true
		case dir == "":
		case appended && strings.HasPrefix(dir, "$") && !strings.Contains(dir, ".."):
		case strings.HasPrefix(dir, "$HOME/") || strings.HasPrefix(dir, "${HOME}/") || strings.HasPrefix(dir, "~/") ||
			home != "" && strings.HasPrefix(dir, home+"/"):
			if strings.Contains(dir, "..") || strings.Contains(dir, "/.cache") || strings.Contains(dir, "/tmp") {
				return false
			}
		case strings.HasPrefix(dir, "/usr/local/") || strings.HasPrefix(dir, "/opt/") || dir == "/snap/bin" || dir == "/usr/games":
			if strings.Contains(dir, "..") {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// rcAliases reports alias NAME=VALUE words whose names are no credential
// commands and whose values are one simple command.
func rcAliases(words []string) bool {
	if len(words) == 0 {
		return false
	}
	for _, w := range words {
		name, value, ok := strings.Cut(w, "=")
		if !ok || credentialCommands[name] || strings.ContainsAny(value, "|;&<>`$(){}\n") {
			return false
		}
		if f := strings.Fields(value); len(f) == 0 || aliasRefused[f[0]] || agentBypassMarkers.in(value) {
			return false // alias ll='sudo …', alias x='curl …', alias claude='claude --dangerously-…'
		}
	}
	return true
}

// toolIntegration reports a command that prints a tool's shell
// integration: PROG completion|init|hook|env SHELL, with PROG a plain
// name that downloads, decodes or interprets nothing.
func toolIntegration(c *shell.Command) bool {
	if c.Program == "" || strings.Contains(c.Name, "/") || len(c.Args) == 0 || len(c.Redirects) > 0 {
		return false
	}
	switch c.Program {
	case "curl", "wget", "cat", "echo", "printf", "base64", "xxd", "openssl", "nc", "eval", "source":
		return false
	}
	if interpreterKind(c.Program) != "" || shell.VersionedInterpreter(c.Program) != "" {
		return false // a shell or an interpreter prints whatever its code says
	}
	return integrationVerbs[c.Args[0]] || len(c.Args) > 1 && integrationVerbs[c.Args[1]] // rustup completions bash, brew shellenv
}

// appendsSettings reports whether v only appends settings (declarativeRC)
// to the startup file abs: echo … >> ~/.bashrc, printf … | tee -a
// ~/.zshrc. A write that replaces the file, or text the line does not
// show, is not one.
func (cs *cmdScan) appendsSettings(v *cmdView, abs string) bool {
	var text string
	var ok bool
	switch {
	case v.prog == "sed" || v.prog == "gsed":
		// sed -i '/^alias ll=/d' ~/.zshrc takes lines out and adds none.
		files, scripts, ok := inPlaceScripts(v)
		return ok && len(files) > 0 && onlyDeletes(scripts)
	case v.prog == "tee":
		if !hasShortFlag(v.args, 'a') && !hasLongFlag(v.args, "append") {
			return false
		}
		text, ok = cs.stdinText(v)
	default:
		appends := false
		for _, r := range v.c.Redirects {
			if r.Op == ">>" && (r.FD == "" || r.FD == "1") && cs.resolveIn(v.c, r.Target).Abs == abs {
				appends = true
			}
		}
		if !appends {
			return false
		}
		text, ok = cs.producedText(v)
	}
	return ok && declarativeRC(text, cs.home) && !cs.fillsPathDirs(v, text)
}

// fillsPathDirs reports whether another command of the line writes into
// a directory the settings text puts on PATH: ln -s /tmp/.g ~/.bin/git
// && echo 'export PATH=~/.bin:$PATH' >> ~/.profile plants a git of its
// own ahead of the real one.
func (cs *cmdScan) fillsPathDirs(v *cmdView, text string) bool {
	var dirs []string
	for _, line := range strings.Split(text, "\n") {
		_, value, ok := strings.Cut(line, "PATH=")
		if !ok {
			continue
		}
		for _, d := range strings.Split(strings.Trim(strings.TrimSpace(value), `"'`), ":") {
			d = strings.NewReplacer("${HOME}", "~", "$HOME", "~").Replace(strings.Trim(d, `"'`))
			if d != "" && !strings.HasPrefix(d, "$") {
				dirs = append(dirs, strings.TrimSuffix(cs.resolveIn(v.c, d).Abs, "/")+"/")
			}
		}
	}
	if len(dirs) == 0 {
		return false
	}
	for i := range cs.views {
		u := &cs.views[i]
		if u == v {
			continue
		}
		for _, t := range cs.writeTargets(u) {
			abs := cs.resolveIn(u.c, t).Abs
			for _, d := range dirs {
				if strings.HasPrefix(abs, d) || abs+"/" == d {
					return true
				}
			}
		}
	}
	return false
}

// onlyDeletes reports sed scripts whose every command deletes lines by
// address (/re/d, /re/,+2d, 3d, $d) and does nothing else.
func onlyDeletes(scripts []string) bool {
	n := 0
	for _, script := range scripts {
		for _, cmd := range strings.FieldsFunc(script, func(r rune) bool { return r == ';' || r == '\n' }) {
			cmd = strings.TrimSpace(cmd)
			if cmd == "" {
				continue
			}
			for addr := 0; addr < 2 && cmd != ""; addr++ {
				switch {
				case cmd[0] == '/':
					end := closingSlash(cmd[1:])
					if end < 0 {
						return false
					}
					cmd = strings.TrimSpace(cmd[end+2:])
				case cmd[0] == '$' || cmd[0] == '+' || cmd[0] >= '0' && cmd[0] <= '9':
					cmd = strings.TrimLeft(cmd, "$+0123456789")
				}
				if addr == 0 && strings.HasPrefix(cmd, ",") {
					cmd = strings.TrimSpace(cmd[1:])
					continue
				}
				break
			}
			if cmd != "d" {
				return false
			}
			n++
		}
	}
	return n > 0
}
