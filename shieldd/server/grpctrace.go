package server

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/stats"
)

// unsampledSkipping passes otelgrpc's server handler only the events of
// calls whose span records. otelgrpc decides sampling in TagRPC and then
// handles every header, message and trailer event of the call (message
// ids, attribute sets, metric records) even when its span records
// nothing; for an unsampled call (99 in 100 at --trace-sample-ratio
// 0.01) those events change nothing: the span is a no-op and the
// handler's meter is the no-op meter (grpcOption).
type unsampledSkipping struct{ stats.Handler }

func (h unsampledSkipping) HandleRPC(ctx context.Context, rs stats.RPCStats) {
	if trace.SpanFromContext(ctx).IsRecording() {
		h.Handler.HandleRPC(ctx, rs)
	}
}
