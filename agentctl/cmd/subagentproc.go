package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/parapet-dev/parapet/agentctl/subagent"
	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/llm"
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
	log := newLogger(c.App.ErrWriter, c.String("log-level")).With("process", "sub-agent", "name", c.String("name"))
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
		return exitf(exitSandbox, "sandbox not verified: %s %s", child.report.Status, child.report.Error)
	case errors.Is(err, context.Canceled):
		return exitf(exitFailed, "sub-agent interrupted")
	}
	return exitf(exitFailed, "sub-agent: %v", err)
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

// subAgentLLM is the LLM a sub-agent gets: the agent's. With the scripted
// provider each sub-agent replays its own file next to the agent's script:
// script.yaml → script.<name>.yaml.
func (h hostConfig) subAgentLLM(name string) (engine.SubAgentLLM, error) {
	l := engine.SubAgentLLM{Provider: h.provider, Model: h.model, BaseURL: h.baseURL, APIKeyEnv: h.apiKeyEnv}
	if h.provider == llm.ProviderScripted {
		path := subAgentScriptPath(h.scriptPath, name)
		if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
			return l, fmt.Errorf("the scripted provider has no replies for sub-agent %q: write them to %s", name, path)
		}
		l.ScriptPath = path
	}
	return l, nil
}

// subAgentScriptPath is the scripted replies file of sub-agent name.
func subAgentScriptPath(agentScript, name string) string {
	ext := filepath.Ext(agentScript)
	return strings.TrimSuffix(agentScript, ext) + "." + name + ext
}

// spawnSubAgent starts one sandboxed sub-agent process (the engine's
// SpawnSubAgent): this binary as internal-subagent, with its connection
// to the engine and its token on inherited descriptors, the LLM flags it
// must prepare before sandboxing, and SIGKILL if the engine dies.
func (h *host) spawnSubAgent(_ context.Context, spec engine.SubAgentSpec, stderr io.Writer) (func() error, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("find own executable: %w", err)
	}
	args := []string{"internal-subagent", "--engine-fd", "3", "--name", spec.Name,
		"--workspace", h.cfg.workspace, "--provider", spec.LLM.Provider, "--log-level", h.cfg.logLevel}
	for _, f := range []struct{ flag, v string }{
		{"--model", spec.LLM.Model}, {"--base-url", spec.LLM.BaseURL}, {"--api-key-env", spec.LLM.APIKeyEnv},
		{"--script", spec.LLM.ScriptPath}, {"--canary-dir", h.cfg.canaryDir},
	} {
		if f.v != "" {
			args = append(args, f.flag, f.v)
		}
	}
	if h.cfg.allowUnsandboxed {
		args = append(args, "--allow-unsandboxed")
	}
	cmd := exec.Command(self, args...)
	cmd.Dir = h.cfg.workspace
	cmd.Env = childEnv(os.Environ())
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.ExtraFiles = []*os.File{spec.Conn} // descriptor 3
	release, err := passToken(cmd, spec.Token)
	if err != nil {
		return nil, nil, err
	}
	err = cmd.Start()
	release()
	if err != nil {
		return nil, nil, err
	}
	h.log.Debug("sub-agent process started", "name", spec.Name, "pid", cmd.Process.Pid)
	var once sync.Once
	kill := func() { once.Do(func() { _ = cmd.Process.Kill() }) }
	return cmd.Wait, kill, nil
}

// subAgentLabel marks a sub-agent's tool call in run's text output: the
// engine gives its calls the id sub:<name>:<id>.
func subAgentLabel(callID string) string {
	rest, ok := strings.CutPrefix(callID, "sub:")
	if !ok {
		return ""
	}
	name, _, ok := strings.Cut(rest, ":")
	if !ok {
		return ""
	}
	return "[" + name + "] "
}
