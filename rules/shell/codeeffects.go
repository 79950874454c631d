package shell

import (
	"slices"
	"strings"
)

// What interpreter code does to files is read from the calls it makes:
// the literal path a delete, truncate, write or open-for-writing call is
// given (after FoldCode, so a path built from the home is a literal
// too). The call names are recognised whatever the language — they are
// distinctive, and a wrong guess only names a path that is then judged —
// so that fs.rmSync, shutil.rmtree, FileUtils.rm_rf, File::Path's
// remove_tree, unlink, Deno.remove, File.truncate, writeFileSync,
// file_put_contents, Deno.writeTextFile, open(F, ">>…") and
// Path("…").unlink() all say which file they change.

// CodeOp is what a call does to the file it is given.
type CodeOp uint8

const (
	// CodeWrite writes, appends to, truncates or replaces the file.
	CodeWrite CodeOp = iota + 1
	// CodeDelete deletes the file, or the tree below a directory.
	CodeDelete
)

// CodeEffect is one file a call of interpreter code changes. Path is ""
// when the call is given a path the code computes (fs.rmSync(dir),
// open(p, 'w')): the file is not known, only that there is one.
type CodeEffect struct {
	Op   CodeOp
	Path string
}

// effectCall is a call that changes the file given as its arg-th
// argument (0 the first).
type effectCall struct {
	name string
	op   CodeOp
	arg  int
}

var effectCalls = []effectCall{
	// Deleting files and trees.
	{"rmSync", CodeDelete, 0}, {"rmdirSync", CodeDelete, 0}, {"unlinkSync", CodeDelete, 0}, {"rimraf", CodeDelete, 0},
	{"removeSync", CodeDelete, 0}, {"emptyDirSync", CodeDelete, 0}, {"emptyDir", CodeDelete, 0}, {"rm", CodeDelete, 0},
	{"rmdir", CodeDelete, 0}, {"unlink", CodeDelete, 0}, {"remove", CodeDelete, 0}, {"removedirs", CodeDelete, 0},
	{"rmtree", CodeDelete, 0}, {"remove_tree", CodeDelete, 0}, {"rm_rf", CodeDelete, 0}, {"rm_r", CodeDelete, 0},
	{"rm_f", CodeDelete, 0}, {"remove_dir", CodeDelete, 0}, {"remove_entry", CodeDelete, 0}, {"remove_entry_secure", CodeDelete, 0},
	{"delete", CodeDelete, 0}, {"deleteIfExists", CodeDelete, 0}, {"deleteRecursively", CodeDelete, 0},
	// Truncating, writing and appending.
	{"truncate", CodeWrite, 0}, {"truncateSync", CodeWrite, 0}, {"writeFileSync", CodeWrite, 0}, {"writeFile", CodeWrite, 0},
	{"appendFileSync", CodeWrite, 0}, {"appendFile", CodeWrite, 0}, {"createWriteStream", CodeWrite, 0},
	{"outputFileSync", CodeWrite, 0}, {"outputFile", CodeWrite, 0}, {"file_put_contents", CodeWrite, 0},
	{"writeTextFile", CodeWrite, 0}, {"writeTextFileSync", CodeWrite, 0}, {"File.write", CodeWrite, 0},
	{"IO.write", CodeWrite, 0}, {"File.binwrite", CodeWrite, 0}, {"Files.write", CodeWrite, 0}, {"Files.writeString", CodeWrite, 0},
	{"write_file", CodeWrite, 0}, {"spurt", CodeWrite, 0},
	// Copying, moving or linking onto the second argument.
	{"copyFileSync", CodeWrite, 1}, {"copyFile", CodeWrite, 1}, {"copyfile", CodeWrite, 1}, {"copy", CodeWrite, 1},
	{"copy2", CodeWrite, 1}, {"cp", CodeWrite, 1}, {"renameSync", CodeWrite, 1}, {"rename", CodeWrite, 1},
	{"move", CodeWrite, 1}, {"mv", CodeWrite, 1}, {"symlinkSync", CodeWrite, 1}, {"symlink", CodeWrite, 1},
}

// receiverCalls change the file named by the literal they are called on:
// Path("…").unlink(), new File("…").delete() (once FoldCode made the
// path a literal).
var receiverCalls = []effectCall{
	{".unlink", CodeDelete, 0}, {".rmdir", CodeDelete, 0}, {".rmtree", CodeDelete, 0}, {".delete", CodeDelete, 0},
	{".deleteRecursively", CodeDelete, 0}, {".write_text", CodeWrite, 0}, {".write_bytes", CodeWrite, 0}, {".writeText", CodeWrite, 0},
}

// pathWrappers hand their literal argument on as the path (perl's unlink
// glob("…"), FileUtils.rm_rf(Dir.glob("…"))).
var pathWrappers = []string{"glob(", "glob ", "Dir.glob(", "Dir[", "glob.glob("}

// CodeEffects returns the files code (already folded: FoldCode) changes
// through calls given a literal path, in the first maxCodeScan bytes.
func CodeEffects(code string) []CodeEffect {
	if len(code) > maxCodeScan {
		code = code[:maxCodeScan]
	}
	// One pass finds every call of every name (callSites); the effects
	// are then listed by name, in effectCalls' order, as a scan per name
	// would list them.
	var buf [16]callSite
	sites := callSites(code, buf[:0])
	slices.SortStableFunc(sites, func(a, b callSite) int { return int(a.call) - int(b.call) })
	var out []CodeEffect
	for _, site := range sites {
		rest := code[site.rest:]
		if int(site.call) < len(effectCalls) {
			call := effectCalls[site.call]
			if strings.HasPrefix(strings.TrimLeft(rest, " \t"), ")") {
				continue // Path(…).unlink(): receiverEffects
			}
			p, _ := nthLiteralArg(rest, call.arg)
			out = append(out, CodeEffect{call.op, p})
		} else if p, ok := openedForWriting(rest); ok {
			out = append(out, CodeEffect{CodeWrite, p})
		}
	}
	return append(out, receiverEffects(code)...)
}

// openCalls open a file, for writing or not (openedForWriting tells);
// in callSites they follow effectCalls.
var openCalls = []string{"open", "fopen", "openSync"}

// callSite is a call of effectCalls[call] (or of openCalls[call -
// len(effectCalls)]) whose arguments start at code[rest:].
type callSite struct {
	call uint8
	rest int32
}

// callNames maps the last identifier of each call name (write for
// File.write) to the calls that end with it.
var callNames = func() map[string][]uint8 {
	m := map[string][]uint8{}
	add := func(name string, i int) {
		last := name[strings.LastIndexByte(name, '.')+1:]
		m[last] = append(m[last], uint8(i))
	}
	for i, c := range effectCalls {
		add(c.name, i)
	}
	for i, n := range openCalls {
		add(n, len(effectCalls)+i)
	}
	return m
}()

// callFirst marks the bytes a call name's last identifier starts with,
// and callLen its lengths: most identifiers of code are no call name,
// and two table reads rule them out before the map is asked.
var callFirst, callLen = func() (first [256]bool, lens [64]bool) {
	for last := range callNames {
		first[last[0]] = true
		lens[len(last)] = true
	}
	return first, lens
}()

// callSites appends to sites every call in code of a name of
// effectCalls or openCalls, as forEachCall finds them: the name whole
// (no identifier byte on either side; a dotted name's qualifier whole
// too), then "(" or, for a call without parentheses, a space and a
// literal, a glob or (for bare names: the delete calls and open) anything.
func callSites(code string, sites []callSite) []callSite {
	for i := 0; i < len(code); {
		if !isIdentByte(code[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(code) && isIdentByte(code[j]) {
			j++
		}
		word := code[i:j]
		if n := len(word); callFirst[word[0]] && n < len(callLen) && callLen[n] {
			for _, call := range callNames[word] {
				name := callName(call)
				start := i - (len(name) - len(word)) // the qualifier of File.write
				if start < 0 || code[start:j] != name || start > 0 && isIdentByte(code[start-1]) {
					continue
				}
				if rest, ok := callArgs(code[j:], callBare(call)); ok {
					sites = append(sites, callSite{call: call, rest: int32(len(code) - len(rest))})
				}
			}
		}
		i = j
	}
	return sites
}

func callName(call uint8) string {
	if int(call) < len(effectCalls) {
		return effectCalls[call].name
	}
	return openCalls[int(call)-len(effectCalls)]
}

// callBare says a call may go on without parentheses with anything (see
// forEachCall).
func callBare(call uint8) bool {
	if int(call) < len(effectCalls) {
		return effectCalls[call].op == CodeDelete
	}
	return openCalls[int(call)-len(effectCalls)] == "open"
}

// callArgs returns the text after a call's name where its arguments
// start, as forEachCall reads it, and whether it is a call at all.
func callArgs(rest string, bare bool) (string, bool) {
	switch {
	case strings.HasPrefix(rest, "("):
		return rest[1:], true
	case strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, "\t"):
		if r := strings.TrimLeft(rest, " \t"); r != "" && (bare || r[0] == '"' || r[0] == '\'' || r[0] == '(' || hasWrapper(r)) {
			return strings.TrimPrefix(r, "("), true
		}
	}
	return "", false
}

func hasWrapper(s string) bool {
	for _, w := range pathWrappers {
		if strings.HasPrefix(s, w) {
			return true
		}
	}
	return false
}

// maxArgWindow bounds how far the arguments before a path are skipped.
const maxArgWindow = 256

// nthLiteralArg returns the n-th argument of a call whose arguments start
// s, when it is a literal (or a glob of one); the arguments before it
// may be anything without a comma.
func nthLiteralArg(s string, n int) (string, bool) {
	if len(s) > maxLiteralWindow {
		s = s[:maxLiteralWindow]
	}
	for ; n > 0; n-- {
		i := topLevelComma(s[:min(len(s), maxArgWindow)])
		if i < 0 {
			return "", false
		}
		s = s[i+1:]
	}
	s = strings.TrimLeft(s, " \t\n")
	for _, w := range pathWrappers {
		if r, ok := strings.CutPrefix(s, w); ok {
			s = strings.TrimLeft(r, " \t")
			break
		}
	}
	text, _, _, ok := readChain(s, 0)
	return text, ok && text != ""
}

// topLevelComma returns the index of the first comma of s outside
// brackets and literals, or -1 (also at the call's closing parenthesis).
func topLevelComma(s string) int {
	if i, closes := argEnd(s); !closes {
		return i
	}
	return -1
}

// argEnd returns the index of the first comma or unmatched closing
// bracket of s outside brackets and literals, and whether it is the
// bracket; -1 when there is neither.
func argEnd(s string) (int, bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				return i, true
			}
			depth--
		case ',':
			if depth == 0 {
				return i, false
			}
		case '"', '\'', '`':
			if _, n, ok := readLiteral(s[i:]); ok {
				i += n - 1
			}
		}
	}
	return -1, false
}

// openedForWriting reads the arguments of an open call (s follows its
// "(" or name) and returns the file it opens for writing: open(p, 'w'),
// fopen(p, "a"), File.open(p, "w"), perl's open(F, ">>p") and
// open(F, ">", p). A file handle given first (F, my $fh) is skipped.
func openedForWriting(s string) (string, bool) {
	if len(s) > maxLiteralWindow {
		s = s[:maxLiteralWindow]
	}
	s = strings.TrimLeft(s, " \t")
	if s == "" {
		return "", false
	}
	if s[0] != '"' && s[0] != '\'' {
		// A computed first argument: the path when a mode follows
		// (open(p, 'w')), perl's file handle otherwise (open(F, …)).
		i := topLevelComma(s[:min(len(s), maxArgWindow)])
		if i < 0 {
			return "", false
		}
		s = strings.TrimLeft(s[i+1:], " \t")
		if isWriteMode(modeArg(s)) {
			return "", true
		}
	}
	first, end, _, ok := readChain(s, 0)
	if !ok {
		// open(F, $p) or open(my $fh, '>', $p): perl's computed path,
		// written when its mode says so.
		i := topLevelComma(s[:min(len(s), maxArgWindow)])
		if i < 0 {
			return "", false
		}
		mode := modeArg(s[i+1:])
		return "", strings.ContainsAny(mode, ">+") && len(mode) <= 3
	}
	var second string
	if r, ok := strings.CutPrefix(strings.TrimLeft(s[end:], " \t"), ","); ok {
		second = modeArg(r)
	}
	mode, path := OpenMode(first)
	switch {
	case mode != "" && path == "":
		// perl's three arguments: open(F, ">", PATH)
		return second, strings.ContainsAny(mode, ">+")
	case mode != "":
		// perl's two: open(F, ">>PATH")
		return path, strings.ContainsAny(mode, ">+")
	}
	return first, isWriteMode(second)
}

// modeArg reads an open call's argument after a comma when it is a
// literal, given by keyword or not (mode="w", {flags: "a"}).
func modeArg(s string) string {
	s = strings.TrimLeft(s, " \t{")
	for _, kw := range []string{"mode=", "mode:", "flags:", "flag:"} {
		s = strings.TrimLeft(strings.TrimPrefix(s, kw), " \t")
	}
	m, _, _, _ := readChain(s, 0)
	return m
}

// OpenMode splits perl's open mode off a literal: ">>", "+<", "<", … and
// the path after it (">> ~/.bashrc" is ">>" and "~/.bashrc"). A literal
// without one is "" and itself.
func OpenMode(lit string) (mode, path string) {
	i := 0
	for i < len(lit) && i < 3 && (lit[i] == '<' || lit[i] == '>' || lit[i] == '+') {
		i++
	}
	if i == 0 {
		return "", lit
	}
	rest := lit[i:]
	if strings.HasPrefix(rest, ":") { // ">:utf8", ">:encoding(UTF-8)"
		return lit[:i], ""
	}
	return lit[:i], strings.TrimLeft(rest, " \t")
}

// isWriteMode reports an fopen-style mode that writes: "w", "a", "r+",
// "wb", "x".
func isWriteMode(m string) bool {
	if m == "" || len(m) > 4 {
		return false
	}
	for i := 0; i < len(m); i++ {
		if strings.IndexByte("rwaxbtU+", m[i]) < 0 {
			return false
		}
	}
	return strings.ContainsAny(m, "wax+")
}

// receiverEffects returns the effects of calls made on a literal path:
// "….".unlink(), ".…".write_text(…); and, with no path, those made on
// anything else (p.unlink()).
func receiverEffects(code string) []CodeEffect {
	var out []CodeEffect
	for _, call := range receiverCalls {
		kw := call.name + "("
		afterKeywords(code, []string{kw}, func(before byte, rest string) {
			if at := len(code) - len(rest) - len(kw); at > 0 && before != '"' && before != '\'' && before != '`' {
				out = append(out, CodeEffect{call.op, ""})
			}
		})
	}
	eachLiteral(code, func(lit string, start, end int) {
		rest := code[end:]
		if strings.HasPrefix(rest, ")") && start > 0 && code[start-1] == '(' {
			rest = rest[1:] // ("….").unlink()
		}
		if len(rest) < 4 || rest[0] != '.' {
			return
		}
		for _, call := range receiverCalls {
			if strings.HasPrefix(rest, call.name) && (len(rest) == len(call.name) || !isIdentByte(rest[len(call.name)])) {
				out = append(out, CodeEffect{call.op, lit})
				return
			}
		}
	})
	return out
}

// CodeText is a file that code writes, with the literal text it writes.
type CodeText struct {
	Path, Text string
}

// textWriters are the write calls that take the path and then the text:
// fs.writeFileSync(p, t), file_put_contents(p, t), File.write(p, t).
var textWriters = map[string]bool{
	"writeFileSync": true, "writeFile": true, "appendFileSync": true, "appendFile": true, "outputFileSync": true,
	"outputFile": true, "file_put_contents": true, "writeTextFile": true, "writeTextFileSync": true, "File.write": true,
	"IO.write": true, "File.binwrite": true, "Files.writeString": true, "write_file": true, "spurt": true,
}

// CodeTexts returns the files code (folded: FoldCode) writes with a
// literal path and a literal text, in the first maxCodeScan bytes: the
// text-writing calls (textWriters) and open(p, 'w').write(t). What such
// code writes is judged as if a shell redirection had written it.
func CodeTexts(code string) []CodeText {
	if len(code) > maxCodeScan {
		code = code[:maxCodeScan]
	}
	var buf [16]callSite
	var out []CodeText
	for _, site := range callSites(code, buf[:0]) {
		rest := code[site.rest:]
		if int(site.call) < len(effectCalls) {
			if !textWriters[effectCalls[site.call].name] {
				continue
			}
			p, okP := nthLiteralArg(rest, 0)
			t, okT := nthLiteralArg(rest, 1)
			if okP && okT {
				out = append(out, CodeText{p, t})
			}
			continue
		}
		// open(p, 'w').write(t): the text is the chained write's.
		p, ok := openedForWriting(rest)
		if !ok || p == "" {
			continue
		}
		if end := closingParen(rest); end >= 0 {
			if after, ok := strings.CutPrefix(rest[end+1:], ".write("); ok {
				if t, ok := nthLiteralArg(after, 0); ok {
					out = append(out, CodeText{p, t})
				}
			}
		}
	}
	return out
}

// closingParen returns the index of the parenthesis that closes a call
// whose arguments s starts with, or -1.
func closingParen(s string) int {
	s = s[:min(len(s), maxLiteralWindow)]
	for off := 0; ; {
		i, closes := argEnd(s[off:])
		switch {
		case i < 0:
			return -1
		case closes:
			return off + i
		}
		off += i + 1
	}
}
