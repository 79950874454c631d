package engine

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parapet-dev/parapet/internal/textcut"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// maxExternalArgs bounds the arguments an external approval request shows.
const maxExternalArgs = 64 << 10

// RequestApproval asks the approval broker about an action the engine did
// not propose itself — one that agentctl mcp-proxy judged for an MCP
// server of this workspace — so that it is answered where the agent's own
// escalations are (web page, agentctl approve/deny, the terminal), by the
// same rules: first answer wins, the engine's timeout and hourly limit
// apply, and an answer after the deadline does not count. The approval's
// session id is "external:"+source; watchers of every session see it.
func (e *Engine) RequestApproval(ctx context.Context, source, tool, argumentsJSON string, v *pb.Verdict) (id string, res ApprovalResult, err error) {
	switch {
	case strings.TrimSpace(source) == "":
		return "", res, errors.New("source is empty: say who asks (e.g. mcp:SERVER)")
	case strings.TrimSpace(tool) == "":
		return "", res, errors.New("tool_name is empty")
	case v.GetDecision() != pb.VerdictDecision_VERDICT_DECISION_ESCALATE:
		return "", res, errors.New("only an ESCALATE verdict is put to a human")
	case len(argumentsJSON) > maxExternalArgs:
		return "", res, errors.New("arguments_json is larger than 64 KiB")
	case !utf8.ValidString(source + tool + argumentsJSON):
		return "", res, errors.New("source, tool_name and arguments_json must be UTF-8")
	}
	source = textcut.Truncate(source, 120)
	req := ApprovalRequest{
		// Prefixed, so a source can never pass for one of the agent's sessions.
		ID: "appr_" + randomID(), SessionID: "external:" + source, CallID: "ext_" + randomID(),
		ToolName: tool, ArgumentsJSON: argumentsJSON, Verdict: v,
	}
	publish := func(ev *pb.PipelineEvent) {
		ev.SessionId = req.SessionID
		e.bus.publish(ev)
	}
	res = e.holdForApproval(ctx, req, source+" wants to run "+tool, publish)
	return req.ID, res, nil
}

// RequestApproval serves ClientService.RequestApproval.
func (c *clientService) RequestApproval(ctx context.Context, req *pb.ExternalApprovalRequest) (*pb.ExternalApprovalResponse, error) {
	id, res, err := c.e.RequestApproval(ctx, req.GetSource(), req.GetToolName(), req.GetArgumentsJson(), req.GetVerdict())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return &pb.ExternalApprovalResponse{ApprovalId: id, Approved: res.Approved, Outcome: res.Outcome, ResolvedBy: res.By}, nil
}
