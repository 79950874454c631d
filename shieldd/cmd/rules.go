package cmd

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/parapet-dev/parapet/rules/heuristics"
)

func rulesCommand() *cli.Command {
	return &cli.Command{
		Name:  "rules",
		Usage: "list the Tier 1 heuristic rules (ids usable in a policy's heuristics.disable / override)",
		Action: func(c *cli.Context) error {
			for _, r := range heuristics.Catalogue() {
				fmt.Fprintf(c.App.Writer, "%-40s %-24s %-9s %-8s %s\n", r.ID, r.Category,
					r.Outcome.Label(),
					r.Severity.Label(), r.Description)
			}
			return nil
		},
	}
}
