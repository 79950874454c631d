package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/agentctl/hook"
	"github.com/parapet-dev/parapet/rules/policy"
)

// hookCommand is `agentctl hook`: the pre-tool hook of Claude Code and
// Gemini CLI, and its installation (agentctl/hook, docs/hooks.md).
func hookCommand() *cli.Command {
	judge := func(agent hook.Agent) *cli.Command {
		return &cli.Command{
			Name:   string(agent),
			Usage:  fmt.Sprintf("judge one %s tool call: hook JSON on stdin, the agent's answer on stdout", agent),
			Flags:  hookFlags(),
			Action: func(c *cli.Context) error { return runHook(c, agent) },
		}
	}
	scope := []cli.Flag{
		&cli.BoolFlag{Name: "project", Usage: "the project's settings file (WORKSPACE/.claude or .gemini/settings.json; the default)"},
		&cli.BoolFlag{Name: "user", Usage: "the user's settings file (~/.claude or ~/.gemini/settings.json)"},
		&cli.StringFlag{Name: "workspace", Usage: "the project `DIR` (default: current directory)"},
	}
	return &cli.Command{
		Name:  "hook",
		Usage: "guard Claude Code or Gemini CLI: Parapet as their pre-tool hook",
		Subcommands: []*cli.Command{
			judge(hook.ClaudeCode),
			judge(hook.GeminiCLI),
			{
				Name:        "install",
				Usage:       "add the hook to the agent's settings file (a JSON merge, with a backup)",
				Subcommands: perAgent(append(scope, hookFlags()...), installHook),
			},
			{
				Name:        "uninstall",
				Usage:       "remove our hook from the agent's settings file, and nothing else",
				Subcommands: perAgent(scope, uninstallHook),
			},
		},
	}
}

// perAgent makes `install claude-code [flags]` and `install gemini-cli
// [flags]`: the agent as a subcommand, so that flags may follow it.
func perAgent(flags []cli.Flag, action func(*cli.Context, hook.Agent) error) []*cli.Command {
	var cmds []*cli.Command
	for _, agent := range hook.Agents {
		cmds = append(cmds, &cli.Command{
			Name:   string(agent),
			Flags:  flags,
			Action: func(c *cli.Context) error { return action(c, agent) },
		})
	}
	return cmds
}

func hookFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "shield", EnvVars: []string{"PARAPET_SHIELD"}, Usage: "shieldd `ADDR`; default: the shield pipeline in-process"},
		&cli.StringFlag{Name: "shield-token", EnvVars: []string{"PARAPET_SHIELD_TOKEN"}, Usage: "bearer `TOKEN` for shieldd (never written by install: set the variable)"},
		&cli.StringFlag{Name: "policy", Value: "default", Usage: "embedded policy `NAME` or absolute FILE for the in-process shield"},
		&cli.StringFlag{Name: "audit-file", Usage: "append every in-process verdict to this audit log `FILE` (absolute)"},
		&cli.StringFlag{Name: "tenant", Usage: "tenant name sent to shieldd"},
		&cli.DurationFlag{Name: "timeout", Value: hook.DefaultTimeout, Usage: "answer (deny, or --on-error) if no verdict came within this time"},
		&cli.StringFlag{Name: "on-error", Value: "deny", Usage: "answer when the call cannot be judged: deny or ask"},
		&cli.StringFlag{Name: "on-escalate", Value: "ask", Usage: "answer to ESCALATE: ask (the agent's permission prompt) or deny"},
	}
}

func runHook(c *cli.Context, agent hook.Agent) error {
	// One judgement, then exit: collecting garbage would only delay the
	// answer (compiling the policy allocates a few MiB). The memory limit
	// still bounds the process should an input be huge.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(256 << 20)
	onError, err := hook.ParseFallback(c.String("on-error"))
	if err != nil {
		return exitcode.Usagef("--on-error %v", err)
	}
	onEscalate, err := hook.ParseFallback(c.String("on-escalate"))
	if err != nil {
		return exitcode.Usagef("--on-escalate %v", err)
	}
	home, _ := os.UserHomeDir()
	projectVar := map[hook.Agent]string{hook.ClaudeCode: "CLAUDE_PROJECT_DIR", hook.GeminiCLI: "GEMINI_PROJECT_DIR"}[agent]
	code := hook.Run(c.Context, hook.Options{
		Agent: agent,
		Shield: hook.ShieldConfig{
			Addr: c.String("shield"), Token: c.String("shield-token"),
			Policy: c.String("policy"), AuditFile: c.String("audit-file"),
		},
		Timeout: c.Duration("timeout"), OnError: onError, OnEscalate: onEscalate,
		Env: hook.Env{Home: home, User: os.Getenv("USER"), Tenant: c.String("tenant"), ProjectDir: os.Getenv(projectVar)},
	}, os.Stdin, c.App.Writer, c.App.ErrWriter)
	if code != 0 {
		return cli.Exit("", code)
	}
	return nil
}

// settingsPath is the settings file --project / --user name.
func settingsPath(c *cli.Context, agent hook.Agent) (string, error) {
	if c.NArg() != 0 {
		return "", exitcode.Usagef("unexpected argument %q", c.Args().First())
	}
	if c.Bool("project") && c.Bool("user") {
		return "", exitcode.Usagef("--project and --user exclude each other")
	}
	ws := c.String("workspace")
	if ws == "" {
		ws = "."
	}
	ws, err := filepath.Abs(ws)
	if err != nil {
		return "", exitcode.Usagef("workspace: %v", err)
	}
	home, err := os.UserHomeDir()
	if err != nil && c.Bool("user") {
		return "", exitcode.Usagef("no home directory: %v", err)
	}
	return hook.SettingsPath(agent, c.Bool("user"), ws, home), nil
}

func installHook(c *cli.Context, agent hook.Agent) error {
	path, err := settingsPath(c, agent)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding agentctl's own path: %w", err)
	}
	args := []string{exe, "hook", string(agent)}
	for _, name := range []string{"shield", "policy", "audit-file", "tenant", "on-error", "on-escalate"} {
		if !c.IsSet(name) {
			continue
		}
		v := c.String(name)
		if _, err := os.Stat(v); (name == "policy" && err == nil && !slices.Contains(policy.EmbeddedNames(), v)) || name == "audit-file" {
			// The hook runs in the agent's directory: files by absolute path.
			if v, err = filepath.Abs(v); err != nil {
				return exitcode.Usagef("--%s: %v", name, err)
			}
		}
		if name == "policy" {
			if _, err := hook.LoadPolicy(v); err != nil {
				return exitcode.Usagef("--policy: %v", err)
			}
		}
		args = append(args, "--"+name, v)
	}
	timeout := c.Duration("timeout")
	if c.IsSet("timeout") {
		args = append(args, "--timeout", timeout.String())
	}
	res, err := hook.Install(hook.InstallOptions{
		Agent: agent, Path: path, Command: hook.CommandLine(args...),
		// The agents let the tool run when their own limit expires: it
		// must be well past ours.
		AgentTimeout: 2*timeout + 10*time.Second,
	})
	if err != nil {
		return exitcode.Errorf(exitcode.Failed, "%v", err)
	}
	reportEdit(c, res, path, "installed in", "already installed in")
	return nil
}

func uninstallHook(c *cli.Context, agent hook.Agent) error {
	path, err := settingsPath(c, agent)
	if err != nil {
		return err
	}
	res, err := hook.Uninstall(agent, path, nil)
	if err != nil {
		return exitcode.Errorf(exitcode.Failed, "%v", err)
	}
	reportEdit(c, res, path, "removed from", "not installed in")
	return nil
}

func reportEdit(c *cli.Context, res hook.Result, path, did, didNot string) {
	w := c.App.Writer
	if res.Changed {
		fmt.Fprintf(w, "hook %s %s\n", did, path)
	} else {
		fmt.Fprintf(w, "hook %s %s (unchanged)\n", didNot, path)
	}
	if res.Backup != "" {
		fmt.Fprintf(w, "previous file kept as %s\n", res.Backup)
	}
	for _, warn := range res.Warnings {
		fmt.Fprintln(c.App.ErrWriter, "warning:", warn)
	}
}
