// Package exitcode is agentctl's exit codes (agentctl/README.md) and the
// error that carries one: the CLI, the engine host and the hidden child
// processes end with the same codes.
package exitcode

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

const (
	OK      = 0
	Failed  = 1 // run failed: LLM or engine error, turn limit
	Usage   = 2 // usage or configuration error
	Sandbox = 3 // the agent's sandbox could not be verified
	Blocked = 4 // completed, but an action was blocked or denied (--fail-on-block)
	// NotFound: the approval id is not pending (unknown, already answered,
	// timed out) or the session id is unknown.
	NotFound = 5
	// Interrupted: chat left with Ctrl-C during a turn (128 + SIGINT).
	Interrupted = 130
)

// Errorf is an error that ends the command with code; agentctl prints its
// message once, with the code.
func Errorf(code int, format string, args ...any) error {
	return cli.Exit(fmt.Sprintf(format, args...), code)
}

// Usagef is an Errorf with the Usage code.
func Usagef(format string, args ...any) error { return Errorf(Usage, format, args...) }
