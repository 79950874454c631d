// Package cmd is agentctl's command line: run (headless, for CI), start
// (the process manager), the client, policy, hook and proxy commands. The
// engine they host is agentctl/host; the hidden processes agentctl starts
// (internal-engine, internal-agent, internal-subagent, internal-probe) are
// agentctl/child.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/parapet-dev/parapet/agentctl/child"
	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/agentctl/host"
	"github.com/parapet-dev/parapet/sandbox"
)

// App builds the CLI.
func App(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:      "agentctl",
		Usage:     "run LLM agents behind the Parapet security gate",
		Version:   host.Version,
		Writer:    stdout,
		ErrWriter: stderr,
		Commands: append([]*cli.Command{
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
		}, child.Commands()...),
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
		return exitcode.OK
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
	return exitcode.Usage
}
