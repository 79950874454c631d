package engine

import (
	"context"
	"fmt"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/server"
)

// Shield judges actions: a remote shieldd (shieldd/client.Client satisfies
// this) or the same pipeline in-process. Any error means the action does
// not run.
type Shield interface {
	Evaluate(ctx context.Context, req *pb.EvaluateRequest) (*pb.Verdict, error)
	ReportOutcome(ctx context.Context, req *pb.ReportOutcomeRequest) error
}

// EmbeddedShield runs the shield pipeline in the engine's own process:
// the default when no shieldd address is configured.
type EmbeddedShield struct {
	Pipeline *pipeline.Pipeline
}

// Evaluate validates the request as shieldd would and evaluates it.
func (s EmbeddedShield) Evaluate(ctx context.Context, req *pb.EvaluateRequest) (*pb.Verdict, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	v, err := s.Pipeline.Evaluate(ctx, server.InputFromRequest(req))
	if err != nil {
		return nil, err
	}
	if v.GetDecision() == pb.VerdictDecision_VERDICT_DECISION_UNSPECIFIED {
		return nil, fmt.Errorf("shield pipeline answered without a decision")
	}
	return v, nil
}

// ReportOutcome has nowhere to go in-process: the embedded pipeline keeps
// no audit chain (the engine's own log records outcomes).
func (EmbeddedShield) ReportOutcome(context.Context, *pb.ReportOutcomeRequest) error { return nil }
