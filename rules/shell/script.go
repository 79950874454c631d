// Package shell turns a shell command line into the simple commands it would
// run, so that policy and heuristics judge structure (program, arguments,
// redirections, pipelines) rather than raw text.
//
// Parsing uses mvdan.cc/sh/v3. Nested scripts (bash -c '…', sh -c, eval,
// $(…), `…`, <(…)) are parsed recursively up to MaxDepth, and their commands
// are flattened into Script.Commands with their nesting recorded.
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
	// callers should treat an unparseable command as suspicious.
	ParseError string
	// TooDeep is set when nesting exceeded MaxDepth.
	TooDeep bool
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
	// Assigns are environment assignments before the command (FOO=bar cmd).
	Assigns []string
	// Redirects are the command's redirections.
	Redirects []Redirect
	// Pipeline is the index into Script.Pipelines, or -1.
	Pipeline int
	// Depth is 0 for top-level commands, 1+ inside bash -c / eval / $(…).
	Depth int
	// Via says how a nested command was reached: "", "bash -c", "eval",
	// "$()", "<()", "subshell", "decoded".
	Via string
	// Background is true for commands run with &.
	Background bool
}

// Redirect is one redirection of a simple command.
type Redirect struct {
	// Op is the operator as written: ">", ">>", "<", "&>", ">&", "<<<", …
	Op string
	// FD is the file descriptor number if given ("2" in 2>), else "".
	FD string
	// Target is the word after the operator (a path, "&1", "/dev/tcp/…").
	Target string
}

// Evasion is an obfuscation technique found in the source.
type Evasion struct {
	// Kind is a stable identifier: "quote-split", "ifs", "ansi-c-escape",
	// "backslash-split", "variable-program", "too-deep".
	Kind string
	// Evidence is the fragment that showed it.
	Evidence string
}
