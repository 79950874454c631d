package shell

import (
	"slices"
	"strings"
)

// Programs with a way out to a command (GTFOBins lists each): a debugger
// or database client's shell escape (gdb -ex '!…', sqlite3 '.shell …',
// mysql -e '\! …', psql -c '\! …'), a pager or archiver's command option
// (man -P, less +!…, zip -TT), programs whose operands or script run a
// command (parallel, capsh --, start-stop-daemon, expect's spawn, tclsh's
// exec, osascript's do shell script), and commands run elsewhere by this
// one (ssh HOST CMD, pdsh / pssh / clush, ansible -a, docker exec, kubectl
// exec). Each command they run is judged as a nested
// script or a wrapped program, Via the program.

// escapes follows the commands program runs by such a way out.
func (w *walker) escapes(program string, args []field, redirs []Redirect, fr frame) {
	switch program {
	case "docker", "podman", "nerdctl", "kubectl", "oc":
		if len(args) == 0 || args[0].text != "exec" {
			return // most of their commands run nothing of the line's
		}
	}
	words := texts(args)
	switch program {
	case "gdb":
		for i := 0; i+1 < len(words); i++ {
			switch words[i] {
			case "-ex", "--ex", "-eval-command", "--eval-command", "-iex", "--iex":
				i++
				if c, ok := gdbShell(words[i]); ok {
					w.nestedShell(c, fr, "gdb shell", "sh", nil)
				}
			}
		}
	case "sqlite3":
		// Its SQL and dot-commands are operands or -cmd values: each word
		// that is a .shell or .system command runs.
		for _, a := range words {
			for _, dot := range []string{".shell ", ".system "} {
				if c, ok := strings.CutPrefix(strings.TrimSpace(a), dot); ok {
					w.nestedShell(c, fr, "sqlite3 "+strings.TrimSpace(dot), "sh", nil)
				}
			}
		}
	case "mysql", "mariadb", "psql":
		short, long := "e", "execute"
		if program == "psql" {
			short, long = "c", "command"
		}
		if sql, ok := flagValue(words, short, long); ok {
			for _, stmt := range strings.Split(sql, ";") {
				stmt = strings.TrimSpace(stmt)
				c, ok := strings.CutPrefix(stmt, `\!`)
				if !ok && program != "psql" {
					c, ok = strings.CutPrefix(stmt, "system ")
				}
				if ok {
					w.nestedShell(strings.TrimSpace(c), fr, program+` \!`, "sh", nil)
				}
			}
		}
	case "man":
		// man runs its pager and browser through sh -c.
		for _, o := range [][2]string{{"P", "pager"}, {"H", "html"}} {
			if c, ok := flagValue(words, o[0], o[1]); ok && c != "" {
				w.nestedShell(c, fr, "man -"+o[0], "sh", nil)
			}
		}
	case "less", "more":
		// +CMD runs a less command first; "!" is its shell escape.
		for _, a := range words {
			if c, ok := strings.CutPrefix(a, "+"); ok {
				if i := strings.IndexByte(c, '!'); i >= 0 && strings.Trim(c[:i], "+g0123456789") == "" {
					w.nestedShell(c[i+1:], fr, program+" !", "sh", nil)
				}
			}
		}
	case "zip":
		if c, ok := flagValue(words, "", "unzip-command"); ok {
			w.nestedShell(c, fr, "zip -TT", "sh", nil)
		}
		for i, a := range words {
			if a == "-TT" && i+1 < len(words) {
				w.nestedShell(words[i+1], fr, "zip -TT", "sh", nil)
			}
		}
	case "parallel":
		w.parallel(args, fr)
	case "capsh":
		// capsh [options] -- ARGS runs /bin/bash ARGS.
		for i, a := range words {
			if a == "--" {
				sh := field{text: "bash", raw: "bash"}
				w.wrapped(append([]field{sh}, args[i+1:]...), redirs, fr, "capsh --")
				break
			}
		}
	case "expect", "tclsh", "wish":
		code := ""
		if program == "expect" {
			code, _ = flagValue(words, "c", "")
		}
		if code == "" && !namesScript(args) {
			for _, r := range redirs {
				if text, ok := r.Input(); ok {
					code = text
				}
			}
		}
		for _, c := range tclCommands(code) {
			w.nestedShell(c, fr, program, "sh", nil)
		}
	case "osascript":
		for i, a := range words {
			if a == "-e" && i+1 < len(words) {
				for _, c := range appleScriptShell(words[i+1]) {
					w.nestedShell(c, fr, "osascript do shell script", "sh", nil)
				}
			}
		}
	case "docker", "podman", "nerdctl":
		// docker exec [options] CONTAINER CMD… (only exec gets here)
		spec := wrapper{valueShort: "euw", valueLong: []string{"env", "env-file", "user", "workdir", "detach-keys"}, operands: 1}
		if start, _, ok := spec.commandStart(args[1:]); ok {
			w.wrapped(args[1+start:], nil, fr, program+" exec")
		}
	case "pdsh", "pssh", "parallel-ssh", "clush":
		// pdsh -w HOSTS CMD…: the command runs on each host, as ssh's.
		spec := wrapper{valueShort: "wxlRugfthHopOXte", valueLong: []string{"hosts", "host", "user", "timeout", "par", "outdir", "errdir", "option"}}
		if start, _, ok := spec.commandStart(args); ok {
			remote := fr
			remote.chdir = UnknownDir
			w.nestedShell(strings.Join(words[start:], " "), remote, program, "sh", nil)
		}
	case "ansible":
		// ansible HOSTS -m shell|command|raw -a CMD (command is the
		// default module).
		module, _ := flagValue(words, "m", "module-name")
		if c, ok := flagValue(words, "a", "args"); ok && (module == "" || module == "shell" || module == "command" || module == "raw" ||
			module == "ansible.builtin.shell" || module == "ansible.builtin.command" || module == "ansible.builtin.raw") {
			remote := fr
			remote.chdir = UnknownDir
			w.nestedShell(c, remote, "ansible -a", "sh", nil)
		}
	case "start-stop-daemon":
		// start-stop-daemon --start --exec PATH [-- ARGS]: runs PATH
		// (or --startas) with ARGS.
		prog, ok := flagValue(words, "a", "startas")
		if !ok {
			prog, ok = flagValue(words, "x", "exec")
		}
		if ok && prog != "" && (slices.Contains(words, "--start") || slices.Contains(words, "-S")) {
			call := []field{{text: prog, raw: prog}}
			for i, a := range words {
				if a == "--" {
					call = append(call, args[i+1:]...)
					break
				}
			}
			w.wrapped(call, nil, fr, "start-stop-daemon")
		}
	case "kubectl", "oc":
		// kubectl exec [options] POD -- CMD… (only exec gets here)
		for i, a := range words {
			if a == "--" && i+1 < len(words) {
				w.wrapped(args[i+1:], nil, fr, program+" exec")
				break
			}
		}
	}
}

// gdbShell returns the command of a gdb "!CMD" or "shell CMD".
func gdbShell(c string) (string, bool) {
	c = strings.TrimSpace(c)
	if rest, ok := strings.CutPrefix(c, "!"); ok {
		return rest, true
	}
	if rest, ok := strings.CutPrefix(c, "shell "); ok {
		return rest, true
	}
	return "", false
}

// parallel follows GNU parallel: its command template runs once per input
// through the shell, with the inputs after ::: in place of {} (or after
// it); with no template, each input is a command line.
func (w *walker) parallel(args []field, fr frame) {
	words := texts(args)
	sep := -1
	for i, a := range words {
		if a == ":::" || a == ":::+" {
			sep = i
			break
		}
	}
	spec := wrapper{valueShort: "jSaEdIkLlnNPsX", valueLong: []string{"jobs", "arg-file", "delimiter", "eof", "sshlogin", "sshloginfile",
		"colsep", "results", "joblog", "workdir", "tmpdir", "timeout", "delay", "halt", "memfree", "load"}}
	template := args
	if sep >= 0 {
		template = args[:sep]
	}
	start, _, ok := spec.commandStart(template)
	if !ok { // no template: each input is a command line
		if sep < 0 {
			return
		}
		for _, a := range words[sep+1:] {
			if a == ":::" || a == "::::" || a == ":::+" {
				continue
			}
			w.nestedShell(a, fr, "parallel", "sh", nil)
		}
		return
	}
	line := strings.Join(words[start:len(template)], " ")
	if sep < 0 {
		w.nestedShell(line, fr, "parallel", "sh", nil)
		return
	}
	for _, in := range words[sep+1:] {
		if in == ":::" || in == "::::" || in == ":::+" {
			continue
		}
		c := line
		if strings.Contains(c, "{}") {
			c = strings.ReplaceAll(c, "{}", quoteWords([]string{in}))
		} else {
			c += " " + quoteWords([]string{in})
		}
		w.nestedShell(c, fr, "parallel", "sh", nil)
	}
}

// tclCommands returns the command lines a Tcl or expect script starts with
// exec or spawn (exec rm -rf x, [exec id], spawn ssh host): the words up
// to the end of the command (newline, ";" or "]").
func tclCommands(code string) []string {
	var out []string
	afterKeywords(code, []string{"exec", "spawn"}, func(before byte, rest string) {
		if isIdentByte(before) || rest == "" || rest[0] != ' ' && rest[0] != '\t' {
			return // part of a longer word
		}
		if j := strings.IndexAny(rest, "\n;]"); j >= 0 {
			rest = rest[:j]
		}
		if rest = strings.TrimSpace(rest); rest != "" {
			out = append(out, rest)
		}
	})
	return out
}

// appleScriptShell returns the string literals of an AppleScript's
// "do shell script" commands and of the scripts it has Terminal run
// ("tell application \"Terminal\" to do script \"…\"").
func appleScriptShell(script string) []string {
	var out []string
	afterKeywords(script, []string{"do shell script", "do script"}, func(_ byte, rest string) {
		if lit, _, ok := readLiteral(strings.TrimLeft(rest, " \t")); ok {
			out = append(out, lit)
		}
	})
	return out
}

// afterKeywords calls fn for each occurrence of one of kws in the first
// maxCodeScan bytes of code, with the byte before it (0 at the start)
// and the text after it.
func afterKeywords(code string, kws []string, fn func(before byte, rest string)) {
	if len(code) > maxCodeScan {
		code = code[:maxCodeScan]
	}
	for _, kw := range kws {
		for off := 0; off < len(code); {
			i := strings.Index(code[off:], kw)
			if i < 0 {
				break
			}
			i += off
			off = i + len(kw)
			var before byte
			if i > 0 {
				before = code[i-1]
			}
			fn(before, code[off:])
		}
	}
}
