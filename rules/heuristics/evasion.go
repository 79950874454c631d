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
		case "quote-split", "ifs", "ansi-c-escape", "backslash-split", "variable-program":
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
