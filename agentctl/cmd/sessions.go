package cmd

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

func sessionsCommand() *cli.Command {
	return &cli.Command{
		Name:  "sessions",
		Usage: "list the engine's sessions, most recently updated first",
		Description: `Text: a table of id, mode, messages, last update and title (the first
message, shortened). JSON: one object {"total", "offset", "sessions": [...]}
(see agentctl/README.md).

Examples:
   agentctl sessions
   agentctl sessions --limit 5 --offset 5
   agentctl sessions --output json | jq -r '.sessions[0].id'`,
		Flags: clientFlags(append(pageFlags(20), outputFlag())...),
		Action: func(c *cli.Context) error {
			jsonOut, err := outputMode(c)
			if err != nil {
				return err
			}
			limit, offset, err := pageArgs(c)
			if err != nil {
				return err
			}
			var res *pb.ListSessionsResponse
			err = callFoundEngine(c, "list sessions", func(ctx context.Context, conn *engineConn) (err error) {
				res, err = conn.ListSessions(ctx, &pb.ListSessionsRequest{Limit: limit, Offset: offset})
				return err
			})
			if err != nil {
				return err
			}
			if jsonOut {
				list := make([]map[string]any, 0, len(res.GetSessions()))
				for _, s := range res.GetSessions() {
					list = append(list, map[string]any{"id": s.GetId(), "title": s.GetTitle(), "mode": modeName(s.GetMode()),
						"created_at": s.GetCreatedAt(), "updated_at": s.GetUpdatedAt(), "message_count": s.GetMessageCount()})
				}
				return printJSON(c.App.Writer, map[string]any{"total": res.GetTotal(), "offset": offset, "sessions": list})
			}
			if len(res.GetSessions()) == 0 {
				if res.GetTotal() == 0 {
					fmt.Fprintln(c.App.Writer, "no sessions yet (start one with agentctl chat or agentctl send)")
				} else {
					fmt.Fprintf(c.App.Writer, "no sessions at offset %d (%d in all)\n", offset, res.GetTotal())
				}
				return nil
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tMODE\tMESSAGES\tUPDATED\tTITLE")
			for _, s := range res.GetSessions() {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", oneLine(s.GetId(), 80), modeName(s.GetMode()), s.GetMessageCount(),
					unixTime(s.GetUpdatedAt()), oneLine(s.GetTitle(), 60))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			pageFooter(c, "sessions", offset, len(res.GetSessions()), res.GetTotal())
			return nil
		},
	}
}

// pageFooter says which rows were shown when there are more.
func pageFooter(c *cli.Context, what string, offset int32, shown int, total int32) {
	if shown == 0 || int(offset)+shown >= int(total) && offset == 0 {
		return
	}
	fmt.Fprintf(c.App.Writer, "(%s %d–%d of %d", what, offset+1, int(offset)+shown, total)
	if next := int(offset) + shown; next < int(total) {
		fmt.Fprintf(c.App.Writer, "; next: --offset %d", next)
	}
	fmt.Fprintln(c.App.Writer, ")")
}
