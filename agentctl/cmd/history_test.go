package cmd

import (
	"bytes"
	"encoding/json"
	"flag"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// A history with tool calls, as the engine's store returns it, printed
// both ways.
func TestHistoryOutput(t *testing.T) {
	res := &pb.GetHistoryResponse{Total: 3, Messages: []*pb.HistoryMessage{
		{Id: "m1", Role: "user", Content: "write notes.txt", CreatedAt: 1_700_000_000},
		{Id: "m2", Role: "assistant", Content: "Done.\n\x1b[2JCleared?", CreatedAt: 1_700_000_010, ToolCalls: []*pb.HistoryToolCall{{
			CallId: "call_1", ToolName: "write_file", ArgumentsJson: `{"path":"notes.txt"}`, Output: "created notes.txt",
			Approval: "approved", Verdict: &pb.Verdict{Decision: pb.VerdictDecision_VERDICT_DECISION_ESCALATE, Tier: 0,
				RuleIds: []string{"test.write"}, Reasoning: "writes need a person"},
		}, {
			CallId: "call_2", ToolName: "execute_command", ArgumentsJson: `not json`, Output: "blocked", IsError: true,
		}}},
	}}
	var out bytes.Buffer
	app := &cli.App{Writer: &out}
	c := cli.NewContext(app, flag.NewFlagSet("history", flag.ContinueOnError), nil)
	printHistory(c, "sess_1", 0, res)
	text := out.String()
	if !inOrder(text, "user", "write notes.txt", "assistant", "→ write_file", "[shield ESCALATE, tier 0, test.write]", "[approval approved]",
		"ok: created notes.txt", "→ execute_command not json", "error: blocked", "Done.", "Cleared?", "(messages 1–2 of 3; next: --offset 2)") {
		t.Errorf("text history:\n%s", text)
	}
	if strings.Contains(text, "\x1b") {
		t.Errorf("control characters in the history: %q", text)
	}

	b, err := json.Marshal(historyJSON("sess_1", 0, res))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		SessionID string `json:"session_id"`
		Total     int
		Messages  []struct {
			Role      string
			ToolCalls []map[string]any `json:"tool_calls"`
		}
	}
	if err := json.Unmarshal(b, &got); err != nil || got.SessionID != "sess_1" || got.Total != 3 || len(got.Messages) != 2 {
		t.Fatalf("history JSON %s (%v)", b, err)
	}
	calls := got.Messages[1].ToolCalls
	if len(calls) != 2 || calls[0]["decision"] != "ESCALATE" || calls[0]["approval"] != "approved" ||
		calls[0]["arguments"].(map[string]any)["path"] != "notes.txt" || calls[1]["arguments"] != "not json" ||
		calls[1]["is_error"] != true || calls[1]["decision"] != nil {
		t.Errorf("tool calls %v", calls)
	}
	if got.Messages[0].ToolCalls == nil {
		t.Error("tool_calls is null rather than [] for a message without calls")
	}
}
