package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/engine/doors/doorstest"
	"github.com/parapet-dev/parapet/engine/tools"
	"github.com/parapet-dev/parapet/llm"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/policy"
)

// A scoped session runs its tools in its own workspace, under its own
// rules as well as the shield's, for every message to it, and is refused
// once its scope ended; Act takes a call nobody proposed through the
// same gate.
func TestScopedSession(t *testing.T) {
	var reg *tools.Registry
	eng := doorstest.Start(t, []llm.Response{
		doorstest.LoadTools(),
		doorstest.Tools("", doorstest.Call("execute_command", `{"command":"echo hi > ran.txt"}`), doorstest.Call("write_file", `{"path":"forbidden/x.txt","content":"x"}`)),
		doorstest.Text("first"),
		doorstest.LoadTools(),
		doorstest.Tools("", doorstest.Call("execute_command", `{"command":"echo again > again.txt"}`)),
		doorstest.Text("second"),
	}, func(c *engine.Config) { reg = c.Tools })
	ws := t.TempDir()
	sreg, err := reg.ForWorkspace(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sreg.Close()
	rules, err := policy.Parse("scope rules", []byte("version: 1\nname: no-network\ndefaults: {no_match: allow, unknown_action: allow}\n"+
		"deny:\n  - id: no-forbidden\n    reason: not in forbidden/\n    match: {action: [write_file], path: [$WORKSPACE/forbidden/**]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	scope := &engine.Scope{Tools: sreg, Rules: rules}
	ctx := context.Background()

	content, _, ran, err := eng.Act(ctx, "scoped-1", scope, "write_file", `{"path":"boot/notes.md","content":"hello"}`)
	if err != nil || !ran {
		t.Fatalf("Act: %q ran=%v %v", content, ran, err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "boot", "notes.md")); err != nil || string(b) != "hello" {
		t.Fatalf("Act wrote %q %v", b, err)
	}

	run := func(m engine.Message) []*pb.PipelineEvent {
		t.Helper()
		turn, err := eng.Submit(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		var evs []*pb.PipelineEvent
		for ev := range turn.Events {
			evs = append(evs, ev)
		}
		return evs
	}
	evs := run(engine.Message{SessionID: "scoped-1", CreateNamed: true, Content: "go", Scope: scope})
	if !exists(t, filepath.Join(ws, "ran.txt")) || exists(t, filepath.Join(eng.Workspace, "ran.txt")) {
		t.Fatal("the scoped command did not run in the scope's workspace")
	}
	var writeVerdict *pb.Verdict
	for _, ev := range evs {
		if sv := ev.GetShieldVerdict(); sv.GetToolName() == "write_file" {
			writeVerdict = sv.GetVerdict()
		}
	}
	if writeVerdict.GetDecision() != pb.VerdictDecision_VERDICT_DECISION_BLOCK || writeVerdict.GetRuleIds()[0] != "no-forbidden" ||
		!strings.Contains(writeVerdict.GetReasoning(), "not in forbidden/") {
		t.Fatalf("the scope's rule did not decide: %v", writeVerdict)
	}
	if exists(t, filepath.Join(ws, "forbidden", "x.txt")) {
		t.Fatal("a write the scope's rules deny ran")
	}
	// A message without a scope still runs in the session's.
	run(engine.Message{SessionID: "scoped-1", Content: "again"})
	if !exists(t, filepath.Join(ws, "again.txt")) {
		t.Fatal("a later message to the session left its scope")
	}
	if _, err := eng.Submit(ctx, engine.Message{SessionID: "scoped-1", Content: "x", Scope: &engine.Scope{Tools: reg}}); err == nil {
		t.Fatal("a session took a second scope")
	}
	eng.ForgetScope("scoped-1")
	if _, err := eng.Submit(ctx, engine.Message{SessionID: "scoped-1", Content: "x"}); err == nil || !strings.Contains(err.Error(), "SESSION_NOT_FOUND") {
		t.Fatalf("a message to an ended scope: %v", err)
	}
}
