package shell

import "strings"

// The fast path analyses everyday command lines without the full parser:
// plain words (see scanPlainWord) in simple commands joined by | && || and
// ;, with redirections to plain words (> out, >> log, < in, 2>&1, &> all).
// It lexes the whole line first and gives up, leaving the line to the full
// parse, on anything else; then it builds the commands exactly as the
// walker does from the parser's syntax tree, so the result is identical.

// plainByte marks bytes that never change meaning in bash: letters,
// digits, space and ._/-,:@+%=. A line made only of these is a list of
// plain words separated by spaces.
var plainByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range " ._/-,:@+%=~" {
		t[c] = true
	}
	return t
}()

// keywords are first words the parser treats specially (reserved words,
// declaration builtins, time/coproc); commands starting with one take the
// full parse.
var keywords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true,
	"do": true, "done": true, "case": true, "esac": true, "while": true,
	"until": true, "for": true, "in": true, "function": true, "select": true,
	"time": true, "coproc": true, "declare": true, "local": true,
	"export": true, "readonly": true, "typeset": true, "nameref": true,
	"let": true,
}

// fpKind is the kind of a fast-path token.
type fpKind uint8

const (
	fpWord  fpKind = iota // a plain word
	fpRedir               // a redirection: [fd]op target
	fpPipe                // |
	fpAnd                 // &&
	fpOr                  // ||
	fpSemi                // ;
)

// fpTok is one token of a fast-path line. Offsets index the source.
type fpTok struct {
	kind fpKind
	// quoted: the word (or redirection target) holds quotes.
	quoted bool
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
	var arr [12]fpTok
	toks, ok := lexPlain(src, arr[:0])
	if !ok {
		return false
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
			case fpRedir:
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
				w.fastPipeline(src, toks[j:elemEnd], sfr)
			} else {
				w.fastCommand(src, toks[j:elemEnd], sfr)
			}
			j = elemEnd + 1
		}
		i = end + 1
	}
	return true
}

// fastPipeline emits the commands of a | b | c and records the pipeline,
// as walker.pipeline does.
func (w *walker) fastPipeline(src string, toks []fpTok, fr frame) {
	fr.nest++
	n := 1
	for _, t := range toks {
		if t.kind == fpPipe {
			n++
		}
	}
	members := w.memberRoom(n)
	for i := 0; i < len(toks); {
		end := i
		for end < len(toks) && toks[end].kind != fpPipe {
			end++
		}
		start := len(w.s.Commands)
		saved := w.sem.save() // each element runs in a subshell
		w.fastCommand(src, toks[i:end], fr)
		w.sem = saved
		members = w.appendMembers(members, start, fr.depth)
		i = end + 1
	}
	w.registerPipeline(members)
	w.pipeData(members, fr)
}

// fastCommand emits one simple command made of words and redirections.
func (w *walker) fastCommand(src string, toks []fpTok, fr frame) {
	var arr [6]field
	fields := arr[:0]
	nredirs := 0
	// A &> or &>> redirection with words after it (checkAllRedirOrder).
	allRedir, allRedirEnd := -1, 0
	for _, t := range toks {
		if t.kind == fpRedir {
			nredirs++
			if op := redirOps[t.op]; (op == "&>" || op == "&>>") && allRedir == -1 {
				allRedir, allRedirEnd = int(t.fdEnd), int(t.end)
			}
			continue
		}
		if allRedir >= 0 {
			w.allRedirBeforeWord(src[allRedir:allRedirEnd], fr)
			allRedir = -2
		}
		raw := src[t.start:t.end]
		if t.quoted {
			fields = append(fields, unquotePlainWord(raw))
		} else {
			fields = append(fields, field{text: raw, raw: raw})
		}
	}
	var redirs []Redirect
	if nredirs > 0 {
		redirs = w.redirRoom(nredirs)
		for _, t := range toks {
			if t.kind != fpRedir {
				continue
			}
			target := src[t.start:t.end]
			if t.quoted {
				target = unquotePlainWord(target).text
			}
			op := redirOps[t.op]
			if (op == ">&" || op == "<&") && isFDWord(target) {
				if !t.quoted && src[t.start-1] == '&' {
					target = src[t.start-1 : t.end] // 2>&1: no need to copy
				} else {
					target = "&" + target
				}
			}
			redirs = append(redirs, Redirect{Op: op, FD: src[t.fdStart:t.fdEnd], Target: target})
		}
	}
	w.emitCall(fields, nil, joinRedirs(fr.redirs, redirs), fr)
}

// lexPlain splits src into fast-path tokens, appending to toks. ok is
// false when the line needs the full parser: anything but plain words,
// the operators | && || ; and redirections of plain words; a command that
// starts with a keyword, an assignment or a redirection; an operator with
// no command before it, or (except ;) after it.
func lexPlain(src string, toks []fpTok) (_ []fpTok, ok bool) {
	words := 0 // words of the current simple command
	for i := 0; i < len(src); {
		c := src[i]
		switch c {
		case ' ':
			i++
			continue
		case '|', ';':
			kind, n := fpPipe, 1
			switch {
			case c == ';':
				kind = fpSemi
			case i+1 < len(src) && src[i+1] == '|':
				kind, n = fpOr, 2
			case i+1 < len(src) && src[i+1] == '&':
				return nil, false // |&
			}
			if words == 0 {
				return nil, false
			}
			toks = append(toks, fpTok{kind: kind, start: int32(i), end: int32(i + n)})
			words = 0
			i += n
			continue
		case '&':
			if i+1 < len(src) && src[i+1] == '&' {
				if words == 0 {
					return nil, false
				}
				toks = append(toks, fpTok{kind: fpAnd, start: int32(i), end: int32(i + 2)})
				words = 0
				i += 2
				continue
			}
			if i+1 == len(src) || src[i+1] != '>' {
				return nil, false // background
			}
		}
		fdStart, fdEnd := i, i
		if c != '>' && c != '<' && c != '&' {
			end, quoted, ok := scanPlainWord(src, i)
			if !ok {
				return nil, false
			}
			raw := src[i:end]
			// A number right before < or > is the descriptor it redirects.
			if end == len(src) || (src[end] != '>' && src[end] != '<') || quoted || !allDigits(raw) {
				if words == 0 && keywordOrAssignment(raw) {
					return nil, false
				}
				toks = append(toks, fpTok{kind: fpWord, quoted: quoted, start: int32(i), end: int32(end)})
				words++
				i = end
				continue
			}
			fdEnd, i = end, end
		}
		if words == 0 {
			return nil, false // redirection before the program
		}
		op, ok := redirOp(src[i:])
		if !ok {
			return nil, false
		}
		i += len(redirOps[op])
		for i < len(src) && src[i] == ' ' {
			i++
		}
		if i == len(src) {
			return nil, false
		}
		end, quoted, ok := scanPlainWord(src, i)
		if !ok || end == i {
			return nil, false
		}
		toks = append(toks, fpTok{kind: fpRedir, quoted: quoted, start: int32(i), end: int32(end),
			op: op, fdStart: int32(fdStart), fdEnd: int32(fdEnd)})
		i = end
	}
	if len(toks) > 0 && words == 0 && toks[len(toks)-1].kind != fpSemi {
		return nil, false // | && || need a command after them
	}
	return toks, true
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

// scanPlainWord returns the end of the word starting at src[i] and
// whether it holds quotes; ok is false if it needs the full parser. A
// word ends at a space or at one of the operator characters | & ; < >.
func scanPlainWord(src string, i int) (end int, quoted, ok bool) {
	for i < len(src) {
		switch c := src[i]; c {
		case ' ', '|', '&', ';', '<', '>':
			return i, quoted, true
		case '\'', '"':
			close := i + 1
			for close < len(src) && src[close] != c {
				if !quotableByte(src[close], c == '"') {
					return 0, false, false
				}
				close++
			}
			if close == len(src) {
				return 0, false, false // unterminated: let the parser report it
			}
			quoted = true
			i = close + 1
		default:
			if !plainByte[c] {
				return 0, false, false
			}
			i++
		}
	}
	return i, quoted, true
}

// quotableByte reports whether c may appear inside quotes on the fast
// path: printable ASCII or tab, and in double quotes not $ ` or \.
func quotableByte(c byte, double bool) bool {
	if c != '\t' && (c < ' ' || c > '~') {
		return false
	}
	return !double || (c != '$' && c != '`' && c != '\\')
}

// unquotePlainWord removes the quotes of a word accepted by scanPlainWord,
// flagging quote-splitting exactly as the full parse's wordBuilder does
// (see wordBuilder.quoted and wordBuilder.boundary): an empty quoted part
// in a word of several parts, or a part boundary next to a quoted part
// with letters or digits on both sides ("r"m, c'u'rl).
func unquotePlainWord(raw string) field {
	f := field{raw: raw}
	parts := 0
	for i := 0; i < len(raw); parts++ {
		i = plainPartEnd(raw, i)
	}
	if parts == 1 {
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
			buf = append(buf, raw[i:end]...)
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
		return i + 1 + strings.IndexByte(raw[i+1:], q) + 1
	}
	for i < len(raw) && raw[i] != '\'' && raw[i] != '"' {
		i++
	}
	return i
}

// keywordOrAssignment reports whether a first word needs the full parser
// because the shell gives it a meaning of its own.
func keywordOrAssignment(raw string) bool {
	return keywords[raw] || strings.IndexByte(raw, '=') >= 0
}
