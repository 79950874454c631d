package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The line itself runs in bash (the engine runs bash --noprofile --norc
// -c), and is parsed as bash. A script the line hands to another shell
// (sh -c, dash <<EOF, zsh -c, csh -c) runs in that shell, which reads some
// bash constructs differently: dash runs "a &>/dev/null b" as "a &" then
// ">/dev/null b", has no $'…', [[ ]], <<<, brace expansion or arrays. Such
// a construct makes the analysis of that script unreliable, so it is
// reported as a "dialect" evasion (unanalysable), never judged as bash.

// posixShells read sh syntax; zsh and the C shells differ more widely.
var posixShells = map[string]bool{"sh": true, "dash": true, "ash": true, "ksh": true, "mksh": true, "yash": true, "posh": true}

// otherShells run -c scripts in a language that is not sh at all beyond
// plain words and simple operators.
var otherShells = map[string]bool{"zsh": true, "csh": true, "tcsh": true, "fish": true, "rc": true, "es": true, "xonsh": true, "nu": true, "elvish": true}

// dialectOf returns the dialect a shell program runs its script in, ""
// for bash.
func dialectOf(program string) string {
	if posixShells[program] || otherShells[program] {
		return program
	}
	return ""
}

// dialect records that a construct bash and the script's shell read
// differently appears in a script run by that shell.
func (w *walker) dialect(fr frame, what, evidence string) {
	if fr.dialect == "" {
		return
	}
	w.evasion("dialect", fr.dialect+" reads "+what+" differently from bash: "+evidence)
}

// checkDialect flags syntax nodes bash has and sh does not.
func (w *walker) checkDialect(n syntax.Node, fr frame) {
	if fr.dialect == "" {
		return
	}
	what := ""
	switch x := n.(type) {
	case *syntax.BinaryCmd:
		if x.Op == syntax.PipeAll {
			what = "|&"
		}
	case *syntax.TestClause:
		what = "[[ ]]"
	case *syntax.ArithmCmd:
		what = "(( ))"
	case *syntax.LetClause:
		what = "let"
	case *syntax.CoprocClause:
		what = "coproc"
	case *syntax.ProcSubst:
		what = "process substitution"
	case *syntax.ExtGlob:
		what = "extended globs"
	case *syntax.FuncDecl:
		if x.RsrvWord {
			what = "the function keyword"
		}
	case *syntax.ForClause:
		if _, ok := x.Loop.(*syntax.CStyleLoop); ok || x.Select {
			what = "for (( )) / select"
		}
	case *syntax.DeclClause:
		if x.Variant.Value != "export" && x.Variant.Value != "readonly" && x.Variant.Value != "local" {
			what = x.Variant.Value
		}
		for _, a := range x.Args {
			if a.Array != nil || a.Index != nil {
				what = "arrays"
			}
		}
	case *syntax.ParamExp:
		if x.Slice != nil || x.Repl != nil || x.Excl || x.Index != nil || x.Names != 0 ||
			x.Exp != nil && (x.Exp.Op == syntax.UpperFirst || x.Exp.Op == syntax.UpperAll ||
				x.Exp.Op == syntax.LowerFirst || x.Exp.Op == syntax.LowerAll || x.Exp.Op == syntax.OtherParamOps) {
			what = "this parameter expansion"
		}
	}
	if what != "" {
		w.dialect(fr, what, w.raw(n, fr))
	}
}

// checkRedirDialect flags redirections sh reads differently: &> and &>>
// (background, then a redirection), <<< and >& FILE.
func (w *walker) checkRedirDialect(redirs []Redirect, fr frame) {
	if fr.dialect == "" {
		return
	}
	for _, r := range redirs {
		switch {
		case r.Op == "&>" || r.Op == "&>>" || r.Op == "<<<":
			w.dialect(fr, r.Op, r.Op+r.Target)
		case r.Op == ">&" && !strings.HasPrefix(r.Target, "&"):
			w.dialect(fr, ">& FILE", r.Op+r.Target)
		}
	}
}

// checkOtherShell flags a script given to zsh, csh, fish, … that is more
// than plain words joined by | && || ; and simple redirections: their
// quoting, globbing and expansions are not bash's.
func (w *walker) checkOtherShell(program, src string) {
	if !otherShells[program] {
		return
	}
	var arr [12]fpTok
	// Globs, braces, $NAME, comments, assignments, tabs and newlines are
	// bash's reading, not theirs.
	if _, flags, ok := lexPlain(src, arr[:0]); !ok || flags&uint16(clGlob|clBrace|clExt|clDollar) != 0 {
		w.evasion("dialect", program+" runs a script that is not plain commands: "+src)
	}
}

// checkBashSettings flags bash builtins and settings that change how the
// rest of the line is read (loadable builtins, posix mode, a setting
// named at run time): what follows them cannot be analysed as written.
// shopt -s expand_aliases is not among them: the walker follows every
// alias the line defines as if it were set (defs.go), and flags an alias
// whose value it cannot read.
func (w *walker) checkBashSettings(program string, args []field, assigns []string) {
	switch program {
	case "shopt":
		for _, a := range args {
			if a.dynamic {
				w.evasion("dialect", "shopt "+a.text+" changes how later commands are read")
			}
		}
	case "enable":
		for _, a := range args {
			if strings.HasPrefix(a.text, "-") && strings.ContainsAny(a.text, "fnd") || a.dynamic {
				w.evasion("dialect", "enable "+a.text+" replaces or removes builtins")
			}
		}
	case "set":
		for i, a := range args {
			if a.text == "-o" && i+1 < len(args) && args[i+1].text == "posix" {
				w.evasion("dialect", "set -o posix changes how later commands are read")
			}
		}
	}
	for _, a := range assigns {
		if strings.HasPrefix(a, "BASH_ENV=") || strings.HasPrefix(a, "ENV=") || strings.HasPrefix(a, "POSIXLY_CORRECT=") {
			if v := a[strings.IndexByte(a, '=')+1:]; v != "" {
				w.evasion("dialect", a+" makes the shell run other code first")
			}
		}
	}
}

// checkAllRedirOrder flags a &> or &>> redirection with words of the
// command after it (true &>/dev/null sh -c …): bash reads the words as
// arguments, sh runs "true &" and then the words as a command of its own.
// Whatever shell runs the line, such a command hides what it runs.
func (w *walker) checkAllRedirOrder(rs []*syntax.Redirect, lastArg uint, fr frame) {
	for _, r := range rs {
		if (r.Op == syntax.RdrAll || r.Op == syntax.AppAll) && r.Pos().Offset() < lastArg {
			w.allRedirBeforeWord(w.raw(r, fr), fr)
			return
		}
	}
}

func (w *walker) allRedirBeforeWord(evidence string, fr frame) {
	w.evasion("dialect", "&> before more words of the command: sh runs them as a command of their own: "+evidence)
}
