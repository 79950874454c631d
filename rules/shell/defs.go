package shell

import (
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Names a line defines and then runs: a function (f(){ rm -rf "$1"; }; f
// ~), an alias (alias x=rm; x -rf ~) and a copy or link of a program
// (cp /bin/rm ./del; ./del -rf ~). A call of such a name is judged as
// what it runs: the function's body with the call's arguments as its
// positional parameters, the alias's value followed by the arguments, the
// program the file is a copy of.

// defs are the names the line has defined so far.
type defs struct {
	funcs   map[string]funcDef
	aliases map[string]string
	copies  map[string]string // resolved path → program name
	// expanding is the alias being expanded: as in the shell, its own
	// name is not expanded again in its value (alias ls='ls -F').
	expanding string
	// calling are the functions whose bodies are being walked: a call
	// of one from inside itself is not followed again (:(){ :|:& };:
	// would otherwise be walked once per level of a binary tree).
	calling []string
}

// funcDef is a function's body and the source its positions refer to.
type funcDef struct {
	body *syntax.Stmt
	src  string
}

// defineFunc records a function definition.
func (w *walker) defineFunc(name string, body *syntax.Stmt, fr frame) {
	if name == "" || body == nil {
		return
	}
	if w.defs.funcs == nil {
		w.defs.funcs = make(map[string]funcDef)
	}
	w.defs.funcs[name] = funcDef{body: body, src: fr.src}
}

// defineAlias records alias NAME=VALUE.
func (w *walker) defineAlias(name, value string) {
	if w.defs.aliases == nil {
		w.defs.aliases = make(map[string]string)
	}
	w.defs.aliases[name] = value
}

// programDirs hold programs by their plain names.
var programDirs = []string{"/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/", "/usr/local/bin/", "/usr/local/sbin/"}

// trackCopy records the destination of cp / ln / mv / install SRC DST
// when SRC is an installed program: running DST runs it.
func (w *walker) trackCopy(program string, args []field, fr frame) {
	var ops [2]field
	n := 0
	for _, a := range args {
		if a.text == "--" || strings.HasPrefix(a.text, "-") && len(a.text) > 1 {
			continue
		}
		if n == len(ops) {
			return // several sources: not a copy of one program
		}
		ops[n] = a
		n++
	}
	if n != 2 {
		return
	}
	src, ok1 := staticText(ops[0])
	dst, ok2 := staticText(ops[1])
	if !ok1 || !ok2 {
		return
	}
	prog := ""
	for _, d := range programDirs {
		if rest, ok := strings.CutPrefix(src, d); ok && rest != "" && !strings.Contains(rest, "/") {
			prog = rest
		}
	}
	if prog == "" {
		return
	}
	if strings.HasSuffix(dst, "/") || dst == "." || dst == ".." {
		dst += "/" + prog
	}
	if w.defs.copies == nil {
		w.defs.copies = make(map[string]string)
	}
	w.defs.copies[joinDir(w.curDir(fr), dst)] = prog
}

// copiedProgram returns the program a path-named command is a copy of.
func (w *walker) copiedProgram(name string, fr frame) (string, bool) {
	if w.defs.copies == nil || !strings.Contains(name, "/") {
		return "", false
	}
	prog, ok := w.defs.copies[joinDir(w.curDir(fr), name)]
	return prog, ok
}

// callDefined follows a call of a function or alias the line defined,
// and reports whether name was one.
func (w *walker) callDefined(name string, args []field, fr frame) bool {
	if def, ok := w.defs.funcs[name]; ok {
		if !slices.Contains(w.defs.calling, name) {
			w.defs.calling = append(w.defs.calling, name)
			w.callFunc(name, def, args, fr)
			w.defs.calling = w.defs.calling[:len(w.defs.calling)-1]
		}
		return true
	}
	if value, ok := w.defs.aliases[name]; ok && w.defs.expanding != name {
		words := texts(args)
		line := value
		if len(words) > 0 {
			line += " " + quoteWords(words)
		}
		outer := w.defs.expanding
		w.defs.expanding = name
		// The shell puts the value in place of the word: its commands
		// run where the call stands, in its pipeline (alias u='curl …';
		// u | sh), as a wrapper's command does.
		if inner, ok := w.wrapFrame(fr, "alias "+name, args); ok {
			if w.takeNestedBudget(line) {
				w.parseScript(line, inner, false)
			} else {
				w.s.TooDeep = true
				w.evasion("too-deep", line)
			}
		}
		w.defs.expanding = outer
		return true
	}
	return false
}

// callFunc walks a function's body again with the call's arguments as
// $1…$9, $#, $* and (for one argument) $@.
func (w *walker) callFunc(name string, def funcDef, args []field, fr frame) {
	// The body runs where the call stands, at its depth: in its pipeline
	// (get() { curl -s "$1"; }; get URL | sh), as a wrapper's command does.
	inner := frame{src: def.src, depth: fr.depth, wrap: fr.wrap + 1, via: "function " + name, background: fr.background, dialect: fr.dialect}
	body := w.raw(def.body, inner)
	if inner.wrap > maxWrapChain || !w.takeNestedBudget(body) {
		w.s.TooDeep = true
		w.evasion("too-deep", body)
		return
	}
	var saved [len(positional)]varVal
	var had [len(positional)]bool
	for i, n := range positional {
		saved[i], had[i] = w.sem.vars[n]
	}
	w.bindPositional(args)
	w.stmt(def.body, inner)
	for i, n := range positional {
		if had[i] {
			w.setVar(n, saved[i])
		} else {
			delete(w.sem.vars, n)
		}
	}
}

// bindPositional sets $1…$9, $#, $* and (for one argument) $@ to args.
func (w *walker) bindPositional(args []field) {
	var all strings.Builder
	known := true
	for i, a := range args {
		t, ok := staticText(a)
		known = known && ok
		if i > 0 {
			all.WriteByte(' ')
		}
		all.WriteString(t)
		if i < 9 {
			w.assignVar(positional[i], t, ok, false, false)
		}
	}
	// A computed argument may be several words: then the later
	// parameters and their count are unknown too.
	for i := len(args); i < 9; i++ {
		w.setVar(positional[i], varVal{vals: emptyValue, known: known})
	}
	w.assignVar("#", strconv.Itoa(len(args)), known, false, false)
	// "$@" is one word per argument, which a single value cannot say: it
	// is known only for a call with at most one argument.
	w.assignVar("@", all.String(), known && len(args) <= 1, false, false)
	w.assignVar("*", all.String(), known, false, false)
}

// emptyValue is the value of an unset parameter, shared: values are
// never changed in place (appendAlt copies).
var emptyValue = []string{""}

// positional are the parameters a function call sets.
var positional = [...]string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "#", "@", "*"}
