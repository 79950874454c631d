package shell

import (
	"strings"
	"testing"
)

// The interpreter-code scanners stay linear on code built to make them
// rescan (many unclosed calls): checked by the work done, not by time.
func TestEmbeddedCommandsWorstShapes(t *testing.T) {
	for _, code := range []string{
		strings.Repeat("open", maxCodeScan/4),
		strings.Repeat("%x(", maxCodeScan/3),
		strings.Repeat("qx(", maxCodeScan/3),
		strings.Repeat("system(", maxCodeScan/7),
		strings.Repeat(`system("`, maxCodeScan/8),
		strings.Repeat(`|"`, maxCodeScan/2),
	} {
		for _, lang := range []string{"perl", "ruby", "python", "awk"} {
			cmds, _ := embeddedCommands(lang, code)
			total := 0
			for _, c := range cmds {
				total += len(c)
			}
			if total > 2*maxLiteralWindow*len(cmds)+len(code) && total > 64*len(code) {
				t.Errorf("%s: %d bytes of commands from %d bytes of code", lang, total, len(code))
			}
		}
	}
}

// FoldCode and CodeEffects stay linear on code built to make them rescan
// (unclosed calls and interpolations, long chains): their output is
// bounded by their input.
func TestFoldCodeWorstShapes(t *testing.T) {
	for _, code := range []string{
		strings.Repeat("copy(copy(", maxCodeScan/10),
		strings.Repeat(`rm("`, maxCodeScan/4),
		strings.Repeat("'a' + ", maxCodeScan/6),
		strings.Repeat("path.join('a', ", maxCodeScan/15),
		`"` + strings.Repeat("#{Dir.home", maxCodeScan/10),
		`"` + strings.Repeat("#{x ", maxCodeScan/4),
		strings.Repeat("require('os').homedir()+", maxCodeScan/24),
		strings.Repeat("h = os.homedir(); h + ", maxCodeScan/22),
		strings.Repeat("open(x, ", maxCodeScan/8),
		strings.Repeat(")).", maxCodeScan/3),
		strings.Repeat("x.unlink(", maxCodeScan/9),
		strings.Repeat("getenv('HOME',", maxCodeScan/14),
	} {
		folded := FoldCode(code)
		if len(folded) > 2*len(code) {
			t.Errorf("FoldCode(%.20q…): %d bytes from %d", code, len(folded), len(code))
		}
		if n := len(CodeEffects(folded)); n > len(folded)/2 {
			t.Errorf("CodeEffects(%.20q…): %d effects from %d bytes", code, n, len(folded))
		}
	}
}
