package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/agentctl/host"
	"github.com/parapet-dev/parapet/sandbox"
)

// doctorCommand checks this host's sandbox: the agent's (a child process
// applies it and runs its canary probes, exactly as internal-agent does)
// and the confined executor's (a helper confines itself as a command
// would and runs its probes).
func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check the sandbox on this host: the agent's and the executor's canary probes",
		Description: `Exit 0 when both are sandboxed, 3 otherwise. docs/threat-model.md says
what each probe proves.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "text", Usage: "text or json"},
		},
		Action: runDoctor,
	}
}

func runDoctor(c *cli.Context) error {
	if o := c.String("output"); o != "text" && o != "json" {
		return exitcode.Usagef("--output must be text or json, got %q", o)
	}
	self, err := os.Executable()
	if err != nil {
		return exitcode.Errorf(exitcode.Failed, "find own executable: %v", err)
	}
	agent := agentProbeReport(self)
	xrep := host.ProbeExecutor(self)
	if c.String("output") == "json" {
		b, _ := json.Marshal(map[string]any{"agent": agent, "executor": xrep})
		fmt.Fprintln(c.App.Writer, string(b))
	} else {
		printReport(c.App.Writer, "agent sandbox", agent)
		printReport(c.App.Writer, "executor", xrep)
	}
	if agent.Status != sandbox.StatusSandboxed || xrep.Status != sandbox.StatusSandboxed {
		return exitcode.Errorf(exitcode.Sandbox, "the sandbox is not complete on this host (agent %s, executor %s)", agent.Status, xrep.Status)
	}
	return nil
}

// agentProbeReport runs internal-probe: a child that sandboxes itself as
// the agent does, over a scratch workspace, and prints its report.
func agentProbeReport(self string) sandbox.Report {
	fail := func(err error) sandbox.Report {
		return sandbox.Report{Status: sandbox.StatusPartial, Probes: []sandbox.ProbeResult{}, Error: err.Error()}
	}
	dir, err := os.MkdirTemp("", "parapet-doctor-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	ws, canary := filepath.Join(dir, "ws"), filepath.Join(dir, "canary")
	for _, d := range []string{ws, canary} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return fail(err)
		}
	}
	var out, errOut bytes.Buffer
	cmd := exec.Command(self, "internal-probe", "--workspace", ws, "--canary-dir", canary)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return fail(fmt.Errorf("probe child: %v: %s", err, bytes.TrimSpace(errOut.Bytes())))
	}
	var rep sandbox.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		return fail(fmt.Errorf("probe child report: %v", err))
	}
	return rep
}

func printReport(w io.Writer, what string, rep sandbox.Report) {
	blocked := 0
	for _, p := range rep.Probes {
		if p.Blocked {
			blocked++
		}
	}
	fmt.Fprintf(w, "%s: %s (Landlock ABI %d, %d of %d probes blocked)\n", what, rep.Status, rep.LandlockABI, blocked, len(rep.Probes))
	if rep.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", rep.Error)
	}
	for _, p := range rep.Probes {
		state := "BLOCKED"
		switch {
		case p.Skipped:
			state = "skipped"
		case !p.Blocked:
			state = "NOT BLOCKED"
		case !p.Control:
			state = "blocked (control failed)"
		}
		fmt.Fprintf(w, "  %-16s %-24s %s\n", p.Name, state, p.Detail)
	}
}
