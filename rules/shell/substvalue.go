package shell

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"path"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// The output of a command substitution, when the line fixes it: echo
// and printf of known words, pwd in a known directory, dirname,
// basename, the glob a listing stands for (ls, find, git ls-files), and a pipeline of those through filters that transform text
// (base64 -d, base32 -d, xxd -r -p, rev, tr, cat). $(echo LnNzaA== |
// base64 -d) is .ssh before the line runs, so the word it builds is
// judged as what it is. A decoding filter records a "decoded-word"
// evasion, with the decoded text as its evidence: decoding a literal
// only hides what the line says.

// valueSource reports the programs whose output substValue works out
// from their words alone (and git, for git ls-files: see the fast
// path's substitution check); valueFilter the ones it follows through a
// pipeline. stageOutput reads each; the fast path leaves a substitution
// that names them to the full parse.
func valueSource(p string) bool {
	switch p {
	case "echo", "printf", "pwd", "dirname", "basename", "ls", "find", "rg":
		return true
	}
	return false
}

func valueFilter(p string) bool {
	switch p {
	case "base64", "base32", "gbase64", "xxd", "rev", "tr", "cat":
		return true
	}
	return false
}

// maxSubstValue bounds a value worked out from a substitution.
const maxSubstValue = 4096

// substValue returns the output of a command substitution when it is
// known before the line runs.
func (w *walker) substValue(x *syntax.CmdSubst, fr frame) (string, bool) {
	if len(x.Stmts) != 1 {
		return "", false
	}
	st := x.Stmts[0]
	if _, pipe := st.Cmd.(*syntax.BinaryCmd); st.Negated || st.Background || pipe && len(st.Redirs) > 0 {
		return "", false
	}
	var stages []*syntax.Stmt
	if !pipelineStages(st, &stages) || len(stages) > 8 {
		return "", false
	}
	out, have, decoded := "", false, ""
	for _, stage := range stages {
		call, ok := stage.Cmd.(*syntax.CallExpr)
		if !ok || stage.Negated || stage.Background || len(call.Assigns) > 0 || len(call.Args) == 0 {
			return "", false
		}
		words, ok := w.staticWords(call.Args, fr)
		if !ok || len(words) == 0 {
			return "", false // $(${K}) with K empty expands to nothing
		}
		// A here-string gives the first stage its input: base64 -d <<< X.
		if len(stage.Redirs) > 0 {
			if have || len(stage.Redirs) != 1 || stage.Redirs[0].Op != syntax.WordHdoc {
				return "", false
			}
			in, ok := w.staticWords([]*syntax.Word{stage.Redirs[0].Word}, fr)
			if !ok || len(in) != 1 {
				return "", false
			}
			out, have = in[0]+"\n", true
		}
		var how string
		out, how, ok = w.stageOutput(words, out, have, fr)
		if !ok || len(out) > maxSubstValue {
			return "", false
		}
		have = true
		if how != "" {
			decoded = how
		}
	}
	if !utf8.ValidString(out) || strings.ContainsFunc(out, func(r rune) bool { return r < ' ' && r != '\n' && r != '\t' || r == 0x7f }) {
		return "", false // binary: not a word anyone types
	}
	out = strings.TrimRight(out, "\n")
	if decoded != "" {
		w.evasion("decoded-word", out) // the evidence is the decoded text
	}
	return out, true
}

// pipelineStages flattens a | b | c into its statements.
func pipelineStages(st *syntax.Stmt, out *[]*syntax.Stmt) bool {
	if b, ok := st.Cmd.(*syntax.BinaryCmd); ok {
		if b.Op != syntax.Pipe {
			return false
		}
		return pipelineStages(b.X, out) && pipelineStages(b.Y, out)
	}
	*out = append(*out, st)
	return true
}

// staticWords expands words that are known before the line runs.
func (w *walker) staticWords(ws []*syntax.Word, fr frame) ([]string, bool) {
	var tmp []subst
	saved := w.buf
	w.buf = nil
	fs := w.words(ws, fr, &tmp)
	w.buf = saved
	if len(tmp) > 0 {
		return nil, false
	}
	words := make([]string, 0, len(fs))
	for _, f := range fs {
		t, ok := staticText(f)
		if !ok {
			return nil, false
		}
		words = append(words, t)
	}
	return words, true
}

// stageOutput returns what one command of the pipeline writes, given its
// input (have says there is one), and how it decoded it ("" when it did
// not decode).
func (w *walker) stageOutput(words []string, in string, have bool, fr frame) (out, decoded string, ok bool) {
	args := words[1:]
	prog := path.Base(words[0])
	if !have {
		switch prog {
		case "echo":
			newline := true
			for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "neE") == "" {
				newline = newline && !strings.Contains(args[0], "n")
				args = args[1:]
			}
			out = strings.Join(args, " ")
			if newline {
				out += "\n"
			}
			return out, "", true
		case "printf":
			switch {
			case len(args) == 0:
			case args[0] == "%s" || args[0] == "%s\\n" || args[0] == "%s\n":
				return strings.Join(args[1:], "") + strings.TrimPrefix(strings.TrimPrefix(args[0], "%s"), "\\n"), "", true
			case !strings.ContainsAny(args[0], "%\\"):
				return args[0], "", true
			}
		case "pwd":
			if d := w.curDir(fr); d != "" && d != UnknownDir && len(args) == 0 {
				return d + "\n", "", true
			}
		case "dirname":
			if len(args) == 1 {
				return path.Dir(args[0]) + "\n", "", true
			}
		case "basename":
			if len(args) == 1 {
				return path.Base(args[0]) + "\n", "", true
			}
		case "ls", "find", "git", "rg":
			// $(git ls-files), $(find ~ -name '*.md'): the names are not
			// known, the glob they stand for is (as for xargs).
			if g, ok := listedGlobs(&Command{Program: prog, Args: args}); ok {
				return g + "\n", "", true
			}
		}
		return "", "", false
	}
	switch prog {
	case "cat":
		if len(args) == 0 {
			return in, "", true
		}
	case "base64", "base32", "gbase64":
		if !hasDecodeFlag(args) {
			return "", "", false
		}
		text := strings.Join(strings.Fields(in), "")
		var b []byte
		var err error
		if prog == "base32" {
			b, err = base32.StdEncoding.DecodeString(text)
		} else {
			b, err = base64.StdEncoding.DecodeString(text)
			if err != nil {
				b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(text, "="))
			}
		}
		if err != nil {
			return "", "", false
		}
		return string(b), prog + " -d", true
	case "xxd":
		if len(args) == 2 && (args[0] == "-r" && args[1] == "-p" || args[0] == "-p" && args[1] == "-r") || len(args) == 1 && (args[0] == "-rp" || args[0] == "-pr" || args[0] == "-r-p") {
			b, err := hex.DecodeString(strings.Join(strings.Fields(in), ""))
			if err != nil {
				return "", "", false
			}
			return string(b), "xxd -r -p", true
		}
	case "rev":
		if len(args) == 0 {
			lines := strings.Split(strings.TrimSuffix(in, "\n"), "\n")
			for i, l := range lines {
				r := []rune(l)
				for a, b := 0, len(r)-1; a < b; a, b = a+1, b-1 {
					r[a], r[b] = r[b], r[a]
				}
				lines[i] = string(r)
			}
			return strings.Join(lines, "\n") + "\n", "rev", true
		}
	case "tr":
		if len(args) == 2 {
			from, to := expandTrSet(args[0]), expandTrSet(args[1])
			if from == "" || to == "" || strings.HasPrefix(args[0], "-") {
				return "", "", false
			}
			how := ""
			if scrambles(from, to) {
				how = "tr" // rot13 and its kin; a case change hides nothing
			}
			return trMap(in, from, to), how, true
		}
	}
	return "", "", false
}

// hasDecodeFlag reports base64's -d / --decode / -D (macOS).
func hasDecodeFlag(args []string) bool {
	for _, a := range args {
		switch a {
		case "-d", "--decode", "-D", "-di", "-id", "--decode --ignore-garbage":
			return true
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a[1:], 'd') {
			return true
		}
	}
	return false
}

// expandTrSet expands a tr set's ranges (a-z) into its characters; ""
// for classes and escapes it does not read.
func expandTrSet(set string) string {
	if strings.ContainsAny(set, "[\\") || len(set) > 256 {
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(set); i++ {
		if i+2 < len(set) && set[i+1] == '-' && set[i] <= set[i+2] {
			for c := set[i]; ; c++ {
				b.WriteByte(c)
				if c == set[i+2] {
					break
				}
			}
			i += 2
			continue
		}
		b.WriteByte(set[i])
	}
	return b.String()
}

// scrambles reports a tr mapping that moves letters to other letters of
// the same case (tr a-z n-za-m), as a cipher does.
func scrambles(from, to string) bool {
	for i := 0; i < len(from); i++ {
		f, t := from[i], to[min(i, len(to)-1)]
		if f != t && (isLower(f) && isLower(t) || isUpper(f) && isUpper(t)) {
			return true
		}
	}
	return false
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// trMap maps each byte of in found in from to the byte at the same place
// in to (the last one when to is shorter), as tr does.
func trMap(in, from, to string) string {
	b := []byte(in)
	for i, c := range b {
		if j := strings.IndexByte(from, c); j >= 0 {
			b[i] = to[min(j, len(to)-1)]
		}
	}
	return string(b)
}
