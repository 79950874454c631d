package shell

import "strings"

// CurlConfigArgs returns the command-line arguments a curl configuration
// file (curl -K FILE, --config FILE, a .curlrc) stands for, quoted for
// the shell: "url = https://h/x" and "--output f" become --url
// 'https://h/x' --output 'f'. Each line holds one option: its long name
// with or without the dashes, then its parameter after blanks, ":" or
// "=" (only blanks after a dashed name), in double quotes when it holds
// blanks (with \\ \" \t \n \r \v escapes). Lines starting with # are
// comments.
func CurlConfigArgs(content string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(content, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		end := strings.IndexAny(line, " \t=:")
		if strings.HasPrefix(line, "-") {
			end = strings.IndexAny(line, " \t")
		}
		name, rest := line, ""
		if end >= 0 {
			name, rest = line[:end], strings.TrimLeft(line[end:], " \t")
			if !strings.HasPrefix(line, "-") && rest != "" && (rest[0] == '=' || rest[0] == ':') {
				rest = strings.TrimLeft(rest[1:], " \t")
			}
		}
		if !strings.HasPrefix(name, "-") {
			name = "--" + name
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteWords([]string{name}))
		if rest != "" {
			b.WriteByte(' ')
			b.WriteString(quoteWords([]string{curlParam(rest)}))
		}
	}
	return b.String()
}

// curlParam reads a parameter: a double-quoted string with its escapes,
// or the text up to the first blank.
func curlParam(s string) string {
	if s[0] != '"' {
		if i := strings.IndexAny(s, " \t"); i >= 0 {
			return s[:i]
		}
		return s
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return b.String()
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 'v':
				b.WriteByte('\v')
			default:
				b.WriteByte(s[i]) // \\ and \", and a backslash before anything else is dropped
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
