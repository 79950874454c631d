package shell

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The walker follows the state a bash command line builds up as it runs,
// so that each command is judged as it would really run: the working
// directory (cd, pushd, popd, and the -C / --chdir of git, make, tar, env
// and sudo) and the values of variables assigned in the line (K=~/.ssh/x;
// cat $K). What it cannot know it says it does not know: a cd to a
// computed directory makes the directory UnknownDir, and a variable set
// from a command's output keeps its $NAME spelling (dynamic).

// UnknownDir is Command.Dir when the working directory cannot be known
// (cd "$(mktemp -d)", cd "$1"). Relative paths under it are outside the
// workspace.
const UnknownDir = "/(unknown directory)"

// maxAlternatives bounds the values a variable may hold (assigned in
// branches, or a for loop's items); past it the variable is unknown.
const maxAlternatives = 8

// varVal is what the analysis knows of a variable.
type varVal struct {
	// vals are the values it may hold; nil with known false: unknown.
	vals     []string
	known    bool
	exported bool
}

// semState is the part of the walker's state that a subshell copies and
// the parent keeps: directory, directory stack and variables.
type semState struct {
	dir, oldDir string
	stack       []string
	vars        map[string]varVal
}

// anyKnown reports whether the line gave some variable a known value.
func (st *semState) anyKnown() bool {
	for _, v := range st.vars {
		if v.known {
			return true
		}
	}
	return false
}

// save returns a copy of the state to restore after a subshell.
func (st *semState) save() semState {
	c := *st
	if st.stack != nil {
		c.stack = append([]string(nil), st.stack...)
	}
	if st.vars != nil {
		c.vars = make(map[string]varVal, len(st.vars))
		for k, v := range st.vars {
			c.vars[k] = v
		}
	}
	return c
}

// PathOf places a path argument of the command in the directory the
// command runs in: a relative path is joined to Dir; absolute and
// home-relative paths are returned as they are.
func (c *Command) PathOf(p string) string {
	if c.Dir == "" || p == "" || isRooted(p) {
		return p
	}
	return joinDir(c.Dir, p)
}

// isRooted reports whether p does not depend on the working directory.
func isRooted(p string) bool {
	return p[0] == '/' || p[0] == '~' || strings.HasPrefix(p, "$HOME") || strings.HasPrefix(p, "${HOME}")
}

// joinDir places p in dir ("" is the starting directory, kept relative).
func joinDir(dir, p string) string {
	switch {
	case p == "":
		return dir
	case isRooted(p):
		return cleanDir(p)
	case dir == "":
		return cleanDir(p)
	case dir == UnknownDir:
		// Cleaned as a relative path: .. cannot climb out of the unknown.
		if q := path.Clean(p); q != "." {
			return UnknownDir + "/" + q
		}
		return UnknownDir
	}
	return cleanDir(dir + "/" + p)
}

// cleanDir cleans a directory; "." (the starting directory) becomes "".
// A directory under a root the line does not spell out (~, ~user, $HOME)
// keeps that root and any ".." that climbs above it: path.Clean would
// read the root as a relative name, and "~/.." would become the starting
// directory.
func cleanDir(d string) string {
	if d != "" && (d[0] == '~' || d[0] == '$') {
		root, rest, _ := strings.Cut(d, "/")
		if rest = path.Clean(rest); rest == "." {
			return root
		}
		return root + "/" + rest
	}
	d = path.Clean(d)
	if d == "." {
		return ""
	}
	return d
}

// curDir is the directory commands in fr run in.
func (w *walker) curDir(fr frame) string {
	if fr.chdir != "" {
		return fr.chdir
	}
	return w.sem.dir
}

// staticText returns a field's text when it is known before the command
// runs; a $HOME prefix counts as known (paths resolve it).
func staticText(f field) (string, bool) {
	if !f.dynamic {
		return f.text, true
	}
	for _, p := range []string{"$HOME", "${HOME}"} {
		if rest, ok := strings.CutPrefix(f.text, p); ok && (rest == "" || rest[0] == '/') &&
			!strings.ContainsAny(rest, "$`") {
			return "~" + rest, true
		}
	}
	return "", false
}

// track updates the directory and variables after a simple command ran:
// cd, pushd, popd; assignments are handled where they are parsed.
func (w *walker) track(program string, args []field, fr frame) {
	switch program {
	case "cd", "pushd":
		ops := dirOperands(args)
		target := "~"
		switch {
		case len(ops) > 0:
			t, ok := staticText(ops[0])
			switch {
			case !ok || w.cdpathSet && !isRooted(t):
				target = UnknownDir
			case t == "-" && program == "cd":
				target = w.sem.oldDir
			default:
				target = joinDir(w.curDir(fr), t)
			}
		case program == "pushd":
			target = UnknownDir // swaps the top two entries
		}
		if program == "pushd" {
			w.sem.stack = append(w.sem.stack, w.sem.dir)
		}
		w.sem.oldDir, w.sem.dir = w.sem.dir, target
	case "cp", "ln", "mv", "install":
		w.trackCopy(program, args, fr)
	case "popd":
		if n := len(w.sem.stack); n > 0 && len(dirOperands(args)) == 0 {
			w.sem.oldDir, w.sem.dir = w.sem.dir, w.sem.stack[n-1]
			w.sem.stack = w.sem.stack[:n-1]
		} else {
			w.sem.dir = UnknownDir
		}
	}
}

// dirOperands returns cd's operands after its options (-L -P -e -@).
func dirOperands(args []field) []field {
	for i, a := range args {
		switch {
		case a.text == "--":
			return args[i+1:]
		case len(a.text) > 1 && a.text[0] == '-' && !a.dynamic:
			continue
		}
		return args[i:]
	}
	return nil
}

// commandDir returns the directory a program changes to by an option of
// its own (git -C d, make -C d / --directory=d, tar -C d / --directory d),
// joined to dir, or "" when it has none.
func commandDir(program string, args []field, dir string) string {
	var short, long string
	switch program {
	case "git":
		short = "C"
	case "make", "gmake", "tar", "bsdtar":
		short, long = "C", "directory"
	default:
		return ""
	}
	out, found := dir, false
	for i := 0; i < len(args); i++ {
		a := args[i].text
		if a == "--" {
			break
		}
		var v string
		var f field
		switch {
		case a == "-"+short && i+1 < len(args):
			i++
			f, v = args[i], args[i].text
		case long != "" && a == "--"+long && i+1 < len(args):
			i++
			f, v = args[i], args[i].text
		case long != "" && strings.HasPrefix(a, "--"+long+"="):
			f, v = args[i], a[len(long)+3:]
		case program != "git" && len(a) > 2 && a[0] == '-' && a[1] != '-' && a[1:2] == short:
			f, v = args[i], a[2:]
		default:
			if program == "git" && len(a) > 0 && a[0] != '-' {
				i = len(args) // the subcommand: git's own options end
			}
			continue
		}
		f.text = v
		t, ok := staticText(f)
		if !ok {
			return UnknownDir
		}
		out, found = joinDir(out, t), true
	}
	if !found {
		return ""
	}
	return out // "" when the options lead back to the starting directory
}

// assignStmt records bare assignments (K=v, export K=v, declare K=v): the
// value when it is known before the line runs, else the variable becomes
// unknown.
func (w *walker) assignStmt(as []*syntax.Assign, fr frame, exported bool) {
	for _, a := range as {
		if a.Name == nil {
			continue
		}
		name := a.Name.Value
		if name == "CDPATH" {
			w.cdpathSet = true
		}
		if a.Naked {
			if exported {
				v := w.sem.vars[name]
				v.exported = true
				w.setVar(name, v)
			}
			continue
		}
		val, ok := "", a.Value == nil
		if a.Value != nil && a.Index == nil && a.Array == nil && !a.Append {
			val, ok = w.staticWord(a.Value, fr)
		}
		w.assignVar(name, val, ok, exported, fr.cond)
	}
}

// assignVar sets a variable to one value (known) or to unknown. In a
// conditional branch the value is added to those it may already hold.
func (w *walker) assignVar(name, val string, known, exported, cond bool) {
	old, had := w.sem.vars[name]
	v := varVal{exported: exported || old.exported}
	switch {
	case !known:
	case cond && had && old.known:
		v.vals, v.known = appendAlt(old.vals, val), true
		if len(v.vals) > maxAlternatives {
			v.vals, v.known = nil, false
		}
	default:
		v.vals, v.known = []string{val}, true
	}
	w.setVar(name, v)
}

func appendAlt(vals []string, v string) []string {
	for _, x := range vals {
		if x == v {
			return vals
		}
	}
	return append(append(make([]string, 0, len(vals)+1), vals...), v)
}

func (w *walker) setVar(name string, v varVal) {
	if w.sem.vars == nil {
		w.sem.vars = make(map[string]varVal)
	}
	w.sem.vars[name] = v
}

// staticWord renders a word without splitting and reports whether its
// value is known before the line runs. Substitutions it holds are walked
// where the statement is, not here.
func (w *walker) staticWord(wd *syntax.Word, fr frame) (string, bool) {
	var tmp []subst
	saved := w.buf
	w.buf = nil
	fs := w.word(wd, fr, &tmp, nil, false)
	w.buf = saved
	texts := make([]string, 0, len(fs))
	for _, f := range fs {
		t, ok := staticText(f)
		if !ok {
			return "", false
		}
		texts = append(texts, t)
	}
	return strings.Join(texts, " "), true
}

// envVars are variables the engine's fixed environment sets; any other
// variable the line does not assign is unset when it runs.
var envVars = map[string]bool{
	"HOME": true, "PATH": true, "USER": true, "LOGNAME": true, "SHELL": true, "PWD": true,
	"OLDPWD": true, "TERM": true, "LANG": true, "LC_ALL": true, "TMPDIR": true, "HOSTNAME": true,
	"UID": true, "EUID": true, "PPID": true, "RANDOM": true, "SECONDS": true, "LINENO": true,
	"BASH": true, "BASH_VERSION": true, "IFS": true, "OPTIND": true, "PS4": true, "SHLVL": true,
}

// paramValue returns the value of a plain $NAME / ${NAME} or of
// ${NAME:-word} / ${NAME-word} when the line makes it known.
func (w *walker) paramValue(x *syntax.ParamExp, fr frame) (string, bool) {
	if target, ok := w.indirectName(x); ok {
		if v, had := w.sem.vars[target]; had && v.known && len(v.vals) > 0 {
			return v.vals[w.pickOf(target)], true
		}
		return "", false
	}
	if x.Param == nil || x.Length || x.Excl || x.Width || x.IsSet || x.Slice != nil ||
		x.Repl != nil || x.Index != nil || x.Names != 0 {
		return "", false
	}
	name := x.Param.Value
	v, had := w.sem.vars[name]
	if x.Exp == nil {
		if had && v.known && len(v.vals) > 0 {
			return v.vals[w.pickOf(name)], true
		}
		return "", false
	}
	switch x.Exp.Op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull,
		syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
	default:
		return "", false
	}
	if had && v.known && len(v.vals) == 1 && v.vals[0] != "" {
		return v.vals[0], true
	}
	if had || envVars[name] || x.Exp.Word == nil {
		return "", false
	}
	switch x.Exp.Op {
	case syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		return "", false // the shell stops here
	}
	return w.staticWord(x.Exp.Word, fr)
}

// indirectName returns the variable ${!NAME} refers to, when the line
// gives NAME a value that is a variable's name: k=AWS_SECRET_ACCESS_KEY;
// echo ${!k} reads $AWS_SECRET_ACCESS_KEY.
func (w *walker) indirectName(x *syntax.ParamExp) (string, bool) {
	if !x.Excl || x.Param == nil || x.Length || x.Width || x.IsSet || x.Slice != nil || x.Repl != nil ||
		x.Index != nil || x.Names != 0 || x.Exp != nil {
		return "", false
	}
	v, had := w.sem.vars[x.Param.Value]
	if !had || !v.known || len(v.vals) != 1 || !isName(v.vals[0]) {
		return "", false
	}
	return v.vals[0], true
}

// pickOf is which of a variable's values the word being rendered uses.
func (w *walker) pickOf(name string) int {
	if w.pickName == name {
		return w.pick
	}
	return 0
}

// multiValued returns the first variable of wd that may hold several
// values, and how many.
func (w *walker) multiValued(wd *syntax.Word) (string, int) {
	if len(w.sem.vars) == 0 {
		return "", 0
	}
	check := func(p syntax.WordPart) (string, int) {
		if pe, ok := p.(*syntax.ParamExp); ok && pe.Param != nil && pe.Exp == nil {
			if v, had := w.sem.vars[pe.Param.Value]; had && v.known && len(v.vals) > 1 {
				return pe.Param.Value, len(v.vals)
			}
		}
		return "", 0
	}
	for _, p := range wd.Parts {
		if dq, ok := p.(*syntax.DblQuoted); ok {
			for _, in := range dq.Parts {
				if n, k := check(in); k > 0 {
					return n, k
				}
			}
			continue
		}
		if n, k := check(p); k > 0 {
			return n, k
		}
	}
	return "", 0
}
