package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"crypto/rand"
	"encoding/hex"

	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/engine/doors"
	"github.com/parapet-dev/parapet/engine/tools"
	"github.com/parapet-dev/parapet/internal/textcut"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	gwpb "github.com/parapet-dev/parapet/proto/parallax/gateway"
	"github.com/parapet-dev/parapet/rules/policy"
)

// AdapterParapet is the one thread adapter: a Parapet session.
const AdapterParapet = "parapet"

// Thread event types (ThreadEventReport.event_type).
const (
	EventOutput           = "output"
	EventToolUse          = "tool_use"
	EventBlocked          = "blocked"
	EventApprovalResolved = "approval_resolved"
	EventPromptReady      = "prompt_ready"
	EventTurnComplete     = "turn_complete"
	EventCompleted        = "completed"
	EventFailed           = "failed"
	EventInputRefused     = "input_refused"
)

// Thread statuses (ThreadStatusUpdate.status).
const (
	ThreadRunning     = "running"
	ThreadBlocked     = "blocked"
	ThreadPromptReady = "prompt_ready"
	ThreadCompleted   = "completed"
	ThreadFailed      = "failed"
)

const (
	// maxEventText bounds a text field of a thread event.
	maxEventText = 16 << 10
	// maxInbox bounds the follow-up messages waiting for a thread's turn.
	maxInbox = 16
	// ApprovedBy names the control plane as the answerer of an escalation.
	ApprovedBy = "gateway:control-plane"
)

var errStopped = errors.New("stopped by the control plane")

// thread is one spawned Parapet session: its own workspace, tool
// registry and rules (an engine.Scope), turns run through the engine one
// at a time, and its events numbered in the order they are queued.
type thread struct {
	g         *Gateway
	id        string
	sessionID string
	workspace string
	pol       ThreadPolicy
	scope     *engine.Scope
	ctx       context.Context
	cancel    context.CancelCauseFunc
	inbox     chan string

	mu       sync.Mutex
	seq      int32
	ended    bool
	pending  string // the approval the thread waits for
	running  int    // tool calls executing
	stopping bool   // stop once the running tool call is done
	turns    int
}

func (g *Gateway) thread(id string) *thread {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.threads[id]
}

// spawn answers a ThreadSpawnRequest under its request_id.
func (g *Gateway) spawn(reqID string, req *gwpb.ThreadSpawnRequest) {
	id := req.GetThreadId()
	fail := func(msg string) {
		g.send(&gwpb.AgentToControlPlane{RequestId: reqID, Payload: &gwpb.AgentToControlPlane_ThreadSpawnResult{
			ThreadSpawnResult: &gwpb.ThreadSpawnResult{ThreadId: id, AdapterType: req.GetAdapterType(), ErrorMessage: msg}}})
	}
	switch {
	case req.GetAdapterType() != AdapterParapet:
		fail(fmt.Sprintf("adapter %q is not available; adapters available: %s", textcut.Truncate(req.GetAdapterType(), 80), AdapterParapet))
		return
	case id == "" || len(id) > 256 || !utf8.ValidString(id):
		fail("thread_id is required: up to 256 bytes of UTF-8")
		return
	case !utf8.ValidString(req.GetTask()):
		fail("task is not valid UTF-8")
		return
	case g.cfg.Tools == nil || g.cfg.ThreadsDir == "":
		fail("this agent is not set up for threads (no threads directory)")
		return
	}
	prep, err := ParsePreparation(req.GetPreparationJson())
	if err == nil {
		err = g.checkLocalRepo(prep.Repo)
	}
	if err != nil {
		fail(err.Error())
		return
	}
	pol, err := ParsePolicy(req.GetPolicyJson())
	if err != nil {
		fail(err.Error())
		return
	}
	rules, err := pol.Rules("thread " + textcut.Truncate(id, 80))
	if err != nil {
		fail("policy_json: " + err.Error())
		return
	}
	g.mu.Lock()
	_, dup := g.threads[id]
	if !dup {
		g.threads[id] = nil // reserved while it starts
	}
	runCtx := g.runCtx
	g.mu.Unlock()
	if dup {
		fail(fmt.Sprintf("thread %q already exists", textcut.Truncate(id, 80)))
		return
	}
	t, err := g.startThread(runCtx, id, req, prep, pol, rules)
	g.mu.Lock()
	if err != nil {
		delete(g.threads, id)
	} else {
		g.threads[id] = t
	}
	g.mu.Unlock()
	if err != nil {
		fail(err.Error())
		return
	}
	g.send(&gwpb.AgentToControlPlane{RequestId: reqID, Payload: &gwpb.AgentToControlPlane_ThreadSpawnResult{
		ThreadSpawnResult: &gwpb.ThreadSpawnResult{ThreadId: id, Success: true, AdapterType: AdapterParapet, WorkspaceDir: t.workspace}}})
	go t.run(req.GetTask())
}

// checkLocalRepo refuses a local repository outside Config.CloneFrom
// (symbolic links resolved on both sides).
func (g *Gateway) checkLocalRepo(repo string) error {
	path, local, err := tools.LocalRepository(repo)
	if !local {
		return nil
	}
	if err != nil {
		return fmt.Errorf("preparation_json: workspace.repo: %v", err)
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	for _, dir := range g.cfg.CloneFrom {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		if rel, err := filepath.Rel(dir, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return nil
		}
	}
	return fmt.Errorf("preparation_json: workspace.repo %q is a local repository outside the directories this agent clones from (agentctl gateway --clone-from DIR)", textcut.Truncate(repo, 200))
}

// startThread makes the thread's workspace (cloned from the repository
// when one is given), its scope, and writes its bootstrap files through
// the gate.
func (g *Gateway) startThread(runCtx context.Context, id string, req *gwpb.ThreadSpawnRequest, prep Preparation, pol ThreadPolicy, rules *policy.Policy) (t *thread, err error) {
	ws, err := os.MkdirTemp(g.cfg.ThreadsDir, "thread-")
	if err != nil {
		return nil, fmt.Errorf("could not make the thread's workspace: %v", err)
	}
	var env []string
	if pol.Grants("environment") {
		for _, k := range sortedKeys(prep.Environment) {
			env = append(env, k+"="+prep.Environment[k])
		}
	}
	reg, err := g.cfg.Tools.ForWorkspace(ws, env)
	if err != nil {
		os.RemoveAll(ws)
		return nil, fmt.Errorf("could not set up the thread's tools: %v", err)
	}
	// The thread outlives the stream it came on; the gateway stopping
	// stops it, and so does its timeout.
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(runCtx))
	stopWithRun := context.AfterFunc(runCtx, func() { cancel(errors.New("the gateway is stopping")) })
	timeout := pol.Timeout
	if ms := req.GetTimeoutMs(); ms > 0 && (timeout == 0 || time.Duration(ms)*time.Millisecond < timeout) {
		timeout = time.Duration(ms) * time.Millisecond
	}
	if timeout > 0 {
		var stopTimer context.CancelFunc
		ctx, stopTimer = context.WithTimeoutCause(ctx, timeout, fmt.Errorf("the thread's timeout (%s) passed", timeout))
		context.AfterFunc(ctx, stopTimer)
	}
	defer func() {
		if err != nil {
			stopWithRun()
			cancel(err)
			reg.Close()
			os.RemoveAll(ws)
		}
	}()
	if prep.Repo != "" {
		if res := reg.Clone(ctx, prep.Repo, prep.Branch); res.IsError {
			return nil, fmt.Errorf("preparation_json: workspace.repo: the clone failed: %s", textcut.Truncate(res.Output, 2000))
		}
	}
	t = &thread{g: g, id: id, sessionID: "thread_" + newID(), workspace: reg.Workspace(), pol: pol,
		scope: &engine.Scope{Tools: reg, Rules: rules}, ctx: ctx, cancel: cancel, inbox: make(chan string, maxInbox)}
	if err := t.bootstrap(prep.BootstrapFiles); err != nil {
		return nil, err
	}
	return t, nil
}

// bootstrap writes the preparation's files through the gate, each judged
// by the shield (and the thread's rules) as a write_file. Nobody answers
// an escalation before the thread exists: it is denied, and the spawn
// fails naming the file.
func (t *thread) bootstrap(files map[string]string) error {
	if len(files) == 0 {
		return nil
	}
	sub := t.g.cfg.Engine.Subscribe(t.sessionID)
	defer sub.Close()
	go func() {
		for ev := range sub.Events {
			if n := ev.GetApprovalNeeded(); n != nil {
				_ = t.g.cfg.Engine.ResolveApproval(n.GetApprovalId(), t.sessionID, false, "gateway:bootstrap")
			}
		}
	}()
	for _, name := range sortedKeys(files) {
		args, _ := json.Marshal(map[string]string{"path": name, "content": files[name]})
		content, _, ran, err := t.g.cfg.Engine.Act(t.ctx, t.sessionID, t.scope, "write_file", string(args))
		if err != nil {
			return fmt.Errorf("preparation_json: bootstrapFiles %q: %v", name, err)
		}
		if !ran {
			return fmt.Errorf("preparation_json: bootstrapFiles %q was not written: %s", name, textcut.Truncate(content, 2000))
		}
	}
	return nil
}

// run is the thread's life: its task, then each follow-up message, one
// turn at a time, until it is stopped, fails, times out or reaches its
// turn limit.
func (t *thread) run(task string) {
	defer t.cleanup()
	if strings.TrimSpace(task) != "" {
		t.inbox <- task
	} else {
		t.promptReady("waiting for a task")
	}
	for {
		select {
		case <-t.ctx.Done():
			t.finishByCause()
			return
		case msg := <-t.inbox:
			if err := t.turn(msg); err != nil {
				if t.ctx.Err() != nil {
					t.finishByCause()
				} else {
					t.finish(EventFailed, ThreadFailed, err.Error())
				}
				return
			}
			if t.ctx.Err() != nil {
				t.finishByCause()
				return
			}
			t.mu.Lock()
			turns := t.turns
			t.mu.Unlock()
			if t.pol.MaxTurns > 0 && turns >= t.pol.MaxTurns {
				t.finish(EventCompleted, ThreadCompleted, fmt.Sprintf("reached its limit of %d turns (policy_json.maxTurns)", t.pol.MaxTurns))
				return
			}
		}
	}
}

func (t *thread) cleanup() {
	t.cancel(nil)
	t.g.cfg.Engine.ForgetScope(t.sessionID)
	_ = t.scope.Tools.Close()
	t.g.mu.Lock()
	if t.g.threads[t.id] == t {
		delete(t.g.threads, t.id)
	}
	t.g.mu.Unlock()
}

// finishByCause ends the thread for why its context ended.
func (t *thread) finishByCause() {
	cause := context.Cause(t.ctx)
	switch {
	case errors.Is(cause, errStopped):
		t.finish(EventCompleted, ThreadCompleted, cause.Error())
	case cause != nil:
		t.finish(EventFailed, ThreadFailed, cause.Error())
	default:
		t.finish(EventCompleted, ThreadCompleted, "ended")
	}
}

// finish sends the thread's last event and status, once.
func (t *thread) finish(event, status, why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return
	}
	t.emitLocked(event, map[string]any{"reason": why, "session_id": t.sessionID, "turns": t.turns})
	t.statusLocked(status, why, 1.0)
	t.ended = true
}

// turn runs one message as an engine turn in the thread's session.
func (t *thread) turn(msg string) error {
	select {
	case t.g.slot <- struct{}{}:
	case <-t.ctx.Done():
		return context.Cause(t.ctx)
	}
	defer func() { <-t.g.slot }()
	t.status(ThreadRunning, "working on: "+textcut.Truncate(msg, 200), 0)
	var tr *engine.Turn
	for wait := 200 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		var err error
		tr, err = t.g.cfg.Engine.Submit(t.ctx, engine.Message{SessionID: t.sessionID, CreateNamed: true, Content: msg,
			Source: Frontend, Scope: t.scope})
		if err == nil {
			break
		}
		code, text := doors.Refusal(err)
		if !doors.Transient(code) {
			return fmt.Errorf("%s: %s", code, text)
		}
		select { // another front-end's turn, or the agent restarting
		case <-time.After(wait):
		case <-t.ctx.Done():
			return context.Cause(t.ctx)
		}
	}
	args := map[string]string{}
	started := map[string]bool{}
	var failure error
	for ev := range tr.Events {
		switch ev.GetEventType() {
		case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTIONS_PLANNED:
			for _, a := range ev.GetActionsPlanned().GetActions() {
				args[a.GetRequestId()] = a.GetPayloadJson()
			}
		case pb.PipelineEventType_PIPELINE_EVENT_TYPE_SHIELD_VERDICT:
			sv := ev.GetShieldVerdict()
			v := sv.GetVerdict()
			t.emit(EventToolUse, map[string]any{"call_id": sv.GetCallId(), "tool": sv.GetToolName(),
				"arguments": textcut.Truncate(args[sv.GetCallId()], maxEventText),
				"verdict":   map[string]any{"decision": v.GetDecision().Label(), "tier": v.GetTier(), "rule_ids": v.GetRuleIds(), "reason": v.GetReasoning()}})
		case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_STARTED:
			started[ev.GetActionStarted().GetCallId()] = true
			t.mu.Lock()
			t.running++
			t.mu.Unlock()
		case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_COMPLETED:
			c := ev.GetActionCompleted()
			t.mu.Lock()
			if started[c.GetCallId()] {
				t.running--
			}
			if t.stopping && t.running == 0 {
				t.cancel(errStopped) // a graceful stop: the tool call it waited for is done
			}
			t.mu.Unlock()
			out := c.GetResult().GetOutput()
			if out == "" {
				out = c.GetResult().GetError()
			}
			t.emit(EventOutput, map[string]any{"call_id": c.GetCallId(), "tool": c.GetToolName(),
				"success": c.GetResult().GetSuccess(), "output": textcut.Truncate(out, maxEventText)})
		case pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_NEEDED:
			n := ev.GetApprovalNeeded()
			if t.pol.ApprovalPreset == PresetAutonomous {
				_ = t.g.cfg.Engine.ResolveApproval(n.GetApprovalId(), t.sessionID, false, "gateway:autonomous")
				continue
			}
			t.mu.Lock()
			t.pending = n.GetApprovalId()
			t.emitLocked(EventBlocked, map[string]any{"approval_id": n.GetApprovalId(), "call_id": n.GetCallId(), "tool": n.GetToolName(),
				"arguments": textcut.Truncate(n.GetAction().GetPayloadJson(), maxEventText), "reason": n.GetShieldAssessment().GetReasoning(),
				"timeout_at": n.GetTimeoutAt(), "answer": `ThreadInputRequest{input_type: "approval", input: "yes" or "no"}`})
			t.statusLocked(ThreadBlocked, fmt.Sprintf("waiting for approval of %s: %s", n.GetToolName(), textcut.Truncate(n.GetShieldAssessment().GetReasoning(), 300)), 0)
			t.mu.Unlock()
		case pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_RESOLVED:
			r := ev.GetApprovalResolved()
			t.mu.Lock()
			if t.pending == r.GetApprovalId() {
				t.pending = ""
			}
			t.emitLocked(EventApprovalResolved, map[string]any{"approval_id": r.GetApprovalId(), "approved": r.GetApproved(),
				"outcome": r.GetOutcome(), "resolved_by": r.GetResolvedBy()})
			t.mu.Unlock()
		case pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE:
			text := ev.GetResponseComplete().GetContent()
			t.mu.Lock()
			t.turns++
			turns := t.turns
			t.emitLocked(EventOutput, map[string]any{"text": textcut.Truncate(text, maxEventText)})
			t.emitLocked(EventTurnComplete, map[string]any{"turn": turns, "session_id": t.sessionID, "message_id": tr.MessageID})
			t.mu.Unlock()
			if t.ctx.Err() == nil && (t.pol.MaxTurns == 0 || turns < t.pol.MaxTurns) {
				t.promptReady(text)
			}
		case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR:
			pe := ev.GetPipelineError()
			failure = fmt.Errorf("%s: %s", pe.GetCode(), pe.GetMessage())
		}
	}
	return failure
}

func (t *thread) promptReady(summary string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.emitLocked(EventPromptReady, map[string]any{"session_id": t.sessionID})
	t.statusLocked(ThreadPromptReady, textcut.Truncate(summary, 500), 0)
}

// input handles a ThreadInputRequest.
func (t *thread) input(kind, text string) {
	refuse := func(why string) { t.emit(EventInputRefused, map[string]any{"input_type": kind, "reason": why}) }
	if !utf8.ValidString(text) {
		refuse("the input is not valid UTF-8")
		return
	}
	switch kind {
	case "text", "":
		if strings.TrimSpace(text) == "" {
			refuse("the message is empty")
			return
		}
		select {
		case t.inbox <- text:
		default:
			refuse(fmt.Sprintf("%d messages are already waiting for this thread", maxInbox))
		}
	case "approval":
		t.mu.Lock()
		id := t.pending
		t.mu.Unlock()
		if id == "" {
			refuse("no escalation is waiting for an answer")
			return
		}
		switch strings.ToLower(strings.TrimSpace(text)) {
		case "y", "yes", "approve", "approved":
			_ = t.g.cfg.Engine.ResolveApproval(id, t.sessionID, true, ApprovedBy)
		default:
			_ = t.g.cfg.Engine.ResolveApproval(id, t.sessionID, false, ApprovedBy)
		}
	case "key":
		refuse("a Parapet thread has no terminal: keystrokes are not accepted; send text, or an approval")
	default:
		refuse(fmt.Sprintf("unknown input_type %q: want text, approval or key", textcut.Truncate(kind, 40)))
	}
}

// stop handles a ThreadStopRequest: force stops at once (a running tool
// call is killed); otherwise the thread stops once the running tool call
// is done (pending approvals are denied, further calls refused).
func (t *thread) stop(reason string, force bool) {
	why := errStopped
	if reason != "" {
		why = fmt.Errorf("%w: %s", errStopped, textcut.Truncate(reason, 500))
	}
	if force {
		t.cancel(why)
		t.finish(EventCompleted, ThreadCompleted, why.Error())
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopping = true
	if t.running == 0 {
		t.cancel(why)
	}
}

// emit queues an event with the thread's next sequence number.
func (t *thread) emit(event string, data map[string]any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.emitLocked(event, data)
}

// emitLocked numbers and queues an event; numbering and queueing under
// one lock keep the outbox in sequence order. Nothing follows the end.
func (t *thread) emitLocked(event string, data map[string]any) {
	if t.ended {
		return
	}
	b, err := json.Marshal(data)
	if err != nil {
		b = []byte(`{}`)
	}
	t.seq++
	t.g.send(&gwpb.AgentToControlPlane{Payload: &gwpb.AgentToControlPlane_ThreadEvent{ThreadEvent: &gwpb.ThreadEventReport{
		ThreadId: t.id, EventType: event, DataJson: string(b), TimestampMs: time.Now().UnixMilli(), Sequence: t.seq}}})
}

func (t *thread) status(status, summary string, progress float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.statusLocked(status, summary, progress)
}

func (t *thread) statusLocked(status, summary string, progress float64) {
	if t.ended {
		return
	}
	t.g.send(&gwpb.AgentToControlPlane{Payload: &gwpb.AgentToControlPlane_ThreadStatusUpdate{ThreadStatusUpdate: &gwpb.ThreadStatusUpdate{
		ThreadId: t.id, Status: status, Summary: summary, Progress: progress, TimestampMs: time.Now().UnixMilli()}}})
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
