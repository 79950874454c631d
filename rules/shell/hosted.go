package shell

import (
	"slices"
	"strings"
)

// Some programs run another language's code without being its
// interpreter: a debugger's or editor's command that hands the rest of
// the line (or a block) to its embedded Python, Lua, Perl or Ruby
// (gdb -ex 'python …', lldb -o 'script …', vim -c 'py3 …'), and deno,
// whose program is an operand of its eval subcommand (deno eval CODE) or
// stdin (deno run -). codeOf finds their code as it finds an
// interpreter's, so that the commands it starts and the files it
// changes are judged alike.

// hostCommands maps, per host program, the commands that run embedded
// code to the language they run.
var hostCommands = map[string]map[string]string{
	"gdb":  {"python": "python", "py": "python", "pi": "python", "python-interactive": "python"},
	"lldb": {"script": "python"},
	"vim": {"py": "python", "py3": "python", "python": "python", "python3": "python", "pyx": "python", "pythonx": "python",
		"lua": "lua", "perl": "perl", "ruby": "ruby", "rub": "ruby"},
}

// hostOptions are the options whose value is one command of the host.
var hostOptions = map[string][]string{
	"gdb":  {"-ex", "--ex", "-eval-command", "--eval-command", "-iex", "--iex", "-init-eval-command", "--init-eval-command"},
	"lldb": {"-o", "--one-line", "-O", "--one-line-before-file", "-k", "--one-line-on-crash"},
	"vim":  {"-c", "--cmd"},
}

// hostOf returns the host table a program uses ("vim" for nvim, …).
func hostOf(program string) string {
	switch program {
	case "gdb", "lldb":
		return program
	case "vim", "vi", "nvim", "ex", "view", "gvim", "rvim", "vimdiff":
		return "vim"
	}
	return ""
}

// codeOf returns the language and program text a command runs: an
// interpreter's (interpreterLang, programText), deno's, or the embedded
// code of a debugger or editor. lang is "" for other programs; ok is
// false when the program's code is not on the line (a script file).
func codeOf(program string, args []field, redirs []Redirect) (lang, code string, ok bool) {
	if h := hostOf(program); h != "" {
		return hostedCode(h, texts(args), redirs)
	}
	if compilerLang(program) != "" {
		code, ok = compiledSource(args, redirs)
		return "c", code, ok
	}
	lang = interpreterLang(program)
	if lang == "" {
		return "", "", false
	}
	if program == "deno" {
		code, ok = denoProgram(args, redirs)
		return lang, code, ok
	}
	code, ok = programText(lang, args, redirs)
	return lang, code, ok
}

// denoProgram returns the code of deno eval [options] CODE, and of
// deno run [options] - fed a here-document.
func denoProgram(args []field, redirs []Redirect) (string, bool) {
	if len(args) == 0 {
		return "", false
	}
	switch args[0].text {
	case "eval":
		for _, a := range args[1:] {
			if !strings.HasPrefix(a.text, "-") {
				return a.text, true
			}
		}
	case "run":
		if slices.Contains(texts(args[1:]), "-") {
			for _, r := range redirs {
				if text, ok := r.Input(); ok {
					return text, true
				}
			}
		}
	}
	return "", false
}

// hostedCode collects the embedded code of a host's commands, given in
// its options (gdb -ex 'python import os; …', vim -c 'py3 …', vim
// +'lua …') or on its stdin, one command a line or a block (gdb's
// python … end, vim's py3 << EOF … EOF). The language is that of the
// first command found; commands in another language are left out.
func hostedCode(host string, words []string, redirs []Redirect) (lang, code string, ok bool) {
	var b strings.Builder
	add := func(l, c string) {
		if lang == "" {
			lang = l
		}
		if l == lang {
			b.WriteString(c)
			b.WriteByte('\n')
		}
	}
	for i, w := range words {
		switch {
		case slices.Contains(hostOptions[host], w) && i+1 < len(words):
			hostLines(host, words[i+1], add)
		case host == "vim" && strings.HasPrefix(w, "+") && len(w) > 1:
			hostLines(host, w[1:], add)
		default:
			for _, o := range hostOptions[host] {
				if v, found := strings.CutPrefix(w, o+"="); found && strings.HasPrefix(o, "--") {
					hostLines(host, v, add)
				}
			}
		}
	}
	for _, r := range redirs {
		if text, isInput := r.Input(); isInput {
			hostLines(host, text, add)
		}
	}
	return lang, b.String(), lang != ""
}

// hostLines reads host commands, one a line, and hands add the language
// and code of each that runs embedded code: "python CODE" on one line,
// or "python" (gdb) / "py3 << EOF" (vim) opening a block that ends with
// "end" or the marker.
func hostLines(host, text string, add func(lang, code string)) {
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimLeft(lines[i], " \t:")
		word, rest, _ := strings.Cut(line, " ")
		lang := hostCommands[host][word]
		if lang == "" {
			continue
		}
		rest = strings.TrimSpace(rest)
		end := ""
		switch {
		case rest == "" && host == "lldb":
			end = "quit()" // script, then Python up to quit()
		case rest == "":
			end = "end" // gdb: python … end
		case strings.HasPrefix(rest, "<<"):
			end = strings.TrimSpace(strings.TrimPrefix(rest, "<<"))
			if end == "" || end == "trim" {
				end = "."
			}
			end = strings.TrimPrefix(end, "trim ")
		case host == "lldb" && strings.HasPrefix(rest, "-"):
			// script -l python -- CODE, script --language lua -- …
			if _, after, found := strings.Cut(rest, "-- "); found {
				add(lang, after)
			}
			continue
		default:
			add(lang, rest)
			continue
		}
		var block []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != end; i++ {
			block = append(block, lines[i])
		}
		add(lang, strings.Join(block, "\n"))
	}
}
