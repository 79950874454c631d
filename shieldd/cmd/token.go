package cmd

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/parapet-dev/parapet/shieldd/auth"
)

// hmacKeyEnv holds the shared HMAC key itself when no key file is given.
const hmacKeyEnv = "SHIELDD_AUTH_HMAC_KEY"

func tokenCommand() *cli.Command {
	keyFlag := &cli.StringFlag{Name: "key-file", Usage: "`FILE` holding the shared HMAC key (default: $" + hmacKeyEnv + ")", EnvVars: []string{"SHIELDD_AUTH_HMAC_KEY_FILE"}}
	return &cli.Command{
		Name:  "token",
		Usage: "mint and check HMAC bearer tokens (--auth hmac)",
		Subcommands: []*cli.Command{
			{
				Name:  "mint",
				Usage: "print a token for a user and workspace, valid for 5 minutes either side of its time",
				Flags: []cli.Flag{
					keyFlag,
					&cli.StringFlag{Name: "user", Required: true},
					&cli.StringFlag{Name: "workspace", Required: true},
					&cli.Int64Flag{Name: "time", Usage: "token time in unix `SECONDS` (default now)"},
				},
				Action: func(c *cli.Context) error {
					key, err := auth.LoadHMACKey(c.String("key-file"), hmacKeyEnv)
					if err != nil {
						return exitf(2, "%v", err)
					}
					t := time.Now()
					if c.IsSet("time") {
						t = time.Unix(c.Int64("time"), 0)
					}
					tok, err := auth.Mint(key, c.String("user"), c.String("workspace"), t)
					if err != nil {
						return exitf(2, "token mint: %v", err)
					}
					fmt.Fprintln(c.App.Writer, tok)
					return nil
				},
			},
			{
				Name:      "verify",
				Usage:     "check a token against the key; prints its user and workspace, exit 1 if it is not valid now",
				ArgsUsage: "TOKEN",
				Flags:     []cli.Flag{keyFlag},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return exitf(2, "token verify: give one TOKEN")
					}
					key, err := auth.LoadHMACKey(c.String("key-file"), hmacKeyEnv)
					if err != nil {
						return exitf(2, "%v", err)
					}
					h, err := auth.NewHMAC(key)
					if err != nil {
						return exitf(2, "%v", err)
					}
					user, ws, err := h.Verify(c.Args().First())
					if err != nil {
						return exitf(1, "token is not valid: %v", err)
					}
					fmt.Fprintf(c.App.Writer, "valid: user %s, workspace %s\n", user, ws)
					return nil
				},
			},
		},
	}
}
