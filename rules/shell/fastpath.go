package shell

import "strings"

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
	for _, c := range " ._/-,:@+%=" {
		t[c] = true
	}
	return t
}()

// keywords are first words the parser treats specially (reserved words,
// declaration builtins, time/coproc); lines starting with one take the
// full parse.
var keywords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true,
	"do": true, "done": true, "case": true, "esac": true, "while": true,
	"until": true, "for": true, "in": true, "function": true, "select": true,
	"time": true, "coproc": true, "declare": true, "local": true,
	"export": true, "readonly": true, "typeset": true, "nameref": true,
	"let": true,
}

// fastPathFields lexes src without the full parser when that gives exactly
// what the full parse would: words of plain bytes, '…' and "…" (without
// $ ` \ or control characters inside) separated by spaces, and a first
// word that is neither an assignment nor a keyword. ok is false when the
// full parse is needed.
func fastPathFields(src string) (fields []field, ok bool) {
	for i := 0; i < len(src); {
		if src[i] == ' ' {
			i++
			continue
		}
		end, quoted, ok := scanPlainWord(src, i)
		if !ok {
			return nil, false
		}
		raw := src[i:end]
		if fields == nil {
			if keywordOrAssignment(raw) {
				return nil, false
			}
			fields = make([]field, 0, 4)
		}
		if quoted {
			fields = append(fields, unquotePlainWord(raw))
		} else {
			fields = append(fields, field{text: raw, raw: raw})
		}
		i = end
	}
	return fields, true
}

// scanPlainWord returns the end of the word starting at src[i] and
// whether it holds quotes; ok is false if it needs the full parser.
func scanPlainWord(src string, i int) (end int, quoted, ok bool) {
	for i < len(src) && src[i] != ' ' {
		switch c := src[i]; c {
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
// flagging quote-splitting exactly as the full parse's wordBuilder does.
func unquotePlainWord(raw string) field {
	parts := 0
	for i := 0; i < len(raw); parts++ {
		i = plainPartEnd(raw, i)
	}
	b := wordBuilder{raw: raw, multi: parts > 1}
	for i := 0; i < len(raw); {
		end := plainPartEnd(raw, i)
		before := len(b.buf)
		if q := raw[i]; q == '\'' || q == '"' {
			b.buf = append(b.buf, raw[i+1:end-1]...)
			b.quoted(before)
		} else {
			b.buf = append(b.buf, raw[i:end]...)
			b.boundary(before, false)
		}
		i = end
	}
	b.flush()
	return b.out[0]
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
