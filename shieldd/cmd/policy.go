package cmd

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/parapet-dev/parapet/rules/policy"
	"github.com/parapet-dev/parapet/rules/policytest"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
)

func policyCommand() *cli.Command {
	return &cli.Command{
		Name:  "policy",
		Usage: "check, test and show policies",
		Subcommands: []*cli.Command{
			{
				Name:      "check",
				Usage:     "validate policy files; prints file:line: message per problem, exit 1 on any",
				ArgsUsage: "FILE...",
				Action:    runPolicyCheck,
			},
			{
				Name:      "test",
				Usage:     "run YAML case files against a policy; exit 1 on any failure",
				ArgsUsage: "DIR",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "policy", Value: "default", Usage: "policy `FILE` or embedded name"},
					&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "print every case, not only failures"},
				},
				Action: runPolicyTest,
			},
			{
				Name:      "show",
				Usage:     "print an embedded policy's YAML",
				ArgsUsage: "[NAME]",
				Action: func(c *cli.Context) error {
					name := c.Args().First()
					if name == "" {
						name = "default"
					}
					src, err := policy.EmbeddedSource(name)
					if err != nil {
						return exitf(2, "%v", err)
					}
					_, err = c.App.Writer.Write(src)
					return err
				},
			},
			{
				Name:  "list",
				Usage: "list the embedded policies",
				Action: func(c *cli.Context) error {
					for _, name := range policy.EmbeddedNames() {
						p, err := policy.Embedded(name)
						if err != nil {
							return exitf(1, "embedded policy %s: %v", name, err)
						}
						fmt.Fprintf(c.App.Writer, "%-12s %3d rules  %s\n", name, p.RuleCount(), p.Version)
					}
					return nil
				},
			},
		},
	}
}

func runPolicyCheck(c *cli.Context) error {
	if c.NArg() == 0 {
		return exitf(2, "policy check: give at least one policy FILE")
	}
	failed := false
	for _, file := range c.Args().Slice() {
		p, err := policy.LoadFile(file)
		if err == nil {
			// Tier 1 settings are validated where they are compiled.
			_, err = pipeline.New(pipeline.Config{Policy: p, CacheSize: -1})
		}
		if err != nil {
			failed = true
			var le *policy.LoadError
			if errors.As(err, &le) {
				for _, pr := range le.Problems {
					fmt.Fprintln(c.App.Writer, pr.String())
				}
				continue
			}
			fmt.Fprintf(c.App.Writer, "%s: %v\n", file, err)
			continue
		}
		fmt.Fprintf(c.App.Writer, "%s: ok (%s, %d rules, %s)\n", file, p.Name, p.RuleCount(), p.Version)
	}
	if failed {
		return exitf(1, "")
	}
	return nil
}

func runPolicyTest(c *cli.Context) error {
	if c.NArg() != 1 {
		return exitf(2, "policy test: give one DIR of case files")
	}
	p, err := localPipeline(c.String("policy"))
	if err != nil {
		return exitf(2, "%v", err)
	}
	cases, err := policytest.LoadDir(c.Args().First())
	if err != nil {
		return exitf(2, "%v", err)
	}
	if len(cases) == 0 {
		return exitf(2, "policy test: no cases found in %s", c.Args().First())
	}
	report := policytest.Run(c.Context, cases, Evaluator(p))
	report.Print(c.App.Writer, c.Bool("verbose"))
	if report.Failed() > 0 {
		return exitf(1, "")
	}
	return nil
}
