package engine

import (
	"context"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// Shield judges actions. agentctl hands the engine either a remote shieldd
// (shieldd/client.Client) or the same shield in-process
// (shieldd/shield.Local); the engine knows neither. Any error means the
// action does not run, and so does a verdict without a decision.
type Shield interface {
	Evaluate(ctx context.Context, req *pb.EvaluateRequest) (*pb.Verdict, error)
	ReportOutcome(ctx context.Context, req *pb.ReportOutcomeRequest) error
}
