// Package shell turns a shell command line into the simple commands it would
// run, so that policy and heuristics judge structure (program, arguments,
// redirections, pipelines) rather than raw text.
//
// Parsing uses mvdan.cc/sh/v3. Nested scripts (bash -c '…', sh -c, eval,
// $(…), `…`, <(…)) are parsed recursively up to MaxDepth, and their commands
// are flattened into Script.Commands with their nesting recorded. Wrappers
// that run another program (sudo, env, timeout, xargs, find -exec, watch, …)
// stay in Commands and the program they run is added after them.
//
// The walker also follows the line's state as bash would run it
// (semantics.go): each Command's Dir, values assigned in the line, brace
// expansion, data echoed into xargs; commands other programs run
// (runners.go, interpreters.go) are nested scripts; constructs a non-bash
// shell reads differently are "dialect" evasions (dialect.go). ScriptRun
// names the file a command runs as code.
//
// Analysis is bounded for any input: bracket nesting is checked before the
// parser runs (its recursion would otherwise overflow the stack), compound
// nesting, wrapper chains and nested re-parses are capped, and whatever is
// cut off is reported through TooDeep and a "too-deep" evasion. Input the
// parser rejects still yields commands (see ParseError).
package shell

// MaxDepth bounds recursion into nested scripts (bash -c, eval, …).
const MaxDepth = 4

// Script is the analysed form of one command line.
type Script struct {
	// Source is the command line as given.
	Source string
	// Commands lists every simple command, outermost first, in source order.
	Commands []Command
	// Pipelines lists pipelines of two or more commands; each entry holds
	// indexes into Commands, left to right.
	Pipelines [][]int
	// Evasions lists obfuscation found while parsing (quote splitting such as
	// r''m, ${IFS}, ANSI-C escapes, …). Each is a short description.
	Evasions []Evasion
	// ParseError is set when the source is not valid shell. Commands then
	// holds a best-effort whitespace split so later tiers still see words;
	// callers should treat an unparseable command as suspicious. It is also
	// set, prefixed with how the script was reached ("in bash -c: …"), when
	// a nested script (bash -c, eval, heredoc) is not valid shell.
	ParseError string
	// TooDeep is set when nesting exceeded MaxDepth (or the syntax nesting
	// guard); the commands past that point are not in Commands.
	TooDeep bool
	// Iterated names the variables a loop sets, once per value, to values
	// the line does not show (for V in $(…), while read V): a command
	// that uses one runs for each of them.
	Iterated []string

	// state is what Parse allocated the Script in, for Release.
	state *parseState
}

// HasEvasion reports whether an evasion of the given kind was found.
func (s *Script) HasEvasion(kind string) bool {
	for _, e := range s.Evasions {
		if e.Kind == kind {
			return true
		}
	}
	return false
}

// Command is one simple command (a program and its arguments).
type Command struct {
	// Name is the program as written after quote removal, e.g. "/usr/bin/rm".
	Name string
	// Program is the base name of Name, e.g. "rm". Empty when the program
	// is computed at run time (e.g. "$X" or "$(…)").
	Program string
	// Args are the arguments after quote removal. Parts that are only known
	// at run time are rendered as written, e.g. "$HOME/x" or "$(cat f)".
	Args []string
	// Assigns are environment assignments before the command (FOO=bar cmd),
	// or given to a wrapper (env FOO=bar cmd, sudo FOO=bar cmd). A bare
	// assignment statement (FOO=bar) is a Command with an empty Name.
	Assigns []string
	// Redirects are the command's redirections.
	Redirects []Redirect
	// Pipeline is the index into Script.Pipelines, or -1.
	Pipeline int
	// Depth is 0 for top-level commands, 1+ inside bash -c / eval / heredoc
	// scripts and $(…) / <(…). Subshells, blocks and wrappers (sudo, xargs, …)
	// do not add depth. Never more than MaxDepth.
	Depth int
	// Via says how a nested or wrapped command was reached: "" (top level),
	// "<shell> -c" ("bash -c", "sh -c", "busybox sh -c", "su -c"), "eval",
	// "heredoc" (a shell reading a here-document or here-string), "pipe"
	// (a shell reading text piped to it: echo … | sh), "$()"
	// (also backquotes), "<()" / ">()", "subshell", "function", "coproc",
	// "time", or the wrapper that runs it: "sudo", "env", "xargs",
	// "find -exec", "watch", …
	Via string
	// PipedProgram is the program a shell or an interpreter reads from a
	// pipe when the line shows it (echo 'rm -rf ~' | sh, echo 'code' |
	// python3), else "". The commands it starts are in the script too.
	PipedProgram string
	// Background is true for commands run with &.
	Background bool
	// Dir is the directory the command runs in, as far as the line shows:
	// "" for the directory the line starts in (the workspace), else the
	// path as written from there ("sub", "../x", "/etc", "~/.ssh"), or
	// UnknownDir. Relative paths of the command are relative to it (see
	// PathOf).
	Dir string
}

// Redirect is one redirection of a simple command.
type Redirect struct {
	// Op is the operator as written: ">", ">>", "<", "&>", ">&", "<<<", …
	Op string
	// FD is the file descriptor number if given ("2" in 2>), else "".
	FD string
	// Target is the word after the operator, after quote removal (a path,
	// "/dev/tcp/…"). For the descriptor duplications >& and <& with a
	// number or "-" it is written "&1" / "&-" so it never looks like a
	// path; ">& file" keeps the file name. For << and <<- it is the
	// delimiter word; for <<< it is the here-string.
	Target string
	// Body is the here-document body as written (<< and <<- only). With an
	// unquoted delimiter the shell expands it; commands substituted in it
	// appear in Script.Commands.
	Body string
}

// Input is the text the redirect feeds to the command's stdin as the
// line writes it: a here-document's body, a here-string's word (without
// the newline the shell adds). ok is false for any other redirect.
func (r Redirect) Input() (text string, ok bool) {
	switch r.Op {
	case "<<", "<<-":
		return r.Body, true
	case "<<<":
		return r.Target, true
	}
	return "", false
}

// Evasion is an obfuscation technique found in the source.
type Evasion struct {
	// Kind is a stable identifier:
	//   - "quote-split": the program word is split by quotes or backslashes
	//     (r''m, "r"m, c'u'rl, \r\m);
	//   - "ifs": ${IFS} / $IFS used as a word separator;
	//   - "ansi-c-escape": $'…' spelling printable text with numeric escapes;
	//   - "variable-program": the program word is computed at run time;
	//   - "glob-program": the program word is a glob (/???/r?);
	//   - "brace-expansion": the program word is a brace expansion ({rm,-rf,x});
	//   - "too-deep": nesting beyond what is analysed (MaxDepth, or syntax
	//     nesting too deep to parse safely);
	//   - "dialect": a script run by sh, dash, zsh, csh, … uses a construct
	//     that shell reads differently from bash, or a bash setting changes
	//     how the rest of the line is read (aliases, enable, BASH_ENV);
	//   - "opaque-code": a program runs a command it computes (os.system(x),
	//     sed's e, code feeding a shell), which cannot be followed.
	Kind string
	// Evidence is the fragment that showed it.
	Evidence string
}
