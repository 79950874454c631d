package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/parapet-dev/parapet/engine/tools"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
)

var tracer = otel.Tracer("github.com/parapet-dev/parapet/engine")

// shieldTimeout bounds one shield evaluation; a slower shield is an error,
// and an error blocks.
const shieldTimeout = 15 * time.Second

// handleProposal takes one proposed tool call through the gate: validate,
// ask the shield, ask a human on ESCALATE, re-check the action hash, run.
// It returns the content for the agent and whether it is an error. Every
// failure on the way means the tool does not run.
func (e *Engine) handleProposal(p *pb.ToolCallProposed) (string, bool) {
	t := e.currentTurn(p.GetSessionId(), p.GetMessageId())
	if t == nil {
		return "refused: this tool call does not belong to the message being processed", true
	}
	content, isErr, _ := e.proposeIn(t, p)
	return content, isErr
}

// proposeIn is handleProposal within a known turn: a sub-agent's calls run
// in a turn of its own, tied to its parent's.
// ran says whether the tool executed.
func (e *Engine) proposeIn(t *turn, p *pb.ToolCallProposed) (content string, isErr, ran bool) {
	t.calls.Add(1)
	defer t.calls.Done()
	publish := func(ev *pb.PipelineEvent) {
		ev.SessionId, ev.MessageId = t.sessionID, t.messageID
		e.bus.publish(ev)
	}
	actionType := pb.ActionType(pb.ActionType_value["ACTION_TYPE_"+strings.ToUpper(p.GetToolName())])
	publish(&pb.PipelineEvent{EventType: pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTIONS_PLANNED,
		ActionsPlanned: &pb.ActionsPlanned{Actions: []*pb.ActionRequest{{
			RequestId: p.GetCallId(), Type: actionType, PayloadJson: p.GetArgumentsJson(),
			Payload: map[string]string{"tool_name": p.GetToolName()},
		}}}})
	// One span per tool call; the shield call is its child, and its trace
	// context travels to a remote shieldd.
	spanCtx, span := tracer.Start(t.ctx, "engine.tool_call", trace.WithAttributes(
		attribute.String("parapet.tool", p.GetToolName()), attribute.String("parapet.call_id", p.GetCallId()),
		attribute.String("parapet.session_id", t.sessionID)))
	content, isErr, ran = e.gate(spanCtx, t, p, publish)
	span.SetAttributes(attribute.Bool("parapet.ran", ran), attribute.Bool("parapet.is_error", isErr))
	span.End()
	if !ran {
		// Every planned action ends with ACTION_COMPLETED, so clients can
		// pair them; a refused one never started.
		publish(&pb.PipelineEvent{EventType: pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_COMPLETED,
			ActionCompleted: &pb.ActionCompleted{CallId: p.GetCallId(), ToolName: p.GetToolName(),
				Result: &pb.ActionResult{RequestId: p.GetCallId(), Error: content, Output: content}}})
	}
	return content, isErr, ran
}

// gate is handleProposal's decision path; ran says whether the tool executed.
func (e *Engine) gate(ctx context.Context, t *turn, p *pb.ToolCallProposed, publish func(*pb.PipelineEvent)) (content string, isErr, ran bool) {
	if t.ctx.Err() != nil {
		return "refused: the turn was cancelled", true, false
	}
	name := p.GetToolName()
	if name == tools.LoadToolsName {
		return fmt.Sprintf("unknown tool %q; load tool groups with load_tools first", name), true, false
	}
	// Parsed once: the shield judges call.Payload, the action hash covers
	// it, and the registry runs the arguments it encodes.
	reg, workspace := e.toolsOf(t), e.workspaceOf(t)
	call, err := reg.Prepare(name, []byte(p.GetArgumentsJson()))
	switch {
	case errors.Is(err, tools.ErrUnknownTool):
		return fmt.Sprintf("unknown tool %q; load tool groups with load_tools first", name), true, false
	case err != nil:
		return "invalid arguments: " + err.Error(), true, false
	}
	if t.mode == pb.SessionMode_SESSION_MODE_OTR && call.Write {
		reason := fmt.Sprintf("%s writes, and this session is off the record: write tools are refused", name)
		publish(&pb.PipelineEvent{EventType: pb.PipelineEventType_PIPELINE_EVENT_TYPE_OTR_BLOCKED,
			OtrBlocked: &pb.OTRBlocked{CallId: p.GetCallId(), ToolName: name, Reason: reason}})
		t.blocked.Store(true)
		return reason, true, false
	}
	req := &pb.EvaluateRequest{
		ActionType: call.Name, PayloadJson: string(call.Payload), SessionId: t.sessionID, RequestId: p.GetCallId(),
		Caller: &pb.CallerContext{
			Tenant: e.cfg.Tenant, EngineId: e.cfg.EngineID, AgentName: e.cfg.AgentName,
			WorkspaceRoot: workspace, HomeDir: e.cfg.Home,
		},
		Attachments: scriptAttachments(workspace, call.Name, call.Payload),
	}
	verdict := t.scope.restrict(req, e.evaluate(ctx, req))
	publish(&pb.PipelineEvent{EventType: pb.PipelineEventType_PIPELINE_EVENT_TYPE_SHIELD_VERDICT,
		ShieldVerdict: &pb.ShieldVerdict{CallId: p.GetCallId(), ToolName: name, Verdict: verdict}})

	switch verdict.GetDecision() {
	case pb.VerdictDecision_VERDICT_DECISION_ALLOW:
	case pb.VerdictDecision_VERDICT_DECISION_ESCALATE:
		res := e.escalate(t, p, call.Payload, verdict, publish)
		if !res.Approved {
			t.blocked.Store(true)
			return fmt.Sprintf("not run: the action needed a human's approval and was %s (%s). Shield: %s",
				outcomeWords(res.Outcome), res.By, verdict.GetReasoning()), true, false
		}
	default: // BLOCK, and an unset decision, which must never read as ALLOW
		t.blocked.Store(true)
		return blockedMessage(verdict), true, false
	}

	// The verdict must be for exactly the bytes about to run.
	hash, err := action.HashRequest(action.Request{Type: call.Name, Payload: call.Payload,
		Caller: action.Caller{WorkspaceRoot: workspace, Home: e.cfg.Home}}, action.Limits{})
	if err != nil || hash != verdict.GetActionHash() {
		t.blocked.Store(true)
		e.log.Error("action hash mismatch before execution; not running", "call", p.GetCallId(), "verdict_hash", verdict.GetActionHash(), "hash", hash, "error", err)
		return "refused: the shield's verdict does not match this action (hash mismatch)", true, false
	}
	// The scripts the command runs were judged by their contents: if one
	// changed since (while a human decided, or by a sub-agent), the
	// verdict is for other code.
	if !sameAttachments(req.GetAttachments(), scriptAttachments(workspace, call.Name, call.Payload)) {
		t.blocked.Store(true)
		e.log.Error("a script the command runs changed after the verdict; not running", "call", p.GetCallId())
		return "refused: a script this command runs changed after the shield judged it; propose the command again", true, false
	}
	if t.ctx.Err() != nil {
		return "refused: the turn was cancelled", true, false
	}

	publish(&pb.PipelineEvent{EventType: pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_STARTED,
		ActionStarted: &pb.ActionStarted{CallId: p.GetCallId(), ToolName: name, ArgumentsJson: string(call.Payload)}})
	var res tools.Result
	if name == tools.SpawnAgentName {
		res = e.runSpawnAgent(t, call.Payload)
	} else {
		// The confinement of exactly the verdict whose hash was re-checked.
		res = reg.RunWith(t.ctx, call, grantOf(verdict))
	}
	publish(&pb.PipelineEvent{EventType: pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_COMPLETED,
		ActionCompleted: &pb.ActionCompleted{CallId: p.GetCallId(), ToolName: name, Result: actionResult(p.GetCallId(), res)}})
	return res.Output, res.IsError, true
}

// grantOf turns a verdict's confinement into the executor's grant; an
// unset one is the default confinement (no network, workspace writable).
func grantOf(v *pb.Verdict) tools.Grant {
	c := v.GetConfinement()
	g := tools.Grant{
		ReadOnlyWorkspace: c.GetWrite() == pb.ConfinementWrite_CONFINEMENT_WRITE_TEMP_ONLY,
		ReadPaths:         c.GetReadPaths(),
	}
	for _, p := range c.GetConnectPorts() {
		if p > 0 && p <= 65535 {
			g.ConnectTCP = append(g.ConnectTCP, uint16(p))
		}
	}
	return g
}

// evaluate asks the shield; any failure becomes a BLOCK verdict that says why.
func (e *Engine) evaluate(ctx context.Context, req *pb.EvaluateRequest) *pb.Verdict {
	ctx, cancel := context.WithTimeout(ctx, shieldTimeout)
	defer cancel()
	v, err := e.cfg.Shield.Evaluate(ctx, req)
	if err == nil && v.GetDecision().Decided() {
		return v
	}
	if err == nil {
		err = fmt.Errorf("verdict without a decision")
	}
	e.log.Error("shield evaluation failed; blocking", "call", req.GetRequestId(), "error", err)
	return &pb.Verdict{
		Decision: pb.VerdictDecision_VERDICT_DECISION_BLOCK, Confidence: 1,
		Reasoning:  "the shield could not evaluate this action, so it does not run: " + err.Error(),
		RuleIds:    []string{"engine.shield-error"},
		ActionType: req.GetActionType(),
	}
}

// escalate holds the call for a human through the approval broker and
// reports the outcome to the shield's audit chain. The human is shown
// payload, the canonical arguments the shield judged and that will run.
func (e *Engine) escalate(t *turn, p *pb.ToolCallProposed, payload []byte, v *pb.Verdict, publish func(*pb.PipelineEvent)) ApprovalResult {
	req := ApprovalRequest{
		ID: "appr_" + randomID(), SessionID: t.sessionID, MessageID: t.messageID, CallID: p.GetCallId(),
		ToolName: p.GetToolName(), ArgumentsJSON: string(payload), Verdict: v,
	}
	res := e.holdForApproval(t.ctx, req, fmt.Sprintf("%s wants to run %s", e.cfg.AgentName, req.ToolName), publish)
	workspace := e.workspaceOf(t)
	e.reports.Go(func() { e.reportOutcome(v, t.sessionID, workspace, p, req.ID, res) })
	return res
}

// holdForApproval announces req (its Deadline is set here, from the
// engine's approval timeout) and waits for the first answer from any
// front-end, the deadline, or parent's end; it publishes the resolution
// and returns it, never approved after the deadline or a cancellation.
func (e *Engine) holdForApproval(parent context.Context, req ApprovalRequest, summary string, publish func(*pb.PipelineEvent)) ApprovalResult {
	deadline := time.Now().Add(e.cfg.ApprovalTimeout)
	req.Deadline = deadline
	v := req.Verdict
	needed := &pb.PipelineEvent{SessionId: req.SessionID, MessageId: req.MessageID, TimestampMs: time.Now().UnixMilli(),
		EventType: pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_NEEDED,
		ApprovalNeeded: &pb.ApprovalNeeded{
			ApprovalId: req.ID, CallId: req.CallID, ToolName: req.ToolName, ShieldAssessment: v, TimeoutAt: deadline.Unix(),
			Action:         &pb.ActionRequest{RequestId: req.CallID, PayloadJson: req.ArgumentsJSON, Hash: v.GetActionHash()},
			ContextSummary: summary,
		}}
	ctx, cancel := context.WithDeadline(parent, deadline)
	defer cancel()
	res := e.awaitApproval(ctx, req, needed, publish)
	if !res.Approved && res.Outcome == "" {
		// An Approver that gave up when ctx ended without saying why.
		switch {
		case parent.Err() != nil:
			res.Outcome, res.By = pb.OutcomeCancelled, "engine"
		case ctx.Err() != nil:
			res.Outcome, res.By = pb.OutcomeTimeout, "engine"
		default:
			res.Outcome = pb.OutcomeDenied
		}
	}
	if res.Approved && ctx.Err() != nil {
		// An approval that arrives after the deadline or cancellation does not count.
		res = ApprovalResult{Outcome: pb.OutcomeTimeout, By: "engine"}
		if parent.Err() != nil {
			res.Outcome = pb.OutcomeCancelled
		}
	}
	publish(&pb.PipelineEvent{EventType: pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_RESOLVED,
		ApprovalResolved: &pb.ApprovalResolved{ApprovalId: req.ID, Approved: res.Approved, Outcome: res.Outcome, ResolvedBy: res.By}})
	return res
}

// FlushReports waits until every escalation outcome has reached the
// shield (each report gives up after 10 s), or ctx ends: call it before
// closing the shield, so that its audit log records every outcome.
func (e *Engine) FlushReports(ctx context.Context) {
	done := make(chan struct{})
	go func() { e.reports.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (e *Engine) reportOutcome(v *pb.Verdict, session, workspace string, p *pb.ToolCallProposed, approvalID string, res ApprovalResult) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := e.cfg.Shield.ReportOutcome(ctx, &pb.ReportOutcomeRequest{
		ActionHash: v.GetActionHash(), SessionId: session, RequestId: p.GetCallId(), Outcome: res.Outcome,
		DecidedBy: res.By, ApprovalId: approvalID, ActionType: v.GetActionType(),
		Caller: &pb.CallerContext{Tenant: e.cfg.Tenant, EngineId: e.cfg.EngineID, AgentName: e.cfg.AgentName,
			WorkspaceRoot: workspace, HomeDir: e.cfg.Home},
	})
	if err != nil {
		e.log.Warn("could not report an escalation outcome to the shield", "approval", approvalID, "error", err)
	}
}

func outcomeWords(o string) string {
	switch o {
	case pb.OutcomeTimeout:
		return "not answered in time"
	case pb.OutcomeCancelled:
		return "cancelled"
	case pb.OutcomeRateLimited:
		return "denied (too many approval prompts this hour)"
	}
	return "denied"
}

func blockedMessage(v *pb.Verdict) string {
	var b strings.Builder
	fmt.Fprintf(&b, "blocked by the Parapet shield (tier %d", v.GetTier())
	if len(v.GetRuleIds()) > 0 {
		fmt.Fprintf(&b, ", rule %s", strings.Join(v.GetRuleIds(), ", "))
	}
	b.WriteString("): ")
	b.WriteString(v.GetReasoning())
	return b.String()
}

func actionResult(callID string, r tools.Result) *pb.ActionResult {
	ar := &pb.ActionResult{RequestId: callID, Success: !r.IsError, Output: r.Output, DurationMs: r.Duration.Milliseconds()}
	if r.IsError {
		ar.Error = r.Output
	}
	return ar
}

func toolDef(d tools.Def) *pb.ToolDef {
	return &pb.ToolDef{Name: d.Name, Description: d.Description, ParametersJson: string(d.Schema), Group: d.Group}
}

// maxMemoryFlush bounds one MEMORY.md append.
const maxMemoryFlush = 64 << 10

// appendMemory appends facts to MEMORY.md in the workspace.
func (e *Engine) appendMemory(content string) error {
	content = strings.TrimSpace(content)
	if content == "" {
		return nil
	}
	if len(content) > maxMemoryFlush {
		return fmt.Errorf("memory flush of %d bytes exceeds %d", len(content), maxMemoryFlush)
	}
	root, err := os.OpenRoot(e.cfg.Workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	f, err := root.OpenFile("MEMORY.md", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", filepath.Join(e.cfg.Workspace, "MEMORY.md"), err)
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "\n<!-- %s -->\n%s\n", time.Now().UTC().Format(time.RFC3339), content)
	return err
}
