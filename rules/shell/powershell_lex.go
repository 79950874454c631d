package shell

import "strings"

// The lexical side of reading PowerShell (powershell.go): splitting code
// at its top-level separators outside quotes, groups and blocks, the
// words of a command, and quoting for sh.

// shQuote quotes s as one sh word.
func shQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r < 128 && (isAlnum(byte(r)) || strings.ContainsRune("/._-~:=@%+,", r)))
	}) < 0 && s[0] != '~' {
		return s
	}
	if strings.HasPrefix(s, "~/") && !strings.ContainsAny(s, "'\"$`\\ \t\n*?[") {
		return s // a home path, left for the shell to expand
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// psFormat splits "fmt" -f a, b.
func psFormat(e string) (format, args string, ok bool) {
	parts := psSplitWord(e, "-f")
	if len(parts) != 2 {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// psSplitWord splits e at the top-level word w (case-insensitive).
func psSplitWord(e, w string) []string {
	var out []string
	start, depth := 0, 0
	psScan(e, func(i int) bool {
		switch e[i] {
		case '(', '{', '[':
			depth++
		case ')', '}', ']':
			depth--
		}
		if depth == 0 && i > 0 && (e[i-1] == ' ' || e[i-1] == '\t') && len(e)-i > len(w) && strings.EqualFold(e[i:i+len(w)], w) &&
			(e[i+len(w)] == ' ' || e[i+len(w)] == '\t') {
			out = append(out, e[start:i])
			start = i + len(w)
		}
		return true
	})
	return append(out, e[start:])
}

// psCallArgs returns the text between a call's parentheses.
func psCallArgs(s string) string {
	i := strings.IndexByte(s, '(')
	if i < 0 {
		return ""
	}
	inner, _ := psGroup(s[i:])
	return inner
}

// psGroup splits "( … )rest" at its matching parenthesis.
func psGroup(s string) (inner, rest string) {
	end := len(s)
	depth := 0
	psScan(s, func(i int) bool {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				end = i
				return false
			}
		}
		return true
	})
	if end >= len(s) {
		return strings.TrimPrefix(s, "("), ""
	}
	return s[1:end], s[end+1:]
}

// psList splits a comma-separated list (a, b, "c").
func psList(s string) []string {
	var out []string
	for _, item := range psSplit(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// psSplit splits s at the top-level bytes in seps: outside quotes,
// parentheses, brackets and braces.
func psSplit(s, seps string) []string {
	var out []string
	start, depth := 0, 0
	psScan(s, func(i int) bool {
		switch c := s[i]; {
		case c == '(' || c == '{' || c == '[':
			depth++
		case c == ')' || c == '}' || c == ']':
			depth--
		case depth == 0 && strings.IndexByte(seps, c) >= 0:
			if c == '|' && i+1 < len(s) && s[i+1] == '|' || c == '|' && i > 0 && s[i-1] == '|' {
				return true // || is not a pipe
			}
			out = append(out, s[start:i])
			start = i + 1
		}
		return true
	})
	return append(out, s[start:])
}

// psWords splits an element into words: at top-level blanks, keeping
// quoted strings, groups, blocks and member calls whole.
func psWords(s string) []string {
	var out []string
	start, depth := -1, 0
	psScan(s, func(i int) bool {
		c := s[i]
		switch {
		case c == '(' || c == '{' || c == '[':
			depth++
		case c == ')' || c == '}' || c == ']':
			depth--
		}
		blank := c == ' ' || c == '\t' || c == '\r'
		if depth == 0 && blank {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
		return true
	})
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// psScan calls fn with the index of each byte of s outside quoted
// strings (a quote's own bytes included) until fn returns false.
// Backticks escape the next byte; ” and "" inside a string are a quote.
func psScan(s string, fn func(i int) bool) {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '`' && quote == '"' {
				i++
			} else if c == quote {
				if i+1 < len(s) && s[i+1] == quote {
					i++
				} else {
					quote = 0
				}
			}
			continue
		case c == '`':
			i++
			continue
		case c == '\'' || c == '"':
			quote = c
		}
		if !fn(i) {
			return
		}
	}
}

// psBare returns a bare word with its backtick escapes undone.
func psBare(w string) string {
	if !strings.Contains(w, "`") {
		return w
	}
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		if w[i] == '`' && i+1 < len(w) {
			i++
		}
		b.WriteByte(w[i])
	}
	return b.String()
}

// psUnquote strips a word's quotes.
func psUnquote(w string) string { return strings.Trim(psBare(w), `'"`) }

func psLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// psInner returns the text inside a group or block word, whose closing
// bracket may be missing when the code is cut short.
func psInner(w string) string {
	if w == "" {
		return ""
	}
	inner := w[1:]
	if n := len(inner); n > 0 && (inner[n-1] == ')' || inner[n-1] == '}') {
		inner = inner[:n-1]
	}
	return inner
}
