package shell

import (
	"path"
	"strings"

	"github.com/parapet-dev/parapet/internal/textcut"
)

// maxNestedParses bounds how many nested scripts (bash -c, eval, heredoc,
// watch) one Parse re-parses, and nestedBudget how many bytes in total, so
// that a line repeating them cannot multiply the work; past either the rest
// is reported as too deep.
const maxNestedParses = 64

// nestedBudget is the number of nested-script bytes one Parse may re-parse.
func nestedBudget(src string) int { return MaxDepth*len(src) + 64<<10 }

// maxEvidence bounds Evasion.Evidence; maxEvasions bounds how many are
// listed (past it, only kinds not yet seen are added).
const (
	maxEvidence = 120
	maxEvasions = 64
)

// emitCall records one simple command given as rendered fields, then
// follows what it runs: nested scripts (bash -c, eval, a shell reading a
// heredoc) and wrapped programs (sudo, xargs, find -exec, …).
func (w *walker) emitCall(fields []field, assigns []string, redirs []Redirect, fr frame) {
	if fr.dialect != "" && len(redirs) > 0 {
		w.checkRedirDialect(redirs, fr)
	}
	if len(fields) == 0 {
		if len(assigns) > 0 || len(redirs) > 0 {
			w.add(Command{Assigns: assigns, Redirects: redirs}, fr)
		}
		w.execEnv(assigns, fr)
		return
	}
	prog := fields[0]
	cmd := Command{
		Name:      prog.text,
		Program:   w.programOf(prog),
		Args:      w.argsOf(fields[1:]),
		Assigns:   assigns,
		Redirects: redirs,
	}
	args := fields[1:]
	if p, ok := w.copiedProgram(prog.text, fr); ok {
		cmd.Program = p // cp /bin/rm ./del; ./del -rf ~
	}
	// Most programs (ls, go, npm, …) have none of the follow-ups below:
	// one lookup says which can do anything, and the rest are skipped.
	traits := traitsOf(cmd.Program)
	if traits&ptDir != 0 {
		cmd.Dir = commandDir(cmd.Program, args, w.curDir(fr))
	}
	w.add(cmd, fr)
	if traits&ptSettings != 0 || len(assigns) > 0 {
		w.checkBashSettings(cmd.Program, args, assigns)
	}
	if traits&ptTrack != 0 {
		w.track(cmd.Program, args, fr)
	}
	if len(assigns) > 0 {
		w.execEnv(assigns, fr)
	}
	if cmd.Program == "" {
		return
	}
	if (w.defs.funcs != nil || w.defs.aliases != nil) && !prog.dynamic && w.callDefined(prog.text, args, fr) {
		return
	}
	if traits&ptNested != 0 && w.nestedScript(cmd.Program, args, assigns, redirs, fr) {
		return
	}
	if traits&(ptRuns|ptInterp) != 0 && w.runsCode(cmd.Program, args, redirs, fr) {
		return
	}
	if traits&ptWrap != 0 {
		w.unwrap(cmd.Program, args, redirs, fr)
	}
}

// Program traits say which of emitCall's follow-ups can do anything for
// a program: those whose switch names it (TestProgramTraits checks that
// every name they test is here).
const (
	ptNested   uint16 = 1 << iota // nestedScript: shells, eval, su, busybox
	ptRuns                        // runsCode's own cases
	ptInterp                      // interpreterLang knows it
	ptWrap                        // unwrap: find and the wrappers
	ptTrack                       // track: cd, pushd, popd
	ptDir                         // commandDir: -C and --directory options
	ptSettings                    // checkBashSettings: shopt, enable, set
)

var programTraits = func() map[string]uint16 {
	m := map[string]uint16{}
	add := func(t uint16, names ...string) {
		for _, n := range names {
			m[n] |= t
		}
	}
	for n := range shells {
		add(ptNested, n)
	}
	add(ptNested, "eval", "su", "busybox", "trap", "alias")
	add(ptRuns, "mosh", "script", "flock", "busybox", "vim", "vi", "nvim", "ex", "view", "gvim", "rvim", "vimdiff",
		"ssh", "scp", "sftp", "rsync", "tar", "bsdtar", "sed", "gsed", "make", "gmake", "git",
		"gdb", "sqlite3", "mysql", "mariadb", "psql", "man", "less", "more", "zip", "parallel", "capsh", "expect", "tclsh",
		"wish", "osascript", "docker", "podman", "nerdctl", "kubectl", "oc", "pdsh", "pssh", "parallel-ssh", "clush", "ansible",
		"ansible-playbook", "start-stop-daemon", "gcloud", "az", "aws", "salt", "salt-ssh", "bolt", "xargs", "mvn", "mvnw",
		"tmux", "screen", "lxc", "incus", "multipass", "vagrant", "pwsh", "powershell", "powershell.exe", "pwsh-preview")
	add(ptInterp, "gcc", "cc", "clang", "g++", "c++", "clang++", "tcc")
	add(ptInterp, "python", "pypy", "pypy3", "perl", "ruby", "jruby", "node", "nodejs", "deno", "bun",
		"jrunscript", "rhino", "jjs", "php", "lua", "luajit", "julia", "awk", "gawk", "mawk", "nawk", "Rscript",
		"R", "irb", "jshell", "lldb")
	for n := range wrappers {
		add(ptWrap, n)
	}
	add(ptWrap, "find")
	add(ptTrack, "cd", "pushd", "popd", "cp", "ln", "mv", "install")
	add(ptDir, "git", "make", "gmake", "tar", "bsdtar")
	add(ptSettings, "shopt", "enable", "set")
	return m
}()

// projectTools build, test and lint a project; running one through a
// variable the line set is ordinary scripting, not an evasion.
var projectTools = map[string]bool{
	"npm": true, "npx": true, "yarn": true, "pnpm": true, "bun": true, "go": true, "cargo": true, "make": true, "gmake": true,
	"mvn": true, "gradle": true, "dotnet": true, "pytest": true, "tox": true, "nox": true, "poetry": true, "uv": true,
	"bundle": true, "rake": true, "tsc": true, "eslint": true, "prettier": true, "jest": true, "vitest": true, "black": true,
	"ruff": true, "mypy": true, "flake8": true, "gofmt": true, "rustfmt": true, "clippy-driver": true, "cmake": true, "ninja": true,
}

// traitsOf returns the traits of a program.
func traitsOf(program string) uint16 {
	t := programTraits[program]
	if t == 0 && len(program) > 3 && (program[0] == 'p' || program[0] == 'l') && interpreterLang(program) != "" ||
		t == 0 && len(program) > 3 && (program[0] == 'g' || program[0] == 'c') && compilerLang(program) != "" {
		t = ptInterp // python3.12, perl5.36, php8, lua5.4, gcc-12, clang-17
	}
	return t
}

// programOf derives Program from the program word, recording evasions.
// Program is empty when the word is only known at run time.
func (w *walker) programOf(f field) string {
	if f.quoteSplit {
		w.evasion("quote-split", f.raw)
	}
	switch {
	case f.dynamic:
		w.evasion("variable-program", f.raw)
		return ""
	case f.resolved && f.text != "":
		// K=rm; $K -rf x: judged as rm, and still a hidden program name;
		// a build or test tool named once and run by its variable
		// (cmd="npm run lint"; $cmd) hides nothing worth hiding.
		program := path.Base(f.text)
		if !projectTools[program] {
			w.evasion("variable-program", f.raw)
		}
		return program
	case f.braced:
		w.evasion("brace-expansion", f.raw)
		return path.Base(f.text)
	case f.brace && (strings.Contains(f.text, ",") || strings.Contains(f.text, "..")) && strings.Contains(f.text, "}"):
		w.evasion("brace-expansion", f.raw)
		return ""
	case f.glob && f.text != "[" && f.text != "[[":
		w.evasion("glob-program", f.raw)
		return ""
	case f.text == "":
		return ""
	}
	return path.Base(f.text)
}

// argsOf returns the texts of fs for Command.Args, from w.args when it
// has room.
func (w *walker) argsOf(fs []field) []string {
	if len(fs) == 0 {
		return nil
	}
	if cap(w.args)-len(w.args) < len(fs) {
		return texts(fs)
	}
	start := len(w.args)
	for _, f := range fs {
		w.args = append(w.args, f.text)
	}
	return w.args[start:len(w.args):len(w.args)] // appending copies
}

func texts(fs []field) []string {
	if len(fs) == 0 {
		return nil
	}
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.text
	}
	return out
}

// shells run their -c argument, or stdin, as a script.
var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true,
	"ash": true, "mksh": true, "csh": true, "tcsh": true, "fish": true, "yash": true, "posh": true,
}

// nestedScript parses the script a command runs, if it is one we can see:
// a shell's -c STRING or here-document, eval's arguments, su -c STRING,
// and code the shell keeps to run later: a trap's action, an alias's
// value.
// It reports whether the command was such a runner.
func (w *walker) nestedScript(program string, args []field, assigns []string, redirs []Redirect, fr frame) bool {
	via := program
	if program == "busybox" && len(args) > 0 && shells[args[0].text] {
		via = "busybox " + args[0].text
		program, args = args[0].text, args[1:]
	}
	switch {
	case shells[program]:
		dialect := dialectOf(program)
		script, params, hasC, readsStdin := shellInvocation(args)
		switch {
		case hasC:
			w.checkOtherShell(program, script)
			w.nestedShellParams(script, fr, via+" -c", dialect, assigns, params)
		case readsStdin:
			for _, r := range redirs {
				if text, ok := r.Input(); ok {
					w.checkOtherShell(program, text)
					w.nestedShell(text, fr, "heredoc", dialect, assigns)
				}
			}
		}
		return true
	case program == "eval":
		if len(args) > 0 {
			w.nested(strings.Join(texts(args), " "), fr, "eval") // same shell, same state
		}
		return true
	case program == "su":
		if script, ok := flagValue(texts(args), "c", "command"); ok {
			w.nestedShell(script, fr, "su -c", "", nil)
		}
		return true
	case program == "trap":
		if action, ok := trapAction(args); ok {
			w.nested(action, fr, "trap") // runs in this shell, on a signal or at exit
		}
		return true
	case program == "alias":
		for _, a := range args {
			if a.dynamic && strings.Contains(a.raw, "=") {
				// Its value is known only when it runs: so is every
				// command that uses it.
				w.evasion("opaque-code", "alias "+a.raw+": a value known only when it runs")
				continue
			}
			// An alias runs in place of a command word, in this shell.
			if name, val, ok := strings.Cut(a.text, "="); ok && name != "" && val != "" {
				w.nested(val, fr, "alias")
				w.defineAlias(name, val)
			}
		}
		return true
	}
	return false
}

// trapAction returns the code trap installs: its first operand, when
// conditions follow it and it is not "-" or a number (both mean that the
// operands are all conditions, to reset).
func trapAction(args []field) (string, bool) {
	i := 0
	for ; i < len(args); i++ {
		a := args[i].text
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		if a == "-l" || a == "-p" || a == "-P" {
			return "", false // lists, installs nothing
		}
	}
	if len(args)-i < 2 {
		return "", false
	}
	action := args[i].text
	if action == "" || action == "-" || allDigits(action) {
		return "", false
	}
	return action, true
}

// nestedShell analyses a script a new shell process runs: it starts in
// the same directory and sees only exported variables and those assigned
// for it (X=/ bash -c 'rm -rf $X'); nothing it changes comes back.
func (w *walker) nestedShell(src string, fr frame, via, dialect string, assigns []string) {
	w.nestedShellParams(src, fr, via, dialect, assigns, nil)
}

// nestedShellParams is nestedShell for sh -c SCRIPT NAME ARG…: params
// are NAME and the ARGs, the script's $0 and its positional parameters
// (find -exec sh -c 'shred -u "$1"' _ {} \; shreds what find found).
func (w *walker) nestedShellParams(src string, fr frame, via, dialect string, assigns []string, params []field) {
	saved := w.sem.save()
	w.sem.dir = w.curDir(fr)
	for name, v := range w.sem.vars {
		if !v.exported {
			delete(w.sem.vars, name)
		}
	}
	for _, a := range assigns {
		if name, val, ok := strings.Cut(a, "="); ok && isAssignment(a) {
			w.assignVar(name, val, !strings.ContainsAny(val, "$`"), true, false)
		}
	}
	if len(params) > 0 {
		name, ok := staticText(params[0])
		w.assignVar("0", name, ok, false, false)
		w.bindPositional(params[1:])
	}
	inner := fr
	inner.dialect = dialect
	inner.chdir = ""
	w.nested(src, inner, via)
	w.sem = saved
}

// shellInvocation reads a shell's options: with -c (alone or combined, as
// in -lc, -ec) the first operand is the script; with no operand (or -s)
// the shell reads its script from stdin.
func shellInvocation(args []field) (script string, params []field, hasC, readsStdin bool) {
	hasS := false
	i := 0
	for ; i < len(args); i++ {
		a := args[i].text
		if a == "--" || a == "-" {
			i++
			break
		}
		if len(a) < 2 || (a[0] != '-' && a[0] != '+') {
			break
		}
		if strings.HasPrefix(a, "--") {
			if a == "--rcfile" || a == "--init-file" {
				i++
			}
			continue
		}
		opts := a[1:]
		if a[0] == '-' {
			hasC = hasC || strings.IndexByte(opts, 'c') >= 0
			hasS = hasS || strings.IndexByte(opts, 's') >= 0
		}
		if strings.ContainsAny(opts, "oO") {
			i++ // -o pipefail, -O extglob
		}
	}
	if hasC {
		if i < len(args) {
			return args[i].text, args[i+1:], true, false
		}
		return "", nil, false, false
	}
	return "", nil, false, hasS || i >= len(args)
}

// nested analyses a script that a command runs, one level deeper.
func (w *walker) nested(src string, fr frame, via string) {
	inner := frame{depth: fr.depth + 1, via: via, background: fr.background, dialect: fr.dialect}
	if inner.depth > MaxDepth || !w.takeNestedBudget(src) {
		w.s.TooDeep = true
		w.evasion("too-deep", src)
		return
	}
	w.parseScript(src, inner, false)
}

// evasion records an obfuscation once per kind and evidence.
func (w *walker) evasion(kind, evidence string) {
	evidence = textcut.Cut(evidence, maxEvidence)
	full := len(w.s.Evasions) >= maxEvasions
	for _, e := range w.s.Evasions {
		if e.Kind == kind && (full || e.Evidence == evidence) {
			return
		}
	}
	w.s.Evasions = append(w.s.Evasions, Evasion{Kind: kind, Evidence: evidence})
}

// takeNestedBudget accounts for re-parsing src, reporting false when the
// budget is spent.
func (w *walker) takeNestedBudget(src string) bool {
	if w.nestedParses >= maxNestedParses || w.nestedBytes+len(src) > nestedBudget(w.s.Source) {
		return false
	}
	w.nestedParses++
	w.nestedBytes += len(src)
	return true
}
