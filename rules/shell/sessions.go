package shell

import (
	"slices"
	"strings"
)

// Programs that run a command in a terminal session, a container or a
// virtual machine of their own: tmux and screen start it in a detached
// session or type it into a shell already running there (send-keys,
// stuff); lxc / incus exec, multipass exec and vagrant ssh -c run it
// in a container or VM. Each command is the agent's as much as one it
// runs directly, so it is parsed as a nested script Via the program.

// sessionCommands follows what program runs (runsCode names the
// programs).
func (w *walker) sessionCommands(program string, args []field, fr frame) {
	words := texts(args)
	switch program {
	case "tmux":
		w.tmuxCommands(args, fr)
	case "screen":
		w.screenCommands(args, words, fr)
	case "lxc", "incus", "multipass":
		// lxc exec NAME [options] -- CMD…: the command runs in the
		// container (or the multipass VM), not on this host.
		if sub := operandWords(words, []string{"--project", "--remote"}); len(sub) > 0 && sub[0] == "exec" {
			if i := slices.Index(words, "--"); i >= 0 && i+1 < len(words) {
				remote := fr
				remote.chdir = UnknownDir
				w.wrapped(args[i+1:], nil, remote, program+" exec")
			}
		}
	case "vagrant":
		// vagrant ssh [NAME] -c CMD: the command runs in the VM.
		if sub := operandWords(words, nil); len(sub) > 0 && sub[0] == "ssh" {
			if c, ok := flagValue(words, "c", "command"); ok {
				w.remoteShell(c, fr, "vagrant ssh -c")
			}
		}
	}
}

// tmux's options that take a value: the server's (before the command;
// -c CMD runs CMD), and those of the commands that run something.
var (
	tmuxServer  = wrapper{valueShort: "LSfTc"}
	tmuxRunOpts = wrapper{valueShort: "ceFnstxylNTpf"}
	tmuxKeys    = wrapper{valueShort: "tNc"}
)

// tmuxCommands follows each command of a tmux line (commands are
// separated by a ";" word): the shell command new-session, new-window,
// split-window, respawn-pane, run-shell and display-popup start, the
// keys send-keys types into a pane's shell, and tmux -c CMD.
func (w *walker) tmuxCommands(args []field, fr frame) {
	start, _, ok := tmuxServer.commandStart(args)
	if !ok {
		start = len(args)
	}
	if c, found := flagValue(texts(args[:start]), "c", ""); found {
		w.nestedShell(c, fr, "tmux -c", "sh", nil)
		return
	}
	for rest := args[start:]; len(rest) > 0; {
		end := slices.IndexFunc(rest, func(f field) bool { return f.text == ";" })
		if end < 0 {
			end = len(rest)
		}
		w.tmuxCommand(rest[:end], fr)
		rest = rest[min(end+1, len(rest)):]
	}
}

// tmuxCommand follows one tmux command: its name, then its words.
func (w *walker) tmuxCommand(cmd []field, fr frame) {
	if len(cmd) == 0 {
		return
	}
	name, rest := cmd[0].text, cmd[1:]
	switch name {
	case "new-session", "new", "new-window", "neww", "split-window", "splitw", "respawn-pane", "respawnp",
		"respawn-window", "respawnw", "run-shell", "run", "display-popup", "popup":
		if start, _, ok := tmuxRunOpts.commandStart(rest); ok {
			w.nestedShell(strings.Join(texts(rest[start:]), " "), fr, "tmux "+name, "sh", nil)
		}
	case "send-keys", "send":
		start, _, ok := tmuxKeys.commandStart(rest)
		if !ok {
			return
		}
		literal := slices.ContainsFunc(rest[:start], func(f field) bool {
			return len(f.text) > 1 && f.text[0] == '-' && f.text[1] != '-' && strings.IndexByte(f.text, 'l') > 0
		})
		var typed strings.Builder
		for _, k := range rest[start:] {
			typed.WriteString(typedKey(k.text, literal))
		}
		if text := typed.String(); strings.TrimSpace(text) != "" {
			w.nestedShell(text, fr, "tmux send-keys", "sh", nil)
		}
	}
}

// typedKey is the text a send-keys or stuff argument types: a key name
// (Enter, C-m, Space, Tab) its character, other key names nothing, a
// string itself.
func typedKey(key string, literal bool) string {
	if literal {
		return key
	}
	switch key {
	case "Enter", "C-m", "KPEnter", "C-j":
		return "\n"
	case "Space":
		return " "
	case "Tab", "C-i":
		return "\t"
	}
	if len(key) >= 3 && (key[0] == 'C' || key[0] == 'M') && key[1] == '-' && !strings.Contains(key, " ") {
		return "" // C-c, M-x: a key, not text
	}
	return key
}

// screen options that take the next word as value.
var screenValued = []string{"-S", "-c", "-e", "-h", "-p", "-T", "-t", "-s", "-r", "-x", "-R", "-D", "-Logfile"}

// screenCommands follows screen [options] CMD…, the program a new
// session runs, and screen -X stuff TEXT / -X exec CMD…, which type
// into or run in a session already there.
func (w *walker) screenCommands(args []field, words []string, fr frame) {
	for i := 0; i < len(words); i++ {
		a := words[i]
		switch {
		case a == "-X" && i+1 < len(words):
			switch words[i+1] {
			case "stuff":
				var typed strings.Builder
				for _, t := range words[i+2:] {
					typed.WriteString(strings.NewReplacer(`\n`, "\n", `\r`, "\n", "^M", "\n").Replace(t))
				}
				if text := typed.String(); strings.TrimSpace(text) != "" {
					w.nestedShell(text, fr, "screen -X stuff", "sh", nil)
				}
			case "exec", "screen":
				if i+2 < len(words) {
					w.wrapped(args[i+2:], nil, fr, "screen -X "+words[i+1])
				}
			}
			return
		case slices.Contains(screenValued, a) || len(a) > 2 && a[0] == '-' && a[1] != '-' && slices.Contains(screenValued, "-"+a[len(a)-1:]):
			i++ // also the value of a group's last option: -dmS NAME
		case strings.HasPrefix(a, "-"):
		default:
			w.wrapped(args[i:], nil, fr, "screen")
			return
		}
	}
}
