// Package server exposes the Shield pipeline over gRPC
// (openparallax.v1.ShieldService, grpc.health.v1, reflection) and as an
// HTTP/JSON mirror with health, readiness and Prometheus metrics.
package server

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/heuristics"
	"github.com/parapet-dev/parapet/shieldd/audit"
	"github.com/parapet-dev/parapet/shieldd/auth"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/tenant"
)

// ShieldService implements openparallax.v1.ShieldService on a pipeline.
type ShieldService struct {
	pb.UnimplementedShieldServiceServer
	Pipeline *pipeline.Pipeline
	// Version is the build version reported by Health and status.
	Version string
	// Audit records every evaluation and reported outcome; nil is off.
	Audit *audit.Log
	// Limits are the per-tenant rate limits; nil is unlimited.
	Limits *tenant.Limiter
	// TenantMetrics counts decisions per tenant; nil is off.
	TenantMetrics *tenant.Metrics
	// PolicyErrors says why the last policy reload failed, for
	// GetShieldStatus.policy_error; nil when policies are never reloaded.
	PolicyErrors PolicyErrorReporter
	// EvaluatorAvailable reports whether the Tier 2 model answered its
	// last call; nil counts a configured evaluator as connected.
	EvaluatorAvailable func() bool
	// Tracing makes a span per evaluation; nil is off.
	Tracing *Tracing
	Logger  *slog.Logger

	streams streamDrain // ends open EvaluateStreams on shutdown
}

// PolicyErrorReporter says why the last policy reload failed; both are ""
// once a reload succeeds.
type PolicyErrorReporter interface {
	// PolicyError names every file and line at fault.
	PolicyError() string
	// TenantPolicyError is what tenant's callers may see: the default
	// policy's problems and their own file's, with other tenants' files
	// only counted.
	TenantPolicyError(tenant string) string
}

func (s *ShieldService) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// errAuditUnavailable answers a call whose record could not be written:
// the verdict is withheld, so the caller blocks the action.
var errAuditUnavailable = status.Error(codes.Unavailable, "the audit log could not record this call; the action was not evaluated")

// Evaluate judges one action.
func (s *ShieldService) Evaluate(ctx context.Context, req *pb.EvaluateRequest) (*pb.EvaluateResponse, error) {
	v, err := s.Judge(ctx, req)
	if err != nil {
		return nil, err
	}
	return &pb.EvaluateResponse{Verdict: v, RequestId: req.GetRequestId()}, nil
}

// Judge is one evaluation as every transport makes it: the caller's
// authenticated identity overrides what the request claims, the tenant's
// rate limit applies, the pipeline decides, and the audit log records the
// result before it is returned. A non-nil error is a gRPC status and means
// the action must not run. EvaluateStream calls Judge per request.
func (s *ShieldService) Judge(ctx context.Context, req *pb.EvaluateRequest) (*pb.Verdict, error) {
	in := InputFromRequest(req)
	id, authenticated := auth.FromContext(ctx)
	if authenticated {
		applyIdentity(&in.Request.Caller, id)
	}
	tenantName := in.Request.Caller.Tenant
	if err := s.Limits.Allow(tenantName); err != nil {
		s.TenantMetrics.Limited(tenantName)
		return nil, err
	}
	var start time.Time
	if s.Audit != nil { // two clock reads cost a tenth of a cache hit; only the audit log wants them
		start = time.Now()
	}
	pctx, span := s.Tracing.startEvaluate(ctx) // the pipeline's tier spans become its children
	v, err := s.Pipeline.Evaluate(pctx, in)
	if err != nil {
		err = StatusError(err)
	}
	endEvaluate(span, req, tenantName, v, err)
	if s.Audit != nil {
		took := time.Since(start)
		e := &audit.Entry{
			Kind: audit.KindEvaluation, Tenant: tenantName, Caller: auditCaller(in.Request.Caller),
			Session: req.GetSessionId(), RequestID: req.GetRequestId(), ActionType: in.Request.Type,
			Latency: took,
		}
		if authenticated {
			e.Principal = id.Principal()
		}
		if err != nil {
			e.Decision, e.Error = "error", status.Code(err).String()+": "+status.Convert(err).Message()
		} else {
			e.ActionType, e.ActionHash, e.Decision = v.ActionType, v.ActionHash, decisionName(v.Decision)
			e.Tier, e.RuleIDs, e.CacheHit = v.Tier, v.RuleIds, v.CacheHit
		}
		if _, aerr := s.Audit.Append(e); aerr != nil {
			s.logger().ErrorContext(ctx, "audit write failed; verdict withheld", "err", aerr, "request_id", req.GetRequestId())
			s.TenantMetrics.Decision(tenantName, "error")
			return nil, errAuditUnavailable
		}
	}
	if err != nil {
		s.TenantMetrics.Decision(tenantName, "error")
		return nil, err
	}
	s.TenantMetrics.Decision(tenantName, decisionName(v.Decision))
	return v, nil
}

// applyIdentity makes the authenticated identity win over the request body.
func applyIdentity(c *action.Caller, id auth.Identity) {
	c.Tenant = id.Tenant
	if id.User != "" {
		c.UserID = id.User
	}
	if id.Workspace != "" {
		c.WorkspaceID = id.Workspace
	}
}

func auditCaller(c action.Caller) audit.Caller {
	return audit.Caller{Engine: c.EngineID, User: c.UserID, Workspace: c.WorkspaceID, Agent: c.AgentName}
}

func decisionName(d pb.VerdictDecision) string {
	switch d {
	case pb.VerdictDecision_VERDICT_DECISION_ALLOW:
		return "allow"
	case pb.VerdictDecision_VERDICT_DECISION_ESCALATE:
		return "escalate"
	}
	return "block" // unset reads as BLOCK, never ALLOW
}

// outcomeNames maps accepted spellings to the recorded outcome.
var outcomeNames = map[string]string{
	"approved": "approved", "denied": "denied", "timeout": "timeout", "timed_out": "timeout",
	"cancelled": "cancelled", "canceled": "cancelled", "rate_limited": "rate_limited",
}

// ReportOutcome records what became of an escalated action in the audit
// chain. With the audit log off it records nothing (recorded = false).
func (s *ShieldService) ReportOutcome(ctx context.Context, req *pb.ReportOutcomeRequest) (*pb.ReportOutcomeResponse, error) {
	outcome, ok := outcomeNames[strings.ToLower(strings.TrimSpace(req.GetOutcome()))]
	if !ok {
		return nil, status.Errorf(codes.InvalidArgument,
			"outcome must be approved, denied, timeout, cancelled or rate_limited; got %q", req.GetOutcome())
	}
	if !action.IsHexHash(req.GetActionHash()) {
		return nil, status.Error(codes.InvalidArgument, "action_hash must be the verdict's 64 lower-case hex digits")
	}
	c := req.GetCaller()
	caller := action.Caller{Tenant: c.GetTenant(), WorkspaceID: c.GetWorkspaceId(), EngineID: c.GetEngineId(),
		UserID: c.GetUserId(), AgentName: c.GetAgentName()}
	id, authenticated := auth.FromContext(ctx)
	if authenticated {
		applyIdentity(&caller, id)
	}
	if err := s.Limits.Allow(caller.Tenant); err != nil {
		s.TenantMetrics.Limited(caller.Tenant)
		return nil, err
	}
	if s.Audit == nil {
		return &pb.ReportOutcomeResponse{}, nil
	}
	e := &audit.Entry{
		Kind: audit.KindOutcome, Tenant: caller.Tenant, Caller: auditCaller(caller), Session: req.GetSessionId(),
		RequestID: req.GetRequestId(), ActionType: req.GetActionType(), ActionHash: req.GetActionHash(),
		Outcome: outcome, DecidedBy: req.GetDecidedBy(), ApprovalID: req.GetApprovalId(), Reason: req.GetReason(),
	}
	if authenticated {
		e.Principal = id.Principal()
	}
	h, err := s.Audit.Append(e)
	if err != nil {
		s.logger().ErrorContext(ctx, "audit write failed; outcome not recorded", "err", err, "request_id", req.GetRequestId())
		return nil, status.Error(codes.Unavailable, "the audit log could not record the outcome")
	}
	return &pb.ReportOutcomeResponse{Recorded: true, EntryHash: h}, nil
}

// Health reports liveness, version and the highest tier the shield
// decides. A failed audit log makes the shield unhealthy: it refuses to
// evaluate until restarted.
func (s *ShieldService) Health(context.Context, *pb.HealthRequest) (*pb.HealthResponse, error) {
	healthy := s.Audit == nil || s.Audit.Err() == nil
	return &pb.HealthResponse{Healthy: healthy, Version: s.Version, MaxTier: s.Pipeline.MaxTier()}, nil
}

// GetShieldStatus reports counters and the running policy; for an
// authenticated caller, the policy of its tenant. llm_connected means an
// evaluator is configured and its last model call did not fail as
// unavailable; heuristic_rules counts the Tier 1 rules the policy leaves on.
func (s *ShieldService) GetShieldStatus(ctx context.Context, _ *pb.ShieldStatusRequest) (*pb.ShieldStatusResponse, error) {
	st := s.Pipeline.Status()
	pol := s.Pipeline.Policy()
	id, authenticated := auth.FromContext(ctx)
	if authenticated {
		pol = s.Pipeline.PolicyFor(id.Tenant)
	}
	// One policy snapshot for every policy field: a reload may swap it between Status and here.
	st.PolicyName, st.PolicyVersion, st.PolicyRules = pol.Name, pol.Version, pol.RuleCount()
	var policyError string
	switch {
	case s.PolicyErrors == nil:
	case authenticated:
		policyError = s.PolicyErrors.TenantPolicyError(id.Tenant)
	default:
		policyError = s.PolicyErrors.PolicyError()
	}
	return &pb.ShieldStatusResponse{
		HeuristicRules:   int32(enabledHeuristics(pol.Heuristics)),
		LlmConnected:     st.EvaluatorConfigured && (s.EvaluatorAvailable == nil || s.EvaluatorAvailable()),
		LlmProvider:      st.EvaluatorProvider,
		LlmModel:         st.EvaluatorModel,
		EvaluationsToday: st.EvaluationsToday,
		BlocksToday:      st.BlocksToday,
		EscalationsToday: st.EscalationsToday,
		PolicyVersion:    st.PolicyVersion,
		PolicyName:       st.PolicyName,
		PolicyRules:      int32(st.PolicyRules),
		CacheEntries:     int64(st.CacheEntries),
		CacheHits:        st.CacheHits,
		CacheMisses:      st.CacheMisses,
		PolicyError:      policyError,
		Version:          s.Version,
	}, nil
}

// enabledHeuristics counts the Tier 1 rules cfg leaves on: the catalogue
// less the rules it disables or overrides to ALLOW.
func enabledHeuristics(cfg heuristics.Config) int {
	n := 0
	for _, r := range heuristics.Catalogue() {
		if !slices.Contains(cfg.Disabled, r.ID) && cfg.Overrides[r.ID] != pb.VerdictDecision_VERDICT_DECISION_ALLOW {
			n++
		}
	}
	return n
}

// InputFromRequest maps the wire request to a pipeline input. MCP-style
// callers send tool_name and tool_args_json instead of type and payload.
func InputFromRequest(req *pb.EvaluateRequest) pipeline.Input {
	typ, payload := req.GetActionType(), req.GetPayloadJson()
	if typ == "" {
		typ = req.GetToolName()
	}
	if payload == "" {
		payload = req.GetToolArgsJson()
	}
	c := req.GetCaller()
	return pipeline.Input{
		Request: action.Request{
			Type:    typ,
			Payload: []byte(payload),
			Caller: action.Caller{
				Tenant: c.GetTenant(), WorkspaceID: c.GetWorkspaceId(), EngineID: c.GetEngineId(),
				UserID: c.GetUserId(), SessionID: req.GetSessionId(), AgentName: c.GetAgentName(),
				WorkspaceRoot: c.GetWorkspaceRoot(), Home: c.GetHomeDir(),
			},
			Attachments: attachmentsFromRequest(req),
		},
		MinTier: req.GetMinTier(),
		Context: req.GetContext(),
	}
}

// StatusError maps a pipeline error to a gRPC status: malformed input is
// InvalidArgument, oversized input ResourceExhausted, anything else
// Internal. In every case the action does not run.
func StatusError(err error) error {
	var ae *action.Error
	if errors.As(err, &ae) {
		switch ae.Kind {
		case action.TooLarge:
			return status.Error(codes.ResourceExhausted, ae.Msg)
		default:
			return status.Error(codes.InvalidArgument, ae.Msg)
		}
	}
	if s, ok := status.FromError(err); ok {
		return s.Err()
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return status.FromContextError(err).Err()
	}
	return status.Error(codes.Internal, "evaluation failed: "+err.Error())
}

// attachmentsFromRequest maps the request's attachments (nil when none).
func attachmentsFromRequest(req *pb.EvaluateRequest) []action.Attachment {
	atts := req.GetAttachments()
	if len(atts) == 0 {
		return nil
	}
	out := make([]action.Attachment, len(atts))
	for i, at := range atts {
		out[i] = action.Attachment{Path: at.GetPath(), Content: at.GetContent(), Unreadable: at.GetUnreadable()}
	}
	return out
}
