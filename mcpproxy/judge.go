package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
)

// ActionType is the action a tools/call becomes: mcp:SERVER/TOOL. The
// shield does not know it, so the policy's unknown_action default decides
// unless an allow rule names it (`custom:mcp:SERVER/TOOL`); Tier 1 still
// judges the arguments.
func ActionType(server, tool string) string { return "mcp:" + server + "/" + tool }

// judgeCall asks the shield about a tools/call and forwards it, refuses
// it, or asks the user; it runs in its own goroutine so other messages
// keep flowing while a person decides.
func (s *session) judgeCall(m *Message) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if dup := duplicateKey(m.Params); dup != "" {
		// Parsers disagree on which duplicate wins: the server might run
		// another tool than the one judged.
		s.client.send(errorResponse(m.ID, codeInvalidParams, "tools/call params has the member "+strconv.Quote(dup)+" twice"), idKey(m.ID))
		return
	}
	if err := json.Unmarshal(m.Params, &p); err != nil || p.Name == "" {
		s.client.send(errorResponse(m.ID, codeInvalidParams, "tools/call needs params.name (the tool) and params.arguments (an object)"), idKey(m.ID))
		return
	}
	args := bytes.TrimSpace(p.Arguments)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	if args[0] != '{' {
		s.client.send(errorResponse(m.ID, codeInvalidParams, "tools/call params.arguments must be an object"), idKey(m.ID))
		return
	}
	key := idKey(m.ID)
	ctx, cancel := context.WithCancel(s.ctx)
	s.mu.Lock()
	if _, dup := s.held[key]; dup {
		s.mu.Unlock()
		cancel()
		s.client.send(errorResponse(m.ID, codeInvalidRequest, "a request with this id is already in progress"), key)
		return
	}
	s.held[key] = cancel
	s.judging++
	why, withheld := s.withheld[p.Name]
	s.mu.Unlock()

	go func() {
		defer func() {
			cancel()
			s.mu.Lock()
			s.judging--
			s.mu.Unlock()
		}()
		var allow bool
		var reason string
		if withheld {
			reason = "Parapet withheld the tool " + p.Name + " of MCP server " + s.cfg.Server + ": " + why
		} else {
			allow, reason = s.decide(ctx, m, p.Name, string(args))
		}
		// Still ours? A cancellation may have taken it meanwhile: then
		// the client expects no answer at all.
		s.mu.Lock()
		_, still := s.held[key]
		delete(s.held, key)
		s.mu.Unlock()
		if !still || ctx.Err() != nil {
			s.client.abandon(key)
			return
		}
		if !allow {
			s.cfg.Log.Warn("mcp-proxy: tool call refused", "server", s.cfg.Server, "tool", p.Name, "reason", reason)
			s.client.send(toolError(m.ID, reason), key)
			return
		}
		s.cfg.Log.Info("mcp-proxy: tool call allowed", "server", s.cfg.Server, "tool", p.Name, "reason", reason)
		s.forwardRequest(m, pendingRequest{method: "tools/call", tool: p.Name})
	}()
}

// decide returns whether the call may go to the server, and why. Any
// error is a refusal.
//
// The call is judged as mcp:SERVER/TOOL, which the policy can name. When
// the tool's name is also a known action type or alias (read_file,
// write_file, run_command, fetch, …: what filesystem, shell and fetch
// servers call their tools), it is judged as that action too, so Tier 1
// parses the command, resolves the paths and follows the URLs as it would
// for the agent's own tools; the stricter verdict wins.
func (s *session) decide(ctx context.Context, m *Message, tool, args string) (bool, string) {
	v, err := s.evaluate(ctx, m, ActionType(s.cfg.Server, tool), tool, args)
	if err != nil {
		return false, "Parapet could not judge this call, so it was not run: " + err.Error()
	}
	// Verdicts may be shared with the shield's cache: read, never modify.
	reason, ids := v.GetReasoning(), v.GetRuleIds()
	if known, ok := action.ResolveType(tool); ok {
		v2, err := s.evaluate(ctx, m, known, tool, args)
		if err != nil {
			return false, "Parapet could not judge this call, so it was not run: " + err.Error()
		}
		switch {
		case v2.GetDecision().Rank() > v.GetDecision().Rank():
			v, reason, ids = v2, v2.GetReasoning(), v2.GetRuleIds()
		case v2.GetDecision() == v.GetDecision() && v.GetDecision() == pb.VerdictDecision_VERDICT_DECISION_ESCALATE:
			reason += " Judged as " + known + ": " + v2.GetReasoning()
			ids = append(slices.Clip(ids), v2.GetRuleIds()...)
		}
	}
	if len(ids) > 0 {
		reason += " [" + strings.Join(ids, ", ") + "]"
	}
	switch v.GetDecision().Effective() { // an unset decision is BLOCK
	case pb.VerdictDecision_VERDICT_DECISION_ALLOW:
		return true, reason
	case pb.VerdictDecision_VERDICT_DECISION_ESCALATE:
		if ok, why, asked := s.askEngine(ctx, tool, args, v, reason); asked {
			return ok, why
		}
		return s.ask(ctx, m, tool, args, reason)
	}
	return false, "Parapet blocked this call: " + reason
}

// evaluate asks the shield about one action type for this call.
func (s *session) evaluate(ctx context.Context, m *Message, actionType, tool, args string) (*pb.Verdict, error) {
	req := &pb.EvaluateRequest{
		ToolName:     actionType,
		ToolArgsJson: args,
		RequestId:    fmt.Sprintf("mcp-%s-%s", s.nonce, strings.Trim(idKey(m.ID), `"`)),
		Caller: &pb.CallerContext{
			WorkspaceRoot: s.cfg.Workspace, HomeDir: s.cfg.Home, AgentName: "mcp-proxy",
		},
		Context: map[string]string{"mcp_server": s.cfg.Server, "mcp_tool": tool},
	}
	jctx, cancel := context.WithTimeout(ctx, s.cfg.JudgeTimeout)
	defer cancel()
	v, err := s.cfg.Shield.Evaluate(jctx, req)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, fmt.Errorf("the shield answered without a verdict")
	}
	return v, nil
}

// askEngine puts an escalated call to the approval broker of the engine
// running for the workspace. asked is false when there is none, or it
// could not be reached: then the client is asked (and a client that
// cannot ask refuses the call).
func (s *session) askEngine(ctx context.Context, tool, args string, v *pb.Verdict, reason string) (approved bool, why string, asked bool) {
	if s.cfg.Broker == nil {
		return false, "", false
	}
	actx, cancel := context.WithTimeout(ctx, s.cfg.AskTimeout)
	defer cancel()
	ok, outcome, err := s.cfg.Broker.RequestApproval(actx, "mcp:"+s.cfg.Server, tool, args, v)
	switch {
	case ctx.Err() != nil:
		return false, "cancelled", true // the client withdrew the call: ask nobody else
	case errors.Is(err, ErrNoEngine):
		return false, "", false
	case err != nil:
		s.cfg.Log.Warn("mcp-proxy: the engine's approval broker failed; asking the client instead", "server", s.cfg.Server, "tool", tool, "err", err)
		return false, "", false
	case ok:
		return true, "approved through the workspace's Parapet engine (" + outcome + "): " + reason, true
	}
	return false, "Parapet denied this call: it was not approved through the workspace's Parapet engine (" + outcome + "). " + reason, true
}

// ask puts an escalated call to the user through MCP elicitation, when
// the client declared it can; otherwise the call is denied.
func (s *session) ask(ctx context.Context, m *Message, tool, args, reason string) (bool, string) {
	s.mu.Lock()
	can := s.elicitation
	s.seq++
	id, _ := json.Marshal(fmt.Sprintf("parapet-%s-%d", s.nonce, s.seq))
	var ch chan *Message
	if can {
		ch = make(chan *Message, 1)
		s.asks[idKey(id)] = ch
	}
	s.mu.Unlock()
	if !can {
		return false, "Parapet denied this call: it needs a person's approval and this MCP client cannot ask (no elicitation capability). " + reason
	}
	// The person deciding must see what will run: invisible characters
	// (bidi overrides reordering the text, zero-width, tags) are shown
	// as escapes.
	shown := clip(showInvisible(args), 2000)
	msg := fmt.Sprintf("Parapet: allow the MCP tool %s of server %s to run?\n\nArguments: %s\n\nWhy it needs approval: %s",
		showInvisible(tool), s.cfg.Server, shown, reason)
	s.client.send(request(id, "elicitation/create", map[string]any{
		"message": msg,
		"requestedSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"approve": map[string]any{
					"type": "boolean", "title": "Allow this call",
					"description": "Run " + tool + " on " + s.cfg.Server + " with these arguments", "default": false,
				},
			},
			"required": []string{"approve"},
		},
	}), idKey(m.ID))

	timer := s.cfg.AskTimeout
	tctx, cancel := context.WithTimeout(ctx, timer)
	defer cancel()
	select {
	case r := <-ch:
		approved, why := elicitationApproved(r)
		if approved {
			return true, "approved by the user: " + reason
		}
		return false, "Parapet denied this call: " + why + ". " + reason
	case <-tctx.Done():
		s.mu.Lock()
		delete(s.asks, idKey(id))
		s.mu.Unlock()
		// Tell the client to take the question down.
		s.client.send(request(nil, "notifications/cancelled", map[string]any{
			"requestId": json.RawMessage(id), "reason": "no longer needed",
		}), idKey(m.ID))
		if errors.Is(tctx.Err(), context.DeadlineExceeded) {
			return false, fmt.Sprintf("Parapet denied this call: no answer to the approval question within %s. %s", timer, reason)
		}
		return false, "cancelled"
	}
}

// elicitationApproved reads the client's answer: only action "accept"
// with approve true allows.
func elicitationApproved(r *Message) (bool, string) {
	if r.Error != nil {
		return false, "the client could not ask the user (" + r.Error.Message + ")"
	}
	var res struct {
		Action  string `json:"action"`
		Content struct {
			Approve *bool `json:"approve"`
		} `json:"content"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		return false, "the client's answer to the approval question was malformed"
	}
	switch res.Action {
	case "accept":
		if res.Content.Approve != nil && *res.Content.Approve {
			return true, ""
		}
		return false, "the user did not approve it"
	case "decline":
		return false, "the user declined it"
	case "cancel":
		return false, "the user dismissed the approval question"
	default:
		return false, fmt.Sprintf("the client answered the approval question with %q", res.Action)
	}
}

// showInvisible writes format and control characters (bidi overrides,
// zero-width, tag characters, escapes) as \u{…}, so a text reads as what
// it is.
func showInvisible(s string) string {
	var b strings.Builder
	for _, r := range s {
		if (unicode.Is(unicode.Cf, r) || unicode.IsControl(r)) && r != '\n' && r != '\t' {
			fmt.Fprintf(&b, "\\u{%X}", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// duplicateKey returns a member name the JSON object b has twice at its
// top level, or "". (The shield refuses duplicates inside the arguments
// itself.)
func duplicateKey(b []byte) string {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		k, _ := t.(string)
		if seen[k] {
			return k
		}
		seen[k] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}

// toolError is a tools/call result the model reads: the call did not run.
func toolError(id json.RawMessage, text string) *Message {
	return response(id, map[string]any{
		"content": []map[string]any{{"type": "text", "text": text}},
		"isError": true,
	})
}
