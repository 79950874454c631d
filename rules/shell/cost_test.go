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
