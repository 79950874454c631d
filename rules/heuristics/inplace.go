package heuristics

import "strings"

// In-place edits: sed -i and perl -pi rewrite files with text their
// script holds. "sed -i '1i curl … | sh' Makefile" plants code as surely
// as "echo … >> Makefile", so checkPlantedCode judges the text an edit
// inserts (s replacements, a / i / c text) as part of the edited file.

// inPlaceEdit returns the files v edits in place and the text its script
// inserts into them; ok is false when v edits nothing in place or its
// script is not on the line (sed -f file).
func inPlaceEdit(v *cmdView) (files []string, text string, ok bool) {
	switch v.prog {
	case "sed", "gsed":
		return sedInPlace(v.args)
	case "perl":
		return perlInPlace(v.args)
	}
	return nil, "", false
}

// inPlaceScripts returns the files v edits in place and the scripts it
// edits them with (sed's -e scripts or first operand, perl's -e code);
// ok is false as for inPlaceEdit. Read once per view; the slices are
// shared: callers must not write into them.
func inPlaceScripts(v *cmdView) (files, scripts []string, ok bool) {
	if !v.editDone {
		v.editDone = true
		switch v.prog {
		case "sed", "gsed":
			v.editFiles, v.editScripts, v.editOK = sedInPlaceArgs(v.args)
		case "perl":
			v.editFiles, v.editScripts, v.editOK = perlInPlaceArgs(v.args)
		}
	}
	return v.editFiles, v.editScripts, v.editOK
}

// sedInPlace is sedInPlaceArgs with the text the scripts insert.
func sedInPlace(args []string) ([]string, string, bool) {
	ops, scripts, ok := sedInPlaceArgs(args)
	if !ok {
		return nil, "", false
	}
	// sed reads its -e scripts as one, a line each: -e '$a\' -e 'text'.
	var b strings.Builder
	sedInsertedText(strings.Join(scripts, "\n"), &b)
	return ops, b.String(), true
}

// sedInPlaceArgs reads GNU and BSD sed's command line: -i[SUFFIX],
// --in-place[=SUFFIX], BSD's "-i ”", -e / --expression, -f / --file.
func sedInPlaceArgs(args []string) (files, scripts []string, ok bool) {
	inPlace, fromFile := false, false
	var ops []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case a == "--expression" || a == "--file" || a == "--line-length":
			if i+1 < len(args) {
				if a == "--expression" {
					scripts = append(scripts, args[i+1])
				}
				fromFile = fromFile || a == "--file"
				i++
			}
		case strings.HasPrefix(a, "--expression="):
			scripts = append(scripts, a[len("--expression="):])
		case strings.HasPrefix(a, "--file="):
			fromFile = true
		case a == "--in-place" || strings.HasPrefix(a, "--in-place="):
			inPlace = true
		case strings.HasPrefix(a, "--"):
		case len(a) > 1 && a[0] == '-':
		flags:
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'i':
					inPlace = true
					// GNU takes the rest of the word as the backup suffix;
					// BSD takes the next word, which is often ''.
					if j == len(a)-1 && i+1 < len(args) && args[i+1] == "" {
						i++
					}
					break flags
				case 'e', 'f', 'l':
					val := a[j+1:]
					if val == "" && i+1 < len(args) {
						i++
						val = args[i]
					}
					switch a[j] {
					case 'e':
						scripts = append(scripts, val)
					case 'f':
						fromFile = true
					}
					break flags
				}
			}
		default:
			ops = append(ops, a)
		}
	}
	if !inPlace {
		return nil, nil, false
	}
	if len(scripts) == 0 && !fromFile {
		if len(ops) == 0 {
			return nil, nil, false
		}
		scripts, ops = ops[:1], ops[1:]
	}
	// No file named: xargs or find -exec supplies them. The script is
	// still an in-place edit, of files the line does not show.
	if len(scripts) == 0 {
		return nil, nil, false
	}
	return ops, scripts, true
}

// perlInPlace is perlInPlaceArgs with the text of the code's s///
// replacements.
func perlInPlace(args []string) ([]string, string, bool) {
	ops, code, ok := perlInPlaceArgs(args)
	if !ok {
		return nil, "", false
	}
	var b strings.Builder
	for _, c := range code {
		for i := 0; i < len(c); i++ {
			if c[i] != 's' || i > 0 && !strings.ContainsRune(" \t;{(", rune(c[i-1])) || i+1 >= len(c) || !isSubstDelim(c[i+1]) {
				continue
			}
			if n := sedSubstitution(c[i+1:], &b); n > 0 {
				i += n
			}
		}
	}
	return ops, b.String(), true
}

// perlInPlaceArgs reads "perl -pi -e CODE FILE…" (also -i.bak, -pie,
// -i -pe): the files and the code.
func perlInPlaceArgs(args []string) (files, code []string, ok bool) {
	inPlace := false
	var ops []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' || strings.HasPrefix(a, "--") {
			if !strings.HasPrefix(a, "-") {
				ops = append(ops, a)
			}
			continue
		}
	flags:
		for j := 1; j < len(a); j++ {
			switch a[j] {
			case 'i':
				inPlace = true
				if j+1 < len(a) && a[j+1] == '.' {
					break flags // -i.bak: the rest is the suffix
				}
			case 'e', 'E':
				val := a[j+1:]
				if val == "" && i+1 < len(args) {
					i++
					val = args[i]
				}
				code = append(code, val)
				break flags
			case '0', 'l':
				// -0[digits] and -l[digits] take only digits (-0777,
				// -0x1F): flags may follow them in the word (-0pi).
				digits := "01234567"
				if a[j] == '0' && j+1 < len(a) && (a[j+1] == 'x' || a[j+1] == 'X') {
					j, digits = j+1, "0123456789abcdefABCDEF"
				}
				for j+1 < len(a) && strings.IndexByte(digits, a[j+1]) >= 0 {
					j++
				}
			case 'M', 'm', 'I', 'x', 'C', 'd', 'D':
				break flags // the rest of the word is this option's value
			}
		}
	}
	// No file named, as for sed: xargs or find -exec supplies them.
	if !inPlace || len(code) == 0 {
		return nil, nil, false
	}
	return ops, code, true
}

// sedInsertedText appends to b, one per line, the text a sed script
// inserts: each s command's replacement and each a / i / c command's text.
func sedInsertedText(script string, b *strings.Builder) { sedText(script, b, true) }

// sedAddedLines appends to b the text of a sed script's a / i / c
// commands: the lines it adds, not the ones it rewrites.
func sedAddedLines(script string, b *strings.Builder) { sedText(script, b, false) }

// sedText is sedInsertedText, with the s commands' replacements only
// when subs is set.
func sedText(script string, b *strings.Builder, subs bool) {
	i := 0
	for i < len(script) {
		i = skipSedAddress(script, i)
		if i >= len(script) {
			return
		}
		switch c := script[i]; c {
		case 's':
			if i+1 >= len(script) {
				return
			}
			to := b
			if !subs {
				to = nil // read past it, keep nothing
			}
			n := sedSubstitution(script[i+1:], to)
			if n == 0 {
				return
			}
			i += 1 + n
			i = skipToSedEnd(script, i)
		case 'y':
			if i+1 >= len(script) {
				return
			}
			d := script[i+1]
			_, j := sedDelimited(script, i+2, d)
			_, j = sedDelimited(script, j, d)
			i = skipToSedEnd(script, j)
		case 'a', 'i', 'c':
			// GNU's one-line form "1i text" and the classic "a\" + newline
			// + text: the text runs to the end of the line, a trailing
			// backslash continuing it.
			j := i + 1
			if j < len(script) && script[j] == '\\' {
				j++
			}
			for j < len(script) && (script[j] == ' ' || script[j] == '\t' || script[j] == '\n' && j == i+2) {
				j++
			}
			end := j
			for end < len(script) && (script[end] != '\n' || script[end-1] == '\\') {
				end++
			}
			b.WriteString(unescapeSedText(script[j:end]))
			b.WriteByte('\n')
			i = end
		case '{', '}', ';', '\n', ' ', '\t', '!':
			i++
		case ':', 'b', 't', 'T', 'r', 'R', 'w', 'W', 'e', 'F', 'v', 'q', 'Q', 'l', 'L':
			// A label, file name or command runs to the end of the line
			// (b, t and T also end at ';').
			end := strings.IndexByte(script[i:], '\n')
			if c == 'b' || c == 't' || c == 'T' {
				if k := strings.IndexByte(script[i:], ';'); k >= 0 && (end < 0 || k < end) {
					end = k
				}
			}
			if end < 0 {
				return
			}
			i += end
		default:
			i++
		}
	}
}

// skipSedAddress skips whitespace and an address (N, $, /re/, \cREc,
// first~step, +N, ranges) before a command.
func skipSedAddress(s string, i int) int {
	for i < len(s) {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == ',' || c == '~' || c == '+' || c == '$' || c >= '0' && c <= '9':
			i++
		case c == '/':
			_, i = sedDelimited(s, i+1, '/')
			i = skipRegexFlags(s, i)
		case c == '\\' && i+1 < len(s):
			_, i = sedDelimited(s, i+2, s[i+1])
			i = skipRegexFlags(s, i)
		default:
			return i
		}
	}
	return i
}

func skipRegexFlags(s string, i int) int {
	for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
		i++
	}
	return i
}

// skipToSedEnd skips an s command's flags up to the next command.
func skipToSedEnd(s string, i int) int {
	for i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
		if s[i] == 'w' { // the w flag's file name runs to the end of the line
			if k := strings.IndexByte(s[i:], '\n'); k >= 0 {
				return i + k
			}
			return len(s)
		}
		i++
	}
	return i
}

// sedSubstitution reads "DpatternDreplacementD" (D the delimiter; perl's
// bracket pairs s{…}{…} too), appends the replacement's text and a
// newline to b (unless b is nil), and returns the bytes read (0 when it
// is not one).
func sedSubstitution(s string, b *strings.Builder) int {
	if s == "" || !isSubstDelim(s[0]) {
		return 0
	}
	open := s[0]
	closeCh := open
	switch open {
	case '{':
		closeCh = '}'
	case '(':
		closeCh = ')'
	case '[':
		closeCh = ']'
	case '<':
		closeCh = '>'
	}
	_, j := sedDelimited(s, 1, closeCh)
	if closeCh != open {
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j >= len(s) || s[j] != open {
			return 0
		}
		j++
	}
	repl, k := sedDelimited(s, j, closeCh)
	if b != nil {
		b.WriteString(unescapeSedText(unescapeDelim(repl, closeCh)))
		b.WriteByte('\n')
	}
	return k
}

// isSubstDelim reports a byte that can delimit an s command: anything but
// a letter, a digit, white space, a backslash or a newline.
func isSubstDelim(c byte) bool {
	return c > ' ' && c < 0x7f && c != '\\' && !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
}

// sedDelimited returns s[i:] up to the first d not escaped by a
// backslash, and the index past that d (len(s) when there is none).
func sedDelimited(s string, i int, d byte) (string, int) {
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case d:
			return s[i:j], j + 1
		}
	}
	if i > len(s) {
		return "", len(s)
	}
	return s[i:], len(s)
}

// unescapeDelim turns "\D" into D, so s|a|http:\/\/x| reads http://x.
func unescapeDelim(s string, d byte) string {
	if !strings.Contains(s, "\\"+string(d)) {
		return s
	}
	return strings.ReplaceAll(s, "\\"+string(d), string(d))
}

// unescapeSedText reads the escapes GNU sed reads in inserted text: \n,
// \t, a backslash before any other byte standing for that byte, & as
// written (in a replacement it is the match, which the text cannot show).
func unescapeSedText(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '\n':
			b.WriteByte('\n')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
