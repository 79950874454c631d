package shell

import (
	"path"
	"strings"
)

// The fast path analyses everyday command lines without the full parser:
// plain words (see scanPlainWord), which may hold $NAME and backslash
// escapes, in simple commands joined by | && || ; and newlines, with
// prefix assignments (CGO_ENABLED=0 go build), export NAME=value,
// comments and redirections to plain words (> out, >> log, < in, 2>&1,
// &> all), and command substitutions $(…) of such scripts in a
// command's words (one level; see lexSubst). It lexes the whole line,
// substitutions included, first and gives up, leaving the line
// to the full parse, on anything else; then it builds the commands
// exactly as the walker does from the parser's syntax tree, so the result
// is identical.

// Byte classes of the fast-path lexer. Bytes of class 0 never change
// meaning inside a word: letters, digits and ._/-,:@+%=~. Glob, brace and
// clExt bytes are plain too, but glob and brace bytes flag the word as
// the parser's literal does (field.glob, field.brace), and clExt marks
// what only bash reads as plain (see checkOtherShell).
const (
	clGlob   uint8 = 1 << iota // * ? [
	clBrace                    // {
	clQuote                    // ' "
	clStop                     // blanks, newline and | & ; < >: end a word
	clBad                      // anything else: the full parse decides
	clExt                      // # ] }; on a line: tabs, newlines, comments, assignments
	clDollar                   // $NAME, a parameter expansion
	clEscape                   // \: a backslash escaping the next byte
)

var byteClass = func() (t [256]uint8) {
	for i := range t {
		t[i] = clBad
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = 0
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = 0
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = 0
	}
	for _, c := range "._/-,:@+%=~" {
		t[c] = 0
	}
	for _, c := range "#]}" {
		t[c] = clExt
	}
	for _, c := range "*?[" {
		t[c] = clGlob
	}
	t['{'] = clBrace
	t['\''], t['"'] = clQuote, clQuote
	t['$'] = clDollar
	t['\\'] = clEscape
	for _, c := range " \t\n|&;<>)" {
		t[c] = clStop
	}
	return t
}()

// clSubst, in a word's class (where clBad never is), marks a command
// substitution $(…) in the word.
const clSubst = clBad

// Line flags lexPlain reports besides the union of its words' classes.
const (
	lfList   uint16 = 1 << (8 + iota) // | && || ; or newline: more than one simple command
	lfRedir                           // a redirection
	lfAssign                          // a prefix assignment
	lfDecl                            // export NAME[=value]…
	lfSubst                           // a command substitution $(…) in a word
)

// quotable marks the bytes the fast path accepts inside single quotes
// (qSingle: printable ASCII, tab, newline) and double quotes (qDouble:
// those but $ ` and \, which the parser reads as expansions or escapes;
// $NAME is read separately), and those that are not a newline (qOneLine).
const (
	qSingle uint8 = 1 << iota
	qDouble
	qOneLine
)

var quotable = func() (t [256]uint8) {
	for c := ' '; c <= '~'; c++ {
		t[c] = qSingle | qDouble | qOneLine
	}
	t['\t'], t['\n'] = qSingle|qDouble|qOneLine, qSingle|qDouble
	for _, c := range "$`\\" {
		t[c] = qSingle | qOneLine
	}
	return t
}()

// isKeyword reports whether a first word is one the parser treats
// specially (reserved words, declaration builtins, time/coproc), so that
// the command takes the full parse. (A switch: no hashing on every line.)
func isKeyword(word string) bool {
	switch word {
	case "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while",
		"until", "for", "in", "function", "select", "time", "coproc", "declare", "local",
		"export", "readonly", "typeset", "nameref", "let", "[[", "]]", "{", "}":
		return true
	}
	return false
}

// fpKind is the kind of a fast-path token.
type fpKind uint8

const (
	fpWord   fpKind = iota // a plain word
	fpAssign               // NAME=value before the program
	fpRedir                // a redirection: [fd]op target
	fpPipe                 // |
	fpAnd                  // &&
	fpOr                   // ||
	fpSemi                 // ; or newline
)

// fpTok is one token of a fast-path line. Offsets index the source.
type fpTok struct {
	kind fpKind
	// class is the union of the byte classes of the word (or redirection
	// target) outside quotes, plus clQuote if it holds quotes.
	class uint8
	// start, end delimit the word, the operator, or the redirection's
	// target word.
	start, end int32
	// op is the redirection operator (an index into redirOps); fd, if
	// fdEnd > fdStart, is its descriptor number.
	op             uint8
	fdStart, fdEnd int32
}

// redirOps are the redirection operators the fast path handles, longest
// first where one is the prefix of another.
var redirOps = [...]string{"&>>", "&>", ">>", ">&", "<&", ">", "<"}

// Indexes into redirOps that the fast path tests for.
const (
	opAppAll = 0 // &>>
	opAll    = 1 // &>
	opDplOut = 3 // >&
	opDplIn  = 4 // <&
)

// fpMaxNest is the compound nesting past which the fast path leaves a
// line to the full parse: a list and a pipeline each add one level, and
// the walker reports nesting beyond maxNesting as too deep.
const fpMaxNest = maxNesting - 2

// fastPath analyses src without the full parser if it is a line the fast
// path handles, reporting whether it did.
func (w *walker) fastPath(src string, fr frame) bool {
	if fr.nest >= fpMaxNest || len(src) > 1<<30 {
		return false
	}
	// Brackets (even quoted) nested deeper than the parser is given make
	// the full parse report the line too deep; only a long line has them.
	if len(src) > maxSyntaxNesting && syntaxTooDeep(src) {
		return false
	}
	var arr [12]fpTok
	toks, flags, ok := lexPlain(src, arr[:0])
	if !ok {
		return false
	}
	// $NAME renders as written while the line gives no variable a known
	// value; the walker renders a known value (assignVar) in its place.
	// (A substitution counts as $NAME: its script may hold some.)
	if flags&uint16(clDollar) != 0 && w.sem.anyKnown() {
		return false
	}
	// A substitution one level past MaxDepth is reported too deep; a line
	// with more substitutions and commands than the parser is given, not
	// analysed.
	if flags&lfSubst != 0 && (fr.depth >= MaxDepth || len(src) > maxCommandMarks && commandMarks(src) > maxCommandMarks) {
		return false
	}
	if flags&lfList == 0 {
		// The usual line: one simple command (parse's room fits it).
		if len(toks) > 0 {
			w.fastCommand(src, toks, flags, fr)
		}
		return true
	}
	if len(w.s.Commands) == 0 {
		// Most lines run one program per command: size for that, and
		// share one allocation between the arguments of all commands
		// (parse's inline room when it is enough).
		ncmds, nwords := 0, 0
		for _, t := range toks {
			switch t.kind {
			case fpWord:
				nwords++
			case fpRedir, fpAssign:
			default:
				ncmds++
			}
		}
		if len(toks) > 0 && toks[len(toks)-1].kind != fpSemi {
			ncmds++
		}
		if ncmds > cap(w.s.Commands) {
			w.s.Commands = make([]Command, 0, ncmds)
		}
		if ncmds > 1 && nwords-ncmds > cap(w.args)-len(w.args) {
			w.args = make([]string, 0, nwords-ncmds)
		}
	}
	for i := 0; i < len(toks); {
		// One statement: up to ; or the end.
		end, list := i, false
		for end < len(toks) && toks[end].kind != fpSemi {
			list = list || toks[end].kind == fpAnd || toks[end].kind == fpOr
			end++
		}
		sfr := fr
		if list {
			sfr.nest++ // the && / || list is a compound command
		}
		for j := i; j < end; {
			// One element of the list: a pipeline or a simple command.
			elemEnd, pipe := j, false
			for elemEnd < end && toks[elemEnd].kind != fpAnd && toks[elemEnd].kind != fpOr {
				pipe = pipe || toks[elemEnd].kind == fpPipe
				elemEnd++
			}
			if pipe {
				w.fastPipeline(src, toks[j:elemEnd], flags, sfr)
			} else {
				w.fastCommand(src, toks[j:elemEnd], flags, sfr)
			}
			j = elemEnd + 1
		}
		i = end + 1
	}
	return true
}

// fastPipeline emits the commands of a | b | c and records the pipeline,
// as walker.pipeline does.
func (w *walker) fastPipeline(src string, toks []fpTok, flags uint16, fr frame) {
	fr.nest++
	n := 1
	for _, t := range toks {
		if t.kind == fpPipe {
			n++
		}
	}
	members := w.memberRoom(n)
	var startBuf [8]int
	starts := startBuf[:0] // where each element's members begin
	for i := 0; i < len(toks); {
		starts = append(starts, len(members))
		end := i
		for end < len(toks) && toks[end].kind != fpPipe {
			end++
		}
		start := len(w.s.Commands)
		saved := w.sem.save() // each element runs in a subshell
		w.fastCommand(src, toks[i:end], flags, fr)
		w.sem = saved
		members = w.appendMembers(members, start, fr.depth)
		i = end + 1
	}
	w.registerPipeline(members)
	w.pipeData(members, starts, fr)
}

// fastCommand emits one simple command made of assignments, words and
// redirections, rendering them in the order the walker does. flags are
// the line's (lexPlain). The usual command, words only, stays in this
// small function; the rest is fastCommandWith's.
func (w *walker) fastCommand(src string, toks []fpTok, flags uint16, fr frame) {
	if flags&(lfRedir|lfAssign|lfDecl) != 0 {
		w.fastCommandWith(src, toks, flags, fr)
		return
	}
	var arr [6]field
	w.emitCall(w.fastFields(src, toks, arr[:0], fr), nil, joinRedirs(fr.redirs, nil), fr)
	if flags&lfSubst != 0 {
		w.fastSubsts(src, toks, fr)
	}
}

// fastSubsts analyses the command substitutions in the words of one
// command, after it, one level deeper, as walker.substitutions does:
// what they change (cd, variables) stays in them.
//
//go:noinline
func (w *walker) fastSubsts(src string, toks []fpTok, fr frame) {
	inner := fr.substitutionFrame()
	inner.via = "$()"
	saved := w.sem.save()
	for _, t := range toks {
		if t.kind != fpWord || t.class&clSubst == 0 {
			continue
		}
		word := src[t.start:t.end]
		inDouble := false
		for i := 0; ; {
			start, end, dq := nextSubst(word, i, inDouble)
			if start < 0 {
				break
			}
			inDouble = dq
			// The lexer accepted the script as a plain one, so this takes
			// the fast path.
			w.parseScript(word[start+2:end-1], inner, false)
			i = end
		}
	}
	w.sem = saved
}

// nextSubst returns where the first command substitution $(…) at or
// after word[i] starts and ends, or -1, in a word lexPlain accepted, and
// whether it is inside double quotes; inDouble: word[i] is.
func nextSubst(word string, i int, inDouble bool) (start, end int, inDoubleAt bool) {
	for i < len(word) {
		switch word[i] {
		case '\\':
			i++ // the escaped byte (never inside double quotes)
		case '\'':
			if !inDouble {
				i += 1 + strings.IndexByte(word[i+1:], '\'')
			}
		case '"':
			inDouble = !inDouble
		case '$':
			if i+1 < len(word) && word[i+1] == '(' {
				return i, substEnd(word, i), inDouble
			}
		}
		i++
	}
	return -1, -1, false
}

// substEnd returns the end of the command substitution starting at
// s[i] ($), accepted by the lexer.
func substEnd(s string, i int) int {
	var arr [8]fpTok
	_, _, end, _ := lexTokens(s, i+2, arr[:0], true)
	return end
}

// fastFields appends the fields of the word tokens in toks to fields.
func (w *walker) fastFields(src string, toks []fpTok, fields []field, fr frame) []field {
	for _, t := range toks {
		if t.kind != fpWord {
			continue
		}
		raw := src[t.start:t.end]
		f := field{text: raw, raw: raw}
		if t.class&clQuote != 0 {
			f = unquotePlainWord(raw)
		}
		f.glob, f.brace, f.dynamic = t.class&clGlob != 0, t.class&clBrace != 0, t.class&clDollar != 0
		fields = append(fields, f)
		if f.brace {
			fields = w.expandBraceFields(fields, len(fields)-1, fr)
		}
	}
	return fields
}

// fastCommandWith is fastCommand for a line with redirections, prefix
// assignments or export.
//
//go:noinline
func (w *walker) fastCommandWith(src string, toks []fpTok, flags uint16, fr frame) {
	if flags&lfDecl != 0 && src[toks[0].start:toks[0].end] == "export" {
		w.fastExport(src, toks, fr)
		return
	}
	nredirs, nassigns := 0, 0
	// The first &> or &>> redirection, if words follow it (checkAllRedirOrder).
	allRedir := -1
	for k, t := range toks {
		switch t.kind {
		case fpRedir:
			nredirs++
			if allRedir == -1 && (t.op == opAppAll || t.op == opAll) {
				allRedir = k
			}
		case fpAssign:
			nassigns++
		default:
			if allRedir >= 0 {
				r := toks[allRedir]
				w.allRedirBeforeWord(src[r.fdEnd:r.end], fr)
				allRedir = -2
			}
		}
	}
	var redirs []Redirect
	if nredirs > 0 {
		redirs = w.redirRoom(nredirs)
		for _, t := range toks {
			if t.kind != fpRedir {
				continue
			}
			quoted := t.class&clQuote != 0
			target := src[t.start:t.end]
			if quoted {
				target = unquotePlainWord(target).text
			}
			op := redirOps[t.op]
			if (t.op == opDplOut || t.op == opDplIn) && isFDWord(target) {
				if !quoted && src[t.start-1] == '&' {
					target = src[t.start-1 : t.end] // 2>&1: no need to copy
				} else {
					target = "&" + target
				}
			}
			redirs = append(redirs, Redirect{Op: op, FD: src[t.fdStart:t.fdEnd], Target: target})
		}
	}
	var assigns []string
	if nassigns > 0 {
		assigns = make([]string, 0, nassigns)
		for _, t := range toks {
			if t.kind != fpAssign {
				continue
			}
			raw := src[t.start:t.end]
			if t.class&clQuote != 0 {
				raw = unquotePlainWord(raw).text
			}
			assigns = append(assigns, raw)
		}
	}
	var arr [6]field
	w.emitCall(w.fastFields(src, toks, arr[:0], fr), assigns, joinRedirs(fr.redirs, redirs), fr)
	if flags&lfSubst != 0 {
		w.fastSubsts(src, toks, fr)
	}
}

// fastExport emits export NAME=value… (words only) and records what it
// sets, as walker.stmt does for the declaration clause: the operands as
// rendered are the arguments, and the variables become exported, with
// known values (the line holds no $NAME that could show them).
func (w *walker) fastExport(src string, toks []fpTok, fr frame) {
	var arr [6]field
	fields := arr[:0]
	for _, t := range toks {
		text := src[t.start:t.end]
		if t.class&clQuote != 0 {
			text = unquotePlainWord(text).text
		}
		fields = append(fields, field{text: text, raw: text})
	}
	w.emitCall(fields, nil, joinRedirs(fr.redirs, nil), fr)
	for _, f := range fields[1:] {
		name, val, hasValue := strings.Cut(f.text, "=")
		if name == "CDPATH" {
			w.cdpathSet = true
		}
		if !hasValue {
			v := w.sem.vars[name]
			v.exported = true
			w.setVar(name, v)
			continue
		}
		w.assignVar(name, val, true, true, fr.cond)
	}
	w.execEnv(texts(fields[1:]), fr)
}

// isName reports whether s is a variable name.
func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c == '_' || isAlnum(c)) || (i == 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return len(s) > 0
}

// lexPlain splits src into fast-path tokens, appending to toks, and
// reports the line's flags (lfList, lfRedir, lfAssign) with the union of
// its words' byte classes (and clExt for tabs, newlines, comments and
// assignments). ok is false when the line needs the full parser:
// anything but plain words,
// prefix assignments, comments, the operators | && || ; and newline, and
// redirections of plain words; a command that starts with a keyword or a
// redirection, or has only assignments; an operator with no command
// before it, or (except ; and newline) after it.
func lexPlain(src string, toks []fpTok) (_ []fpTok, flags uint16, ok bool) {
	toks, flags, _, ok = lexTokens(src, 0, toks, false)
	return toks, flags, ok
}

// lexTokens is lexPlain from src[i]; inSubst: the script of a command
// substitution, which ends at an unquoted ) (end is past it) and may
// hold no substitution of its own.
func lexTokens(src string, i int, toks []fpTok, inSubst bool) (_ []fpTok, flags uint16, end int, ok bool) {
	var class uint8 // the union of the words' classes, clExt for the line
	words := 0      // words of the current simple command
	// decl: the command is export NAME[=value]…; assigned: it has prefix
	// assignments.
	decl, assigned := false, false
	closed := false
	for i < len(src) {
		c := src[i]
		if c == ')' {
			if !inSubst {
				return nil, 0, 0, false
			}
			closed = true
			i++
			break
		}
		switch c {
		case ' ':
			i++
			continue
		case '\t':
			class |= clExt
			i++
			continue
		case '\n':
			class |= clExt
			if words > 0 {
				toks = append(toks, fpTok{kind: fpSemi, start: int32(i), end: int32(i + 1)})
				flags |= lfList
				words, decl, assigned = 0, false, false
			} else if len(toks) > 0 && toks[len(toks)-1].kind != fpSemi {
				return nil, 0, 0, false // a | b, a && b, … continued on the next line; A=1 alone
			}
			i++
			continue
		case '#':
			// A comment: # starting a word, up to the end of the line.
			class |= clExt
			for i < len(src) && src[i] != '\n' {
				if quotable[src[i]]&qOneLine == 0 {
					return nil, 0, 0, false
				}
				i++
			}
			continue
		case '|', ';':
			kind, n := fpPipe, 1
			switch {
			case c == ';':
				kind = fpSemi
			case i+1 < len(src) && src[i+1] == '|':
				kind, n = fpOr, 2
			case i+1 < len(src) && src[i+1] == '&':
				return nil, 0, 0, false // |&
			}
			if words == 0 {
				return nil, 0, 0, false
			}
			toks = append(toks, fpTok{kind: kind, start: int32(i), end: int32(i + n)})
			flags |= lfList
			words, decl, assigned = 0, false, false
			i += n
			continue
		case '&':
			if i+1 < len(src) && src[i+1] == '&' {
				if words == 0 {
					return nil, 0, 0, false
				}
				toks = append(toks, fpTok{kind: fpAnd, start: int32(i), end: int32(i + 2)})
				flags |= lfList
				words, decl, assigned = 0, false, false
				i += 2
				continue
			}
			if i+1 == len(src) || src[i+1] != '>' {
				return nil, 0, 0, false // background
			}
		}
		fdStart, fdEnd := i, i
		if c != '>' && c != '<' && c != '&' {
			end, wclass, ok := scanPlainWord(src, i, !inSubst)
			if !ok {
				return nil, 0, 0, false
			}
			// A number right before < or > is the descriptor it redirects;
			// {NAME} there names a descriptor variable ({fd}>f).
			if end < len(src) && src[end-1] == '}' && (src[end] == '>' || src[end] == '<' || src[end] == '&') {
				return nil, 0, 0, false
			}
			if end == len(src) || (src[end] != '>' && src[end] != '<') || !allDigits(src[i:end]) {
				kind := fpWord
				if words > 0 {
					// export's operands: NAME=value or NAME, nothing else.
					if decl && !isAssignment(src[i:end]) && !isName(src[i:end]) {
						return nil, 0, 0, false
					}
				} else {
					switch raw := src[i:end]; {
					case raw == "export" && !assigned:
						decl = true
						class |= clExt
						flags |= lfDecl
					// The parser reads NAME[ as the start of an array
					// element assignment.
					case isKeyword(raw) || raw != "[" && strings.IndexByte(raw, '[') >= 0:
						return nil, 0, 0, false
					// A word starting with $( is no assignment, whatever = it holds.
					case strings.IndexByte(raw, '=') >= 0 && (raw[0] != '$' || wclass&clSubst == 0):
						// NAME=value is an assignment; any other first
						// word with = is left to the parser.
						if !isAssignment(raw) {
							return nil, 0, 0, false
						}
						kind = fpAssign
						assigned = true
						class |= clExt
						flags |= lfAssign
					}
				}
				if wclass&clSubst != 0 {
					// Only in a command's words.
					if kind != fpWord || decl {
						return nil, 0, 0, false
					}
					flags |= lfSubst
				}
				toks = append(toks, fpTok{kind: kind, class: wclass, start: int32(i), end: int32(end)})
				class |= wclass
				if kind == fpWord {
					words++
				}
				i = end
				continue
			}
			fdEnd, i = end, end
		}
		if words == 0 || decl {
			return nil, 0, 0, false // redirection before the program, or of export
		}
		tok, ok := lexRedir(src, i, fdStart, fdEnd)
		if !ok {
			return nil, 0, 0, false
		}
		class |= tok.class
		flags |= lfRedir
		toks = append(toks, tok)
		i = int(tok.end)
	}
	if inSubst && !closed {
		return nil, 0, 0, false // unterminated: let the parser report it
	}
	if len(toks) > 0 && words == 0 && toks[len(toks)-1].kind != fpSemi {
		return nil, 0, 0, false // | && || need a command after them, assignments a program
	}
	if flags&lfDecl != 0 && class&clDollar != 0 {
		return nil, 0, 0, false // export gives variables values that $NAME would show
	}
	return toks, flags | uint16(class), i, true
}

// lexRedir reads the redirection whose operator starts at src[i] (after
// the descriptor number in src[fdStart:fdEnd], if any). ok is false for
// one the fast path leaves to the parser. (Out of lexPlain: most lines
// have none.)
//
//go:noinline
func lexRedir(src string, i, fdStart, fdEnd int) (_ fpTok, ok bool) {
	op, ok := redirOp(src[i:])
	if !ok {
		return fpTok{}, false
	}
	i += len(redirOps[op])
	for i < len(src) && src[i] == ' ' {
		i++
	}
	if i == len(src) || src[i] == '#' {
		return fpTok{}, false
	}
	end, class, ok := scanPlainWord(src, i, false)
	if !ok || end == i {
		return fpTok{}, false
	}
	return fpTok{kind: fpRedir, class: class, start: int32(i), end: int32(end),
		op: op, fdStart: int32(fdStart), fdEnd: int32(fdEnd)}, true
}

// redirOp returns the redirection operator src starts with, as an index
// into redirOps; ok is false for one the fast path leaves to the parser
// (heredocs, <>, >|, process substitution, …).
func redirOp(src string) (op uint8, ok bool) {
	for i, o := range redirOps {
		if !strings.HasPrefix(src, o) {
			continue
		}
		// What follows must start the target word: this also rules out
		// the longer operators (>>|, >|, <<, <>, <(, >(, &>|, …).
		if len(src) > len(o) {
			switch src[len(o)] {
			case '|', '&', '<', '>', '(', ';':
				return 0, false
			}
		}
		return uint8(i), true
	}
	return 0, false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}

// scanPlainWord returns the end of the word starting at src[i] and the
// union of the byte classes in it outside quotes, with clQuote if it
// holds quotes or backslashes (unquotePlainWord renders it), clDollar if
// it holds $NAME (outside single quotes) and clExt if it holds a
// backslash or quotes holding a newline; escaped bytes add no class. ok
// is false if it needs the full parser. A word ends at a blank, a
// newline or one of the operator characters | & ; < > ). With allowSubst,
// a plain command substitution $(…) (see lexSubst) adds clSubst and
// clDollar: it renders as written.
func scanPlainWord(src string, i int, allowSubst bool) (end int, class uint8, ok bool) {
scan:
	for i < len(src) {
		c := byteClass[src[i]]
		if c&^(clGlob|clBrace|clExt) == 0 {
			class |= c
			i++
			continue
		}
		switch {
		case c&clStop != 0:
			return i, class, true
		case c&clEscape != 0:
			// Only a printable byte: \ newline joins lines.
			if i+1 == len(src) || src[i+1] < ' ' || src[i+1] > '~' {
				return 0, 0, false
			}
			class |= clQuote | clExt
			i += 2
			continue
		case c&clDollar != 0:
			if i+1 < len(src) && src[i+1] == '(' {
				end, ok := lexSubst(src, i, allowSubst)
				if !ok {
					return 0, 0, false
				}
				class |= clSubst | clDollar
				i = end
				continue
			}
			n := paramNameLen(src[i+1:])
			if n == 0 {
				return 0, 0, false
			}
			class |= clDollar
			i += 1 + n
			continue
		case c&clQuote == 0:
			return 0, 0, false
		}
		q := src[i]
		n := strings.IndexByte(src[i+1:], q)
		if n < 0 {
			return 0, 0, false // unterminated: let the parser report it
		}
		inner := src[i+1 : i+1+n]
		all := qSingle | qDouble | qOneLine
		for _, b := range []byte(inner) {
			all &= quotable[b]
		}
		if q == '\'' {
			if all&qSingle == 0 {
				return 0, 0, false
			}
		} else if all&qDouble == 0 {
			// $NAME may be the reason; anything else needs the parser.
			for j := 0; j < len(inner); j++ {
				if quotable[inner[j]]&qDouble != 0 {
					continue
				}
				if inner[j] != '$' {
					return 0, 0, false
				}
				if j+1 < len(inner) && inner[j+1] == '(' {
					// The substitution may hold quotes: scan it.
					end, dclass, ok := scanDoubleQuoted(src, i, allowSubst)
					if !ok {
						return 0, 0, false
					}
					class |= dclass
					i = end
					continue scan
				}
				n := paramNameLen(inner[j+1:])
				if n == 0 {
					return 0, 0, false
				}
				class |= clDollar
				j += n
			}
		}
		if all&qOneLine == 0 {
			class |= clExt
		}
		class |= clQuote
		i += n + 2
	}
	return i, class, true
}

// scanDoubleQuoted returns the end of the double-quoted part at src[i]
// that holds a command substitution, and its class (clQuote, clDollar,
// clSubst, clExt). (Out of scanPlainWord: few words have one.)
//
//go:noinline
func scanDoubleQuoted(src string, i int, allowSubst bool) (end int, class uint8, ok bool) {
	class = clQuote
	for i++; i < len(src); {
		c := src[i]
		switch {
		case c == '"':
			return i + 1, class, true
		case quotable[c]&qDouble != 0:
			if c == '\n' {
				class |= clExt
			}
			i++
		case c != '$':
			return 0, 0, false
		case i+1 < len(src) && src[i+1] == '(':
			end, ok := lexSubst(src, i, allowSubst)
			if !ok {
				return 0, 0, false
			}
			class |= clSubst | clDollar
			i = end
		default:
			n := paramNameLen(src[i+1:])
			if n == 0 {
				return 0, 0, false
			}
			class |= clDollar
			i += 1 + n
		}
	}
	return 0, 0, false // unterminated
}

// lexSubst returns the end of the command substitution $(…) starting at
// src[i] ($). ok is false, leaving the line to the parser, unless
// allowSubst and its script is plain (lexTokens) with no substitution
// of its own and no # in its words, and the walker would not give it a
// known value
// (substValue): a lone command of echo, printf, pwd, dirname or
// basename, or one whose words the fast path cannot tell apart from
// those (a $NAME or brace program word, brace expansion), takes the full
// parse.
func lexSubst(src string, i int, allowSubst bool) (end int, ok bool) {
	if !allowSubst || i+2 < len(src) && src[i+2] == '(' { // $(( is arithmetic
		return 0, false
	}
	var arr [8]fpTok
	toks, _, end, ok := lexTokens(src, i+2, arr[:0], true)
	if !ok {
		return 0, false
	}
	commands, first, multi := 0, -1, false
	for k, t := range toks {
		// In a substitution the parser may read # after a quote as a
		// comment ($(''#x)): no # in words there.
		if t.class&clExt != 0 && strings.IndexByte(src[t.start:t.end], '#') >= 0 {
			return 0, false
		}
		switch t.kind {
		case fpWord:
			if k == 0 || toks[k-1].kind == fpSemi {
				commands++
				first = k
			}
		case fpSemi:
		default:
			multi = true // not one call with words only: no value
		}
	}
	// echo X | base64 -d may have a value (substValue reads such
	// pipelines): the full parse works it out.
	if multi {
		for _, t := range toks {
			if t.kind == fpWord && valueProgram(src[t.start:t.end]) {
				return 0, false
			}
		}
	}
	if multi || commands != 1 {
		return end, true
	}
	for _, t := range toks {
		if t.kind == fpWord && t.class&clBrace != 0 {
			return 0, false
		}
	}
	ft := toks[first]
	if ft.class&clDollar != 0 {
		return 0, false
	}
	name := src[ft.start:ft.end]
	if ft.class&clQuote != 0 {
		name = unquotePlainWord(name).text
	}
	if valueSource(path.Base(name)) {
		return 0, false
	}
	if path.Base(name) == "git" {
		for _, t := range toks[first+1:] {
			if t.kind == fpWord && src[t.start:t.end] == "ls-files" {
				return 0, false // $(git ls-files): its glob (substValue)
			}
		}
	}
	return end, true
}

// valueProgram reports the programs a substitution's value can be worked
// out through (substValue): a word that may name one leaves the
// substitution to the full parse.
func valueProgram(word string) bool {
	p := path.Base(strings.Trim(word, `'"`))
	return valueSource(p) || valueFilter(p)
}

// paramNameLen returns the length of the variable name s starts with, as
// the parser reads $NAME, or 0 if the fast path leaves it to the parser:
// no name (special parameters, ${…}, $(…), …) or IFS (the walker splits
// words at $IFS).
func paramNameLen(s string) int {
	n := 0
	for n < len(s) && (s[n] == '_' || isAlnum(s[n])) {
		if n == 0 && s[0] >= '0' && s[0] <= '9' {
			return 0
		}
		n++
	}
	if s[:n] == "IFS" {
		return 0
	}
	return n
}

// unquotePlainWord removes the quotes and backslashes of a word accepted
// by scanPlainWord,
// flagging quote-splitting exactly as the full parse's wordBuilder does
// (see wordBuilder.quoted and wordBuilder.boundary): an empty quoted part
// in a word of several parts, or a part boundary next to a quoted part
// with letters or digits on both sides ("r"m, c'u'rl).
func unquotePlainWord(raw string) field {
	f := field{raw: raw}
	if q := raw[0]; (q == '\'' || q == '"') && plainPartEnd(raw, 0) == len(raw) {
		// One quoted part: the text is what the quotes hold.
		f.text = raw[1 : len(raw)-1]
		return f
	}
	var arr [128]byte
	buf := arr[:0]
	prevQuoted := false
	for i, n := 0, 0; i < len(raw); n++ {
		end := plainPartEnd(raw, i)
		before := len(buf)
		quoted := raw[i] == '\'' || raw[i] == '"'
		if quoted {
			buf = append(buf, raw[i+1:end-1]...)
			if len(buf) == before {
				f.quoteSplit = true
			}
		} else {
			// A backslash escapes the next byte. \r\m: an escaped letter
			// right after a letter only hides the word (wordBuilder.lit).
			for j := i; j < end; j++ {
				c := raw[j]
				if c == '$' && j+1 < end && raw[j+1] == '(' {
					// A substitution stays as written.
					e := substEnd(raw, j)
					buf = append(buf, raw[j:e]...)
					j = e - 1
					continue
				}
				if c == '\\' {
					j++
					c = raw[j]
					if isAlnum(c) && len(buf) > 0 && isAlnum(buf[len(buf)-1]) {
						f.quoteSplit = true
					}
				}
				buf = append(buf, c)
			}
		}
		if n > 0 && (quoted || prevQuoted) && before > 0 && len(buf) > before &&
			isAlnum(buf[before-1]) && isAlnum(buf[before]) {
			f.quoteSplit = true
		}
		prevQuoted = quoted
		i = end
	}
	f.text = string(buf)
	return f
}

// plainPartEnd returns the end of the quoted or unquoted part at raw[i].
func plainPartEnd(raw string, i int) int {
	if q := raw[i]; q == '\'' || q == '"' {
		end := i + 1 + strings.IndexByte(raw[i+1:], q) + 1
		if q == '\'' || !strings.Contains(raw[i+1:end], "$(") {
			return end
		}
		// A substitution may hold quotes.
		for j := i + 1; ; j++ {
			switch {
			case raw[j] == '"':
				return j + 1
			case raw[j] == '$' && raw[j+1] == '(':
				j = substEnd(raw, j) - 1
			}
		}
	}
	for i < len(raw) && raw[i] != '\'' && raw[i] != '"' {
		switch raw[i] {
		case '\\':
			i++ // the escaped byte
		case '$':
			if i+1 < len(raw) && raw[i+1] == '(' {
				i = substEnd(raw, i)
				continue
			}
		}
		i++
	}
	return i
}
