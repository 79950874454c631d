package heuristics

import (
	"strings"

	"github.com/parapet-dev/parapet/rules/action"
)

// Encoding evasion: characters and shell tricks that make an action read
// differently to a person, a text rule and the machine. The normalised
// action is judged by the other rules too; these findings say that
// someone tried to hide something.

// commandFields are the argument keys that hold a command line.
var commandFields = map[string]bool{
	"command": true, "cmd": true, "script": true, "commandLine": true, "command_line": true, "code": true, "args": true,
}

func (s *scan) isCommandField(field string) bool {
	if s.act.Type != "execute_command" {
		return false
	}
	top, _, _ := strings.Cut(field, ".")
	return commandFields[top]
}

func (s *scan) isPathField(field string) bool {
	for i := range s.act.Paths {
		if s.act.Paths[i].Field == field && field != "command" {
			return true
		}
	}
	return false
}

func (s *scan) isURLField(field string) bool {
	for i := range s.act.URLs {
		if s.act.URLs[i].Field == field && field != "command" {
			return true
		}
	}
	return false
}

func (s *scan) checkEvasions() {
	for i := range s.act.Evasions {
		ev := &s.act.Evasions[i]
		where := fieldLabel(ev.Field)
		switch ev.Kind {
		case "zero-width", "bidi", "tag", "control":
			if s.isCommandField(ev.Field) || s.isPathField(ev.Field) {
				s.add(rEvInvisibleCommand, "hides "+ev.Kind+" characters ("+ev.Evidence+") in the "+where+
					": what runs differs from what a reviewer sees; refuse it and ask for the plain text", ev.Evidence)
			} else {
				s.add(rEvInvisibleText, "contains hidden "+ev.Kind+" characters ("+ev.Evidence+") in the "+where+
					": check the text for hidden instructions before approving", ev.Evidence)
			}
		case "homoglyph":
			if s.isCommandField(ev.Field) || s.isPathField(ev.Field) || s.isURLField(ev.Field) {
				s.add(rEvHomoglyph, "the word \""+ev.Evidence+"\" in the "+where+
					" mixes Latin with look-alike Cyrillic or Greek letters: it is not what it appears to be; refuse it", ev.Evidence)
			}
		case "fullwidth":
			if s.isCommandField(ev.Field) || s.isPathField(ev.Field) {
				s.add(rEvFullwidth, "the "+where+" uses fullwidth or compatibility characters that normalise to different text: ask for plain ASCII", ev.Evidence)
			}
		case "encoded-path":
			s.add(rEvEncodedPath, "the path in "+where+" is percent-encoded ("+ev.Evidence+"): it hides its real location; ask for the plain path", ev.Evidence)
		case "too-deep":
			s.add(rEvUnanalysable, "the command nests shells too deeply to be analysed: run the inner command directly", ev.Evidence)
		case "dialect":
			s.add(rEvUnanalysable, "the command hands a script to a shell that reads it differently from bash ("+ev.Evidence+
				"): what would run cannot be analysed; write it for bash, or run the commands directly", ev.Evidence)
		case "opaque-code":
			s.add(rEvUnanalysable, "the command runs code whose effect cannot be analysed ("+ev.Evidence+
				"): run the commands it means directly so they can be checked", ev.Evidence)
		case "quote-split", "ifs", "ansi-c-escape", "backslash-split", "variable-program", "glob-program", "brace-expansion", "decoded-word":
			if ev.Kind == "variable-program" && printsShellSetup(ev.Evidence) {
				continue // eval "$(ssh-agent -s)": the substitution is judged as a command
			}
			s.add(rEvShell, "the command obscures its words ("+ev.Kind+": "+ev.Evidence+
				"): ask for the command written plainly", ev.Evidence)
		}
	}
	// Hosts with look-alike letters are caught even when normalisation
	// had nothing to undo (a host is never rewritten).
	if s.enabled(rEvHomoglyph) {
		for i := range s.act.URLs {
			if h := s.act.URLs[i].Host; h != "" && !isASCII(h) && hasHomoglyph(h) {
				s.add(rEvHomoglyph, "the host "+h+" mixes Latin with look-alike letters: it is not the site it imitates; refuse it", h)
			}
		}
	}
}

func hasHomoglyph(h string) bool {
	_, evs := action.Normalize(h)
	for _, e := range evs {
		if e.Kind == "homoglyph" {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// checkUnanalysable fails closed on commands the parser could not read.
func (s *scan) checkUnanalysable(cs *cmdScan) {
	sc := cs.script
	switch {
	case sc.TooDeep:
		s.add(rEvUnanalysable, "the command nests shells deeper than the analyser follows: run the inner command directly", s.act.Command)
	case sc.ParseError != "":
		s.add(rEvUnanalysable, "the command could not be analysed ("+sc.ParseError+"): fix the syntax or split it into simple commands", s.act.Command)
	case len(sc.Commands) == 0 && hasCode(s.act.Command):
		s.add(rEvUnanalysable, "the command could not be analysed (no commands found): split it into simple commands", s.act.Command)
	}
}

// hasCode reports whether a command line has anything besides blanks and
// comments.
func hasCode(src string) bool {
	for line := range strings.SplitSeq(src, "\n") {
		t := strings.TrimSpace(line)
		if t != "" && t[0] != '#' {
			return true
		}
	}
	return false
}

// shellSetupPrinters are programs whose output is shell code written to
// be eval'd or sourced by the user's shell: environment managers, agents,
// prompt and completion generators. The program word "$(pyenv init -)"
// comes from them, so it hides nothing.
var shellSetupPrinters = map[string][]string{
	"ssh-agent": nil, "keychain": nil, "dircolors": nil, "gpg-agent": nil, "dbus-launch": nil, "gnome-keyring-daemon": nil,
	"pyenv": {"init", "virtualenv-init", "sh-activate", "sh-shell"}, "rbenv": {"init"}, "nodenv": {"init"}, "goenv": {"init"},
	"jenv": {"init"}, "plenv": {"init"}, "phpenv": {"init"}, "tfenv": {"init"}, "direnv": {"hook", "export"},
	"brew": {"shellenv"}, "conda": {"shell.bash", "shell.zsh", "shell.fish", "shell.posix", "shell"}, "micromamba": {"shell"},
	"mamba": {"shell"}, "starship": {"init"}, "zoxide": {"init"}, "fnm": {"env"}, "mise": {"activate", "env", "hook-env"},
	"rtx": {"activate"}, "opam": {"env", "config"}, "thefuck": {"--alias"}, "atuin": {"init"}, "mcfly": {"init"},
	"fzf": {"--bash", "--zsh", "--fish"}, "kubectl": {"completion"}, "helm": {"completion"}, "gh": {"completion"},
	"register-python-argcomplete": nil, "luarocks": {"path"}, "minikube": {"docker-env", "podman-env"},
	"docker-machine": {"env"}, "rustup": {"completions"}, "poetry": {"completions"}, "pip": {"completion"}, "npm": {"completion"},
	"uv": {"generate-shell-completion"}, "pdm": {"completion"}, "navi": {"widget"}, "oh-my-posh": {"init"},
	"pipenv": {"--completion"}, "kind": {"completion"}, "k3d": {"completion"}, "resize": nil,
}

// printsShellSetup reports whether a program word is exactly one command
// substitution running a shell-setup printer ($(pyenv init -),
// `ssh-agent -s`, $(/opt/homebrew/bin/brew shellenv)).
func printsShellSetup(word string) bool {
	inner := ""
	switch {
	case strings.HasPrefix(word, "$(") && strings.HasSuffix(word, ")") && !strings.HasPrefix(word, "$(("):
		inner = word[2 : len(word)-1]
	case len(word) > 2 && word[0] == '`' && word[len(word)-1] == '`':
		inner = word[1 : len(word)-1]
	default:
		return false
	}
	if strings.ContainsAny(inner, "$`;&|<>()\\\n") {
		return false // one plain command only
	}
	words := strings.Fields(inner)
	if len(words) == 0 {
		return false
	}
	subs, ok := shellSetupPrinters[baseName(words[0])]
	if !ok {
		return false
	}
	if subs == nil {
		return true
	}
	for _, w := range words[1:] {
		if strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") {
			continue
		}
		for _, sub := range subs {
			if w == sub || strings.HasPrefix(sub, "shell") && strings.HasPrefix(w, sub) {
				return true
			}
		}
		return false
	}
	return false
}

// checkRewrittenScript flags a shell or interpreter that runs, as its
// program, text another command rewrote on the way: echo 'RM -RF ~' | tr
// A-Z a-z | sh, perl -e 'print …' | sh, gzip -dc p.gz | sh. The walker
// follows text it can see (echo, printf, here-documents) into the shell;
// what a transformer makes of it is not in the line, so the script that
// runs cannot be judged.
func (s *scan) checkRewrittenScript(cs *cmdScan) {
	if !s.enabled(rEvShell) || len(cs.script.Pipelines) == 0 {
		return
	}
	for i := range cs.views {
		v := &cs.views[i]
		if v.c.Pipeline < 0 || !readsProgramFromStdin(v) {
			continue
		}
		before := cs.before(v)
		if len(before) == 0 {
			continue
		}
		u := cs.view(before[len(before)-1])
		if u == nil || !rewritesText(u) {
			continue
		}
		s.add(rEvShell, v.prog+" runs as its program the text "+u.prog+" rewrites: what runs is not in the command line; write it out and run it plainly",
			u.prog+" … | "+v.prog)
		return
	}
}

// rewritesText reports programs that turn their input (or their own
// inline code) into different text: character and line transformers,
// decompressors, and interpreters printing from a one-liner.
func rewritesText(u *cmdView) bool {
	switch u.prog {
	case "tr", "sed", "gsed", "awk", "gawk", "mawk", "nawk", "rev", "cut", "paste", "fold", "iconv", "uudecode", "recode",
		"zcat", "gzcat", "bzcat", "xzcat", "zstdcat", "lz4cat", "gunzip", "unxz", "unzstd", "bunzip2":
		return true
	case "gzip", "bzip2", "xz", "zstd", "lz4":
		return hasShortFlag(u.args, 'd') || hasLongFlag(u.args, "decompress")
	}
	return u.hasCode && u.kind != "" && u.kind != "shell"
}
