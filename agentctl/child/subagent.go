package child

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/agentctl/subagent"
	"github.com/parapet-dev/parapet/observability"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

func internalSubAgentCommand() *cli.Command {
	return &cli.Command{
		Name:   "internal-subagent",
		Usage:  "a sandboxed sub-agent process (started by the engine for spawn_agent, not by hand)",
		Hidden: true,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "engine-fd", Required: true, Usage: "inherited descriptor `N`: this sub-agent's connection to the engine"},
			&cli.StringFlag{Name: "name", Required: true},
			&cli.StringFlag{Name: "workspace", Required: true},
			&cli.StringFlag{Name: "provider", Value: "openai"},
			&cli.StringFlag{Name: "model"},
			&cli.StringFlag{Name: "base-url"},
			&cli.StringFlag{Name: "api-key-env"},
			&cli.StringFlag{Name: "script"},
			&cli.StringFlag{Name: "canary-dir", Usage: "writable `DIR` outside the workspace for the sandbox's canary file"},
			&cli.BoolFlag{Name: "allow-unsandboxed"},
			&cli.StringFlag{Name: "log-level", Value: "info"},
			tokenFDFlag(),
		},
		Action: runInternalSubAgent,
	}
}

// runInternalSubAgent sandboxes itself exactly like internal-agent, then
// registers with its token (the engine refuses it unless the sandbox was
// verified), runs the task and reports.
func runInternalSubAgent(c *cli.Context) error {
	log := observability.TextLogger(c.App.ErrWriter, c.String("log-level")).With("process", "sub-agent", "name", c.String("name"))
	token, err := readChildToken(c)
	if err != nil {
		return err
	}
	// The connection is taken before the sandbox; after it, only this
	// descriptor leads to the engine.
	conn, err := dialInheritedConn(c.Int("engine-fd"))
	if err != nil {
		return err
	}
	defer conn.Close()
	child, err := prepareSandboxedChild(c, log)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	// Registration carries the sandbox report either way: the engine is
	// the one that refuses, and the token is spent.
	err = subagent.Run(ctx, conn, subagent.Config{
		Token: token, SandboxReport: child.reportJSON, Provider: child.provider, Logger: log,
		Check: func(reg *pb.SubAgentRegisterResponse) error {
			if !child.acceptable {
				return fmt.Errorf("sandbox not verified: %s", child.report.Status)
			}
			return sameLLM(c, reg)
		},
	})
	switch {
	case err == nil:
		return nil
	case !child.acceptable:
		return exitcode.Errorf(exitcode.Sandbox, "sandbox not verified: %s %s", child.report.Status, child.report.Error)
	case errors.Is(err, context.Canceled):
		return exitcode.Errorf(exitcode.Failed, "sub-agent interrupted")
	}
	return exitcode.Errorf(exitcode.Failed, "sub-agent: %v", err)
}

// sameLLM checks that the engine's answer names the LLM this process
// prepared before the sandbox: after it, no other host could be reached
// and no other script read.
func sameLLM(c *cli.Context, reg *pb.SubAgentRegisterResponse) error {
	for _, f := range []struct{ flag, got string }{
		{"provider", reg.GetProvider()}, {"model", reg.GetModel()}, {"base-url", reg.GetBaseUrl()},
		{"api-key-env", reg.GetApiKeyEnv()}, {"script", reg.GetScriptPath()},
	} {
		if c.String(f.flag) != f.got {
			return fmt.Errorf("the engine's LLM setting %s %q differs from the --%s %q this process was started with", f.flag, f.got, f.flag, c.String(f.flag))
		}
	}
	return nil
}
