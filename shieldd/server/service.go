// Package server carries the shield (shieldd/shield) over the wire:
// openparallax.v1.ShieldService over gRPC (unary and EvaluateStream),
// grpc.health.v1 and reflection, and an HTTP/JSON mirror with health,
// readiness and Prometheus metrics. It translates and nothing more: every
// evaluation is shield.Judge, whichever transport brought it.
package server

import (
	"context"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/shieldd/shield"
)

// ShieldService implements openparallax.v1.ShieldService on a shield.
type ShieldService struct {
	pb.UnimplementedShieldServiceServer
	Shield *shield.Shield

	streams streamDrain // ends open EvaluateStreams on shutdown
}

// NewService serves sh.
func NewService(sh *shield.Shield) *ShieldService { return &ShieldService{Shield: sh} }

// Evaluate judges one action.
func (s *ShieldService) Evaluate(ctx context.Context, req *pb.EvaluateRequest) (*pb.EvaluateResponse, error) {
	v, err := s.Shield.Judge(ctx, req)
	if err != nil {
		return nil, err
	}
	return &pb.EvaluateResponse{Verdict: v, RequestId: req.GetRequestId()}, nil
}

// ReportOutcome records what became of an escalated action.
func (s *ShieldService) ReportOutcome(ctx context.Context, req *pb.ReportOutcomeRequest) (*pb.ReportOutcomeResponse, error) {
	return s.Shield.ReportOutcome(ctx, req)
}

// Health reports liveness, version and the highest tier the shield decides.
func (s *ShieldService) Health(context.Context, *pb.HealthRequest) (*pb.HealthResponse, error) {
	return s.Shield.Health(), nil
}

// GetShieldStatus reports counters and the running policy.
func (s *ShieldService) GetShieldStatus(ctx context.Context, _ *pb.ShieldStatusRequest) (*pb.ShieldStatusResponse, error) {
	return s.Shield.Status(ctx), nil
}
