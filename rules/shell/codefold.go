package shell

import "strings"

// Interpreter code names the home directory through its language as
// often as by a literal path — os.homedir(), process.env.HOME,
// $ENV{HOME}, Dir.home, ENV['HOME'], getenv("HOME"),
// Deno.env.get('HOME'), Path.home(), System.getProperty("user.home") —
// and builds paths by joining literals to it: h + "/.ssh",
// getenv("HOME")."/.aws", path.join(os.homedir(), '.ssh'),
// File.join(Dir.home, ".ssh"), Path.home() / ".ssh", "#{Dir.home}/x".
// FoldCode rewrites code so that each such expression is the string
// literal "$HOME" (which action.ResolvePath places in the caller's home)
// and literals joined together are one literal. The commands the code
// runs and the paths it reads, writes and deletes are then judged as
// literal ones are, by the same checks. The spellings are recognised
// whatever the language: each is distinctive, and a false match only
// makes a path look like the home.

// homeVar is the path a home expression becomes: the literal "$HOME"
// outside a string, $HOME inside one.
const homeVar = "$HOME"

// maxFoldPasses bounds the folding passes: a join of concatenations, or
// a concatenation of joins, takes one pass per level.
const maxFoldPasses = 3

// maxInterpWindow bounds how far into an interpolation (#{…}, ${…},
// f"{…}") a home expression is looked for.
const maxInterpWindow = 64

// homeForms are the expressions that evaluate to the home directory. In
// a form, a ' stands for either quote (matched alike on both sides).
// Each starts an identifier or a variable, and is matched only there;
// the qualifier before it (os., process., require('os').) goes with it.
var homeForms = []string{
	"homedir()", "homeDir()", "userInfo().homedir", "Dir.home()", "Dir.home", "Path.home()", "Gem.user_home",
	"env.HOME", "$ENV{HOME}", "$ENV{'HOME'}",
	"environ['HOME']", "ENV['HOME']", "env['HOME']", "$_SERVER['HOME']", "$_ENV['HOME']",
	"getenv('HOME')", "env.get('HOME')", "environ.get('HOME')", "ENV.fetch('HOME')", "getProperty('user.home')",
}

// stringHomeForms are the home expressions a double-quoted string
// interpolates without braces (perl, php).
var stringHomeForms = []string{"$ENV{HOME}", "$ENV{'HOME'}", "$_SERVER[HOME]", "$_SERVER['HOME']", "$_ENV[HOME]", "$_ENV['HOME']"}

// tildeCalls expand a leading ~ of their literal argument:
// os.path.expanduser('~/.ssh') is the literal "~/.ssh".
var tildeCalls = []string{"expanduser(", "expand_path(", "path.expand(", "untildify("}

// FoldCode returns code (its first maxCodeScan bytes) with home
// expressions replaced by "$HOME" and joined literals folded into one.
func FoldCode(code string) string {
	if len(code) > maxCodeScan {
		code = code[:maxCodeScan]
	}
	if strings.Contains(code, "home") || strings.Contains(code, "HOME") || strings.Contains(code, "expand") {
		code = rewriteHome(code)
	}
	if mayFold(code) {
		for range maxFoldPasses {
			next, changed := foldPass(code)
			if !changed {
				break
			}
			code = next
		}
	}
	if strings.Contains(code, "['") || strings.Contains(code, `["`) {
		code = bracketMembers(code) // most code has none: no copy made
	}
	return code
}

// bracketMembers writes a member named by a string literal as a member:
// cp['exec'](…) as cp.exec(…), once folding has joined 'ex' + 'ec'. The
// call then reads as the one it is.
func bracketMembers(code string) string {
	var b strings.Builder
	last := 0
	for i := 0; i+3 < len(code); i++ {
		q := code[i+1]
		if code[i] != '[' || q != '\'' && q != '"' {
			continue
		}
		j := i + 2
		for j < len(code) && isIdentByte(code[j]) {
			j++
		}
		if j == i+2 || j+1 >= len(code) || code[j] != q || code[j+1] != ']' {
			continue
		}
		b.WriteString(code[last:i])
		b.WriteByte('.')
		b.WriteString(code[i+2 : j])
		last = j + 2
		i = j + 1
	}
	if last == 0 {
		return code
	}
	b.WriteString(code[last:])
	return b.String()
}

// rewriteHome replaces each home expression of code: by "$HOME" outside
// string literals, by $HOME inside a literal that interpolates it. A
// name the code assigns one to (h = os.homedir(), my $h = $ENV{HOME},
// $home = getenv("HOME")) is the home where it is used after, until it
// is assigned again.
func rewriteHome(code string) string {
	var r homeRewrite
	out := make([]byte, 0, len(code)+16)
	for i := 0; i < len(code); {
		c := code[i]
		if c == '"' || c == '\'' || c == '`' {
			var n int
			out, n = r.copyLiteral(out, code[i:], literalInterpolates(code, i))
			i += n
			continue
		}
		if i == 0 || !isIdentByte(code[i-1]) {
			if n, path := homeExprAt(code[i:]); n > 0 {
				start := qualifierStart(out)
				r.assigned(out[:start], path)
				out = appendLit(out[:start], path)
				i += n
				continue
			}
			if n, path := r.use(code, i); n > 0 {
				out = appendLit(out, path)
				i += n
				continue
			}
		}
		out = append(out, c)
		i++
	}
	return string(out)
}

// maxHomeNames bounds the names rewriteHome follows.
const maxHomeNames = 8

// homeRewrite is the state of one rewriteHome: the names assigned a
// home expression so far, and the paths they hold.
type homeRewrite struct {
	names, paths [maxHomeNames]string
	n            int
}

// assigned records the name out ends with when it assigns the home
// expression that follows (h = …, const h = …, my $h = …, h := …).
func (r *homeRewrite) assigned(out []byte, path string) {
	p := len(out)
	for p > 0 && (out[p-1] == ' ' || out[p-1] == '\t') {
		p--
	}
	if p < 2 || out[p-1] != '=' || strings.IndexByte("=!<>+-*/|&%.", out[p-2]) >= 0 {
		return
	}
	p--
	if out[p-1] == ':' {
		p--
	}
	for p > 0 && (out[p-1] == ' ' || out[p-1] == '\t') {
		p--
	}
	end := p
	for p > 0 && isIdentByte(out[p-1]) {
		p--
	}
	if p > 0 && out[p-1] == '$' {
		p--
	}
	name := string(out[p:end])
	if name == "" || name == "$" || name[0] >= '0' && name[0] <= '9' || p > 0 && out[p-1] == '.' {
		return
	}
	r.forget(name)
	if r.n < maxHomeNames {
		r.names[r.n], r.paths[r.n] = name, path
		r.n++
	}
}

// forget drops name, assigned something else.
func (r *homeRewrite) forget(name string) {
	for k := 0; k < r.n; k++ {
		if r.names[k] == name {
			r.n--
			r.names[k], r.paths[k] = r.names[r.n], r.paths[r.n]
			return
		}
	}
}

// use returns the length of a name holding the home used at code[i], and
// its path; 0 when there is none there, or when it is a property
// (x.h) or assigned again (which forgets it).
func (r *homeRewrite) use(code string, i int) (int, string) {
	if r.n == 0 || i > 0 && code[i-1] == '.' {
		return 0, ""
	}
	n, path := r.nameAt(code[i:])
	if n == 0 {
		return 0, ""
	}
	if j := skipBlanks(code, i+n); j+1 < len(code) && code[j] == '=' && code[j+1] != '=' {
		r.forget(code[i : i+n])
		return 0, ""
	}
	return n, path
}

// nameAt returns the length of the home name s starts with, and its
// path, or 0.
func (r *homeRewrite) nameAt(s string) (int, string) {
	for k := 0; k < r.n; k++ {
		name := r.names[k]
		if strings.HasPrefix(s, name) && (len(s) == len(name) || !isIdentByte(s[len(name)])) {
			return len(name), r.paths[k]
		}
	}
	return 0, ""
}

// literalInterpolates reports whether the literal opening at code[i]
// interpolates expressions: "…" and `…` do in perl, ruby, php and
// JavaScript templates; '…' only as a Python f-string.
func literalInterpolates(code string, i int) bool {
	if code[i] != '\'' {
		return true
	}
	for k := i - 1; k >= 0 && k >= i-2; k-- {
		switch code[k] {
		case 'f', 'F':
			return k == 0 || !isIdentByte(code[k-1]) || code[k-1] == 'r' || code[k-1] == 'R'
		case 'r', 'R':
			continue
		}
		return false
	}
	return false
}

// copyLiteral appends the literal at the start of s to out, with the
// home expressions and names it interpolates (#{Dir.home},
// ${os.homedir()}, {$_SERVER['HOME']}, "$ENV{HOME}", "$h") as $HOME, and
// returns how much of s it took (all of s when the literal is not
// closed).
func (r *homeRewrite) copyLiteral(out []byte, s string, interp bool) ([]byte, int) {
	q := s[0]
	out = append(out, q)
	for i := 1; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			out = append(out, c, s[i+1])
			i += 2
			continue
		case c == q:
			return append(out, q), i + 1
		case interp && (c == '{' || c == '$' || c == '#'):
			if n, path := r.interpolatedHome(s[i:]); n > 0 {
				out = append(out, path...)
				i += n
				continue
			}
		}
		out = append(out, c)
		i++
	}
	return out, len(s)
}

// interpolatedHome returns the length of an interpolation of the home at
// the start of s, and the path it is: "$ENV{HOME}", or #{…}, ${…}, {…}
// around a home expression and its qualifier (#{ENV['HOME']},
// ${require('os').homedir()}, {os.path.expanduser('~/.ssh')}).
func (r *homeRewrite) interpolatedHome(s string) (int, string) {
	for _, f := range stringHomeForms {
		if n := matchForm(s, f); n > 0 {
			return n, homeVar
		}
	}
	if strings.HasPrefix(s, "$") {
		if n, path := r.nameAt(s); n > 0 {
			return n, path // "$h/.ssh" (perl, php)
		}
	}
	open := 0
	switch {
	case strings.HasPrefix(s, "#{") || strings.HasPrefix(s, "${"):
		open = 2
	case strings.HasPrefix(s, "{"):
		open = 1
	default:
		return 0, ""
	}
	end := min(len(s), open+maxInterpWindow)
	for k := open; k < end; k++ {
		c := s[k]
		if c == '}' || c == '{' || c == '\n' {
			return 0, ""
		}
		if k > open && isIdentByte(s[k-1]) {
			continue
		}
		n, path := homeExprAt(s[k:])
		if n == 0 && k == open {
			n, path = r.nameAt(s[k:]) // "#{h}/.ssh", f"{h}/.ssh"
		}
		if n > 0 {
			j := k + n
			for j < len(s) && s[j] == ' ' {
				j++
			}
			if j < len(s) && s[j] == '}' {
				return j + 1, path
			}
			return 0, ""
		}
	}
	return 0, ""
}

// homeExprAt returns the length of the home expression at the start of
// s and the path it is ("$HOME", or the path a tilde call expands), or
// 0.
func homeExprAt(s string) (int, string) {
	if s == "" {
		return 0, ""
	}
	for _, f := range homeForms {
		if f[0] != s[0] {
			continue
		}
		if n := matchForm(s, f); n > 0 && (n == len(s) || !isIdentByte(s[n]) || !isIdentByte(s[n-1])) {
			return n, homeVar
		}
		if n := withDefault(s, f); n > 0 {
			return n, homeVar
		}
	}
	for _, f := range tildeCalls {
		if strings.HasPrefix(s, f) {
			return tildeCall(s, len(f))
		}
	}
	return 0, ""
}

// withDefault matches a call form given a default as well:
// os.getenv('HOME', '/root'), ENV.fetch("HOME", nil).
func withDefault(s, form string) int {
	if !strings.HasSuffix(form, ")") {
		return 0
	}
	n := matchForm(s, form[:len(form)-1])
	if n == 0 {
		return 0
	}
	if j := skipBlanks(s, n); j >= len(s) || s[j] != ',' {
		return 0
	}
	end := min(len(s), n+maxInterpWindow)
	if k := strings.IndexAny(s[n:end], "()"); k >= 0 && s[n+k] == ')' {
		return n + k + 1
	}
	return 0
}

// matchForm returns len(form)'s worth of s when s starts with form, a '
// in form matching either quote (the same one each time), or 0.
func matchForm(s, form string) int {
	if len(s) < len(form) {
		return 0
	}
	var q byte
	for i := 0; i < len(form); i++ {
		c := s[i]
		if form[i] != '\'' {
			if c != form[i] {
				return 0
			}
			continue
		}
		if c != '\'' && c != '"' || q != 0 && c != q {
			return 0
		}
		q = c
	}
	return len(form)
}

// tildeCall reads expanduser('~/x') (s, its arguments at s[open:]): the
// call is the literal it expands when that starts with ~;
// File.expand_path('.ssh', '~') joins its two literals.
func tildeCall(s string, open int) (int, string) {
	args, end, ok := literalCallArgs(s, open)
	switch {
	case !ok:
	case len(args) == 1 && isTildePath(args[0]):
		return end, args[0]
	case len(args) == 2 && isTildePath(args[1]):
		return end, pathJoin(args[1], args[0])
	}
	return 0, ""
}

func isTildePath(p string) bool { return p == "~" || strings.HasPrefix(p, "~/") }

// qualifierStart returns where in out the qualifier chain that ends it
// starts (os., require('os')., pathlib.Path., File::Spec->): len(out)
// when out does not end with ".", "::" or "->".
func qualifierStart(out []byte) int {
	p := len(out)
	for {
		switch {
		case p > 0 && out[p-1] == '.' && (p < 2 || !isQuote(out[p-2])):
			// "x".getenv("HOME") is PHP's concatenation, not a member.
			p--
		case p > 1 && (out[p-1] == ':' && out[p-2] == ':' || out[p-1] == '>' && out[p-2] == '-'):
			p -= 2
		default:
			return p
		}
		if p > 0 && out[p-1] == ')' {
			open := matchingParen(out, p-1)
			if open < 0 {
				return p
			}
			p = open
		}
		for p > 0 && (isIdentByte(out[p-1]) || out[p-1] == '$') {
			p--
		}
	}
}

// matchingParen returns the index of the "(" that the ")" at out[close]
// closes, looked for within maxInterpWindow bytes, or -1.
func matchingParen(out []byte, close int) int {
	depth := 0
	for k := close; k >= 0 && k >= close-maxInterpWindow; k-- {
		switch out[k] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}

// foldPass folds, once over code, each chain of literals joined by an
// operator ("a" + "b", "a" . "b", "a" .. "b", "a" / "b") and each path
// join call whose arguments are all literals (path.join, os.path.join,
// File.join, Paths.get, Path(…), perl's join).
func foldPass(code string) (string, bool) {
	out := make([]byte, 0, len(code))
	changed := false
	litStart, litEnd := -1, -1 // the last literal written to out
	for i := 0; i < len(code); {
		c := code[i]
		switch c {
		case '"', '\'', '`':
			text, end, folded, ok := readChain(code, i)
			if !ok {
				return string(append(out, code[i:]...)), changed
			}
			litStart = len(out)
			if folded {
				out = appendLit(out, text)
				changed = true
			} else {
				out = append(out, code[i:end]...)
			}
			litEnd, i = len(out), end
			continue
		case '(':
			if joined, qual, ok := foldJoin(out, code, i, litStart, litEnd); ok {
				out = appendLit(out[:qual], joined.text)
				litStart, litEnd = qual, len(out)
				i = joined.end
				changed = true
				continue
			}
		}
		out = append(out, c)
		i++
	}
	return string(out), changed
}

// mayFold is foldPass's cheap first look: a literal joined to another
// by an operator ("a" + "b", 'a'.'b', "a" / "b", "a" .. "b"), a method
// that leaves a path as it is, or a call that joins paths. Code with
// none of them folds to itself.
func mayFold(code string) bool {
	for _, m := range []string{"join(", "joinpath(", "Path(", "resolve(", "catfile(", "catdir(", "Pathname(", "File(", ".get(", ".of(", "file.path(",
		".expanduser()", ".absolute()", ".to_s", ".toString()", ".to_path"} {
		if strings.Contains(code, m) {
			return true
		}
	}
	for i := 0; i < len(code); i++ {
		if c := code[i]; c != '"' && c != '\'' && c != '`' {
			continue
		}
		j := skipBlanks(code, i+1)
		if j < len(code) && (code[j] == '+' || code[j] == '.' || code[j] == '/') {
			k := skipBlanks(code, j+1)
			if k < len(code) && code[j] == '.' && code[k] == '.' {
				k = skipBlanks(code, k+1)
			}
			if k < len(code) && (code[k] == '"' || code[k] == '\'' || code[k] == '`') {
				return true
			}
		}
	}
	return false
}

// joinedCall is a join call folded: its path and where it ends in code.
type joinedCall struct {
	text string
	end  int
}

// foldJoin folds the call whose "(" is code[i], when it joins paths and
// its arguments are literals: the joined path, and where in out its name
// and qualifier start. out[litStart:litEnd] is the last literal written.
func foldJoin(out []byte, code string, i, litStart, litEnd int) (joinedCall, int, bool) {
	nameStart := len(out)
	for nameStart > 0 && isIdentByte(out[nameStart-1]) {
		nameStart--
	}
	name := string(out[nameStart:])
	dotted := nameStart > 0 && out[nameStart-1] == '.'
	var recv string // the literal a method is called on
	if dotted && litEnd == nameStart-1 {
		r, _, ok := readLiteral(string(out[litStart:litEnd]))
		if !ok {
			return joinedCall{}, 0, false
		}
		recv = r
	}
	switch {
	case name == "joinpath" && recv != "":
	case recv != "" || nameStart > 0 && out[nameStart-1] == ']':
		return joinedCall{}, 0, false // ",".join(…), [a, b].join("/")
	case name == "join" || name == "resolve" || name == "catfile" || name == "catdir" || name == "joinpath",
		name == "Path" || name == "PurePath" || name == "PosixPath" || name == "Pathname" || name == "File":
	case name == "get" && strings.HasSuffix(string(out[:nameStart]), "Paths."),
		name == "of" && strings.HasSuffix(string(out[:nameStart]), "Path."),
		name == "path" && strings.HasSuffix(string(out[:nameStart]), "file."): // R's file.path
	default:
		return joinedCall{}, 0, false
	}
	args, end, ok := literalCallArgs(code, i+1)
	if !ok {
		return joinedCall{}, 0, false
	}
	qual := qualifierStart(out[:nameStart])
	switch {
	case recv != "":
		args, qual = append([]string{recv}, args...), litStart
	case name == "join" && !dotted && len(args) > 1 && len(args[0]) <= 2:
		// perl's join(SEP, LIST); a path first is a join imported from
		// node's path module.
		return joinedCall{strings.Join(args[1:], args[0]), end}, qual, true
	}
	return joinedCall{pathJoin(args...), end}, qual, true
}

// literalCallArgs reads the arguments of a call from s[i:], just after
// its "(", when each is a literal (or a chain of them): the arguments,
// and where the call ends.
func literalCallArgs(s string, i int) ([]string, int, bool) {
	var args []string
	for len(args) < 16 {
		i = skipBlanks(s, i)
		if i < len(s) && s[i] == ')' && len(args) == 0 {
			return nil, 0, false
		}
		text, end, _, ok := readChain(s, i)
		if !ok {
			return nil, 0, false
		}
		args = append(args, text)
		i = skipBlanks(s, end)
		switch {
		case i < len(s) && s[i] == ')':
			return args, i + 1, true
		case i < len(s) && s[i] == ',':
			i++
		default:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// readChain reads the literal at s[i] and the literals joined to it by an
// operator: the joined text, where the chain ends, and whether it had
// more than one literal (or a suffix that changes nothing, such as
// .expanduser()). ok is false when s[i] starts no literal.
func readChain(s string, i int) (text string, end int, folded, ok bool) {
	text, n, ok := readLiteral(s[i:])
	if !ok || n == 0 || i < len(s) && s[i] != '"' && s[i] != '\'' && s[i] != '`' {
		return "", 0, false, false
	}
	end = i + n
	for k := 0; k < 16; k++ {
		if j := identitySuffix(s, end); j > end {
			end, folded = j, true
		}
		j := skipBlanks(s, end)
		op := ""
		switch {
		case strings.HasPrefix(s[j:], ".."):
			op = ".."
		case j < len(s) && (s[j] == '+' || s[j] == '.' || s[j] == '/'):
			op = s[j : j+1]
		default:
			return text, end, folded, true
		}
		j = skipBlanks(s, j+len(op))
		if j >= len(s) || s[j] != '"' && s[j] != '\'' && s[j] != '`' {
			return text, end, folded, true
		}
		next, m, ok := readLiteral(s[j:])
		if !ok {
			return text, end, folded, true
		}
		if op == "/" {
			text = pathJoin(text, next)
		} else {
			text += next
		}
		end, folded = j+m, true
	}
	return text, end, folded, true
}

// identitySuffix returns where a method call that leaves a path as it is
// (.expanduser(), .resolve(), .to_s, …) ends, when one starts at s[i];
// i otherwise.
func identitySuffix(s string, i int) int {
	for _, m := range []string{".expanduser()", ".resolve()", ".absolute()", ".to_s", ".toString()", ".to_path"} {
		if strings.HasPrefix(s[i:], m) && (i+len(m) == len(s) || !isIdentByte(s[i+len(m)])) {
			return i + len(m)
		}
	}
	return i
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// pathJoin joins path parts with one "/" between them; an absolute part
// starts the path again, as os.path.join and path.resolve do.
func pathJoin(parts ...string) string {
	p := ""
	for _, s := range parts {
		switch {
		case p == "" || strings.HasPrefix(s, "/"):
			p = s
		case s == "":
		default:
			p = strings.TrimRight(p, "/") + "/" + strings.TrimLeft(s, "/")
		}
	}
	return p
}

// appendLit appends text as a double-quoted literal that readLiteral
// reads back as text.
func appendLit(out []byte, text string) []byte {
	out = append(out, '"')
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '"', '\\':
			out = append(out, '\\', c)
		case '\n':
			out = append(out, '\\', 'n')
		case '\t':
			out = append(out, '\\', 't')
		default:
			out = append(out, c)
		}
	}
	return append(out, '"')
}

func isQuote(c byte) bool { return c == '"' || c == '\'' || c == '`' }
