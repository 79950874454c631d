package shell

import (
	"slices"
	"strings"
)

// Data a pipeline hands on is followed where the line shows it (echo,
// printf, cat of a here-document):
//
//   - into xargs, where it becomes arguments: echo ~ | xargs rm -rf runs
//     rm -rf /home/…, so xargs's command is added once more with the
//     items in place, Via "xargs";
//   - into a shell reading its script from stdin, where it is the script:
//     echo 'rm -rf ~' | sh runs rm -rf ~, so the text is parsed as that
//     shell's script, Via "pipe", as a here-document given to it would be;
//   - into an interpreter reading its program from stdin, where it is the
//     program: the commands it starts are judged, as for python3 <<EOF.

// maxXargsItems bounds the items followed into xargs's command.
const maxXargsItems = 16

// pipeData follows known text from each pipeline element into the next.
// members are the pipeline's commands, left to right; element e's are
// members[starts[e]:starts[e+1]], the last element's run to the end.
func (w *walker) pipeData(members, starts []int, fr frame) {
	for e := 1; e < len(starts); e++ {
		lo, hi := starts[e], len(members)
		if e+1 < len(starts) {
			hi = starts[e+1]
		}
		if lo == hi {
			continue
		}
		cons := members[w.pastWrappers(members, lo, hi)]
		from := members[starts[e-1]:lo]
		switch program := w.s.Commands[cons].Program; {
		case program == "xargs":
			w.xargsData(from, cons, fr)
		case shells[program] || program == "busybox":
			w.shellData(from, cons, fr)
		case compilerLang(program) != "":
			w.compiledData(from, cons, fr)
		case tclInterpreter(program):
			w.codeData(from, cons, "tcl", fr) // echo 'exec sh -c {…}' | tclsh
		default:
			if lang := interpreterLang(program); lang != "" && lang != "awk" {
				w.codeData(from, cons, lang, fr)
			}
		}
	}
}

// pastWrappers returns the position in members[lo:hi] of the command
// that reads the element's stdin: the first, or the program it wraps when
// it is a wrapper that passes its stdin on (sudo env sh), and so on.
func (w *walker) pastWrappers(members []int, lo, hi int) int {
	k := lo
	for k+1 < hi {
		c := &w.s.Commands[members[k]]
		if wr, ok := wrappers[c.Program]; !ok || !wr.keepsStdio || w.s.Commands[members[k+1]].Via != c.Program {
			break
		}
		k++
	}
	return k
}

// elementText returns what a pipeline element writes, as far as the line
// shows it: the text of each of its commands that writes known text
// (echo, printf, cat of a here-document), in order. ok is false when
// none does. The output of the others is not known and left out.
func (w *walker) elementText(from []int) (string, bool) {
	var b strings.Builder
	found := false
	for _, m := range from {
		if text, ok := producedText(&w.s.Commands[m]); ok {
			b.WriteString(text)
			found = true
		}
	}
	return b.String(), found && strings.TrimSpace(b.String()) != ""
}

// shellData parses the text the element from writes as the script of
// cons, a shell that reads its script from stdin.
func (w *walker) shellData(from []int, cons int, fr frame) {
	c := &w.s.Commands[cons]
	program, args, assigns := c.Program, c.Args, c.Assigns
	if program == "busybox" {
		if len(args) == 0 || !shells[args[0]] {
			return
		}
		program, args = args[0], args[1:]
	}
	if stdinRedirected(c.Redirects) {
		return
	}
	if _, _, hasC, readsStdin := shellInvocation(plainFields(args)); hasC || !readsStdin {
		return
	}
	text, ok := w.elementText(from)
	if !ok {
		return
	}
	// c moves once the nested script adds commands: it is written now,
	// and its parts were copied out above.
	c.PipedProgram = text
	w.checkOtherShell(program, text)
	w.nestedShell(text, fr, "pipe", dialectOf(program), assigns)
}

// codeData runs the text the element from writes through cons, an
// interpreter of lang that reads its program from stdin (echo 'import os;
// os.system("…")' | python3), so the commands that code starts are
// judged as they are for python3 <<EOF.
func (w *walker) codeData(from []int, cons int, lang string, fr frame) {
	c := &w.s.Commands[cons]
	program := c.Program
	if stdinRedirected(c.Redirects) {
		return
	}
	fs := plainFields(c.Args)
	if _, inline := inlineProgram(lang, fs); inline || namesScript(fs) {
		return
	}
	text, ok := w.elementText(from)
	if !ok {
		return
	}
	c.PipedProgram = text // before interpreterCode adds commands and c moves
	w.interpreterCode(program, lang, text, fr)
}

// stdinRedirected reports whether a command's stdin is a here-document,
// a here-string or a file rather than the pipe.
func stdinRedirected(rs []Redirect) bool {
	for _, r := range rs {
		if _, ok := r.Input(); ok || r.Op == "<" && (r.FD == "" || r.FD == "0") {
			return true
		}
	}
	return false
}

// plainFields makes fields of words already unquoted.
func plainFields(words []string) []field {
	fs := make([]field, len(words))
	for i, a := range words {
		fs[i] = field{text: a, raw: a}
	}
	return fs
}

// xargsData follows the text the element from writes into cons, an xargs.
// A listing (ls, find, git ls-files) writes names the line cannot know:
// the glob they stand for goes in their place, so ls -A | xargs rm -rf is
// judged as rm -rf * .[!.]*.
func (w *walker) xargsData(from []int, cons int, fr frame) {
	text, ok := w.elementText(from)
	listed := false
	if !ok && len(from) > 0 {
		text, ok = listedGlobs(&w.s.Commands[from[len(from)-1]])
		listed = true
	}
	if !ok || stdinRedirected(w.s.Commands[cons].Redirects) {
		return
	}
	w.xargsRun(w.s.Commands[cons].Args, text, listed, fr)
}

// xargsFileData follows a listing xargs reads from a process
// substitution instead of a pipe: xargs rm < <(ls ~), xargs -a <(find ~)
// rm, xargs --arg-file=<(ls -A) rm. The substitution's own commands are
// judged where the walker reaches them; this adds xargs's command with
// the listing's glob in place of its names, as for ls ~ | xargs rm.
func (w *walker) xargsFileData(args []field, redirs []Redirect, fr frame) {
	src := ""
	for _, r := range redirs {
		if r.Op == "<" && (r.FD == "" || r.FD == "0") {
			src = r.Target
		}
	}
	opts := args
	if start, _, ok := wrappers["xargs"].commandStart(args); ok {
		opts = args[:start]
	}
	for i, f := range opts {
		switch a := f.text; {
		case (a == "-a" || a == "--arg-file") && i+1 < len(opts):
			src = opts[i+1].text
		case strings.HasPrefix(a, "--arg-file="):
			src = a[len("--arg-file="):]
		case strings.HasPrefix(a, "-a") && len(a) > 2:
			src = a[2:]
		}
	}
	inner, ok := strings.CutPrefix(src, "<(")
	if inner, ok = strings.CutSuffix(inner, ")"); !ok {
		return
	}
	sc := Parse(inner)
	defer sc.Release()
	if sc.ParseError != "" || len(sc.Commands) != 1 {
		return
	}
	if text, ok := listedGlobs(&sc.Commands[0]); ok {
		w.xargsRun(texts(args), text, true, fr)
	} else if text, ok := producedText(&sc.Commands[0]); ok {
		w.xargsRun(texts(args), text, false, fr) // xargs sh -c < <(printf 'cmd\0')
	}
}

// xargsRun adds the command xargs (its arguments args) runs on the
// items of text, a line each; listed says they are globs standing for
// the names a listing writes.
func (w *walker) xargsRun(args []string, text string, listed bool, fr frame) {
	fs := plainFields(args)
	start, _, ok := wrappers["xargs"].commandStart(fs)
	if !ok || fr.wrap >= maxWrapChain {
		return
	}
	if slices.Contains(args[:start], "-0") || slices.Contains(args[:start], "--null") {
		text = strings.ReplaceAll(text, "\x00", "\n") // items end with NUL, not a newline
	}
	inner := fr
	inner.via = "xargs"
	inner.wrap++
	if repl, ok := XargsReplace(args[:start]); ok {
		// With a replace string, xargs runs the command once per input
		// line, the whole line in place of the string.
		items := xargsLines(text)
		if len(items) > maxXargsItems {
			return
		}
		for _, it := range items {
			run := make([]field, len(fs)-start)
			for i, f := range fs[start:] {
				f.text = strings.ReplaceAll(f.text, repl, it)
				run[i] = f
			}
			w.emitCall(run, nil, nil, inner)
		}
		return
	}
	items := strings.Fields(text)
	if len(items) == 0 || len(items) > maxXargsItems {
		return
	}
	run := append(append([]field(nil), fs[start:]...), make([]field, 0, len(items))...)
	for _, it := range items {
		run = append(run, field{text: it, raw: it, glob: listed})
	}
	w.emitCall(run, nil, nil, inner)
}

// listedGlobs returns, a line each, globs that stand for the names a
// listing command writes: ls [-a|-A] [DIR…] gives * (and .[!.]*), names
// relative to DIR,
// find DIR… [-name P] gives DIR/P (DIR/* without one name), git ls-files
// [PATHSPEC…] and rg --files [DIR…] what they name or *. ok is false
// for any other command.
func listedGlobs(c *Command) (string, bool) {
	var ops []string
	switch c.Program {
	case "ls":
		hidden := false
		for _, a := range c.Args {
			if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a, "aA") || a == "--all" || a == "--almost-all" {
				hidden = true
			}
		}
		// ls DIR writes names relative to DIR; a glob operand, the
		// names it matched as written.
		dirs := false
		for _, d := range operandWords(c.Args, nil) {
			if strings.ContainsAny(d, "*?[") {
				ops = append(ops, d)
			} else {
				dirs = true
			}
		}
		if dirs || len(ops) == 0 {
			ops = append(ops, "*")
			if hidden {
				ops = append(ops, ".[!.]*")
			}
		}
	case "find":
		ops = findGlobs(c.Args)
	case "git":
		if i := slices.Index(c.Args, "ls-files"); i < 0 || operandWords(c.Args[:i], nil) != nil {
			return "", false
		} else if ops = operandWords(c.Args[i+1:], nil); len(ops) == 0 {
			ops = []string{"*"}
		}
	case "rg":
		if !slices.Contains(c.Args, "--files") {
			return "", false
		}
		for _, d := range operandWords(c.Args, nil) {
			ops = append(ops, underDir(d, "*"))
		}
		if len(ops) == 0 {
			ops = []string{"*"}
		}
	default:
		return "", false
	}
	return strings.Join(ops, "\n"), true // a line each, as the listing writes them
}

// findGlobs returns globs that stand for the files find (its arguments
// args) matches: DIR/P for each starting point DIR and -name pattern P,
// DIR/* without one (or when a name is negated). The -name patterns
// narrow it (find's options are single-dash words).
func findGlobs(args []string) []string {
	var patterns []string
	negated := false
	for i, a := range args {
		switch {
		case (a == "-name" || a == "-iname") && i+1 < len(args) && !strings.ContainsAny(args[i+1], "/ "):
			patterns = append(patterns, args[i+1])
		case a == "!" || a == "-not":
			// A negated name (! -name '*.go', ! ( … )) widens the list;
			// a negated -path or -type only narrows it further.
			if i+1 < len(args) {
				switch args[i+1] {
				case "-name", "-iname", "(":
					negated = true
				}
			}
		}
	}
	if len(patterns) == 0 || negated {
		patterns = []string{"*"}
	}
	dirs := []string{"."}
	for i, a := range args {
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
			break
		}
		dirs = args[:i+1]
	}
	var globs []string
	for _, d := range dirs {
		for _, p := range patterns {
			globs = append(globs, underDir(d, p))
		}
	}
	return globs
}

// underDir is pattern under dir, as a listing of dir names it.
func underDir(dir, pattern string) string {
	if dir == "." || dir == "" {
		return pattern
	}
	return strings.TrimSuffix(dir, "/") + "/" + pattern
}

// PrintfText is what printf FORMAT ARGS… writes, for its %s conversions:
// each takes the next argument ("" once they run out), and the format is
// used again while arguments remain. Other conversions stay as written;
// %% writes a percent sign.
func PrintfText(format string, args []string) string {
	if strings.Contains(format, "%%") {
		// Held aside as a byte no format holds, so that %%s is not a %s.
		return strings.ReplaceAll(PrintfText(strings.ReplaceAll(format, "%%", "\x01"), args), "\x01", "%")
	}
	n := strings.Count(format, "%s")
	if n == 0 {
		return format
	}
	var b strings.Builder
	for first := true; first || len(args) > 0; first = false {
		rest := format
		for range n {
			i := strings.Index(rest, "%s")
			b.WriteString(rest[:i])
			if len(args) > 0 {
				b.WriteString(args[0])
				args = args[1:]
			}
			rest = rest[i+2:]
		}
		b.WriteString(rest)
	}
	return b.String()
}

// xargsLines splits text into the lines xargs -I reads: blanks at the
// start of a line are dropped, and empty lines are skipped.
func xargsLines(text string) []string {
	var lines []string
	for line := range strings.SplitSeq(text, "\n") {
		if line = strings.TrimLeft(line, " \t"); line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

// producedText returns what a command writes when the line shows it:
// echo's and printf's arguments, cat of a here-document or here-string.
func producedText(c *Command) (string, bool) {
	args := c.Args
	switch c.Program {
	case "echo":
		newline := "\n"
		for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "neE") == "" {
			if strings.IndexByte(args[0], 'n') >= 0 {
				newline = ""
			}
			args = args[1:]
		}
		return strings.Join(args, " ") + newline, true
	case "printf":
		if len(args) > 1 && args[0] == "--" {
			args = args[1:] // printf -- FORMAT
		}
		if len(args) == 0 {
			return "", false
		}
		format := strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\0`, "\x00").Replace(args[0])
		return PrintfText(format, args[1:]), true
	case "cat":
		if len(args) > 0 {
			return "", false
		}
		for _, r := range c.Redirects {
			if text, ok := r.Input(); ok {
				return text, true
			}
		}
	}
	return "", false
}

// XargsReplace returns the replace string of xargs's options opts (-I R,
// -iR, -i or --replace[=R]), if they give one.
func XargsReplace(opts []string) (string, bool) {
	for i, o := range opts {
		switch {
		case o == "-I" && i+1 < len(opts):
			return opts[i+1], true
		case strings.HasPrefix(o, "-I") && len(o) > 2:
			return o[2:], true
		case o == "-i" || o == "--replace":
			return "{}", true
		case strings.HasPrefix(o, "-i") && len(o) > 2:
			return o[2:], true
		case strings.HasPrefix(o, "--replace="):
			return o[len("--replace="):], true
		}
	}
	return "", false
}
