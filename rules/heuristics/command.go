package heuristics

import (
	"strings"

	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/shell"
)

// cmdView is one simple command with wrappers (sudo, env, nice, timeout,
// xargs, …) peeled off, so "sudo -u root rm -rf /" is judged as rm.
type cmdView struct {
	c    *shell.Command
	idx  int      // index in Script.Commands
	prog string   // effective program, base name; "" when computed at run time
	args []string // effective arguments (a sub-slice of c.Args, never copied)
	// elevated names the elevation wrapper (sudo, doas, pkexec) or "".
	elevated string
	// kind is interpreterKind(prog), computed once.
	kind string
	// fam says which program-specific rules can concern the command.
	fam family
	// code is the interpreter's inline program (see inlineCode), found
	// once; hasCode says whether there is one.
	code    string
	hasCode bool
	// traits caches codeTraits of code and the module flags, computed on
	// first use (traitsDone).
	traits     uint32
	traitsDone bool
	// ops caches operands(args, "", nil), which many rules ask for
	// (opsDone says it is set): worked out, and maybe allocated, once.
	ops     []string
	opsDone bool
	// writes caches the paths v writes (see writeTargets), which several
	// rule families judge; writesDone says it is set.
	writes     []string
	writesDone bool
	// net caches netKind(v), which the exfiltration, metadata and secret
	// rules all ask (netDone says it is set).
	net     string
	netDone bool
	// program caches hostedProgram (programDone says it is set).
	program     hostedCode
	programDone bool
	// editFiles, editScripts and editOK cache inPlaceScripts, which the
	// planted-code, erase, source-swap, weakening and .env rules all ask
	// (editDone says they are set).
	editFiles, editScripts []string
	editOK, editDone       bool
}

// hostedCode is the program a command runs in another language, folded
// (shell.FoldCode: the home named through the language is "$HOME", joined
// literals are one), and the files its calls change.
type hostedCode struct {
	lang, code string
	effects    []shell.CodeEffect
}

// unknown reports whether the code may op a file its calls do not show:
// no call that does is found (the markers may know one), or one is given
// a path the code computes.
func (hc *hostedCode) unknown(op shell.CodeOp) bool {
	found := false
	for _, e := range hc.effects {
		if e.Op == op {
			if e.Path == "" {
				return true
			}
			found = true
		}
	}
	return !found
}

// hostedProgram returns the code v runs in another language (python3 -c,
// node -e, a here-document, deno eval, gdb -ex 'python …', the text piped
// into it), folded, with the files its calls write and delete; worked
// out on first use. code is "" for other commands.
func (v *cmdView) hostedProgram() *hostedCode {
	if !v.programDone {
		v.programDone = true
		lang, code, ok := shell.InterpreterProgram(v.prog, v.args, v.c.Redirects)
		if !ok && lang != "" && v.c.PipedProgram != "" {
			code, ok = v.c.PipedProgram, true
		}
		if ok && code != "" && lang != "" {
			code = shell.FoldCode(code)
			v.program = hostedCode{lang: lang, code: code, effects: shell.CodeEffects(code)}
		}
	}
	return &v.program
}

// netKind is netKind(v), computed on first use.
func (v *cmdView) netKind() string {
	if !v.netDone {
		v.net, v.netDone = netKind(v), true
	}
	return v.net
}

// operandAt returns a reader of ops by position that gives "" past the
// end, so that a rule can ask for op(2) without counting first.
func operandAt(ops []string) func(int) string {
	return func(i int) string {
		if i < len(ops) {
			return ops[i]
		}
		return ""
	}
}

// plainOperands is operands(v.args, "", nil), computed on first use. The
// result is shared: callers must not write into it.
func (v *cmdView) plainOperands() []string {
	if !v.opsDone {
		v.ops, v.opsDone = operands(v.args, "", nil), true
	}
	return v.ops
}

// cmdScan is one parsed command line being judged, with the caller's
// directories for resolving its paths.
type cmdScan struct {
	script *shell.Script
	views  []cmdView
	act    *action.Action // whose command, or decoded text, this is
	root   string
	home   string
	// resolved remembers what resolveIn answered: the rules resolve the
	// same few arguments and redirections again and again (about half
	// of all calls over the corpus). nil: no memory.
	resolved *resolveMemo
	// fams is the union of the views' families.
	fams family
	// targets holds the views' write targets (cmdView.writes are
	// sub-slices of it), in buf.targets while they fit.
	targets []string
	buf     *scanBuf
}

// smallScript is how many commands fit the caller's stack buffer.
const smallScript = 4

// scanBuf is the scratch of one cmdScan: the views of a short command
// line and the memory of resolved paths.
type scanBuf struct {
	views [smallScript]cmdView
	// nviews is how many of views the scan used (putViews clears those).
	nviews   int
	resolved resolveMemo
	targets  [8]string
	// ntargets is how many of targets the scan used.
	ntargets int
}

// resolveMemo holds the first few paths resolveIn resolved, by command
// and word. A line with more paths resolves the rest every time: the
// memory stays small and its search short.
type resolveMemo struct {
	n int
	e [8]resolvedPath
}

type resolvedPath struct {
	c    *shell.Command
	word string
	path action.Path
}

func (m *resolveMemo) lookup(c *shell.Command, word string) (action.Path, bool) {
	for i := range m.e[:m.n] {
		if e := &m.e[i]; e.c == c && e.word == word {
			return e.path, true
		}
	}
	return action.Path{}, false
}

func (m *resolveMemo) remember(c *shell.Command, word string, p action.Path) {
	if m.n < len(m.e) {
		m.e[m.n] = resolvedPath{c: c, word: word, path: p}
		m.n++
	}
}

// reset forgets every path (and so every command it points to).
func (m *resolveMemo) reset() {
	clear(m.e[:m.n])
	m.n = 0
}

// newCmdScan prepares the views of sc. buf, usually a stack array of the
// caller, holds the views of short command lines so they cost no heap
// allocation (hence a value result, not a pointer).
func newCmdScan(sc *shell.Script, act *action.Action, buf *scanBuf) cmdScan {
	buf.resolved.reset()
	cs := cmdScan{script: sc, act: act, root: act.Caller.WorkspaceRoot, home: act.Caller.Home, resolved: &buf.resolved, targets: buf.targets[:0], buf: buf}
	if len(sc.Commands) <= len(buf.views) {
		cs.views = buf.views[:len(sc.Commands)]
		buf.nviews = len(sc.Commands)
	} else {
		cs.views = make([]cmdView, len(sc.Commands))
	}
	for i := range sc.Commands {
		c := &sc.Commands[i]
		v := &cs.views[i]
		v.c, v.idx = c, i
		v.prog, v.args, v.elevated = unwrap(c.Name, c.Program, c.Args)
		v.kind = interpreterKind(v.prog)
		v.fam = viewFamily(v)
		cs.fams |= v.fam
		v.code, v.hasCode = findInlineCode(v)
	}
	return cs
}

// unknownPrefix puts a path that starts with a value only known at run
// time ("$(cat f)/.ssh/x", "$DIR/x"; not $HOME) under shell.UnknownDir.
func unknownPrefix(p string) string {
	if len(p) < 2 || p[0] != '$' && p[0] != '`' || strings.HasPrefix(p, "$HOME") || strings.HasPrefix(p, "${HOME}") {
		return p
	}
	w := withoutUnknown(p)
	if w == p || !strings.HasPrefix(w, "/") || !strings.HasSuffix(p, w) {
		return p
	}
	return shell.UnknownDir + w
}

// judged reports whether a path as written already falls under a
// protected class (~/.ssh/*, rm -rf ~/*): a glob's match only stands in
// for a path that would otherwise be judged harmless.
func (cs *cmdScan) judged(p action.Path) bool {
	if sens, _ := classify(p.Abs, cs.home); sens != sensNone {
		return true
	}
	if stripGlobChild(p.Abs) != p.Abs && criticalKind(p, cs.root, cs.home) != critNone {
		return true // d/*: every child of a protected directory
	}
	_, _, ok := persistTarget(p, cs.home)
	return ok
}

// resolveIn places a path argument of command c: relative to the
// directory c runs in (cd, git -C, …), then to the caller's workspace. A
// glob that can match a protected path is judged as that path.
func (cs *cmdScan) resolveIn(c *shell.Command, p string) action.Path {
	if cs.resolved == nil {
		return cs.resolve(c, p)
	}
	if r, ok := cs.resolved.lookup(c, p); ok {
		return r
	}
	r := cs.resolve(c, p)
	cs.resolved.remember(c, p, r)
	return r
}

// resolve is resolveIn without the memory.
func (cs *cmdScan) resolve(c *shell.Command, p string) action.Path {
	if c != nil {
		p = c.PathOf(p)
	}
	p = unknownPrefix(p)
	r := cs.act.CommandPath(p)
	// Inside a workspace that is not the home, no protected path can match.
	if strings.ContainsAny(r.Abs, "*?[") && !(r.InWorkspace && cs.root != cs.home) && !cs.judged(r) {
		if m := globProtected(r.Abs, cs.home); m != "" {
			r.Abs = m
		}
	}
	return r
}

// writeTargets returns the paths v writes (forEachWriteTarget), worked out
// on first use. The result is shared: callers must not write into it.
func (cs *cmdScan) writeTargets(v *cmdView) []string {
	if !v.writesDone {
		start := len(cs.targets)
		forEachWriteTarget(v, func(t string) { cs.targets = append(cs.targets, t) })
		end := len(cs.targets)
		v.writes, v.writesDone = cs.targets[start:end:end], true
		cs.buf.ntargets = min(end, len(cs.buf.targets))
	}
	return v.writes
}

// pipelineOf returns the pipeline members (indexes into views) of v, or nil.
func (cs *cmdScan) pipelineOf(v *cmdView) []int {
	p := v.c.Pipeline
	if p < 0 || p >= len(cs.script.Pipelines) {
		return nil
	}
	return cs.script.Pipelines[p]
}

// before returns the indexes of the commands before v in its pipeline.
// (Indexes, not callbacks with pointers, keep the views on the stack.)
func (cs *cmdScan) before(v *cmdView) []int {
	p := cs.pipelineOf(v)
	for k, i := range p {
		if i == v.idx {
			return p[:k]
		}
	}
	return nil
}

// after returns the indexes of the commands after v in its pipeline.
func (cs *cmdScan) after(v *cmdView) []int {
	p := cs.pipelineOf(v)
	for k, i := range p {
		if i == v.idx {
			return p[k+1:]
		}
	}
	return nil
}

// view returns the view at index i, or nil when i is out of range.
func (cs *cmdScan) view(i int) *cmdView {
	if i < 0 || i >= len(cs.views) {
		return nil
	}
	return &cs.views[i]
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// unwrap peels run-as and run-with wrappers off a command.
func unwrap(name, program string, args []string) (prog string, rest []string, elevated string) {
	prog, rest = program, args
	if prog == "" && name != "" && !strings.ContainsAny(name, "$`") {
		prog = baseName(name)
	}
	for range 8 {
		var skip int // index of the wrapped program in rest, or -1
		switch prog {
		case "sudo", "doas", "pkexec", "run0":
			elevated = prog
			skip = skipFlags(rest, "ugCDhprtUTRa", []string{"--user", "--group", "--chdir", "--prompt", "--host", "--role", "--type", "--other-user", "--command-timeout", "--close-from"})
		case "env":
			skip = skipEnv(rest)
		case "nice", "ionice", "chrt", "taskset":
			skip = skipFlags(rest, "ncpN", []string{"--adjustment", "--class", "--classdata"})
			if prog == "chrt" || prog == "taskset" { // priority / mask operand
				skip = skipOne(rest, skip)
			}
		case "nohup", "setsid", "unbuffer", "builtin", "time", "caffeinate":
			skip = skipFlags(rest, "fo", nil)
		case "exec":
			skip = skipFlags(rest, "a", nil)
		case "command":
			if hasShortFlag(rest, 'v') || hasShortFlag(rest, 'V') {
				return prog, rest, elevated // a lookup, not a run
			}
			skip = skipFlags(rest, "", nil)
		case "timeout":
			skip = skipOne(rest, skipFlags(rest, "sk", []string{"--signal", "--kill-after"}))
		case "stdbuf":
			skip = skipFlags(rest, "ioe", []string{"--input", "--output", "--error"})
		case "watch":
			skip = skipFlags(rest, "nd", []string{"--interval"})
		case "xargs":
			skip = skipFlags(rest, "IinPLldEesa", []string{"--max-args", "--max-procs", "--max-lines", "--delimiter", "--eof", "--max-chars", "--arg-file", "--replace"})
		case "busybox":
			skip = 0
		case "sshpass":
			skip = skipFlags(rest, "pfde", nil)
		case "proxychains", "proxychains4", "torsocks", "tsocks":
			skip = skipFlags(rest, "f", nil)
		default:
			return prog, rest, elevated
		}
		if skip < 0 || skip >= len(rest) {
			return prog, rest, elevated
		}
		next := rest[skip]
		if strings.ContainsAny(next, "$`") && !strings.HasPrefix(next, "/") {
			return "", rest[skip:], elevated
		}
		prog, rest = baseName(next), rest[skip+1:]
	}
	return prog, rest, elevated
}

// skipFlags returns the index of the first operand in args. valued lists
// short flags that take a value; longValued long flags that do.
func skipFlags(args []string, valued string, longValued []string) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return i + 1
		case strings.HasPrefix(a, "--"):
			if !strings.Contains(a, "=") {
				for _, l := range longValued {
					if a == l {
						i++
						break
					}
				}
			}
		case len(a) > 1 && a[0] == '-':
			last := a[len(a)-1]
			if len(a) == 2 && strings.IndexByte(valued, last) >= 0 {
				i++
			} else if len(a) > 2 && strings.IndexByte(valued, a[1]) >= 0 {
				// -uroot: value attached
			} else if strings.IndexByte(valued, last) >= 0 {
				i++
			}
		default:
			return i
		}
	}
	return -1
}

func skipOne(args []string, i int) int {
	if i < 0 || i+1 >= len(args) {
		return -1
	}
	return i + 1
}

// skipEnv skips env's flags and NAME=value assignments.
func skipEnv(args []string) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			continue
		case a == "-u" || a == "--unset" || a == "-C" || a == "--chdir":
			i++
		case strings.HasPrefix(a, "-"):
		case strings.Contains(a, "=") && !strings.HasPrefix(a, "="):
		default:
			return i
		}
	}
	return -1
}

// hasShortFlag reports whether c appears in a short-flag group ("-rf").
func hasShortFlag(args []string, c byte) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if len(a) >= 2 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], c) >= 0 && isFlagWord(a[1:]) {
			return true
		}
	}
	return false
}

// isFlagWord rejects "-" followed by things that are not flag letters
// (negative numbers are fine to treat as flags for our purposes).
func isFlagWord(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// hasLongFlag reports whether --name or --name=… is present.
func hasLongFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if strings.HasPrefix(a, "--") && (a[2:] == name || strings.HasPrefix(a[2:], name) && len(a) > 2+len(name) && a[2+len(name)] == '=') {
			return true
		}
	}
	return false
}

func hasFlag(args []string, short byte, long string) bool {
	return (short != 0 && hasShortFlag(args, short)) || (long != "" && hasLongFlag(args, long))
}

// flagValues calls fn with every value given to a flag: "-o x", "-ox",
// "-fsSLo x", "--output x", "--output=x". short may be 0, long "".
// Exact "-o" / "--output" forms are preferred: when one is present,
// combined groups are ignored, so "-rsocket -e code" yields only "code".
func flagValues(args []string, short byte, long string, fn func(v string)) {
	if flagValuesPass(args, short, long, false, fn) {
		return
	}
	flagValuesPass(args, short, long, true, fn)
}

func flagValuesPass(args []string, short byte, long string, grouped bool, fn func(v string)) bool {
	found := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return found
		}
		if strings.HasPrefix(a, "--") {
			if grouped || long == "" {
				continue
			}
			name, val, hasVal := strings.Cut(a[2:], "=")
			if name == long {
				found = true
				if hasVal {
					fn(val)
				} else if i+1 < len(args) {
					fn(args[i+1])
					i++
				}
			}
			continue
		}
		if short == 0 || len(a) < 2 || a[0] != '-' {
			continue
		}
		if !grouped {
			if len(a) == 2 && a[1] == short {
				found = true
				if i+1 < len(args) {
					fn(args[i+1])
					i++
				}
			}
			continue
		}
		j := strings.IndexByte(a[1:], short)
		if j < 0 || !isFlagWord(a[1:j+1]) {
			continue
		}
		found = true
		if j+2 < len(a) {
			fn(a[j+2:])
		} else if i+1 < len(args) {
			fn(args[i+1])
			i++
		}
	}
	return found
}

// operands returns the non-flag arguments; valued lists short flags that
// take a separate value and longValued long ones, so their values are not
// mistaken for operands.
func operands(args []string, valued string, longValued []string) []string {
	// Options usually come first, so the operands are one run of args:
	// return that run itself (clipped, so an append cannot write into
	// args) and copy only when options and operands interleave.
	var out []string
	start, end := 0, 0 // while out is nil, the operands are args[start:end]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if out == nil {
				if start == end {
					return args[i+1 : len(args) : len(args)]
				}
				out = append(make([]string, 0, end-start+len(args)-i-1), args[start:end]...)
			}
			return append(out, args[i+1:]...)
		case strings.HasPrefix(a, "--") && len(a) > 2:
			if !strings.Contains(a, "=") {
				for _, l := range longValued {
					if a == l {
						i++
						break
					}
				}
			}
			continue
		case len(a) > 1 && a[0] == '-':
			if strings.IndexByte(valued, a[len(a)-1]) >= 0 && isFlagWord(a[1:]) {
				i++
			}
			continue
		}
		switch {
		case out != nil:
			out = append(out, a)
		case start == end:
			start, end = i, i+1
		case end == i:
			end++
		default:
			out = append(make([]string, 0, len(args)-start), args[start:end]...)
			out = append(out, a)
		}
	}
	if out == nil {
		return args[start:end:end]
	}
	return out
}

// interpreterKind returns "shell", "python", "perl", "ruby", "node", "php",
// "lua", "powershell" or "" for other programs. One switch on the name,
// then the versioned names (python3.12, perl5.36, php8, lua5.4): it is
// asked for every command, most of which are none of these.
func interpreterKind(prog string) string {
	switch prog {
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "rbash", "yash":
		return "shell"
	case "python", "pypy", "pypy3":
		return "python"
	case "perl":
		return "perl"
	case "ruby", "irb":
		return "ruby"
	case "node", "nodejs", "deno", "bun":
		return "node"
	case "php":
		return "php"
	case "lua", "luajit":
		return "lua"
	case "pwsh", "powershell", "powershell.exe":
		return "powershell"
	case "osascript", "tclsh", "expect":
		return "other"
	}
	return shell.VersionedInterpreter(prog)
}

// inlineCode returns the program an interpreter was given as an argument:
// "-c" for sh and python, "-e" for perl, ruby and node, "-r" for php; or,
// for an interpreter other than a shell, the program the line pipes into
// it (shell.Command.PipedProgram). It is found once, when the view is made.
func inlineCode(v *cmdView) (code string, ok bool) {
	return v.code, v.hasCode
}

// findInlineCode computes inlineCode for a view whose prog, args and kind
// are set.
func findInlineCode(v *cmdView) (code string, ok bool) {
	switch kind := v.kind; kind {
	case "shell":
		// sh -c 'script' [name args…]: the script is the first operand after -c.
		if !hasShortFlag(v.args, 'c') {
			return "", false
		}
		ops := operands(v.args, "oO", nil)
		if len(ops) == 0 {
			return "", false
		}
		return ops[0], true
	case "python", "perl", "ruby", "lua", "php":
		// Their option parsers also take a program glued to its option
		// (perl -e'…', python3 -Ic'…'), which the shell package reads.
		code, ok = shell.InlineProgram(kind, v.args)
	case "node":
		short, long := byte('e'), "eval"
		if hasShortFlag(v.args, 'p') {
			short, long = 'p', "print"
		}
		flagValues(v.args, short, long, func(val string) {
			if !ok {
				code, ok = val, true
			}
		})
	case "powershell":
		for i, a := range v.args {
			if l := strings.ToLower(a); (l == "-c" || l == "-command") && i+1 < len(v.args) {
				return strings.Join(v.args[i+1:], " "), true
			}
		}
		return "", false
	}
	if !ok {
		code, ok = hostedInline(v) // python3 - <<EOF, deno eval, gcc -x c - <<EOF
	}
	if !ok && v.kind == "other" {
		code, ok = shell.TclProgram(v.prog, v.args, v.c.Redirects) // tclsh <<< '…', expect -c '…'
	}
	if !ok && v.c.PipedProgram != "" {
		code, ok = v.c.PipedProgram, true // echo 'code' | python3
	}
	if ok && v.kind == "python" {
		code = shell.UnaliasPython(code) // import pickle as p; p.loads(…)
	}
	return code, ok
}

// hostedInline is findInlineCode for the programs whose code the shell
// package finds (here-documents, deno eval, gdb's and vim's python,
// jshell), awk's aside: its programs are judged by their commands.
func hostedInline(v *cmdView) (string, bool) {
	lang, code, ok := shell.InterpreterProgram(v.prog, v.args, v.c.Redirects)
	if !ok || lang == "awk" {
		return "", false
	}
	return code, true
}

// readsProgramFromStdin reports whether an interpreter would execute what
// arrives on its standard input (sh, bash -s, python -, source /dev/stdin).
func readsProgramFromStdin(v *cmdView) bool {
	switch v.prog {
	case "source", ".":
		return len(v.args) > 0 && isStdinPath(v.args[0])
	}
	if v.c.Program == "xargs" {
		// xargs -I{} sh -c '{}': the view is the shell xargs wraps.
		return xargsRunsLines(v.c.Args)
	}
	kind := v.kind
	if kind == "" {
		return false
	}
	switch kind {
	case "shell":
		if hasShortFlag(v.args, 'c') {
			return false
		}
		if hasShortFlag(v.args, 's') {
			return true
		}
		ops := operands(v.args, "oO", nil)
		return len(ops) == 0 || isStdinPath(ops[0])
	case "python":
		if hasShortFlag(v.args, 'c') || hasShortFlag(v.args, 'm') {
			return false
		}
		ops := operands(v.args, "WXQ", nil)
		return len(ops) == 0 || isStdinPath(ops[0])
	case "powershell":
		for i, a := range v.args {
			l := strings.ToLower(a)
			if (l == "-c" || l == "-command") && i+1 < len(v.args) && v.args[i+1] == "-" {
				return true // -Command -: the program is read from stdin
			}
			if l == "-c" || l == "-command" || l == "-file" || l == "-f" || l == "-encodedcommand" || l == "-e" || l == "-ec" {
				return false // the program comes from an argument or a file
			}
		}
		return true
	}
	if _, inline := inlineCode(v); inline {
		return false
	}
	ops := operands(v.args, "IM", []string{"--require", "-r"})
	return len(ops) == 0 || isStdinPath(ops[0])
}

func isStdinPath(p string) bool {
	switch p {
	case "-", "/dev/stdin", "/proc/self/fd/0", "/dev/fd/0":
		return true
	}
	return false
}

// hasSubstitution reports whether a word contains $(…), `…` or <(…).
func hasSubstitution(w string) bool {
	return strings.Contains(w, "$(") || strings.Contains(w, "<(") || strings.IndexByte(w, '`') >= 0
}

// containsWord reports whether s contains w delimited by non-word bytes
// ("curl" in "$(curl -s x)" but not in "curly").
func containsWord(s, w string) bool { return containsWordIn(s, w, &wordBytes) }

// byteClass says which bytes belong to a word.
type byteClass [256]bool

// wordBytes are isWordByte's; identifierBytes an identifier's (no . or -).
var wordBytes, identifierBytes = func() (w, id byteClass) {
	for c := range 256 {
		w[c] = isWordByte(byte(c))
		id[c] = c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	return w, id
}()

// containsWordIn reports whether s contains w with no byte of class on
// either side. A table, not a function, so the hot loop calls nothing.
func containsWordIn(s, w string, class *byteClass) bool {
	for off := 0; ; {
		i := strings.Index(s[off:], w)
		if i < 0 {
			return false
		}
		i += off
		j := i + len(w)
		if (i == 0 || !class[s[i-1]]) && (j == len(s) || !class[s[j]]) {
			return true
		}
		off = i + 1
	}
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// containsFold reports whether s contains the lower-case ASCII needle,
// ignoring ASCII case, without allocating.
func containsFold(s, needle string) bool {
	n := len(needle)
	if n == 0 {
		return true
	}
	first := needle[0]
	upper := first
	if first >= 'a' && first <= 'z' {
		upper = first - 32
	}
	for i := 0; i+n <= len(s); i++ {
		c := s[i]
		if c != first && c != upper {
			continue
		}
		if equalFoldASCII(s[i:i+n], needle) {
			return true
		}
	}
	return false
}

func equalFoldASCII(s, lower string) bool {
	for i := 0; i < len(lower); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 32
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// xargsRunsLines reports an xargs whose command is a shell given each
// input item as its script: xargs -I{} sh -c '{}', xargs -L1 bash -c.
func xargsRunsLines(args []string) bool {
	for i, a := range args {
		if interpreterKind(a) != "shell" && a != "busybox" {
			continue
		}
		repl, _ := shell.XargsReplace(args[:i])
		rest := args[i+1:]
		for j, r := range rest {
			if r != "-c" {
				continue
			}
			// The script is the item itself: -c '{}' with the
			// replacement, or nothing after -c (xargs appends the item).
			return j+1 == len(rest) || repl != "" && strings.TrimSpace(rest[j+1]) == repl
		}
		return false
	}
	return false
}

// opAt returns ops[i], or "" past its end: the i-th operand of a
// subcommand chain (aws s3 rb, gh pr merge), absent or not.
func opAt(ops []string, i int) string {
	if i < len(ops) {
		return ops[i]
	}
	return ""
}
