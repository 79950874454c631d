// Package cmd is the shieldd command line: serve (the default), policy
// tooling (check, test, show, list), eval, rules, audit verify and token
// mint / verify.
package cmd

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"
)

// Version is set at build time with -ldflags "-X …/shieldd/cmd.Version=…".
var Version = "dev"

// exitf is an error that ends the command with code, its message printed
// by ExitErrHandler.
func exitf(code int, format string, args ...any) error {
	return cli.Exit(fmt.Sprintf(format, args...), code)
}

// App builds the CLI. stdout and stderr are injectable for tests.
func App(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:    "shieldd",
		Usage:   "the Parapet Shield: judges every tool call an LLM agent proposes (ALLOW, BLOCK or ESCALATE)",
		Version: Version,
		Description: "shieldd serves openparallax.v1.ShieldService over gRPC and an HTTP/JSON mirror.\n" +
			"With no command it runs `serve` on its embedded default policy.",
		Writer:    stdout,
		ErrWriter: stderr,
		Commands: []*cli.Command{
			serveCommand(),
			policyCommand(),
			evalCommand(),
			rulesCommand(),
			auditCommand(),
			tokenCommand(),
		},
		ExitErrHandler: func(c *cli.Context, err error) {
			if err == nil {
				return
			}
			if msg := err.Error(); msg != "" {
				fmt.Fprintln(c.App.ErrWriter, "shieldd:", msg)
			}
		},
	}
	app.Flags = serveFlags()
	app.Before = serveBefore
	app.Action = runServe
	return app
}

// Main runs the CLI and exits with its status.
func Main() {
	os.Exit(Run(os.Args, os.Stdout, os.Stderr))
}

// Run runs the CLI with args and returns the exit status: 0 success, 1 a
// failed check or test, 2 a usage or configuration error.
func Run(args []string, stdout, stderr io.Writer) int {
	return RunContext(context.Background(), args, stdout, stderr)
}

// RunContext is Run with a context; cancelling it stops `serve`.
func RunContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := App(stdout, stderr).RunContext(ctx, args)
	if err == nil {
		return 0
	}
	if ec, ok := err.(cli.ExitCoder); ok {
		return ec.ExitCode()
	}
	return 2
}
