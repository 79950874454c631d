package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Programs that run a command given in an option or in their own
// language: script -c, flock, busybox APPLET, vim -c ':!…', ssh -o
// ProxyCommand=…, tar --checkpoint-action=exec=…, sed's e command, awk's
// system(), make -f - with recipes on stdin, git's executing settings
// (core.pager, alias.x=!…, -c core.sshCommand=…) and variables whose value
// git, less or ssh run (GIT_SSH_COMMAND, PAGER, LESSOPEN, …). Each command
// they run is parsed as a nested script Via the program.

// runsCode follows what program runs. It reports whether the command was
// fully handled (no wrapper unwrapping is needed).
func (w *walker) runsCode(program string, args []field, redirs []Redirect, fr frame) bool {
	switch program {
	case "script":
		if c, ok := flagValue(texts(args), "c", "command"); ok {
			w.nestedShell(c, fr, "script -c", "", nil)
		}
		return true
	case "flock":
		return w.flock(args, fr)
	case "busybox":
		if len(args) > 0 && !args[0].dynamic && !strings.HasPrefix(args[0].text, "-") {
			w.wrapped(args, redirs, fr, "busybox")
		}
		return true
	case "vim", "vi", "nvim", "ex", "view", "gvim", "rvim", "vimdiff":
		w.vimCommands(program, args, fr)
	case "ssh", "scp", "sftp":
		w.sshCommands(program, args, fr)
	case "rsync":
		if c, ok := flagValue(texts(args), "e", "rsh"); ok {
			w.nestedShell(c, fr, "rsync -e", "sh", nil)
		}
	case "mosh":
		// --ssh is the ssh command mosh connects with; --server the
		// command it has the remote host run (judged in an unknown
		// directory, as ssh HOST CMD is).
		if c, ok := flagValue(texts(args), "", "ssh"); ok {
			w.nestedShell(c, fr, "mosh --ssh", "sh", nil)
		}
		if c, ok := flagValue(texts(args), "", "server"); ok {
			remote := fr
			remote.chdir = UnknownDir
			w.nestedShell(c, remote, "mosh --server", "sh", nil)
		}
	case "tar", "bsdtar":
		w.tarCommands(args, fr)
	case "sed", "gsed":
		w.sedCommands(args, fr)
	case "make", "gmake":
		w.makeRecipes(args, redirs, fr)
	case "mvn", "mvnw":
		w.mavenExec(args, fr)
	case "xargs":
		w.xargsFileData(args, redirs, fr)
	case "tmux", "screen", "lxc", "incus", "multipass", "vagrant":
		w.sessionCommands(program, args, fr)
		return true
	case "git":
		w.gitCommands(args, fr)
	case "pwsh", "powershell", "powershell.exe", "pwsh-preview":
		if code, ok := powershellCode(args, redirs); ok {
			cmds, opaque := powershellCommands(code)
			for _, c := range cmds {
				w.nestedShell(c, fr, program, "sh", nil)
			}
			if opaque != "" {
				w.evasion("opaque-code", program+" runs a command it computes: "+opaque)
			}
		}
		return true
	case "gdb", "sqlite3", "mysql", "mariadb", "psql", "man", "less", "more", "zip", "parallel", "capsh", "expect", "tclsh",
		"wish", "osascript", "docker", "podman", "nerdctl", "kubectl", "oc", "pdsh", "pssh", "parallel-ssh", "clush", "ansible",
		"ansible-playbook", "start-stop-daemon", "gcloud", "az", "aws", "salt", "salt-ssh", "bolt":
		w.escapes(program, args, redirs, fr)
	}
	if lang, code, ok := codeOf(program, args, redirs); ok && lang != "" {
		w.interpreterCode(program, lang, code, fr)
	}
	return false
}

// interpreterCode parses the commands an interpreter's code starts, with
// the home named through the language and joined literals folded
// (FoldCode): os.system("rm -rf " + os.environ["HOME"]) runs rm -rf $HOME.
// Tcl (lang "tcl") runs what its exec and spawn commands name.
func (w *walker) interpreterCode(program, lang, code string, fr frame) {
	if lang == "tcl" {
		// Tcl's exec words, read as Tcl reads them.
		for _, c := range tclCommands(code) {
			w.nestedShell(c, fr, program, "sh", nil)
		}
		return
	}
	cmds, opaque := embeddedCommands(lang, FoldCode(code))
	for _, c := range cmds {
		if opaque == "" && feedsShell(c) {
			// open(F, "| sh"), print … | "bash": the code writes the
			// script the shell runs.
			opaque = "feeds generated text to " + c
		}
		// A command string goes through /bin/sh; an argv list is
		// quoted so that any shell reads it alike.
		w.nestedShell(c, fr, program, "sh", nil)
	}
	if opaque != "" {
		w.evasion("opaque-code", program+" runs a command it computes: "+opaque)
	}
}

// flock FILE -c CMD, or flock FILE PROGRAM ARGS…
func (w *walker) flock(args []field, fr frame) bool {
	if c, ok := flagValue(texts(args), "c", "command"); ok {
		w.nestedShell(c, fr, "flock -c", "sh", nil)
		return true
	}
	spec := wrapper{valueShort: "wEn", valueLong: []string{"timeout", "conflict-exit-code", "wait"}, operands: 1}
	if start, _, ok := spec.commandStart(args); ok {
		w.wrapped(args[start:], nil, fr, "flock")
	}
	return true
}

// vimCommands follows -c CMD, --cmd CMD and +CMD that run a shell command
// (:!cmd, :r !cmd, :w !cmd, :call system('cmd')).
func (w *walker) vimCommands(program string, args []field, fr frame) {
	for i := 0; i < len(args); i++ {
		t := args[i].text
		var c string
		switch {
		case (t == "-c" || t == "--cmd") && i+1 < len(args):
			i++
			c = args[i].text
		case strings.HasPrefix(t, "+") && len(t) > 1:
			c = t[1:]
		default:
			continue
		}
		c = strings.TrimLeft(c, ": \t")
		c = strings.TrimLeft(c, "%.,$0123456789 ")
		for _, p := range []string{"read", "r", "write", "w"} {
			if rest, ok := strings.CutPrefix(c, p); ok && strings.HasPrefix(strings.TrimLeft(rest, " "), "!") {
				c = strings.TrimLeft(rest, " ")
				break
			}
		}
		switch {
		case strings.HasPrefix(c, "!"):
			w.nestedShell(c[1:], fr, program+" :!", "sh", nil)
		case strings.HasPrefix(c, "sh") || strings.HasPrefix(c, "term"):
			w.evasion("opaque-code", program+" opens a shell: "+c)
		default:
			if i := strings.Index(c, "system("); i >= 0 {
				if lit, _, ok := readLiteral(strings.TrimLeft(c[i+7:], " ")); ok {
					w.nestedShell(lit, fr, program+" system()", "sh", nil)
				} else {
					w.evasion("opaque-code", program+" runs a command it computes: "+c)
				}
			}
		}
	}
}

// sshCommands follows ProxyCommand, LocalCommand and KnownHostsCommand
// given with -o, which ssh runs locally through the shell, and the
// command ssh HOST CMD… runs on the other host: it is the agent's action
// too. It runs in the remote user's home, which this line cannot know.
func (w *walker) sshCommands(program string, args []field, fr frame) {
	if program == "ssh" {
		spec := wrapper{valueShort: "BbcDEeFIiJLlmOopQRSWw", operands: 1}
		if start, _, ok := spec.commandStart(args); ok && start < len(args) {
			remote := fr
			remote.chdir = UnknownDir
			w.nestedShell(strings.Join(texts(args[start:]), " "), remote, "ssh", "sh", nil)
		}
	}
	for i := 0; i < len(args); i++ {
		t := args[i].text
		var opt string
		switch {
		case t == "-o" && i+1 < len(args):
			i++
			opt = args[i].text
		case strings.HasPrefix(t, "-o") && len(t) > 2:
			opt = t[2:]
		default:
			continue
		}
		key, val, ok := strings.Cut(opt, "=")
		if !ok {
			key, val, _ = strings.Cut(strings.TrimSpace(opt), " ")
		}
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "proxycommand", "localcommand", "knownhostscommand", "remotecommand":
			if strings.ToLower(strings.TrimSpace(key)) == "remotecommand" {
				continue // runs on the other host
			}
			w.nestedShell(strings.TrimSpace(val), fr, program+" -o "+key, "sh", nil)
		}
	}
}

// tarCommands follows tar's options that run a program.
func (w *walker) tarCommands(args []field, fr frame) {
	for i := 0; i < len(args); i++ {
		t := args[i].text
		name, val, hasVal := strings.Cut(t, "=")
		switch name {
		case "--checkpoint-action":
			if !hasVal {
				continue
			}
			if c, ok := strings.CutPrefix(val, "exec="); ok {
				w.nestedShell(c, fr, "tar --checkpoint-action", "sh", nil)
			}
		case "--to-command", "--use-compress-program", "--info-script", "--new-volume-script", "-I", "-F":
			if !hasVal {
				if i+1 >= len(args) || name == "-F" && !strings.Contains(args[i+1].text, " ") {
					continue
				}
				i++
				val = args[i].text
			}
			w.nestedShell(val, fr, "tar "+name, "sh", nil)
		}
	}
}

// sedCommands follows sed's e command (runs its text, or the pattern
// space) and the e flag of s///e (runs the result of the substitution).
func (w *walker) sedCommands(args []field, fr frame) {
	var scripts []string
	explicit := false
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case (t == "-e" || t == "--expression") && i+1 < len(args):
			i++
			scripts, explicit = append(scripts, args[i].text), true
		case strings.HasPrefix(t, "--expression="):
			scripts, explicit = append(scripts, t[len("--expression="):]), true
		case t == "-f" || t == "--file":
			return
		case strings.HasPrefix(t, "-") && len(t) > 1:
		default:
			if !explicit && len(scripts) == 0 {
				scripts = append(scripts, t)
			}
		}
	}
	for _, sc := range scripts {
		for _, cmd := range strings.FieldsFunc(sc, func(r rune) bool { return r == ';' || r == '\n' || r == '{' || r == '}' }) {
			cmd = strings.TrimLeft(strings.TrimSpace(cmd), "0123456789$,~!/ ")
			switch {
			case cmd == "e":
				w.evasion("opaque-code", "sed runs its input lines as commands: "+sc)
			case strings.HasPrefix(cmd, "e ") || strings.HasPrefix(cmd, "e\t"):
				w.nestedShell(strings.TrimSpace(cmd[2:]), fr, "sed e", "sh", nil)
			case len(cmd) > 3 && cmd[0] == 's' && !isAlnum(cmd[1]) && sedSubstExecutes(cmd):
				w.evasion("opaque-code", "sed runs the result of a substitution as a command: "+sc)
			}
		}
	}
}

// sedSubstExecutes reports whether s/re/repl/flags has the e flag.
func sedSubstExecutes(cmd string) bool {
	delim := cmd[1]
	n, i := 0, 2
	for ; i < len(cmd) && n < 2; i++ {
		switch cmd[i] {
		case '\\':
			i++
		case delim:
			n++
		}
	}
	if n < 2 {
		return false
	}
	flags := cmd[i:]
	if j := strings.IndexAny(flags, " \tw"); j >= 0 {
		flags = flags[:j]
	}
	return strings.IndexByte(flags, 'e') >= 0
}

// makeRecipes parses the recipe lines of a makefile given on stdin
// (make -f - <<EOF): each tab-indented line is a shell command.
func (w *walker) makeRecipes(args []field, redirs []Redirect, fr frame) {
	stdin := false
	for i, a := range args {
		if (a.text == "-f" || a.text == "--file" || a.text == "--makefile") && i+1 < len(args) && isStdinWord(args[i+1].text) ||
			a.text == "-f-" || a.text == "--file=-" || a.text == "--file=/dev/stdin" {
			stdin = true
		}
	}
	if !stdin {
		return
	}
	for _, r := range redirs {
		body, ok := r.Input()
		if !ok {
			continue
		}
		if script := MakeRecipes(body); script != "" {
			w.nestedShell(script, fr, "make recipe", "sh", nil)
		}
	}
}

func isStdinWord(s string) bool { return s == "-" || s == "/dev/stdin" }

// mavenExec follows the exec plugin's program: mvn exec:exec
// -Dexec.executable=sh -Dexec.args="-c '…'" runs sh with those
// arguments.
func (w *walker) mavenExec(args []field, fr frame) {
	exe, execArgs := "", ""
	for _, a := range args {
		if v, ok := strings.CutPrefix(a.text, "-Dexec.executable="); ok {
			exe = v
		}
		if v, ok := strings.CutPrefix(a.text, "-Dexec.args="); ok {
			execArgs = v
		}
	}
	if exe != "" {
		w.nestedShell(quoteWords([]string{exe})+" "+execArgs, fr, "mvn exec", "sh", nil)
	}
}

// MakeRecipes returns the recipe lines of a makefile as one shell script,
// one logical line (backslash continuations joined) per command, "@", "-"
// and "+" prefixes removed. Make's own references are replaced before
// the shell sees them: $$ is $, $(shell cmd) is $(cmd), other $(NAME) /
// ${NAME} / $(func …) a placeholder word. A line that is not valid shell
// after that is left out (make's own syntax, which the shell never runs).
func MakeRecipes(makefile string) string {
	var b strings.Builder
	var logical strings.Builder
	flush := func() {
		line := makeRefs(logical.String())
		logical.Reset()
		if strings.TrimSpace(line) == "" {
			return
		}
		sc := Parse(line)
		ok := sc.ParseError == ""
		sc.Release()
		if ok {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	cont := false
	for line := range strings.SplitSeq(makefile, "\n") {
		if !cont {
			if !strings.HasPrefix(line, "\t") {
				target, after, ok := strings.Cut(line, ";")
				if !ok || !strings.Contains(target, ":") {
					// $(shell …) outside a recipe runs when make reads
					// the file (X := $(shell …), $(info $(shell …))).
					makeShellCalls(line, func(cmd string) {
						logical.WriteString(cmd)
						flush()
					})
					continue
				}
				line = after // target: prereqs ; recipe
			}
			line = strings.TrimLeft(line, "\t @-+")
		} else {
			line = strings.TrimLeft(line, "\t")
		}
		cont = strings.HasSuffix(line, "\\")
		logical.WriteString(line)
		if cont {
			logical.WriteByte('\n')
			continue
		}
		flush()
	}
	flush()
	return b.String()
}

// makeShellCalls calls fn with the command of each $(shell …) in line.
func makeShellCalls(line string, fn func(cmd string)) {
	for {
		i := strings.Index(line, "$(shell ")
		if i < 0 {
			return
		}
		depth, j := 0, i+1
		for ; j < len(line); j++ {
			if line[j] == '(' {
				depth++
			} else if line[j] == ')' {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		if j >= len(line) {
			fn(line[i+len("$(shell "):])
			return
		}
		fn(line[i+len("$(shell ") : j])
		line = line[j+1:]
	}
}

// makeRefs rewrites make's variable and function references in a recipe
// line for the shell (see MakeRecipes).
func makeRefs(line string) string {
	if !strings.Contains(line, "$") {
		return line
	}
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c != '$' || i+1 >= len(line) {
			b.WriteByte(c)
			continue
		}
		next := line[i+1]
		switch next {
		case '$':
			b.WriteByte('$')
			i++
		case '(', '{':
			close := byte(')')
			if next == '{' {
				close = '}'
			}
			depth, j := 0, i+1
			for ; j < len(line); j++ {
				if line[j] == next {
					depth++
				} else if line[j] == close {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if j >= len(line) {
				b.WriteString(line[i:])
				return b.String()
			}
			inner := line[i+2 : j]
			fn, arg, _ := strings.Cut(inner, " ")
			switch {
			case fn == "shell":
				b.WriteString("$(" + makeRefs(arg) + ")")
			case fn == "abspath" || fn == "realpath":
				b.WriteString(makeRefs(arg)) // the path, which the judge resolves
			case inner == "CURDIR":
				b.WriteString(".") // the directory make runs in
			case makeEnvVar(inner):
				b.WriteString("$" + inner) // the environment's, as make reads it
			default:
				b.WriteString("MAKEVAR")
			}
			i = j
		default:
			b.WriteString("MAKEVAR") // $@, $<, $^, $X
			i++
		}
	}
	return b.String()
}

// makeEnvVar reports the environment variables a Makefile reads as its
// own: $(HOME) is the user's home.
func makeEnvVar(name string) bool {
	switch name {
	case "HOME", "USER", "LOGNAME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME":
		return true
	}
	return false
}

// GitExecKey reports whether a git configuration key holds a command git
// runs, and whether a leading "!" marks it (aliases, credential helpers,
// a submodule's update).
func GitExecKey(key string) bool {
	k := strings.ToLower(key)
	switch k {
	case "core.fsmonitor", "core.pager", "core.sshcommand", "core.editor", "core.askpass", "sequence.editor",
		"pager.log", "pager.diff", "pager.show", "pager.branch", "gpg.program", "gpg.ssh.program", "credential.helper",
		"diff.external", "uploadpack.packobjectshook", "core.gitproxy", "ssh.variant", "interactive.difffilter":
		return true
	}
	switch {
	case strings.HasPrefix(k, "alias."), strings.HasPrefix(k, "pager."):
		return true
	case strings.HasPrefix(k, "filter.") && (strings.HasSuffix(k, ".clean") || strings.HasSuffix(k, ".smudge") || strings.HasSuffix(k, ".process")):
		return true
	case strings.HasPrefix(k, "diff.") && (strings.HasSuffix(k, ".textconv") || strings.HasSuffix(k, ".command")):
		return true
	case strings.HasPrefix(k, "merge.") && strings.HasSuffix(k, ".driver"),
		strings.HasPrefix(k, "mergetool.") && strings.HasSuffix(k, ".cmd"),
		strings.HasPrefix(k, "difftool.") && strings.HasSuffix(k, ".cmd"),
		strings.HasPrefix(k, "credential.") && strings.HasSuffix(k, ".helper"),
		strings.HasPrefix(k, "submodule.") && strings.HasSuffix(k, ".update"), // = !command: git submodule update runs it
		strings.HasPrefix(k, "remote.") && (strings.HasSuffix(k, ".uploadpack") || strings.HasSuffix(k, ".receivepack")):
		return true
	}
	return false
}

// gitCommands follows -c key=value and git config key value for keys
// whose value git runs as a command.
func (w *walker) gitCommands(args []field, fr frame) {
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "-c" && i+1 < len(args):
			i++
			if k, v, ok := strings.Cut(args[i].text, "="); ok && GitExecKey(k) {
				w.gitValue(k, v, fr)
			} else if ok {
				w.gitExtURL(v, fr) // -c remote.origin.url=ext::…
			}
			continue
		case strings.HasPrefix(t, "--config-env"):
			continue
		case t == "-C" && i+1 < len(args):
			i++
			continue
		case strings.HasPrefix(t, "-"):
			continue
		}
		for _, a := range args[i:] {
			w.gitExtURL(a.text, fr)
		}
		if t != "config" {
			return
		}
		var ops []string
		for _, a := range args[i+1:] {
			switch {
			case a.text == "--file" || a.text == "-f" || a.text == "--blob" || a.text == "--type":
				ops = append(ops, "\x00") // the option's value is not the key
			case strings.HasPrefix(a.text, "-"):
			default:
				if n := len(ops); n > 0 && ops[n-1] == "\x00" {
					ops[n-1] = "\x01"
					continue
				}
				ops = append(ops, a.text)
			}
		}
		var clean []string
		for _, o := range ops {
			if o != "\x00" && o != "\x01" {
				clean = append(clean, o)
			}
		}
		if len(clean) >= 2 && GitExecKey(clean[0]) {
			w.gitValue(clean[0], clean[len(clean)-1], fr)
		}
		return
	}
}

// gitExtURL follows a remote address of git's ext transport,
// ext::COMMAND ARGS…: git runs the command itself to talk to the
// "remote", with no shell between. "% " is a space inside an argument,
// "%%" a percent sign; %s, %S and %G stand for what git fills in.
func (w *walker) gitExtURL(url string, fr frame) {
	cmd, ok := strings.CutPrefix(url, "ext::")
	if !ok || strings.TrimSpace(cmd) == "" {
		return
	}
	var words []string
	var cur strings.Builder
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case c == '%' && i+1 < len(cmd):
			i++
			switch cmd[i] {
			case ' ':
				cur.WriteByte(' ')
			case '%':
				cur.WriteByte('%')
			case 's', 'S':
				cur.WriteString("git-upload-pack")
			case 'G':
				cur.WriteString("repo")
			default:
				cur.WriteByte('%')
				cur.WriteByte(cmd[i])
			}
		case c == ' ':
			if cur.Len() > 0 {
				words = append(words, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteByte(c)
		}
	}
	if cur.Len() > 0 {
		words = append(words, cur.String())
	}
	if len(words) > 0 {
		w.nested(quoteWords(words), fr, "git ext::")
	}
}

// gitValue parses a configured command ("!cmd" for aliases and helpers).
func (w *walker) gitValue(key, val string, fr frame) {
	val = strings.TrimSpace(val)
	if lk := strings.ToLower(key); strings.HasPrefix(lk, "alias.") || strings.Contains(lk, "credential") || strings.HasPrefix(lk, "submodule.") {
		if !strings.HasPrefix(val, "!") {
			return // a git subcommand, or a credential-helper name
		}
	}
	w.nestedShell(strings.TrimPrefix(val, "!"), fr, "git "+key, "sh", nil)
}

// execEnvVars are variables whose value a program runs as a command.
var execEnvVars = map[string]bool{
	"GIT_SSH_COMMAND": true, "GIT_SSH": true, "GIT_PAGER": true, "PAGER": true, "GIT_EDITOR": true, "EDITOR": true,
	"VISUAL": true, "GIT_EXTERNAL_DIFF": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true, "GIT_PROXY_COMMAND": true,
	"LESSOPEN": true, "LESSCLOSE": true, "MANPAGER": true, "PROMPT_COMMAND": true, "BROWSER": true, "SUDO_ASKPASS": true,
	"GIT_SEQUENCE_EDITOR": true, "SYSTEMD_PAGER": true,
}

// execEnv parses the values of such variables, given to a command or
// exported. A bare program name is harmless and parses as one.
func (w *walker) execEnv(assigns []string, fr frame) {
	for _, a := range assigns {
		name, val, ok := strings.Cut(a, "=")
		if !ok || !execEnvVars[name] || val == "" {
			continue
		}
		val = strings.TrimLeft(val, "|") // LESSOPEN='|cmd %s'
		w.nestedShell(val, fr, "$"+name, "sh", nil)
	}
}

// wrapperDir returns the directory env -C / --chdir and sudo -D /
// --chdir run their program in.
func wrapperDir(program string, opts []field) (string, bool) {
	var short string
	switch program {
	case "env":
		short = "C"
	case "sudo":
		short = "D"
	default:
		return "", false
	}
	dir, found := "", false
	for i := 0; i < len(opts); i++ {
		t := opts[i].text
		var f field
		switch {
		case (t == "-"+short || t == "--chdir") && i+1 < len(opts):
			i++
			f = opts[i]
		case strings.HasPrefix(t, "--chdir="):
			f = opts[i]
			f.text = t[len("--chdir="):]
		case strings.HasPrefix(t, "-"+short) && len(t) > 2:
			f = opts[i]
			f.text = t[2:]
		default:
			continue
		}
		d, ok := staticText(f)
		if !ok {
			d = UnknownDir
		}
		dir, found = d, true
	}
	return dir, found
}

// loopVar gives a for loop's variable the loop's items as its values.
func (w *walker) loopVar(loop *syntax.WordIter, items []field) {
	if loop.Name == nil {
		return
	}
	name := loop.Name.Value
	if len(items) == 0 || len(items) > maxAlternatives {
		w.assignVar(name, "", false, false, false)
		w.s.Iterated = append(w.s.Iterated, name)
		return
	}
	vals := make([]string, 0, len(items))
	for _, f := range items {
		t, ok := staticText(f)
		if !ok {
			w.assignVar(name, "", false, false, false)
			w.s.Iterated = append(w.s.Iterated, name)
			return
		}
		vals = appendAlt(vals, t)
	}
	v := w.sem.vars[name]
	v.vals, v.known = vals, true
	w.setVar(name, v)
}

// bindListing gives name the values of a listing's globs (a line each),
// as loopVar does a for loop's words.
func (w *walker) bindListing(name, listing string) {
	vals := strings.Split(listing, "\n")
	if len(vals) > maxAlternatives {
		w.assignVar(name, "", false, false, false)
		w.s.Iterated = append(w.s.Iterated, name)
		return
	}
	v := w.sem.vars[name]
	v.vals, v.known = vals, true
	w.setVar(name, v)
}

// readNames returns the variables read (its arguments args) assigns:
// its operands, past the options and their values (-p PROMPT, -d, -n,
// -N, -t, -u), and -a's array.
func readNames(args []string) []string {
	var names []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) > 1 && a[0] == '-' {
			if strings.IndexAny(a[len(a)-1:], "pdnNtu") == 0 {
				i++ // the option's value
			} else if a[len(a)-1] == 'a' && i+1 < len(args) {
				names = append(names, args[i+1])
				i++
			}
			continue
		}
		names = append(names, a)
	}
	return names
}

// declExports reports whether a declaration exports its variables.
func declExports(d *syntax.DeclClause) bool {
	if d.Variant.Value == "export" {
		return true
	}
	for _, a := range d.Args {
		if a.Name == nil && a.Value != nil && len(a.Value.Parts) == 1 {
			if lit, ok := a.Value.Parts[0].(*syntax.Lit); ok && strings.HasPrefix(lit.Value, "-") && strings.Contains(lit.Value, "x") {
				return true
			}
		}
	}
	return false
}

// feedsShell reports whether a command is a shell reading its script
// from stdin (sh, bash -s, sh -).
func feedsShell(c string) bool {
	words := strings.Fields(c)
	if len(words) == 0 {
		return false
	}
	prog := words[0]
	if i := strings.LastIndexByte(prog, '/'); i >= 0 {
		prog = prog[i+1:]
	}
	prog = strings.Trim(prog, "'\"")
	if !shells[prog] {
		return false
	}
	for _, w := range words[1:] {
		w = strings.Trim(w, "'\"") // an argv list is quoted: 'sh' '-c' '…'
		if strings.HasPrefix(w, "-") && strings.Contains(w, "c") && !strings.HasPrefix(w, "--") {
			return false
		}
	}
	return true
}
