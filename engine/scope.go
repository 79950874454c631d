package engine

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/parapet-dev/parapet/engine/tools"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/policy"
)

// Scope confines one session to a workspace and rules of its own: a
// parallax gateway thread runs in a fresh checkout under the control
// plane's policy, through the same gate as every other session. Once a
// session has a scope, every message to it (from any door) runs in it.
type Scope struct {
	// Tools runs the session's tool calls; its workspace is the session's
	// (required; tools.Registry.ForWorkspace).
	Tools *tools.Registry
	// Rules are judged after the shield, on the same canonical action; the
	// stricter decision stands (BLOCK > ESCALATE > ALLOW). Nil: none.
	Rules *policy.Policy
	// MaxTurns bounds LLM round trips per message (0: the engine's).
	MaxTurns int
}

// workspace is the directory a turn's tools work in.
func (e *Engine) workspaceOf(t *turn) string {
	if t.scope != nil {
		return t.scope.Tools.Workspace()
	}
	return e.cfg.Workspace
}

func (e *Engine) toolsOf(t *turn) *tools.Registry {
	if t.scope != nil {
		return t.scope.Tools
	}
	return e.cfg.Tools
}

// scopeLocked returns the scope of session id, giving it want when it
// has none; a session keeps the scope it was given first.
func (e *Engine) scopeLocked(id string, want *Scope) (*Scope, error) {
	have := e.scopes[id]
	switch {
	case want == nil:
		return have, nil
	case want.Tools == nil:
		return nil, &CodedError{Code: "INVALID_MESSAGE", Msg: "a session scope needs a tool registry"}
	case have == nil:
		e.scopes[id] = want
		return want, nil
	case have != want:
		return nil, &CodedError{Code: "INVALID_SESSION_ID", Msg: fmt.Sprintf("session %q already runs in another scope", id)}
	}
	return have, nil
}

// ForgetScope drops a session's scope (its thread ended). Later messages
// to the session are refused rather than run unconfined in the engine's
// workspace.
func (e *Engine) ForgetScope(sessionID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.scopes[sessionID]; ok {
		e.scopes[sessionID] = endedScope
	}
}

// endedScope marks a session whose scope ended.
var endedScope = &Scope{}

// restrict judges req by the scope's rules and returns the stricter of
// that and the shield's verdict v. Any failure blocks.
func (s *Scope) restrict(req *pb.EvaluateRequest, v *pb.Verdict) *pb.Verdict {
	if s == nil || s.Rules == nil || v.GetDecision() == pb.VerdictDecision_VERDICT_DECISION_BLOCK {
		return v
	}
	act, err := action.Canonicalize(action.Request{Type: req.GetActionType(), Payload: []byte(req.GetPayloadJson()),
		Caller: action.Caller{WorkspaceRoot: req.GetCaller().GetWorkspaceRoot(), Home: req.GetCaller().GetHomeDir(), SessionID: req.GetSessionId()}},
		action.Limits{})
	d := policy.Decision{Outcome: pb.VerdictDecision_VERDICT_DECISION_BLOCK, RuleID: "scope.error"}
	if err != nil {
		d.Reason = "the session's own rules could not judge this action: " + err.Error()
	} else {
		d = s.Rules.Evaluate(act)
	}
	if d.Outcome.Rank() <= v.GetDecision().Rank() {
		return v
	}
	out := proto.Clone(v).(*pb.Verdict)
	out.Decision, out.Tier, out.Confidence = d.Outcome, 0, 1
	out.RuleIds = []string{d.RuleID}
	out.Reasoning = fmt.Sprintf("%s (%s rules; the shield said %s: %s)", d.Reason, s.Rules.Name, v.GetDecision().Label(), v.GetReasoning())
	return out
}

// Act takes one tool call that no agent proposed through the gate of
// session sessionID, in scope (nil: the session's, if any): shield,
// approval broker, action-hash re-check, execution, each published to
// the session's watchers. A gateway thread writes its bootstrap files so.
// ran says whether the tool executed.
func (e *Engine) Act(ctx context.Context, sessionID string, scope *Scope, tool, argumentsJSON string) (content string, isErr, ran bool, err error) {
	if err := checkSessionName(sessionID); err != nil || sessionID == "" {
		return "", false, false, errors.New("Act needs a plain session id")
	}
	e.mu.Lock()
	scope, err = e.scopeLocked(sessionID, scope)
	e.mu.Unlock()
	if err != nil {
		return "", false, false, err
	}
	if scope == endedScope {
		return "", false, false, &CodedError{Code: "SESSION_NOT_FOUND", Msg: "the session's scope has ended"}
	}
	t := &turn{sessionID: sessionID, messageID: "act_" + randomID(), scope: scope}
	t.ctx, t.cancel = context.WithCancel(ctx)
	defer t.cancel()
	p := &pb.ToolCallProposed{SessionId: sessionID, MessageId: t.messageID, CallId: "call_" + randomID(), ToolName: tool, ArgumentsJson: argumentsJSON}
	content, isErr, ran = e.proposeIn(t, p)
	return content, isErr, ran, nil
}
