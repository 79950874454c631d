package shell

import "strings"

// A C or C++ compiler given its source on stdin (echo '…' | gcc -x c -
// -o /tmp/a && /tmp/a, tcc -run - <<EOF) builds a program the line then
// runs: its source is read as code of language "c", so that the commands
// it starts (system, popen, execl) and the files it changes (unlink,
// remove, fopen for writing) are judged as an interpreter's would be. A
// compiler given source files is left alone: what it builds is judged
// when it runs.

// compilerLang returns "c" for the C and C++ compilers (gcc, cc, clang,
// g++, c++, clang++, tcc, and their versioned names: gcc-12, clang-17),
// "" for other programs.
func compilerLang(program string) string {
	switch program {
	case "gcc", "cc", "clang", "g++", "c++", "clang++", "tcc":
		return "c"
	}
	base, version, versioned := strings.Cut(program, "-")
	if !versioned || !versionSuffix(version) {
		return "" // most programs: not a compiler's versioned name
	}
	switch base {
	case "gcc", "cc", "clang", "g++", "c++", "clang++", "tcc":
		return "c"
	}
	return ""
}

func versionSuffix(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '.' {
			return false
		}
	}
	return true
}

// compilerReadsStdin reports whether a compiler's arguments name stdin
// ("-" or /dev/stdin) as a source file: an operand, not the value of -o.
func compilerReadsStdin(args []field) bool {
	for i, a := range args {
		if isStdinWord(a.text) && (i == 0 || args[i-1].text != "-o") {
			return true
		}
	}
	return false
}

// compiledSource returns the source a compiler reads from a
// here-document or here-string, when its arguments name stdin.
func compiledSource(args []field, redirs []Redirect) (string, bool) {
	if !compilerReadsStdin(args) {
		return "", false
	}
	for _, r := range redirs {
		if text, ok := r.Input(); ok {
			return text, true
		}
	}
	return "", false
}

// compiledData reads the text the element from writes into cons, a
// compiler that reads its source from stdin, as that source.
func (w *walker) compiledData(from []int, cons int, fr frame) {
	c := &w.s.Commands[cons]
	if stdinRedirected(c.Redirects) || !compilerReadsStdin(plainFields(c.Args)) {
		return
	}
	text, ok := w.elementText(from)
	if !ok {
		return
	}
	program := c.Program
	c.PipedProgram = text // before interpreterCode adds commands and c moves
	w.interpreterCode(program, "c", text, fr)
}
