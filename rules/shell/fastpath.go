package shell

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

// fastPathFields splits src on spaces when that is exactly what the full
// parse would do: only plain bytes, and a first word that is neither an
// assignment nor a keyword. ok is false when the full parse is needed.
func fastPathFields(src string) (fields []field, ok bool) {
	n := 0
	inWord := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if !plainByte[c] {
			return nil, false
		}
		if c == ' ' {
			inWord = false
		} else if !inWord {
			inWord = true
			n++
		}
	}
	if n == 0 {
		return nil, true
	}
	fields = make([]field, 0, n)
	start := -1
	for i := 0; i <= len(src); i++ {
		if i < len(src) && src[i] != ' ' {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			word := src[start:i]
			fields = append(fields, field{text: word, raw: word})
			start = -1
		}
	}
	first := fields[0].text
	if keywords[first] || containsByte(first, '=') {
		return nil, false
	}
	return fields, true
}
