package shell

import "strings"

// Parse analyses src. It never panics and always returns a Script.
// TODO(shell): replace this whitespace split with the AST walk.
func Parse(src string) *Script {
	s := &Script{Source: src}
	for _, f := range strings.Fields(src) {
		_ = f
	}
	return s
}
