// Package shield is the one contract every caller of the shield goes
// through, whatever carries the call: shieldd's gRPC, stream and HTTP
// transports (shieldd/server) and in-process callers (Local) alike.
//
// Judge validates the request, applies the caller's authenticated identity
// and its tenant's rate limit, asks the pipeline (cache and tiers) inside
// an evaluation span, refuses a verdict without a decision, counts the
// decision and writes the audit record before the verdict is returned. A
// transport only translates: it never decides, validates or audits on its
// own, so the same request gets the same guarantees on every path.
package shield

import (
	"context"
	"errors"
	"log/slog"
	"slices"
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

// Shield judges actions on a pipeline. Only Pipeline is required; every
// other field is optional and off when nil.
type Shield struct {
	Pipeline *pipeline.Pipeline
	// Version is the build version reported by Health and Status.
	Version string
	// Audit records every evaluation and reported outcome.
	Audit *audit.Log
	// Limits are the per-tenant rate limits.
	Limits *tenant.Limiter
	// TenantMetrics counts decisions per tenant.
	TenantMetrics *tenant.Metrics
	// PolicyErrors says why the last policy reload failed, for
	// Status's policy_error; nil when policies are never reloaded.
	PolicyErrors PolicyErrorReporter
	// EvaluatorAvailable reports whether the Tier 2 model answered its
	// last call; nil counts a configured evaluator as connected.
	EvaluatorAvailable func() bool
	// Tracing makes a span per evaluation.
	Tracing *Tracing
	Logger  *slog.Logger
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

// Log is the shield's logger, never nil: transports log with it too.
func (s *Shield) Log() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// ErrAuditUnavailable answers a call whose record could not be written:
// the verdict is withheld, so the caller blocks the action.
var ErrAuditUnavailable = status.Error(codes.Unavailable, "the audit log could not record this call; the action was not evaluated")

// errNoDecision answers a verdict that names none: it must never reach a
// caller, which could read it as anything.
var errNoDecision = status.Error(codes.Internal, "the pipeline returned a verdict without a decision; the action was not evaluated")

// Judge is one evaluation: validation, the caller's authenticated identity
// over what the request claims, the tenant's rate limit, the pipeline,
// metrics, and the audit record, written before the verdict is returned.
// A non-nil error is a gRPC status and means the action must not run; a
// returned verdict always carries a decision.
func (s *Shield) Judge(ctx context.Context, req *pb.EvaluateRequest) (*pb.Verdict, error) {
	if err := req.Validate(); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
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
	switch {
	case err != nil:
		v, err = nil, StatusError(err)
	case !v.GetDecision().Decided():
		s.Log().ErrorContext(ctx, "pipeline verdict without a decision; withheld", "request_id", req.GetRequestId())
		v, err = nil, errNoDecision
	}
	endEvaluate(span, req, tenantName, v, err)
	if s.Audit != nil {
		e := &audit.Entry{
			Kind: audit.KindEvaluation, Tenant: tenantName, Caller: auditCaller(in.Request.Caller),
			Session: req.GetSessionId(), RequestID: req.GetRequestId(), ActionType: in.Request.Type,
			Latency: time.Since(start),
		}
		if authenticated {
			e.Principal = id.Principal()
		}
		if err != nil {
			e.Decision, e.Error = "error", status.Code(err).String()+": "+status.Convert(err).Message()
		} else {
			e.ActionType, e.ActionHash, e.Decision = v.ActionType, v.ActionHash, v.Decision.Word()
			e.Tier, e.RuleIDs, e.CacheHit = v.Tier, v.RuleIds, v.CacheHit
		}
		if _, aerr := s.Audit.Append(e); aerr != nil {
			s.Log().ErrorContext(ctx, "audit write failed; verdict withheld", "err", aerr, "request_id", req.GetRequestId())
			s.TenantMetrics.Decision(tenantName, "error")
			return nil, ErrAuditUnavailable
		}
	}
	if err != nil {
		s.TenantMetrics.Decision(tenantName, "error")
		return nil, err
	}
	s.TenantMetrics.Decision(tenantName, v.Decision.Word())
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

// ReportOutcome records what became of an escalated action in the audit
// chain. With the audit log off it records nothing (recorded = false).
func (s *Shield) ReportOutcome(ctx context.Context, req *pb.ReportOutcomeRequest) (*pb.ReportOutcomeResponse, error) {
	outcome, ok := pb.ParseOutcome(req.GetOutcome())
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
		s.Log().ErrorContext(ctx, "audit write failed; outcome not recorded", "err", err, "request_id", req.GetRequestId())
		return nil, status.Error(codes.Unavailable, "the audit log could not record the outcome")
	}
	return &pb.ReportOutcomeResponse{Recorded: true, EntryHash: h}, nil
}

// Health reports liveness, version and the highest tier the shield
// decides. A failed audit log makes the shield unhealthy: it refuses to
// evaluate until restarted.
func (s *Shield) Health() *pb.HealthResponse {
	healthy := s.Audit == nil || s.Audit.Err() == nil
	return &pb.HealthResponse{Healthy: healthy, Version: s.Version, MaxTier: s.Pipeline.MaxTier()}
}

// Status reports counters and the running policy; for an authenticated
// caller, the policy of its tenant. llm_connected means an evaluator is
// configured and its last model call did not fail as unavailable;
// heuristic_rules counts the Tier 1 rules the policy leaves on.
func (s *Shield) Status(ctx context.Context) *pb.ShieldStatusResponse {
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
	}
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
