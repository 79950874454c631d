package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

func approveCommand() *cli.Command { return resolveCommand(true) }
func denyCommand() *cli.Command    { return resolveCommand(false) }

// resolveCommand is approve (approved) or deny: one ResolveApproval call.
func resolveCommand(approved bool) *cli.Command {
	name, verb, past := "deny", "deny", "denied"
	if approved {
		name, verb, past = "approve", "allow", "approved"
	}
	return &cli.Command{
		Name:      name,
		Usage:     verb + " an escalated action that waits for a human",
		ArgsUsage: "APPROVAL_ID",
		Description: fmt.Sprintf(`The id is in the APPROVAL_NEEDED event (agentctl send prints it, and with
--output json it is the approval line's approval_id). The first answer from
any client wins. Exit codes: 0 %s; 5 no such pending approval (unknown,
already answered, timed out or cancelled); 1 engine unreachable; 2 usage.

Example:
   agentctl %s appr_0123456789abcdef`, past, name),
		Flags: clientFlags(sessionFlag("the approval's session `ID` (optional: the answer counts only for that session)")),
		Action: func(c *cli.Context) error {
			if err := flagAfterArgs(c); err != nil {
				return err
			}
			if c.NArg() != 1 || strings.TrimSpace(c.Args().First()) == "" {
				return exitcode.Usagef("agentctl %s needs exactly one approval id, e.g. agentctl %s appr_0123456789abcdef", name, name)
			}
			id := c.Args().First()
			conn, err := connectEngine(c)
			if err != nil {
				return err
			}
			defer conn.close()
			if err := resolveApproval(c.Context, conn, id, c.String("session"), approved); err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "%s %s\n", past, id)
			return nil
		},
	}
}

// resolveApproval answers one approval; NotFound becomes exit 5 with a
// message that says what it means.
func resolveApproval(ctx context.Context, conn *engineConn, id, session string, approved bool) error {
	ctx, cancel := context.WithTimeout(asCLI(ctx), unaryTimeout)
	defer cancel()
	_, err := conn.ResolveApproval(ctx, &pb.ApprovalResponse{ApprovalId: id, SessionId: session, Approved: approved})
	if err != nil {
		if isNotFound(err) {
			return exitcode.Errorf(exitcode.NotFound, "no pending approval %q: it is unknown, was already answered (perhaps by another client), or timed out", oneLine(id, 80))
		}
		return conn.callError("resolve approval", err)
	}
	return nil
}
