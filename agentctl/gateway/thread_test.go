package gateway_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/agentctl/gateway"
	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/engine/doors/doorstest"
	"github.com/parapet-dev/parapet/engine/tools"
	"github.com/parapet-dev/parapet/llm"
	gwpb "github.com/parapet-dev/parapet/proto/parallax/gateway"
)

// threadPlane is a control plane that acks each agent it accepts, can
// refuse reconnects (a ServerAck with accepted false), and records every
// thread event it receives, on any stream, per thread.
type threadPlane struct {
	controlPlane
	refuse  atomic.Bool
	refused chan struct{}
	events  map[string][]*gwpb.ThreadEventReport
}

func (cp *threadPlane) Connect(stream gwpb.AgentGateway_ConnectServer) error {
	if cp.refuse.Load() {
		if _, err := stream.Recv(); err != nil {
			return err
		}
		_ = stream.Send(&gwpb.ControlPlaneToAgent{Payload: &gwpb.ControlPlaneToAgent_Ack{Ack: &gwpb.ServerAck{Accepted: false, Message: "not now"}}})
		select {
		case cp.refused <- struct{}{}:
		default:
		}
		return nil
	}
	if err := stream.Send(&gwpb.ControlPlaneToAgent{Payload: &gwpb.ControlPlaneToAgent_Ack{Ack: &gwpb.ServerAck{Accepted: true}}}); err != nil {
		return err
	}
	return cp.controlPlane.Connect(stream)
}

// next returns the next message ok accepts, recording every thread event
// read on the way.
func (cp *threadPlane) next(t *testing.T, s *cpStream, ok func(*gwpb.AgentToControlPlane) bool) *gwpb.AgentToControlPlane {
	t.Helper()
	return s.next(t, func(m *gwpb.AgentToControlPlane) bool {
		if ev := m.GetThreadEvent(); ev != nil {
			cp.events[ev.GetThreadId()] = append(cp.events[ev.GetThreadId()], ev)
		}
		return ok(m)
	})
}

// event waits for thread's next event of type typ and returns its data.
func (cp *threadPlane) event(t *testing.T, s *cpStream, thread, typ string) map[string]any {
	t.Helper()
	m := cp.next(t, s, func(m *gwpb.AgentToControlPlane) bool {
		return m.GetThreadEvent().GetThreadId() == thread && m.GetThreadEvent().GetEventType() == typ
	})
	var data map[string]any
	if err := json.Unmarshal([]byte(m.GetThreadEvent().GetDataJson()), &data); err != nil {
		t.Fatalf("%s %s: data_json %q: %v", thread, typ, m.GetThreadEvent().GetDataJson(), err)
	}
	return data
}

func (cp *threadPlane) status(t *testing.T, s *cpStream, thread, status string) *gwpb.ThreadStatusUpdate {
	t.Helper()
	return cp.next(t, s, func(m *gwpb.AgentToControlPlane) bool {
		return m.GetThreadStatusUpdate().GetThreadId() == thread && m.GetThreadStatusUpdate().GetStatus() == status
	}).GetThreadStatusUpdate()
}

func isSpawnResult(id string) func(*gwpb.AgentToControlPlane) bool {
	return func(m *gwpb.AgentToControlPlane) bool { return m.GetThreadSpawnResult().GetThreadId() == id }
}

func startThreads(t *testing.T, replies ...llm.Response) (*threadPlane, *doorstest.Engine, string) {
	t.Helper()
	var reg *tools.Registry
	eng := doorstest.Start(t, replies, func(c *engine.Config) { reg = c.Tools })
	cp := &threadPlane{controlPlane: controlPlane{newConn: make(chan *cpStream, 8)}, refused: make(chan struct{}, 1),
		events: map[string][]*gwpb.ThreadEventReport{}}
	conn := serveControlPlane(t, cp)
	threadsDir := t.TempDir()
	g, err := gateway.New(gateway.Config{Conn: conn, AgentID: "parapet-1", Heartbeat: 50 * time.Millisecond,
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Engine: eng.Engine, Tools: reg, ThreadsDir: threadsDir,
		CloneFrom: []string{os.TempDir()}}) // where bareRepo's t.TempDir is
	runUntilCleanup(t, g, err)
	return cp, eng, threadsDir
}

// bareRepo makes a bare repository whose branch "feature" has feature.txt.
func bareRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bare, work := filepath.Join(dir, "repo.git"), filepath.Join(dir, "work")
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.invalid", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "--bare", bare)
	git("init", work)
	if err := os.WriteFile(filepath.Join(work, "feature.txt"), []byte("from the feature branch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("-C", work, "checkout", "-b", "feature")
	git("-C", work, "add", "feature.txt")
	git("-C", work, "commit", "-m", "feature")
	git("-C", work, "push", bare, "feature")
	return bare
}

func spawn(reqID, id, task, prep, policy string) *gwpb.ControlPlaneToAgent {
	return &gwpb.ControlPlaneToAgent{RequestId: reqID, Payload: &gwpb.ControlPlaneToAgent_ThreadSpawn{ThreadSpawn: &gwpb.ThreadSpawnRequest{
		ThreadId: id, AdapterType: gateway.AdapterParapet, Task: task, PreparationJson: prep, PolicyJson: policy}}}
}

func input(id, kind, text string) *gwpb.ControlPlaneToAgent {
	return &gwpb.ControlPlaneToAgent{Payload: &gwpb.ControlPlaneToAgent_ThreadInput{ThreadInput: &gwpb.ThreadInputRequest{ThreadId: id, InputType: kind, Input: text}}}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// Two threads against a control plane: spawn (clone, bootstrap, rules),
// text input, approvals through the control plane (denied: not run;
// approved: run), a dropped stream with events produced while the agent
// is refused (they arrive after, in order), key input refused, stops, and
// gapless per-thread sequences.
func TestGatewayThreads(t *testing.T) {
	pushCmd := func(file string) llm.ToolCall {
		return doorstest.Call("execute_command", `{"command":"touch `+file+` && git push --force origin main"}`)
	}
	cp, eng, threadsDir := startThreads(t,
		// th-a's task
		doorstest.LoadTools(), doorstest.Tools("", doorstest.Call("execute_command", `{"command":"echo a > a.txt"}`)), doorstest.Text("A done."),
		// th-b's first message: a command its policy does not grant
		doorstest.LoadTools(), doorstest.Tools("", doorstest.Call("execute_command", `{"command":"echo b > b.txt"}`)), doorstest.Text("B could not."),
		// th-a: an escalation the control plane denies, one it approves,
		// and one approved from another front-end while the stream is down
		doorstest.LoadTools(), doorstest.Tools("", pushCmd("denied.txt")), doorstest.Text("A was denied."),
		doorstest.LoadTools(), doorstest.Tools("", pushCmd("approved.txt")), doorstest.Text("A was approved."),
		doorstest.LoadTools(), doorstest.Tools("", pushCmd("offline.txt")), doorstest.Text("A ran offline."),
	)
	s := cp.accept(t)
	repo := bareRepo(t)

	// Spawns that fail: the request_id is echoed with the reason.
	s.out <- &gwpb.ControlPlaneToAgent{RequestId: "spawn-x", Payload: &gwpb.ControlPlaneToAgent_ThreadSpawn{ThreadSpawn: &gwpb.ThreadSpawnRequest{ThreadId: "th-x", AdapterType: "claude-code"}}}
	if r := cp.next(t, s, isSpawnResult("th-x")); r.GetRequestId() != "spawn-x" || r.GetThreadSpawnResult().GetSuccess() ||
		!strings.Contains(r.GetThreadSpawnResult().GetErrorMessage(), "adapters available: parapet") {
		t.Fatalf("unknown adapter: %v", r)
	}
	s.out <- spawn("spawn-y", "th-y", "x", "", `{"permissions":["root"]}`)
	if r := cp.next(t, s, isSpawnResult("th-y")); r.GetRequestId() != "spawn-y" || r.GetThreadSpawnResult().GetSuccess() ||
		!strings.Contains(r.GetThreadSpawnResult().GetErrorMessage(), `policy_json: permissions[0] "root"`) {
		t.Fatalf("bad policy: %v", r)
	}
	s.out <- spawn("spawn-z", "th-z", "x", `{"bootstrapFiles":{"../escape":"x"}}`, "")
	if r := cp.next(t, s, isSpawnResult("th-z")); r.GetThreadSpawnResult().GetSuccess() ||
		!strings.Contains(r.GetThreadSpawnResult().GetErrorMessage(), "preparation_json: bootstrapFiles") {
		t.Fatalf("bad preparation: %v", r)
	}

	// A local repository outside --clone-from: the clone would read it
	// with the engine's rights, unjudged.
	for i, repo := range []string{"/etc", "file:///root/.password-store", "file://" + os.TempDir() + "/../etc"} {
		id := fmt.Sprintf("th-local-%d", i)
		s.out <- spawn("spawn-local", id, "x", `{"workspace":{"repo":"`+repo+`"}}`, "")
		if r := cp.next(t, s, isSpawnResult(id)); r.GetThreadSpawnResult().GetSuccess() ||
			!strings.Contains(r.GetThreadSpawnResult().GetErrorMessage(), "--clone-from") {
			t.Fatalf("local repository %s: %v", repo, r)
		}
	}

	// th-a: cloned from the feature branch, a bootstrap file, its task.
	s.out <- spawn("spawn-a", "th-a", "make a.txt",
		`{"workspace":{"repo":"file://`+repo+`","branch":"feature"},"bootstrapFiles":{".parallax/thread-memory.md":"# Context\n"}}`,
		`{"approvalPreset":"supervised","permissions":["file_write","shell_exec","git_push"],"maxTurns":50}`)
	ra := cp.next(t, s, isSpawnResult("th-a"))
	wsA := ra.GetThreadSpawnResult().GetWorkspaceDir()
	if ra.GetRequestId() != "spawn-a" || !ra.GetThreadSpawnResult().GetSuccess() || ra.GetThreadSpawnResult().GetAdapterType() != "parapet" ||
		!strings.HasPrefix(wsA, threadsDir) {
		t.Fatalf("spawn th-a: %v", ra)
	}
	if !exists(filepath.Join(wsA, "feature.txt")) || !exists(filepath.Join(wsA, ".parallax", "thread-memory.md")) {
		t.Fatal("th-a's workspace lacks the clone or the bootstrap file")
	}
	if tu := cp.event(t, s, "th-a", gateway.EventToolUse); tu["verdict"].(map[string]any)["decision"] != "ALLOW" {
		t.Fatalf("th-a tool_use %v", tu)
	}
	if out := cp.event(t, s, "th-a", gateway.EventOutput); out["success"] != true {
		t.Fatalf("th-a output %v", out)
	}
	cp.event(t, s, "th-a", gateway.EventTurnComplete)
	ready := cp.event(t, s, "th-a", gateway.EventPromptReady)
	sessionA, _ := ready["session_id"].(string)
	if !exists(filepath.Join(wsA, "a.txt")) || exists(filepath.Join(eng.Workspace, "a.txt")) {
		t.Fatal("th-a's command did not run in th-a's workspace")
	}

	// th-b: no task, no repository, no shell.
	s.out <- spawn("spawn-b", "th-b", "", "", `{"permissions":["file_write"]}`)
	rb := cp.next(t, s, isSpawnResult("th-b"))
	wsB := rb.GetThreadSpawnResult().GetWorkspaceDir()
	if rb.GetRequestId() != "spawn-b" || !rb.GetThreadSpawnResult().GetSuccess() || wsB == wsA {
		t.Fatalf("spawn th-b: %v", rb)
	}
	cp.event(t, s, "th-b", gateway.EventPromptReady)
	s.out <- input("th-b", "text", "make b.txt")
	tu := cp.event(t, s, "th-b", gateway.EventToolUse)
	if v := tu["verdict"].(map[string]any); v["decision"] != "BLOCK" || !strings.Contains(v["rule_ids"].([]any)[0].(string), "thread.shell_exec") {
		t.Fatalf("th-b's command was not blocked by its policy: %v", tu)
	}
	cp.event(t, s, "th-b", gateway.EventPromptReady)
	if exists(filepath.Join(wsB, "b.txt")) {
		t.Fatal("a command th-b's policy does not grant ran")
	}
	s.out <- input("th-b", "key", "\x03")
	if r := cp.event(t, s, "th-b", gateway.EventInputRefused); !strings.Contains(r["reason"].(string), "keystrokes are not accepted") {
		t.Fatalf("key input: %v", r)
	}
	s.out <- input("th-b", "approval", "yes")
	if r := cp.event(t, s, "th-b", gateway.EventInputRefused); !strings.Contains(r["reason"].(string), "no escalation is waiting") {
		t.Fatalf("approval without an escalation: %v", r)
	}

	// th-a: escalations answered by the control plane.
	s.out <- input("th-a", "text", "push it")
	cp.event(t, s, "th-a", gateway.EventBlocked)
	s.out <- input("th-a", "approval", "no")
	if r := cp.event(t, s, "th-a", gateway.EventApprovalResolved); r["approved"] != false || r["resolved_by"] != gateway.ApprovedBy {
		t.Fatalf("denied: %v", r)
	}
	cp.event(t, s, "th-a", gateway.EventPromptReady)
	if exists(filepath.Join(wsA, "denied.txt")) {
		t.Fatal("a denied command ran")
	}
	s.out <- input("th-a", "text", "push it again")
	cp.status(t, s, "th-a", gateway.ThreadBlocked)
	s.out <- input("th-a", "approval", "YES")
	if r := cp.event(t, s, "th-a", gateway.EventApprovalResolved); r["approved"] != true {
		t.Fatalf("approved: %v", r)
	}
	cp.event(t, s, "th-a", gateway.EventPromptReady)
	if !exists(filepath.Join(wsA, "approved.txt")) {
		t.Fatal("an approved command did not run")
	}

	// Drop the stream while th-a waits for an approval; refuse the agent
	// until the approval, given from another front-end, has let th-a's
	// turn finish: its events are produced while the agent is refused.
	s.out <- input("th-a", "text", "push it offline")
	blocked := cp.event(t, s, "th-a", gateway.EventBlocked)
	cp.refuse.Store(true)
	close(s.drop)
	<-cp.refused
	sub := eng.Subscribe(sessionA)
	if err := eng.ResolveApproval(blocked["approval_id"].(string), sessionA, true, "test"); err != nil {
		t.Fatal(err)
	}
	waitComplete(t, sub)
	sub.Close()
	cp.refuse.Store(false)
	s2 := cp.accept(t)
	if r := cp.event(t, s2, "th-a", gateway.EventApprovalResolved); r["approved"] != true || r["resolved_by"] != "test" {
		t.Fatalf("after the reconnect: %v", r)
	}
	cp.event(t, s2, "th-a", gateway.EventPromptReady)
	if !exists(filepath.Join(wsA, "offline.txt")) {
		t.Fatal("the command approved while the stream was down did not run")
	}

	// Stops: each answered with a status update completed, progress 1.0.
	s2.out <- &gwpb.ControlPlaneToAgent{Payload: &gwpb.ControlPlaneToAgent_ThreadStop{ThreadStop: &gwpb.ThreadStopRequest{ThreadId: "th-a", Reason: "done"}}}
	if st := cp.status(t, s2, "th-a", gateway.ThreadCompleted); st.GetProgress() != 1.0 || !strings.Contains(st.GetSummary(), "done") {
		t.Fatalf("stop th-a: %v", st)
	}
	s2.out <- &gwpb.ControlPlaneToAgent{Payload: &gwpb.ControlPlaneToAgent_ThreadStop{ThreadStop: &gwpb.ThreadStopRequest{ThreadId: "th-b", Force: true}}}
	if st := cp.status(t, s2, "th-b", gateway.ThreadCompleted); st.GetProgress() != 1.0 {
		t.Fatalf("stop th-b: %v", st)
	}

	// Every thread's events, across both streams: 1, 2, 3, ... with no
	// gap or repeat, ending with completed.
	for _, id := range []string{"th-a", "th-b"} {
		evs := cp.events[id]
		for i, ev := range evs {
			if ev.GetSequence() != int32(i+1) {
				t.Fatalf("%s: event %d (%s) has sequence %d", id, i+1, ev.GetEventType(), ev.GetSequence())
			}
		}
		if last := evs[len(evs)-1]; last.GetEventType() != gateway.EventCompleted {
			t.Fatalf("%s: the last event is %s", id, last.GetEventType())
		}
	}
}

// waitComplete waits for the end of a turn in a subscription.
func waitComplete(t *testing.T, sub *engine.Subscription) {
	t.Helper()
	deadline := time.After(doorstest.Guard)
	for {
		select {
		case ev := <-sub.Events:
			if ev.GetResponseComplete() != nil {
				return
			}
		case <-deadline:
			t.Fatal("the turn did not complete")
		}
	}
}

// A thread completes at its maxTurns, fails at its timeout, and an
// autonomous thread's escalation is denied without waiting.
func TestGatewayThreadLimits(t *testing.T) {
	cp, _, _ := startThreads(t,
		doorstest.Text("one turn."),
		doorstest.LoadTools(), doorstest.Tools("", doorstest.Call("execute_command", `{"command":"touch x.txt && git push --force origin main"}`)), doorstest.Text("denied."),
	)
	s := cp.accept(t)
	s.out <- spawn("s-m", "th-m", "do one thing", "", `{"maxTurns":1}`)
	if r := cp.next(t, s, isSpawnResult("th-m")); !r.GetThreadSpawnResult().GetSuccess() {
		t.Fatalf("spawn: %v", r)
	}
	if c := cp.event(t, s, "th-m", gateway.EventCompleted); !strings.Contains(c["reason"].(string), "maxTurns") {
		t.Fatalf("maxTurns: %v", c)
	}
	s.out <- spawn("s-t", "th-t", "", "", `{"timeout":1}`)
	if f := cp.event(t, s, "th-t", gateway.EventFailed); !strings.Contains(f["reason"].(string), "timeout") {
		t.Fatalf("timeout: %v", f)
	}
	cp.status(t, s, "th-t", gateway.ThreadFailed)
	s.out <- spawn("s-auto", "th-auto", "push", "", `{"approvalPreset":"autonomous","permissions":["shell_exec","file_write","git_push"]}`)
	r := cp.event(t, s, "th-auto", gateway.EventApprovalResolved)
	if r["approved"] != false || r["resolved_by"] != "gateway:autonomous" {
		t.Fatalf("autonomous: %v", r)
	}
	cp.event(t, s, "th-auto", gateway.EventPromptReady)
	for _, ev := range cp.events["th-auto"] {
		if ev.GetEventType() == gateway.EventBlocked {
			t.Fatal("an autonomous thread reported a blocked escalation")
		}
	}
}
