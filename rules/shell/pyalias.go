package shell

import "strings"

// maxAliases bounds the import aliases UnaliasPython follows.
const maxAliases = 16

// UnaliasPython returns Python code with the names it imports under
// another name written as the module's own: after "import pickle as _p"
// the call _p.loads( reads pickle.loads(, and after "from os import
// system as run" run( reads os.system(. What a call does is named by its
// module, so the judge sees it whatever the alias. Code without an
// aliased import is returned as is.
func UnaliasPython(code string) string {
	if !strings.Contains(code, " as ") || !strings.Contains(code, "import ") {
		return code
	}
	var aliases [][2]string // alias, what it names
	EachIndex(code, "import ", func(i int) bool {
		if i > 0 && isIdentByte(code[i-1]) {
			return true
		}
		from, off := fromModule(code[:i]), i+len("import ")
		end := off + strings.IndexAny(code[off:]+"\n", "\n;")
		for _, item := range strings.Split(strings.Trim(code[off:end], " \t()"), ",") {
			name, alias, ok := strings.Cut(strings.TrimSpace(item), " as ")
			name, alias = strings.TrimSpace(name), strings.TrimSpace(alias)
			if !ok || !isDottedName(name) || !isDottedName(alias) || strings.Contains(alias, ".") || alias == name {
				continue
			}
			if from != "" {
				name = from + "." + name
			}
			aliases = append(aliases, [2]string{alias, name})
		}
		return len(aliases) < maxAliases
	})
	for _, a := range aliases {
		code = replaceName(code, a[0], a[1])
	}
	return code
}

// fromModule returns M when before ends with "from M " (the start of a
// from M import … statement), else "".
func fromModule(before string) string {
	line := before[strings.LastIndexAny(before, "\n;")+1:]
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "from ")
	if !ok {
		return ""
	}
	if m := strings.TrimSpace(rest); isDottedName(m) {
		return m
	}
	return ""
}

// isDottedName reports a Python name or dotted module path.
func isDottedName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) && s[i] != '.' {
			return false
		}
	}
	return s[0] != '.' && s[len(s)-1] != '.'
}

// replaceName replaces each use of the identifier name in code (not part
// of a longer name, not an attribute of something else) by with, except
// in the import that defines it.
func replaceName(code, name, with string) string {
	var b strings.Builder
	last := 0
	EachIndex(code, name, func(i int) bool {
		end := i + len(name)
		if i > 0 && (isIdentByte(code[i-1]) || code[i-1] == '.') || end < len(code) && isIdentByte(code[end]) ||
			strings.HasSuffix(strings.TrimRight(code[:i], " \t"), " as") { // a longer name, an attribute, the alias's definition
			return true
		}
		b.WriteString(code[last:i])
		b.WriteString(with)
		last = end
		return true
	})
	if last == 0 {
		return code
	}
	b.WriteString(code[last:])
	return b.String()
}
