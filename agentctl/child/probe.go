package child

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/sandbox"
)

// internalProbeCommand is the agent's sandbox without the agent: apply,
// probe, print the report.
func internalProbeCommand() *cli.Command {
	return &cli.Command{
		Name:   "internal-probe",
		Hidden: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "workspace", Required: true},
			&cli.StringFlag{Name: "canary-dir", Required: true},
		},
		Action: func(c *cli.Context) error {
			rep := applySandbox(sandbox.Config{ReadPaths: []string{c.String("workspace")}}, c.String("canary-dir"))
			b, err := json.Marshal(rep)
			if err != nil {
				return exitcode.Errorf(exitcode.Failed, "%v", err)
			}
			fmt.Fprintln(c.App.Writer, string(b))
			return nil
		},
	}
}

// applySandbox restricts this process and runs the canary probes.
func applySandbox(cfg sandbox.Config, canaryDir string) sandbox.Report {
	if _, err := sandbox.Supported(); err != nil {
		return sandbox.Report{Status: sandbox.StatusUnavailable, Error: err.Error()}
	}
	if err := sandbox.Prewarm(); err != nil {
		return sandbox.Report{Status: sandbox.StatusPartial, Error: err.Error()}
	}
	prober, err := sandbox.PrepareProbes(cfg, sandbox.ProbeOptions{Dir: canaryDir})
	if err != nil {
		return sandbox.Report{Status: sandbox.StatusPartial, Error: "prepare probes: " + err.Error()}
	}
	if err := sandbox.Apply(cfg); err != nil {
		rep := prober.Run()
		rep.Status, rep.Error = sandbox.StatusPartial, "apply: "+err.Error()
		if errors.Is(err, sandbox.ErrUnavailable) {
			rep.Status = sandbox.StatusUnavailable
		}
		return rep
	}
	return prober.Run()
}
