package shield

import (
	"context"

	"google.golang.org/grpc/status"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// Local serves in-process callers — the engine's embedded shield, the
// hooks, shieldd eval — with the same guarantees as a remote call: the
// same validation, audit record, metrics and decision guard, because it is
// the same Judge. Its methods match what shieldd/client offers, so a
// caller holds either behind one small interface of its own.
type Local struct {
	shield *Shield
}

// NewLocal serves s in-process.
func NewLocal(s *Shield) *Local { return &Local{shield: s} }

// Shield is the shield l serves.
func (l *Local) Shield() *Shield { return l.shield }

// Evaluate judges req. A non-nil error means the action must not run; it
// reads "Code: message", without gRPC's "rpc error: code = …" wording, as
// a local call crossed no RPC.
func (l *Local) Evaluate(ctx context.Context, req *pb.EvaluateRequest) (*pb.Verdict, error) {
	v, err := l.shield.Judge(ctx, req)
	if err != nil {
		return nil, localError{status.Convert(err)}
	}
	return v, nil
}

// ReportOutcome records what became of an escalated action in the audit
// chain (nothing when the shield keeps no audit log).
func (l *Local) ReportOutcome(ctx context.Context, req *pb.ReportOutcomeRequest) error {
	if _, err := l.shield.ReportOutcome(ctx, req); err != nil {
		return localError{status.Convert(err)}
	}
	return nil
}

// localError keeps the gRPC status (status.Code and status.FromError still
// see it) and reads as its message alone.
type localError struct{ st *status.Status }

func (e localError) Error() string              { return e.st.Code().String() + ": " + e.st.Message() }
func (e localError) GRPCStatus() *status.Status { return e.st }
