// Package server exposes the Shield pipeline over gRPC
// (openparallax.v1.ShieldService, grpc.health.v1, reflection) and as an
// HTTP/JSON mirror with health, readiness and Prometheus metrics.
package server

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
)

// ShieldService implements openparallax.v1.ShieldService on a pipeline.
type ShieldService struct {
	pb.UnimplementedShieldServiceServer
	Pipeline *pipeline.Pipeline
	// Version is the build version reported by Health and status.
	Version string
}

// Evaluate judges one action.
func (s *ShieldService) Evaluate(ctx context.Context, req *pb.EvaluateRequest) (*pb.EvaluateResponse, error) {
	v, err := s.Pipeline.Evaluate(ctx, InputFromRequest(req))
	if err != nil {
		return nil, StatusError(err)
	}
	return &pb.EvaluateResponse{Verdict: v, RequestId: req.GetRequestId()}, nil
}

// Health reports liveness, version and the highest tier the shield decides.
func (s *ShieldService) Health(context.Context, *pb.HealthRequest) (*pb.HealthResponse, error) {
	return &pb.HealthResponse{Healthy: true, Version: s.Version, MaxTier: s.Pipeline.MaxTier()}, nil
}

// GetShieldStatus reports counters and the running policy.
func (s *ShieldService) GetShieldStatus(context.Context, *pb.ShieldStatusRequest) (*pb.ShieldStatusResponse, error) {
	st := s.Pipeline.Status()
	return &pb.ShieldStatusResponse{
		HeuristicRules:   int32(st.HeuristicRules),
		LlmConnected:     st.EvaluatorConfigured,
		EvaluationsToday: st.EvaluationsToday,
		BlocksToday:      st.BlocksToday,
		EscalationsToday: st.EscalationsToday,
		PolicyVersion:    st.PolicyVersion,
		PolicyName:       st.PolicyName,
		PolicyRules:      int32(st.PolicyRules),
		CacheEntries:     int64(st.CacheEntries),
		CacheHits:        st.CacheHits,
		CacheMisses:      st.CacheMisses,
		Version:          s.Version,
	}, nil
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
	return status.Error(codes.Internal, "evaluation failed: "+err.Error())
}
