package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

func historyCommand() *cli.Command {
	return &cli.Command{
		Name:      "history",
		Usage:     "show a session's messages, oldest first",
		ArgsUsage: "SESSION_ID",
		Description: `Text: each message with its role and time, and the tool calls it made
(verdict, approval, result). JSON: one object {"session_id", "total",
"offset", "messages": [...]} (see agentctl/README.md). Exit code 5: no such
session.

Examples:
   agentctl history sess_0123456789abcdef
   agentctl history --limit 10 --offset 20 sess_0123456789abcdef
   agentctl history --output json sess_0123456789abcdef | jq -r '.messages[].content'`,
		Flags: clientFlags(append(pageFlags(50), outputFlag())...),
		Action: func(c *cli.Context) error {
			if err := flagAfterArgs(c); err != nil {
				return err
			}
			if c.NArg() != 1 || strings.TrimSpace(c.Args().First()) == "" {
				return exitcode.Usagef("agentctl history needs exactly one session id (agentctl sessions lists them)")
			}
			id := c.Args().First()
			jsonOut, err := outputMode(c)
			if err != nil {
				return err
			}
			limit, offset, err := pageArgs(c)
			if err != nil {
				return err
			}
			var res *pb.GetHistoryResponse
			err = callFoundEngine(c, "history", func(ctx context.Context, conn *engineConn) (err error) {
				res, err = conn.GetHistory(ctx, &pb.GetHistoryRequest{SessionId: id, Limit: limit, Offset: offset})
				if isNotFound(err) {
					return exitcode.Errorf(exitcode.NotFound, "no session %q (agentctl sessions lists them)", oneLine(id, 80))
				}
				return err
			})
			if err != nil {
				return err
			}
			if jsonOut {
				return printJSON(c.App.Writer, historyJSON(id, offset, res))
			}
			printHistory(c, id, offset, res)
			return nil
		},
	}
}

func historyJSON(id string, offset int32, res *pb.GetHistoryResponse) map[string]any {
	msgs := make([]map[string]any, 0, len(res.GetMessages()))
	for _, m := range res.GetMessages() {
		calls := make([]map[string]any, 0, len(m.GetToolCalls()))
		for _, tc := range m.GetToolCalls() {
			var args any
			if json.Unmarshal([]byte(tc.GetArgumentsJson()), &args) != nil {
				args = tc.GetArgumentsJson() // not JSON: as the model sent it
			}
			call := map[string]any{"call_id": tc.GetCallId(), "tool": tc.GetToolName(), "arguments": args,
				"output": tc.GetOutput(), "is_error": tc.GetIsError(), "approval": tc.GetApproval()}
			if v := tc.GetVerdict(); v != nil {
				call["decision"] = v.GetDecision().Label()
				call["tier"] = v.GetTier()
				call["rule_ids"] = nonNil(v.GetRuleIds())
				call["reason"] = v.GetReasoning()
			}
			calls = append(calls, call)
		}
		msgs = append(msgs, map[string]any{"id": m.GetId(), "role": m.GetRole(), "content": m.GetContent(),
			"created_at": m.GetCreatedAt(), "tool_calls": calls})
	}
	return map[string]any{"session_id": id, "total": res.GetTotal(), "offset": offset, "messages": msgs}
}

func printHistory(c *cli.Context, id string, offset int32, res *pb.GetHistoryResponse) {
	w := c.App.Writer
	if len(res.GetMessages()) == 0 {
		if res.GetTotal() == 0 {
			fmt.Fprintf(w, "session %s has no messages\n", oneLine(id, 80))
		} else {
			fmt.Fprintf(w, "no messages at offset %d (%d in all)\n", offset, res.GetTotal())
		}
		return
	}
	for i, m := range res.GetMessages() {
		if i > 0 {
			fmt.Fprintln(w)
		}
		when := ""
		if m.GetCreatedAt() > 0 {
			when = " · " + unixTime(m.GetCreatedAt())
		}
		fmt.Fprintf(w, "%s%s\n", oneLine(m.GetRole(), 20), when)
		for _, tc := range m.GetToolCalls() {
			line := fmt.Sprintf("  → %s %s", oneLine(tc.GetToolName(), 60), oneLine(tc.GetArgumentsJson(), 200))
			if v := tc.GetVerdict(); v != nil {
				line += fmt.Sprintf("  [shield %s, tier %d%s]", v.GetDecision().Label(), v.GetTier(), rulesSuffix(v.GetRuleIds()))
			}
			if tc.GetApproval() != "" {
				line += " [approval " + oneLine(tc.GetApproval(), 40) + "]"
			}
			fmt.Fprintln(w, line)
			mark := "ok"
			if tc.GetIsError() {
				mark = "error"
			}
			if out := strings.TrimSpace(tc.GetOutput()); out != "" || tc.GetIsError() {
				fmt.Fprintf(w, "    %s: %s\n", mark, oneLine(out, 200))
			}
		}
		if content := strings.TrimRight(termSafe(m.GetContent()), "\n"); content != "" {
			fmt.Fprintf(w, "  %s\n", strings.ReplaceAll(content, "\n", "\n  "))
		}
	}
	pageFooter(c, "messages", offset, len(res.GetMessages()), res.GetTotal())
}
