package shell

import (
	"strings"

	"github.com/parapet-dev/parapet/internal/textcut"
)

// Code handed to another interpreter (python -c, node -e, perl -e, awk
// 'BEGIN{system(…)}', …) is not shell, but the commands it starts are:
// the string literals given to its process-running calls (os.system,
// subprocess.run, child_process.execSync, system, backticks, io.popen,
// run(`…`), …) are parsed as shell scripts one level deeper, Via the
// interpreter. A process-running call whose command is not a literal
// cannot be followed; it is reported as an "opaque-code" evasion.

// maxCodeScan bounds how much of a program is searched for calls.
const maxCodeScan = 64 << 10

// maxLiteralWindow bounds how far a call's arguments are looked for.
const maxLiteralWindow = 4 << 10

// interpreterLang returns the language an interpreter program runs, or "".
// (It runs for every command: the names are one switch, which the
// compiler turns into a search, before the few prefixes.)
func interpreterLang(program string) string {
	switch program {
	case "python", "pypy", "pypy3":
		return "python"
	case "perl":
		return "perl"
	case "ruby", "jruby", "irb":
		return "ruby"
	case "node", "nodejs", "deno", "bun", "jrunscript", "rhino", "jjs":
		return "js"
	case "php":
		return "php"
	case "lua", "luajit":
		return "lua"
	case "julia":
		return "julia"
	case "awk", "gawk", "mawk", "nawk":
		return "awk"
	case "Rscript", "R":
		return "r"
	case "jshell":
		return "java" // Java snippets, from stdin or a here-document
	}
	return VersionedInterpreter(program)
}

// VersionedInterpreter returns the language of an interpreter named with
// its version (python3.12, python2, perl5.36, php8, lua5.4): "python",
// "perl", "php", "lua", or "". Most programs are none of these, and the
// first byte turns them away.
func VersionedInterpreter(program string) string {
	if len(program) < 4 || program[0] != 'p' && program[0] != 'l' {
		return ""
	}
	switch {
	case strings.HasPrefix(program, "python2") || strings.HasPrefix(program, "python3"):
		return "python"
	case strings.HasPrefix(program, "perl5"):
		return "perl"
	case strings.HasPrefix(program, "php") && len(program) <= 6 && program[3] >= '0' && program[3] <= '9':
		return "php"
	case strings.HasPrefix(program, "lua5"):
		return "lua"
	}
	return ""
}

// inlineFlags are the options that give each language its program text.
var inlineFlags = map[string][]string{
	"python": {"-c"},
	"perl":   {"-e", "-E"},
	"ruby":   {"-e"},
	"js":     {"-e", "--eval", "-p", "--print"},
	"php":    {"-r"},
	"lua":    {"-e"},
	"julia":  {"-e", "--eval", "-E", "--print"},
	"r":      {"-e"},
}

// programText returns the code an interpreter runs from its arguments,
// or from a here-document or here-string when it reads its program from
// stdin (python - <<EOF, node <<<'…').
func programText(lang string, args []field, redirs []Redirect) (string, bool) {
	if lang == "awk" {
		return awkProgram(args)
	}
	if code, ok := inlineProgram(lang, args); ok {
		return code, true
	}
	return stdinProgram(args, redirs)
}

// stdinProgram returns the program an interpreter reads from a
// here-document or here-string, unless its arguments name a script file.
func stdinProgram(args []field, redirs []Redirect) (string, bool) {
	if namesScript(args) {
		return "", false
	}
	for _, r := range redirs {
		if text, ok := r.Input(); ok {
			return text, true
		}
	}
	return "", false
}

// inlineProgram returns the program given in an interpreter's arguments
// (python3 -c CODE, perl -we CODE, node --eval=CODE, perl -e'CODE'), if
// any.
func inlineProgram(lang string, args []field) (string, bool) {
	return inlineProgramIn(lang, args, func(f field) string { return f.text })
}

// InlineProgram is inlineProgram for a command's argument words: the
// program python, perl, ruby, php, lua, node, julia or R ("python",
// "perl", …, "js", "julia", "r") is given in its arguments, if any.
func InlineProgram(lang string, args []string) (string, bool) {
	return inlineProgramIn(lang, args, func(a string) string { return a })
}

// inlineProgramIn reads the words of args (text gives each one's) with
// inlineWord.
func inlineProgramIn[T any](lang string, args []T, text func(T) string) (string, bool) {
	for i, a := range args {
		switch code, at := inlineWord(lang, text(a)); {
		case at == inlineHere:
			return code, true
		case at == inlineNext && i+1 < len(args):
			return text(args[i+1]), true
		}
	}
	return "", false
}

// Where inlineWord finds a program: not in this word, in the next one,
// or in this one after its option.
const (
	inlineNone = iota
	inlineNext
	inlineHere
)

// gluedOptions are, for the languages whose option parser reads the rest
// of a word as an option's value, the inline-program options (values) and
// the options without a value that may come before them in one word
// (plain): python3 -Ic'…', perl -ne'…', ruby -rsocket is not one (r takes
// a value), and perl -pie'…' is -p -i with the backup suffix "e…".
var gluedOptions = map[string]struct{ values, plain string }{
	"python": {"c", "bBdEhiIOPqsSuvVx"},
	"perl":   {"eE", "aclnpsStTuUwW0123456789"}, // -0 and -l take only digits: -le'…' is -l -e, -0777ne'…' -0777 -n -e
	"ruby":   {"e", "acdlnpsvwyW"},
	"php":    {"r", "nqHe"},
	"lua":    {"e", ""},
}

// inlineWord reads one argument word as an inline-program option.
func inlineWord(lang, t string) (code string, at int) {
	for _, f := range inlineFlags[lang] {
		switch {
		case t == f:
			return "", inlineNext
		case strings.HasPrefix(f, "--") && strings.HasPrefix(t, f+"="):
			return t[len(f)+1:], inlineHere
		}
	}
	if len(t) < 3 || t[0] != '-' || t[1] == '-' {
		return "", inlineNone
	}
	g, glues := gluedOptions[lang]
	if !glues {
		for _, f := range inlineFlags[lang] {
			if len(f) == 2 && strings.HasSuffix(t, f[1:]) && isFlagGroup(t) {
				return "", inlineNext // node -pe
			}
		}
		return "", inlineNone
	}
	for i := 1; i < len(t); i++ {
		switch c := t[i]; {
		case strings.IndexByte(g.values, c) >= 0:
			if i == len(t)-1 {
				return "", inlineNext // python3 -Ic CODE
			}
			return t[i+1:], inlineHere // perl -ne'CODE'
		case strings.IndexByte(g.plain, c) < 0:
			return "", inlineNone
		}
	}
	return "", inlineNone
}

// namesScript reports whether an interpreter given no inline program runs
// a script file: an operand other than "-" before "--" (an option's value
// may be taken for one). Otherwise it reads its program from stdin.
func namesScript(args []field) bool {
	for _, a := range args {
		if a.text == "--" {
			break
		}
		if a.text != "-" && !strings.HasPrefix(a.text, "-") {
			return true
		}
	}
	return false
}

func isFlagGroup(t string) bool {
	for i := 1; i < len(t); i++ {
		if !isAlnum(t[i]) {
			return false
		}
	}
	return true
}

// awkProgram returns awk's program: the first operand unless -f names a
// file; -v, -F and -f take a value.
func awkProgram(args []field) (string, bool) {
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "--":
			if i+1 < len(args) {
				return args[i+1].text, true
			}
			return "", false
		case t == "-f" || strings.HasPrefix(t, "-f") && len(t) > 2 || t == "--file":
			return "", false
		case t == "-v" || t == "-F" || t == "--assign" || t == "--field-separator":
			i++
		case strings.HasPrefix(t, "-") && len(t) > 1:
		default:
			return t, true
		}
	}
	return "", false
}

// execCall is a process-running call of a language: its name, and
// whether a non-literal argument is certainly a command (os.system(x)) or
// may be anything (run(x) in Python is often asyncio.run).
type execCall struct {
	name   string
	strong bool
	// argv: the call takes a program path first, then argv (execl).
	argv bool
}

var execCalls = map[string][]execCall{
	"python": {{"system", true, false}, {"popen", true, false}, {"Popen", true, false}, {"check_output", true, false},
		{"check_call", true, false}, {"getoutput", true, false}, {"getstatusoutput", true, false}, {"run", false, false},
		{"call", false, false}, {"spawn", false, false}, {"execl", true, true}, {"execlp", true, true}, {"execle", true, true},
		{"execv", true, true}, {"execvp", true, true}, {"execve", true, true}, {"execvpe", true, true},
		{"spawnl", true, true}, {"spawnlp", true, true}, {"spawnv", true, true}, {"spawnvp", true, true},
		// On another host: paramiko's exec_command, pywinrm's run_cmd.
		{"exec_command", false, false}, {"run_cmd", false, false}},
	"perl": {{"system", true, false}, {"exec", true, false}, {"qx", true, false}, {"readpipe", true, false}},
	"ruby": {{"system", true, false}, {"exec", true, false}, {"spawn", true, false}, {"popen", true, false},
		{"capture2", true, false}, {"capture2e", true, false}, {"capture3", true, false}, {"popen3", true, false}},
	"js": {{"execSync", true, false}, {"exec", false, false}, {"spawn", false, false}, {"spawnSync", true, false},
		{"execFile", true, false}, {"execFileSync", true, false}, {"ProcessBuilder", true, false},
		{"Deno.Command", true, false}, {"Deno.run", true, false},
		// On another host: node-ssh's execCommand, ssh2's exec.
		{"execCommand", false, false}},
	// Runtime.getRuntime().exec(…), new ProcessBuilder(…), pb.command(…)
	"java": {{"exec", true, false}, {"ProcessBuilder", true, false}, {"command", false, false}},
	"php": {{"system", true, false}, {"exec", true, false}, {"shell_exec", true, false}, {"passthru", true, false},
		{"popen", true, false}, {"proc_open", true, false}, {"pcntl_exec", true, false}},
	// os.execute, io.popen; and Neovim's vim.fn.system, vim.system,
	// vim.fn.jobstart and termopen, which take a string or an argv table
	// (and in Lua code that is not Neovim's may be something else).
	"lua": {{"execute", true, false}, {"popen", true, false}, {"system", false, false}, {"jobstart", false, false},
		{"termopen", false, false}},
	"julia": {{"run", false, false}, {"read", false, false}, {"pipeline", false, false}},
	"awk":   {{"system", true, false}},
	"r":     {{"system", true, false}, {"system2", true, false}},
	// Go: exec.Command("sh", "-c", "…") takes the program, then its
	// arguments. (CommandContext's first argument is a context, which
	// the literal reader cannot skip: not read.)
	"go": {{"Command", true, false}},
	// C and C++ source a compiler reads from stdin (compiled.go).
	"c": {{"system", true, false}, {"popen", true, false}, {"execl", true, true}, {"execlp", true, true},
		{"execle", true, true}},
}

// embeddedCommands returns the shell commands code runs that are given
// as literals, and a description of the first process-running call whose
// command is computed ("" if none).
func embeddedCommands(lang, code string) (cmds []string, opaque string) {
	if len(code) > maxCodeScan {
		code = code[:maxCodeScan]
	}
	for _, call := range execCalls[lang] {
		for off := 0; off < len(code); {
			i := strings.Index(code[off:], call.name)
			if i < 0 {
				break
			}
			i += off
			off = i + len(call.name)
			if i > 0 && isIdentByte(code[i-1]) || off < len(code) && isIdentByte(code[off]) {
				continue
			}
			rest := strings.TrimLeft(code[off:], " \t")
			paren := strings.HasPrefix(rest, "(")
			if paren {
				rest = strings.TrimLeft(rest[1:], " \t")
			} else if !(lang == "perl" || lang == "ruby") || rest == "" || !strings.ContainsRune("\"'`", rune(rest[0])) {
				if !(lang == "perl" && call.name == "qx") {
					continue
				}
			}
			if lang == "perl" && call.name == "qx" && rest != "" {
				if lit, ok := delimited(rest); ok {
					cmds = append(cmds, lit)
				}
				continue
			}
			words, ok := literalArgs(rest)
			if _, list := listOpen(rest); call.name == "popen" && !list && len(words) > 1 {
				words = words[:1] // popen(cmd, mode) in C, Python, PHP, Lua and Ruby
			}
			switch {
			case ok && len(words) == 1:
				cmds = append(cmds, words[0])
			case ok && len(words) > 1:
				if call.argv {
					words = words[1:]
				}
				cmds = append(cmds, quoteWords(words))
			case call.strong && opaque == "":
				opaque = call.name + "(" + textcut.Cut(rest, maxEvidence)
			}
		}
	}
	cmds = append(cmds, backtickCommands(lang, code)...)
	if lang == "js" {
		cmds = append(cmds, templateShells(code)...)
	}
	if lang == "awk" {
		cmds = append(cmds, awkPipes(code)...)
	}
	if lang == "perl" {
		cmds = append(cmds, perlPipeOpens(code)...)
	}
	return cmds, opaque
}

func isIdentByte(c byte) bool { return c == '_' || isAlnum(c) }

// literalArgs reads the first argument of a call when it is made of
// string literals: "cmd", ["sh", "-c", "x"], 'a', 'b' (argv as several
// arguments). ok is false when it starts with anything else.
func literalArgs(s string) (words []string, ok bool) {
	rest, list := listOpen(s)
	if list {
		s = rest
	}
	for {
		lit, n, isLit := readLiteral(s)
		if !isLit {
			return words, len(words) > 0
		}
		s = strings.TrimLeft(s[n:], " \t\n")
		if joinOp(s) > 0 {
			// "curl " + host + " | sh" ("curl " .. host in Lua): the
			// literals joined around what is computed, which stands as $X.
			var joined string
			joined, s = joinAround(lit, s)
			lit = joined
		}
		words = append(words, lit)
		if !strings.HasPrefix(s, ",") {
			return words, true
		}
		s = strings.TrimLeft(s[1:], " \t\n")
		if rest, isList := listOpen(s); !list && isList {
			// spawn("sh", ["-c", "…"]), new Deno.Command("sh", {args:
			// ["-c", "…"]}): the program, then its argv.
			list, s = true, rest
			continue
		}
		if !list && !(strings.HasPrefix(s, "\"") || strings.HasPrefix(s, "'")) {
			return words, true
		}
	}
}

// joinAround joins lit to the literals that follow it in s, which starts
// with "+": each computed operand between them (a variable, a call)
// becomes $X. It returns the joined text and s after the last operand
// read. A computed operand is read to the next "+", ",", ")" or "]" at
// its own nesting depth.
func joinAround(lit, s string) (string, string) {
	var b strings.Builder
	b.WriteString(lit)
	for n := 0; n < 16; n++ {
		op := joinOp(s)
		if op == 0 {
			break
		}
		s = strings.TrimLeft(s[op:], " \t\n")
		if next, m, ok := readLiteral(s); ok {
			b.WriteString(next)
			s = strings.TrimLeft(s[m:], " \t\n")
			continue
		}
		depth, i := 0, 0
	scan:
		for ; i < len(s) && i < maxLiteralWindow; i++ {
			switch s[i] {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				if depth == 0 {
					break scan
				}
				depth--
			case '+', ',':
				if depth == 0 {
					break scan
				}
			case '.':
				if depth == 0 && joinOp(s[i:]) > 0 {
					break scan
				}
			case '"', '\'', '`':
				if _, m, ok := readLiteral(s[i:]); ok {
					i += m - 1
				}
			}
		}
		if i == 0 {
			break
		}
		b.WriteString("$X")
		s = strings.TrimLeft(s[i:], " \t\n")
	}
	return b.String(), s
}

// joinOp returns the length of the string concatenation operator s
// starts with: "+" (not "+="), or Lua's ".." (not "..."); 0 for none.
func joinOp(s string) int {
	switch {
	case strings.HasPrefix(s, "+") && !strings.HasPrefix(s, "+="):
		return 1
	case strings.HasPrefix(s, "..") && !strings.HasPrefix(s, "..."):
		return 2
	}
	return 0
}

// listOpeners open a list of literals: Python, JavaScript, Ruby and
// PHP arrays, Java's arrays and lists.
var listOpeners = []string{"[", "array(", "new String[]{", "new String[] {", "List.of(", "Arrays.asList("}

// listOpen returns s after the opening of a list of arguments ([…],
// array(…), new String[]{…}, an options object's {cmd: […]} or
// {args: […]}), trimmed, and whether s opens one.
func listOpen(s string) (string, bool) {
	for _, o := range listOpeners {
		if rest, ok := strings.CutPrefix(s, o); ok {
			return strings.TrimLeft(rest, " \t"), true
		}
	}
	rest, ok := strings.CutPrefix(s, "{")
	if !ok {
		return s, false
	}
	rest = strings.TrimLeft(rest, " \t")
	for _, key := range []string{"cmd", "args", "argv"} {
		r, ok := strings.CutPrefix(strings.TrimLeft(rest, `"'`), key)
		if !ok {
			continue
		}
		r, ok = strings.CutPrefix(strings.TrimLeft(strings.TrimLeft(r, `"'`), " \t"), ":")
		if !ok {
			continue
		}
		if r, ok = strings.CutPrefix(strings.TrimLeft(r, " \t"), "["); ok {
			return strings.TrimLeft(r, " \t"), true
		}
	}
	// A table of literals, as Lua writes argv ({"curl", "-s", url}):
	// the first element is a literal that a comma or the brace follows,
	// not a key.
	if _, n, ok := readLiteral(rest); ok {
		if after := strings.TrimLeft(rest[n:], " \t\n"); strings.HasPrefix(after, ",") || strings.HasPrefix(after, "}") || joinOp(after) > 0 {
			return rest, true
		}
	}
	return s, false
}

// readLiteral reads a quoted literal at the start of s ('…', "…" or `…`
// with backslash escapes; Python's r/b/f prefixes are allowed) and
// returns its text and length.
func readLiteral(s string) (string, int, bool) {
	start := 0
	for start < len(s) && start < 2 && strings.IndexByte("rRbBfFuU", s[start]) >= 0 {
		start++
	}
	if start >= len(s) || !strings.ContainsRune("\"'`", rune(s[start])) {
		return "", 0, false
	}
	q := s[start]
	var b strings.Builder
	for i := start + 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(s[i])
			}
		case c == q:
			return b.String(), i + 1, true
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false
}

// delimited reads perl's qx{…}, qx(…), qx/…/ and the like.
func delimited(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	open := s[0]
	close := open
	switch open {
	case '(':
		close = ')'
	case '{':
		close = '}'
	case '[':
		close = ']'
	case '<':
		close = '>'
	}
	if isAlnum(open) || open == ' ' {
		return "", false
	}
	// Looked for within a window, so that many unclosed qx( / %x( cost
	// linear time, not quadratic.
	if len(s) > maxLiteralWindow {
		s = s[:maxLiteralWindow]
	}
	end := strings.IndexByte(s[1:], close)
	if end < 0 {
		return "", false
	}
	return s[1 : 1+end], true
}

// backtickCommands returns `…` commands in the languages where backticks
// run a command (perl, ruby, php, julia) and ruby's %x(…).
func backtickCommands(lang, code string) []string {
	switch lang {
	case "perl", "ruby", "php", "julia":
	default:
		return nil
	}
	var out []string
	for off := 0; off < len(code); {
		i := strings.IndexByte(code[off:], '`')
		if i < 0 {
			break
		}
		i += off
		j := strings.IndexByte(code[i+1:], '`')
		if j < 0 {
			break
		}
		out = append(out, code[i+1:i+1+j])
		off = i + j + 2
	}
	if lang == "ruby" {
		for off := 0; off < len(code); {
			i := strings.Index(code[off:], "%x")
			if i < 0 {
				break
			}
			i += off
			if lit, ok := delimited(code[i+2:]); ok {
				out = append(out, lit)
			}
			off = i + 2
		}
	}
	return out
}

// templateShells returns the commands of JavaScript's shell templates:
// Bun's $`…` (Bun.$), zx's and execa's $`…`, a tag named $ that runs its
// text as a shell line. A placeholder ${expr} stays a parameter
// expansion; one that is not a plain name becomes $x, a value unknown.
func templateShells(code string) []string {
	var out []string
	for off := 0; off < len(code); {
		i := strings.Index(code[off:], "$`")
		if i < 0 {
			break
		}
		i += off
		off = i + 2
		if i > 0 && isIdentByte(code[i-1]) {
			continue
		}
		j := strings.IndexByte(code[i+2:], '`')
		if j < 0 {
			break
		}
		text := code[i+2 : i+2+j]
		off = i + 2 + j + 1
		var b strings.Builder
		for k := 0; k < len(text); k++ {
			if strings.HasPrefix(text[k:], "${") {
				if end := strings.IndexByte(text[k:], '}'); end > 0 {
					if name := text[k+2 : k+end]; name != "" && strings.IndexFunc(name, func(r rune) bool { return r > 127 || !isIdentByte(byte(r)) }) < 0 {
						b.WriteString(text[k : k+end+1])
					} else {
						b.WriteString("$x")
					}
					k += end
					continue
				}
			}
			b.WriteByte(text[k])
		}
		out = append(out, b.String())
	}
	return out
}

// awkPipes returns the commands of awk's "cmd" | getline and
// print … | "cmd".
func awkPipes(code string) []string {
	var out []string
	for off := 0; off < len(code); {
		i := strings.IndexByte(code[off:], '|')
		if i < 0 {
			break
		}
		i += off
		off = i + 1
		if i+1 < len(code) && code[i+1] == '|' || i > 0 && code[i-1] == '|' {
			off = i + 2
			continue
		}
		// print … | "cmd"
		if lit, _, ok := readLiteral(strings.TrimLeft(code[i+1:], " \t&")); ok {
			out = append(out, lit)
			continue
		}
		// "cmd" | getline
		before := strings.TrimRight(code[:i], " \t")
		if strings.HasSuffix(before, "\"") {
			if k := strings.LastIndexByte(before[:len(before)-1], '"'); k >= 0 {
				out = append(out, before[k+1:len(before)-1])
			}
		}
	}
	return out
}

// perlPipeOpens returns the commands of open(F, "cmd |"), open(F, "| cmd")
// and open(F, "-|", "cmd").
func perlPipeOpens(code string) []string {
	var out []string
	for off := 0; off < len(code); {
		i := strings.Index(code[off:], "open")
		if i < 0 {
			break
		}
		i += off
		off = i + 4
		rest := strings.TrimLeft(code[off:], " \t(")
		if len(rest) > maxLiteralWindow {
			rest = rest[:maxLiteralWindow]
		}
		comma := strings.IndexByte(rest, ',')
		if comma < 0 {
			continue
		}
		args, _ := literalArgs(strings.TrimLeft(rest[comma+1:], " \t"))
		switch {
		case len(args) >= 2 && (args[0] == "-|" || args[0] == "|-"):
			out = append(out, quoteWords(args[1:]))
		case len(args) == 1:
			a := strings.TrimSpace(args[0])
			if strings.HasSuffix(a, "|") {
				out = append(out, strings.TrimSuffix(a, "|"))
			} else if strings.HasPrefix(a, "|") {
				out = append(out, strings.TrimPrefix(a, "|"))
			}
		}
	}
	return out
}

// quoteWords joins argv words into a shell line that parses back to them.
func quoteWords(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(w, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}

// InterpreterProgram returns the language and program text of a command
// that runs code in another language (python3 -c CODE, node -e, awk
// 'PROGRAM', python - <<EOF …, deno eval CODE, gdb -ex 'python …'): ok
// is false for any other command.
func InterpreterProgram(program string, args []string, redirs []Redirect) (lang, code string, ok bool) {
	if interpreterLang(program) == "" && hostOf(program) == "" && compilerLang(program) == "" {
		return "", "", false
	}
	return codeOf(program, plainFields(args), redirs)
}

// CodeLiterals calls fn with each quoted string literal of code ('…',
// "…", `…`), unescaped, up to maxCodeScan bytes of code.
func CodeLiterals(code string, fn func(lit string)) {
	if len(code) > maxCodeScan {
		code = code[:maxCodeScan]
	}
	eachLiteral(code, func(lit string, _, _ int) { fn(lit) })
}

// eachLiteral calls fn with each quoted string literal of code,
// unescaped, and where it starts and ends (code[start:end] is the
// literal as written). An unterminated literal ends the scan.
func eachLiteral(code string, fn func(lit string, start, end int)) {
	for i := 0; i < len(code); i++ {
		c := code[i]
		if c != '"' && c != '\'' && c != '`' {
			continue
		}
		lit, n, ok := readLiteral(code[i:])
		if !ok {
			return
		}
		fn(lit, i, i+n)
		i += n - 1
	}
}

// CodeCommands returns the shell commands code in lang runs that are
// given as literals: os.system("…") in Python, exec.Command("sh", "-c",
// "…") in Go. For source files whose language has no one-line runner to
// wrap them in (Go), so that what they run is judged as commands.
func CodeCommands(lang, code string) []string {
	cmds, _ := embeddedCommands(lang, FoldCode(code))
	return cmds
}
