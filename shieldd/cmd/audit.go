package cmd

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/parapet-dev/parapet/shieldd/audit"
)

func auditCommand() *cli.Command {
	return &cli.Command{
		Name:  "audit",
		Usage: "work with the audit log",
		Subcommands: []*cli.Command{{
			Name:  "verify",
			Usage: "check the hash chain of audit files given in chain order; names the first broken line, exit 1",
			Description: "Give rotated files oldest first, then the active file:\n" +
				"  shieldd audit verify /var/lib/shieldd/audit-*.jsonl /var/lib/shieldd/audit.jsonl\n" +
				"Prints the number of entries and the head hash; keep the head elsewhere to detect\n" +
				"entries cut from the end of the log.",
			ArgsUsage: "FILE...",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "from", Usage: "start the chain at this `HASH` (the head of older, removed files) instead of the genesis value"},
			},
			Action: runAuditVerify,
		}},
	}
}

func runAuditVerify(c *cli.Context) error {
	if c.NArg() == 0 {
		return exitf(2, "audit verify: give the audit FILEs in chain order")
	}
	res, err := audit.Verify(c.Args().Slice(), c.String("from"))
	var ve *audit.VerifyError
	if errors.As(err, &ve) {
		fmt.Fprintf(c.App.Writer, "%s\nBROKEN: %d entries verified before it\n", ve, res.Entries)
		return exitf(1, "")
	}
	if err != nil {
		return exitf(2, "audit verify: %v", err)
	}
	if res.TornBytes > 0 {
		fmt.Fprintf(c.App.Writer, "warning: %s ends in %d bytes of an interrupted write (not part of the chain; shieldd removes them on start)\n",
			res.TornFile, res.TornBytes)
	}
	fmt.Fprintf(c.App.Writer, "OK: %d entries, head %s\n", res.Entries, res.Head)
	return nil
}
