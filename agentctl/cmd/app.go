// Package cmd is agentctl's command line: run (headless, for CI), start
// (the process manager), the client commands, and the hidden
// internal-engine / internal-agent / internal-subagent processes.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/parapet-dev/parapet/sandbox"
)

// version is stamped at build time with -ldflags "-X ...cmd.version=...".
var version = "dev"

// Exit codes, documented in agentctl/README.md.
const (
	exitOK      = 0
	exitFailed  = 1 // run failed: LLM or engine error, turn limit
	exitUsage   = 2 // usage or configuration error
	exitSandbox = 3 // the agent's sandbox could not be verified
	exitBlocked = 4 // completed, but an action was blocked or denied (--fail-on-block)
	// exitNotFound: the approval id is not pending (unknown, already
	// answered, timed out) or the session id is unknown.
	exitNotFound = 5
	// exitInterrupted: chat left with Ctrl-C during a turn (128 + SIGINT).
	exitInterrupted = 130
)

// exitf is an error that ends the command with code; RunContext prints
// its message.
func exitf(code int, format string, args ...any) error {
	return cli.Exit(fmt.Sprintf(format, args...), code)
}

func usageErrorf(format string, args ...any) error { return exitf(exitUsage, format, args...) }

// App builds the CLI.
func App(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:      "agentctl",
		Usage:     "run LLM agents behind the Parapet security gate",
		Version:   version,
		Writer:    stdout,
		ErrWriter: stderr,
		Commands: []*cli.Command{
			runCommand(),
			startCommand(),
			statusCommand(),
			stopCommand(),
			restartCommand(),
			chatCommand(),
			sendCommand(),
			approveCommand(),
			denyCommand(),
			sessionsCommand(),
			historyCommand(),
			doctorCommand(),
			hookCommand(),
			mcpProxyCommand(),
			gatewayCommand(),
			internalEngineCommand(),
			internalAgentCommand(),
			internalSubAgentCommand(),
			internalProbeCommand(),
		},
		// Errors are printed once, by RunContext, with their exit code.
		ExitErrHandler: func(*cli.Context, error) {},
	}
}

// Main runs agentctl with the process's arguments and exits.
func Main() {
	// The confined executor re-executes this binary as its helper.
	if len(os.Args) > 1 && os.Args[1] == sandbox.ExecHelperArg {
		sandbox.ExecMain()
	}
	os.Exit(RunContext(context.Background(), os.Args, os.Stdout, os.Stderr))
}

// RunContext runs the CLI and returns the exit code.
func RunContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := App(stdout, stderr).RunContext(ctx, args)
	if err == nil {
		return exitOK
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		if msg := ec.Error(); msg != "" {
			fmt.Fprintln(stderr, "agentctl:", msg)
		}
		return ec.ExitCode()
	}
	// urfave/cli's own errors (unknown flag, missing argument) are usage errors.
	fmt.Fprintln(stderr, "agentctl:", err)
	return exitUsage
}
