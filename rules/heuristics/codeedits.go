package heuristics

import (
	"strings"

	"github.com/parapet-dev/parapet/rules/shell"
)

// Edits by other tools. sed and perl are not the only way a line
// rewrites a file: a Python, Node or Ruby program that reads it, calls
// replace / sub and writes it back, ruby -i -pe, ed and ex scripts, and
// awk writing a copy that mv puts in place all make the same
// substitutions. Each is read into (pattern, replacement) pairs and the
// files it names, and judged as sed's are (judgeEdits).

// replaceCalls are the calls whose first two literal arguments are a
// pattern and its replacement.
var replaceCalls = []string{".replace(", ".replaceAll(", ".sub(", ".gsub(", ".sub!(", ".gsub!(", " sub(", " gsub(", "(sub(", "(gsub(",
	"{sub(", "{gsub(", ";sub(", ";gsub("}

// codeEdits returns the files a program names and writes and the
// literal pairs of its replace and sub calls; nothing when it writes no
// file it names.
func codeEdits(code string, named []string) (files []string, subs [][2]string) {
	files = append(files, named...)
	if !strings.Contains(code, "replace") && !strings.Contains(code, "sub(") {
		return files, nil
	}
	if strings.Contains(code, "write") || strings.Contains(code, "Write") || strings.Contains(code, "File.") {
		eachCodeLiteral(code, func(lit string) {
			if f := []string{lit}; sourceCode(f) || configFile(lit) || runsChecks(f) || testPath(lit) && path2Ext(lit) {
				files = append(files, lit)
			}
		})
	}
	if len(files) == 0 {
		return nil, nil
	}
	padded := " " + code // a call that opens the program: sub(/a/, "b")
	for _, call := range replaceCalls {
		subs = literalPairs(padded, call, subs)
	}
	return files, subs
}

// path2Ext reports a path with an extension: a file, not a word.
func path2Ext(p string) bool {
	i := strings.LastIndexByte(p, '.')
	return i > 0 && i < len(p)-1 && !strings.ContainsAny(p, " \n")
}

// eachCodeLiteral calls fn with each literal of code, as codeLiteralAt
// reads them.
func eachCodeLiteral(code string, fn func(lit string)) {
	for i := 0; i < len(code); {
		lit, end, ok := codeLiteralAt(code, i)
		if !ok {
			i++
			continue
		}
		fn(lit)
		i = end
	}
}

// codeLiteralAt reads a string literal (as pyStringAt) or a regular
// expression literal (/…/, JavaScript's and Ruby's) starting at s[i].
func codeLiteralAt(s string, i int) (lit string, end int, ok bool) {
	if i < len(s) && s[i] == '/' {
		var b strings.Builder
		for j := i + 1; j < len(s); j++ {
			switch c := s[j]; {
			case c == '\\' && j+1 < len(s):
				b.WriteByte(c)
				j++
				b.WriteByte(s[j])
			case c == '/':
				return b.String(), j + 1, j > i+1
			case c == '\n':
				return "", j, false
			default:
				b.WriteByte(c)
			}
		}
		return "", len(s), false
	}
	if i < len(s) && s[i] == '`' {
		if j := strings.IndexByte(s[i+1:], '`'); j >= 0 {
			return s[i+1 : i+1+j], i + 2 + j, true
		}
		return "", len(s), false
	}
	return pyStringAt(s, i)
}

// edScripts returns the files an ed or ex (vi -e, vim -es) command edits
// and its script: ed's on its input, ex's -c commands (and its input
// with -s). ed's "/re/s//new/" and "g/re/s//new/" reuse the address as
// the pattern; they are returned as "s/re/new/".
func (cs *cmdScan) edScripts(v *cmdView) (files []string, script string, ok bool) {
	var b strings.Builder
	switch v.prog {
	case "ed", "red":
		text, found := cs.stdinText(v)
		if !found {
			return nil, "", false
		}
		b.WriteString(text)
		files = operands(v.args, "p", nil)
	case "ex", "vi", "vim", "nvim":
		if v.prog != "ex" && !hasShortFlag(v.args, 'e') && !hasShortFlag(v.args, 's') && !strings.HasPrefix(firstArg(v.args), "-es") {
			return nil, "", false
		}
		flagValues(v.args, 'c', "", func(c string) { b.WriteString(strings.ReplaceAll(c, "|", "\n") + "\n") })
		for _, a := range v.args {
			if strings.HasPrefix(a, "+") && len(a) > 1 {
				b.WriteString(a[1:] + "\n")
			}
		}
		if text, found := heredocText(v.c.Redirects); found {
			b.WriteString(text)
		}
		files = operands(v.args, "cSTuiwW", nil)
	default:
		return nil, "", false
	}
	if len(files) == 0 || b.Len() == 0 {
		return nil, "", false
	}
	return files, addressPatterns(b.String()), true
}

func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// addressPatterns rewrites each line "[g]/re/s//new/…" (and % or a
// range before s) as "s/re/new/…" so the substitution names its pattern.
func addressPatterns(script string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(script, "\n") {
		t := strings.TrimPrefix(strings.TrimLeft(line, " \t"), "g")
		if strings.HasPrefix(t, "/") {
			if end := closingSlash(t[1:]); end >= 0 {
				re, rest := t[1:1+end], t[end+2:]
				if strings.HasPrefix(rest, "s//") {
					line = "s/" + re + "/" + rest[3:]
				}
			}
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// awkEdits returns what an awk program does to the file it rewrites
// (awk PROG FILE > TMP, then mv TMP FILE): its sub / gsub pairs, and the
// patterns of the lines it drops (/re/ … { next } without a print).
func (cs *cmdScan) awkEdits(v *cmdView) (files []string, subs [][2]string, deleted []string, ok bool) {
	if v.prog != "awk" && v.prog != "gawk" && v.prog != "mawk" {
		return nil, nil, nil, false
	}
	ops := operands(v.args, "fFv", nil)
	if len(ops) < 2 {
		return nil, nil, nil, false
	}
	prog, file := ops[0], ops[len(ops)-1]
	if !cs.rewritesVia(v, file) {
		return nil, nil, nil, false
	}
	for _, call := range []string{"sub(", "gsub("} {
		shell.EachIndex(prog, call, func(at int) bool {
			if at > 0 && isWordByte(prog[at-1]) && !strings.HasSuffix(prog[:at], "g") {
				return true
			}
			rest := prog[at+len(call):]
			a, end, found := codeLiteralAt(rest, skipSpace(rest, 0))
			if !found {
				return true
			}
			j := skipSpace(rest, end)
			if j >= len(rest) || rest[j] != ',' {
				return true
			}
			if r, _, found := codeLiteralAt(rest, skipSpace(rest, j+1)); found {
				subs = append(subs, [2]string{a, r})
			}
			return true
		})
	}
	if t := strings.TrimSpace(prog); strings.HasPrefix(t, "!/") {
		// awk '!/re/' FILE: every line but those matching re.
		if end := closingSlash(t[2:]); end >= 0 && strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(t[3+end:]), "{print}")) == "" {
			deleted = append(deleted, t[2:2+end])
		}
	}
	// print "…": a line the program writes into the file.
	shell.EachIndex(prog, "print", func(at int) bool {
		rest := prog[at+len("print"):]
		if lit, _, found := codeLiteralAt(rest, skipSpace(rest, 0)); found && (at == 0 || !isWordByte(prog[at-1])) && lit != "" {
			subs = append(subs, [2]string{"", lit})
		}
		return true
	})
	for _, rule := range strings.Split(prog, "}") {
		pat, action, found := strings.Cut(rule, "{")
		pat = strings.TrimSpace(pat)
		if !found || !strings.Contains(action, "next") || strings.Contains(action, "print") || !strings.HasPrefix(pat, "/") {
			continue
		}
		if end := closingSlash(pat[1:]); end >= 0 {
			deleted = append(deleted, pat[1:1+end])
		}
	}
	return []string{file}, subs, deleted, len(subs) > 0 || len(deleted) > 0
}

// rewritesVia reports whether v writes its output to a file that a later
// mv or cp of the line puts in place of file.
func (cs *cmdScan) rewritesVia(v *cmdView, file string) bool {
	tmp := ""
	for _, r := range v.c.Redirects {
		if r.Op == ">" && (r.FD == "" || r.FD == "1") {
			tmp = cs.resolveIn(v.c, r.Target).Abs
		}
	}
	target := cs.resolveIn(v.c, file).Abs
	// … | sponge FILE, … | tee FILE.new (then mv): the output piped on.
	if after := cs.after(v); tmp == "" && len(after) > 0 {
		if u := cs.view(after[0]); u != nil && (u.prog == "sponge" || u.prog == "tee") {
			if ops := u.plainOperands(); len(ops) == 1 {
				if tmp = cs.resolveIn(u.c, ops[0]).Abs; tmp == target {
					return true
				}
			}
		}
	}
	if tmp == "" {
		return false
	}
	for i := v.idx + 1; i < len(cs.views); i++ {
		u := &cs.views[i]
		if u.prog != "mv" && u.prog != "cp" {
			continue
		}
		if mops := operands(u.args, "tS", nil); len(mops) == 2 && cs.resolveIn(u.c, mops[0]).Abs == tmp && cs.resolveIn(u.c, mops[1]).Abs == target {
			return true
		}
	}
	return false
}

// checkOtherEdits judges the edits of interpreters' programs, ed / ex
// scripts and awk rewrites as sed's are judged.
func (s *scan) checkOtherEdits(cs *cmdScan, v *cmdView) {
	if !s.enabled(rDefWeakeningEdit) {
		return
	}
	var files []string
	var subs [][2]string
	script := ""
	switch {
	case v.kind == "python" || v.kind == "node" || v.kind == "ruby" || v.kind == "perl" || v.kind == "php":
		if _, _, inPlace := inPlaceScripts(v); inPlace {
			return // perl -pi: checkWeakeningEdits
		}
		code, ok := inlineCode(v)
		if !ok {
			if code, ok = cs.stdinText(v); !ok {
				return
			}
		}
		var named []string
		if v.kind == "ruby" && hasShortFlag(v.args, 'i') {
			named = operands(v.args, "eIr", nil) // ruby -i -pe 'sub(…)' FILE
			if len(named) > 0 && named[0] == code {
				named = named[1:]
			}
		}
		files, subs = codeEdits(code, named)
		if len(named) > 0 {
			// ruby -ni -e 'print unless /re/' FILE deletes re's lines.
			files, script = named, perlDeletions(code)
			subs = append(subs, perlCommentOuts(code)...)
		}
		if len(files) > 0 {
			// Text the program writes other than by replace: lines it
			// appends ($_ << "…", f.write("…")), judged as inserted. A
			// replace call's two texts are judged as their pair.
			patterns := map[string]bool{}
			for _, sub := range subs {
				patterns[sub[0]], patterns[sub[1]] = true, true // judged as a pair already
			}
			eachCodeLiteral(code, func(lit string) {
				if len(lit) >= 8 && strings.ContainsAny(lit, "=: ") && !patterns[lit] {
					subs = append(subs, [2]string{"", lit})
				}
			})
		}
	default:
		if f, sc, ok := cs.edScripts(v); ok {
			files, script = f, sc
			subs = sedSubstitutions(sc)
			if text := edInsertedText(sc); text != "" {
				subs = append(subs, [2]string{"", text})
			}
			subs = append(subs, edChanges(sc)...)
		} else if f, sb, deleted, ok := cs.awkEdits(v); ok {
			files, subs = f, sb
			for _, re := range deleted {
				script += "/" + re + "/d\n"
			}
		}
	}
	if len(subs) == 0 && script == "" {
		return
	}
	if s.policyWidened(v, subs) {
		return
	}
	if what := judgeEdits(files, subs, script); what != "" {
		s.add(rDefWeakeningEdit, v.prog+" "+what+" ("+strings.Join(files, ", ")+"): a protection leaves the code without a word about it; make the change by hand, in review",
			v.prog+" "+evJoin(v.args))
	}
	// What ed and awk write into a source file runs with it, as sed's
	// inserted text does (checkPlantedCode).
	if v.kind != "" {
		return // the interpreters' literals are judged as their own code
	}
	var added strings.Builder
	for _, sub := range subs {
		added.WriteString(sub[1])
		added.WriteByte('\n')
	}
	if sedAddedLines(script, &added); strings.TrimSpace(added.String()) == "" {
		return
	}
	for _, f := range files {
		abs := cs.resolveIn(v.c, f).Abs
		if _, manifest := manifestEcosystem(baseName(abs)); manifest {
			s.checkLookalikeManifest(abs, added.String(), "this edit")
		}
		if lang := codeFileLang(abs); lang != "" {
			s.judgePlanted(lang, added.String(), abs, writesCodeInto(abs))
			s.checkWeakeningWrite(abs, added.String())
		}
	}
}

// edInsertedText returns the lines an ed or ex script adds with its a,
// i and c commands (each ended by a line holding only ".").
func edInsertedText(script string) string {
	var b strings.Builder
	inText := false
	for line := range strings.SplitSeq(script, "\n") {
		if inText {
			if strings.TrimSpace(line) == "." {
				inText = false
				continue
			}
			b.WriteString(line + "\n")
			continue
		}
		switch edCommand(strings.TrimSpace(line)) {
		case "a", "i", "c", "a!", "i!", "c!":
			inText = true
		}
	}
	return b.String()
}

// edCommand returns an ed line without its address (/re/, ?re?, 12,
// $, ., +2, ranges): "/^func main() {/a" is "a".
func edCommand(line string) string {
	for {
		before := line
		if len(line) > 0 && (line[0] == '/' || line[0] == '?') {
			end := strings.IndexByte(line[1:], line[0])
			if line[0] == '/' {
				end = closingSlash(line[1:])
			}
			if end < 0 {
				return line
			}
			line = line[end+2:]
		}
		line = strings.TrimLeft(line, "0123456789$.,;+-% \t")
		if line == before {
			return line
		}
	}
}

// edChanges returns each /re/c command of an ed script as a substitution
// of the addressed line by the text that replaces it.
func edChanges(script string) [][2]string {
	var out [][2]string
	lines := strings.Split(script, "\n")
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "/") || edCommand(t) != "c" {
			continue
		}
		end := closingSlash(t[1:])
		if end < 0 {
			continue
		}
		var text strings.Builder
		for _, l := range lines[i+1:] {
			if strings.TrimSpace(l) == "." {
				break
			}
			text.WriteString(l + "\n")
		}
		out = append(out, [2]string{t[1 : 1+end], text.String()})
	}
	return out
}
