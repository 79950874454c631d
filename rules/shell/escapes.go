package shell

import (
	"encoding/json"
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
		if program == "kubectl" || program == "oc" {
			w.credentialCommand(program, args, fr)
		}
		w.containerExec(program, args, redirs, fr)
		return
	case "gcloud", "az", "aws", "salt", "salt-ssh":
		if program == "aws" {
			w.credentialCommand(program, args, fr)
		}
		// Most of their commands run nothing elsewhere: a look for the
		// one word each needs before the words are copied.
		if !hasFieldWith(args, remoteVerb(program)) && !(program == "aws" && hasFieldWith(args, "start-session")) {
			return
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
			// COPY … TO PROGRAM 'cmd' / FROM PROGRAM 'cmd': the server
			// runs cmd through its shell. Read from each COPY of the
			// whole text: the command may hold a ';'.
			if program == "psql" {
				upper := asciiUpper(sql) // the same length as sql
				for off := 0; off < len(upper); {
					i := strings.Index(upper[off:], "COPY")
					if i < 0 {
						break
					}
					if c, ok := copyProgram(sql[off+i:]); ok {
						w.nestedShell(c, fr, "COPY PROGRAM", "sh", nil)
					}
					off += i + len("copy")
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
		if code, ok := tclProgram(program, args, redirs); ok {
			w.interpreterCode(program, "tcl", code, fr)
		}
	case "osascript":
		for i, a := range words {
			if a == "-e" && i+1 < len(words) {
				for _, c := range appleScriptShell(words[i+1]) {
					w.nestedShell(c, fr, "osascript do shell script", "sh", nil)
				}
			}
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
		// ansible HOSTS -m MODULE -a ARGS (command is the default
		// module): what the module does on each host (ansible.go).
		module, _ := flagValue(words, "m", "module-name")
		if module == "" {
			module = "command"
		}
		if ansibleCheckMode(words) {
			return
		}
		if args, ok := flagValue(words, "a", "args"); ok {
			if c := ansibleCommand(module, args, nil); c != "" {
				w.remoteShell(c, fr, "ansible -m "+module)
			}
		}
	case "ansible-playbook":
		// ansible-playbook … /dev/stdin <<EOF: the tasks of the playbook
		// the line gives run on each host (not in check mode).
		if ansibleCheckMode(words) {
			return
		}
		for _, op := range operandWords(words, []string{"-i", "--inventory", "-e", "--extra-vars", "-l", "--limit", "-u", "--user",
			"-t", "--tags", "--skip-tags", "-f", "--forks", "--vault-password-file", "--private-key", "-c", "--connection"}) {
			if op != "/dev/stdin" && op != "-" {
				continue
			}
			for _, r := range redirs {
				if text, ok := r.Input(); ok {
					for _, c := range playbookCommands(text) {
						w.remoteShell(c, fr, "ansible-playbook task")
					}
				}
			}
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
	case "gcloud":
		// gcloud compute ssh INSTANCE --command CMD, or -- CMD: it runs
		// on the instance, as ssh's does.
		if sub := operandWords(words, gcloudValued); len(sub) >= 2 && sub[0] == "compute" && sub[1] == "ssh" {
			c, ok := flagValue(words, "", "command")
			if !ok {
				c, ok = afterDashes(words)
			}
			if ok {
				w.remoteShell(c, fr, "gcloud compute ssh")
			}
		}
	case "az":
		// az vm run-command invoke … --scripts CMD…: each runs on the VM.
		if sub := operandWords(words, gcloudValued); len(sub) >= 2 && sub[0] == "vm" && sub[1] == "run-command" {
			for _, c := range flagValues(words, "scripts", "script") {
				w.remoteShell(c, fr, "az vm run-command")
			}
		}
	case "aws":
		// aws ssm send-command --parameters commands=[…]: each command
		// runs on every instance the targets name.
		// start-session with AWS-StartInteractiveCommand takes one
		// command=… parameter the same way.
		if sub := operandWords(words, awsValued); len(sub) >= 2 && sub[0] == "ssm" && (sub[1] == "send-command" || sub[1] == "start-session") {
			if p, ok := flagValue(words, "", "parameters"); ok {
				for _, c := range ssmCommands(p) {
					w.remoteShell(c, fr, "aws ssm send-command")
				}
			}
		}
	case "bolt":
		// bolt command run CMD --targets …: CMD runs on every target.
		if ops := operandWords(words, nil); len(ops) >= 3 && ops[0] == "command" && ops[1] == "run" {
			w.remoteShell(ops[2], fr, "bolt command run")
		}
	case "salt", "salt-ssh":
		// salt TARGET cmd.run CMD (also cmd.shell, cmd.run_all …).
		for i, a := range words {
			if strings.HasPrefix(a, "cmd.") && a != "cmd.script" && i+1 < len(words) {
				w.remoteShell(words[i+1], fr, program+" "+a)
				break
			}
		}
	}
}

// remoteVerb is the word a remote-running command of program holds:
// gcloud compute ssh, az vm run-command, aws ssm send-command (or
// start-session, looked for beside it), salt's cmd.* functions.
func remoteVerb(program string) string {
	switch program {
	case "gcloud":
		return "ssh"
	case "az":
		return "run-command"
	case "aws":
		return "send-command"
	}
	return "cmd."
}

// hasFieldWith reports whether a field's text is word, or starts with
// it when word ends in ".".
func hasFieldWith(args []field, word string) bool {
	for _, a := range args {
		if a.text == word || strings.HasSuffix(word, ".") && strings.HasPrefix(a.text, word) {
			return true
		}
	}
	return false
}

// remoteShell judges a command that runs on another machine: the
// agent's action too, in a directory this line cannot know.
func (w *walker) remoteShell(c string, fr frame, via string) {
	remote := fr
	remote.chdir = UnknownDir
	w.nestedShell(c, remote, via, "sh", nil)
}

// Options of gcloud / az and of aws that take the next word as value,
// before or between the command groups.
var (
	gcloudValued = []string{"--project", "--zone", "--region", "--format", "--account", "--configuration", "--resource-group",
		"-g", "--name", "-n", "--subscription", "--output", "-o", "--query", "--ssh-key-file", "--ssh-flag", "--command",
		"--scripts", "--script", "--command-id", "--ids", "--parameters", "--internal-ip", "--tunnel-through-iap"}
	awsValued = []string{"--profile", "--region", "--output", "--endpoint-url", "--query", "--cli-read-timeout",
		"--cli-connect-timeout", "--ca-bundle", "--color", "--document-name", "--targets", "--instance-ids", "--parameters",
		"--comment", "--timeout-seconds", "--max-concurrency", "--max-errors"}
)

// operandWords returns words' operands, skipping options and the values
// of those named in valued (none: for commands whose options that
// matter take no value), and all of what follows "--".
func operandWords(words []string, valued []string) []string {
	var ops []string
	for i := 0; i < len(words); i++ {
		a := words[i]
		switch {
		case a == "--":
			return append(ops, words[i+1:]...)
		case slices.Contains(valued, a):
			i++
		case !strings.HasPrefix(a, "-"):
			ops = append(ops, a)
		}
	}
	return ops
}

// afterDashes joins what follows "--".
func afterDashes(words []string) (string, bool) {
	if i := slices.Index(words, "--"); i >= 0 && i+1 < len(words) {
		return strings.Join(words[i+1:], " "), true
	}
	return "", false
}

// flagValues returns the values of a long option that takes every word
// up to the next option (az's --scripts "a" "b"), under either name.
func flagValues(words []string, long ...string) []string {
	var vals []string
	for i := 0; i < len(words); i++ {
		name, val, eq := strings.Cut(strings.TrimPrefix(words[i], "--"), "=")
		if !strings.HasPrefix(words[i], "--") || !slices.Contains(long, name) {
			continue
		}
		if eq {
			vals = append(vals, val)
			continue
		}
		for i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") {
			i++
			vals = append(vals, words[i])
		}
	}
	return vals
}

// ssmCommands returns the commands of an SSM document's parameters, in
// the CLI's shorthand (commands=["a","b"], commands=a) or as JSON
// ({"commands":["a"]}).
func ssmCommands(p string) []string {
	p = strings.TrimSpace(p)
	if strings.HasPrefix(p, "{") {
		var doc map[string][]string
		if json.Unmarshal([]byte(p), &doc) != nil {
			return nil
		}
		return append(doc["commands"], doc["command"]...)
	}
	v, ok := strings.CutPrefix(p, "commands=")
	if !ok {
		if v, ok = strings.CutPrefix(p, "command="); !ok {
			return nil
		}
	}
	if strings.HasPrefix(v, "[") {
		var list []string
		if json.Unmarshal([]byte(v), &list) == nil {
			return list
		}
		v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	}
	return []string{v}
}

// containerExec follows the command a container tool runs in an
// existing or new container: docker exec CONTAINER CMD…, docker
// compose exec|run SERVICE CMD…, kubectl exec POD -- CMD…, kubectl
// debug … -- CMD…, and the pods kubectl starts with a command (kubectl
// run NAME --image=… -- CMD…, kubectl create job|cronjob … -- CMD…).
// Global options may come first (kubectl -n prod exec, docker -H host
// exec). Their other commands run nothing of the line's. With -i the
// command reads the line's input: docker exec -i C sh <<EOF runs the
// here-document, as sh <<EOF would.
func (w *walker) containerExec(program string, args []field, redirs []Redirect, fr frame) {
	valued := dockerGlobals
	if program == "kubectl" || program == "oc" {
		valued = kubectlGlobals
	}
	at := subcommandField(args, valued)
	if at < 0 {
		return
	}
	sub, rest := args[at].text, args[at+1:]
	if program == "kubectl" || program == "oc" {
		startsPod := sub == "run" || sub == "create" && len(rest) > 0 && (rest[0].text == "job" || rest[0].text == "cronjob")
		if sub == "exec" || sub == "debug" || startsPod {
			if i := slices.IndexFunc(rest, func(f field) bool { return f.text == "--" }); i >= 0 && i+1 < len(rest) {
				w.wrapped(rest[i+1:], stdinOf(rest[:i], redirs), fr, program+" "+sub)
			}
		}
		return
	}
	if sub == "container" || sub == "compose" {
		// docker container exec, docker compose [-f FILE] exec|run:
		// SERVICE takes the container's place.
		j := subcommandField(rest, dockerGlobals)
		if j < 0 {
			return
		}
		sub, rest = sub+" "+rest[j].text, rest[j+1:]
	}
	if sub != "exec" && sub != "container exec" && sub != "compose exec" && sub != "compose run" {
		return
	}
	spec := wrapper{valueShort: "euwp", valueLong: []string{"env", "env-file", "user", "workdir", "detach-keys", "index", "name",
		"entrypoint", "volume", "publish", "label"}, operands: 1}
	if start, _, ok := spec.commandStart(rest); ok {
		w.wrapped(rest[start:], stdinOf(rest[:start], redirs), fr, program+" "+sub)
	}
}

// stdinOf returns the input redirections of redirs when the options of
// an exec attach the line's input (-i, -it, --interactive, --stdin), or
// nil.
func stdinOf(opts []field, redirs []Redirect) []Redirect {
	attached := false
	for _, o := range opts {
		t := o.text
		attached = attached || t == "--interactive" || t == "--stdin" || t == "--interactive=true" || t == "--stdin=true" ||
			len(t) > 1 && t[0] == '-' && t[1] != '-' && strings.IndexByte(t, 'i') > 0
	}
	if !attached {
		return nil
	}
	var in []Redirect
	for _, r := range redirs {
		if _, ok := r.Input(); ok || r.Op == "<" {
			in = append(in, r)
		}
	}
	return in
}

// The global options of docker / podman / nerdctl and of kubectl / oc
// that take the next word as their value.
var (
	dockerGlobals = []string{"-H", "--host", "-c", "--context", "--config", "-l", "--log-level", "--tlscacert", "--tlscert",
		"--tlskey", "--url", "--connection", "--identity", "--namespace", "-n", "--address", "-a", "-f", "--file", "-p",
		"--project-name", "--project-directory", "--env-file", "--profile"}
	kubectlGlobals = []string{"-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user", "-s", "--server",
		"--token", "--as", "--as-group", "--as-uid", "--request-timeout", "--cache-dir", "--certificate-authority",
		"--client-certificate", "--client-key", "--tls-server-name", "--profile", "--profile-output", "--log-file",
		"--username", "--password"}
)

// subcommandField returns the index of the first operand of args past
// the options (and the values of those named in valued), or -1.
func subcommandField(args []field, valued []string) int {
	for i := 0; i < len(args); i++ {
		switch a := args[i].text; {
		case slices.Contains(valued, a):
			i++
		case !strings.HasPrefix(a, "-"):
			return i
		}
	}
	return -1
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
		if isIdentByte(before) || before == '-' || rest == "" || rest[0] != ' ' && rest[0] != '\t' {
			return // part of a longer word
		}
		if words := tclWords(rest); len(words) > 0 {
			out = append(out, strings.Join(words, " "))
		}
	})
	return out
}

// tclWords reads the words of one Tcl command from the start of code, up
// to a newline, ';' or ']' outside braces and quotes, as shell words: a
// braced word ({curl … | sh}) or a quoted one is one literal word, quoted
// for the shell; a bare word ($c, [list …], -n) is kept as written. A
// trailing & (run in the background) is dropped.
func tclWords(code string) []string {
	var words []string
	i := 0
	for i < len(code) {
		for i < len(code) && (code[i] == ' ' || code[i] == '\t') {
			i++
		}
		if i >= len(code) || code[i] == '\n' || code[i] == ';' || code[i] == ']' {
			break
		}
		switch code[i] {
		case '{':
			depth, j := 0, i
			for ; j < len(code); j++ {
				if code[j] == '{' {
					depth++
				} else if code[j] == '}' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			if j >= len(code) {
				return words // unbalanced: the rest is not read
			}
			words = append(words, quoteWords([]string{code[i+1 : j]}))
			i = j + 1
		case '"':
			j := i + 1
			for j < len(code) && code[j] != '"' {
				if code[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(code) {
				return words
			}
			words = append(words, quoteWords([]string{code[i+1 : j]}))
			i = j + 1
		default:
			j := i
			for j < len(code) && !strings.ContainsRune(" \t\n;]", rune(code[j])) {
				j++
			}
			words = append(words, code[i:j])
			i = j
		}
	}
	if n := len(words); n > 0 && words[n-1] == "&" {
		words = words[:n-1]
	}
	return words
}

// tclProgram returns the Tcl program expect, tclsh or wish runs from its
// arguments (expect -c CMDS) or a here-document or here-string, when the
// line shows it.
func tclProgram(program string, args []field, redirs []Redirect) (string, bool) {
	if program == "expect" {
		if code, ok := flagValue(texts(args), "c", ""); ok {
			return code, true
		}
	}
	return stdinProgram(args, redirs)
}

// TclProgram is tclProgram for a command's argument words.
func TclProgram(program string, args []string, redirs []Redirect) (string, bool) {
	if !tclInterpreter(program) {
		return "", false
	}
	return tclProgram(program, plainFields(args), redirs)
}

// tclInterpreter reports the programs that run Tcl.
func tclInterpreter(program string) bool {
	return program == "tclsh" || program == "wish" || program == "expect" || strings.HasPrefix(program, "tclsh8")
}

// appleScriptShell returns the string literals of an AppleScript's
// "do shell script" commands and of the scripts it has Terminal run
// ("tell application \"Terminal\" to do script \"…\"").
func appleScriptShell(script string) []string {
	var out []string
	// JavaScript for Automation spells it app.doShellScript("…").
	afterKeywords(script, []string{"do shell script", "do script", "doShellScript("}, func(_ byte, rest string) {
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
		EachIndex(code, kw, func(i int) bool {
			var before byte
			if i > 0 {
				before = code[i-1]
			}
			fn(before, code[i+len(kw):])
			return true
		})
	}
}

// EachIndex calls fn with the index of each occurrence of sub in s, left
// to right and not overlapping, while fn returns true.
func EachIndex(s, sub string, fn func(i int) bool) {
	for off := 0; off < len(s); {
		i := strings.Index(s[off:], sub)
		if i < 0 {
			return
		}
		i += off
		off = i + len(sub)
		if !fn(i) {
			return
		}
	}
}

// copyProgram returns the command of a PostgreSQL COPY … TO PROGRAM
// 'cmd' or FROM PROGRAM 'cmd' statement (” inside the literal is a
// quote).
func copyProgram(stmt string) (string, bool) {
	up := asciiUpper(stmt)
	if !strings.HasPrefix(strings.TrimSpace(up), "COPY") {
		return "", false
	}
	i := strings.Index(up, " PROGRAM ")
	if i < 0 {
		return "", false
	}
	rest := strings.TrimSpace(stmt[i+len(" PROGRAM "):])
	if !strings.HasPrefix(rest, "'") {
		return "", false
	}
	var b strings.Builder
	for j := 1; j < len(rest); j++ {
		if rest[j] == '\'' {
			if j+1 < len(rest) && rest[j+1] == '\'' {
				b.WriteByte('\'')
				j++
				continue
			}
			return b.String(), true
		}
		b.WriteByte(rest[j])
	}
	return "", false
}

// asciiUpper upper-cases the ASCII letters of s and nothing else, so that
// an index into the result is one into s (strings.ToUpper may change the
// length: invalid UTF-8, some runes).
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

// credentialCommand follows the command a client is configured to run
// for its credentials, every time it needs them: kubectl config
// set-credentials --exec-command C --exec-arg A (an exec plugin, run
// with no shell between), aws configure set credential_process "C A".
func (w *walker) credentialCommand(program string, args []field, fr frame) {
	words := texts(args)
	if program == "aws" {
		for i := 0; i+2 < len(words); i++ {
			if words[i] == "set" && (words[i+1] == "credential_process" || strings.HasSuffix(words[i+1], ".credential_process")) {
				w.nestedShell(words[i+2], fr, "aws credential_process", "sh", nil)
				return
			}
		}
		return
	}
	if !slices.Contains(words, "set-credentials") {
		return
	}
	var argv []string
	for i := 0; i < len(words); i++ {
		name, val, attached := strings.Cut(words[i], "=")
		if name != "--exec-command" && name != "--exec-arg" {
			continue
		}
		if !attached {
			if i+1 >= len(words) {
				break
			}
			i++
			val = words[i]
		}
		argv = append(argv, val)
	}
	if len(argv) > 0 {
		w.nestedShell(quoteWords(argv), fr, program+" exec credential plugin", "sh", nil)
	}
}
