package shield

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/status"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// EvaluateSpanName names the span each evaluation makes. Tier spans the
// pipeline makes are its children: the pipeline gets its context.
const EvaluateSpanName = "shieldd.evaluate"

const tracerName = "github.com/parapet-dev/parapet/shieldd/shield"

// Tracing makes a span per evaluation and lets the gRPC server continue
// the caller's trace. A nil *Tracing traces nothing and costs nothing.
type Tracing struct {
	provider trace.TracerProvider
	tracer   trace.Tracer
}

// NewTracing traces with tp (nil: no tracing). Which spans are recorded is
// tp's sampler's choice; see TraceSampler.
func NewTracing(tp trace.TracerProvider) *Tracing {
	if tp == nil {
		return nil
	}
	return &Tracing{provider: tp, tracer: tp.Tracer(tracerName)}
}

// Provider is the tracer provider, or nil when t is.
func (t *Tracing) Provider() trace.TracerProvider {
	if t == nil {
		return nil
	}
	return t.provider
}

// startEvaluate starts the evaluation span, child of whatever span ctx
// carries. span is nil when tracing is off.
func (t *Tracing) startEvaluate(ctx context.Context) (context.Context, trace.Span) {
	if t == nil {
		return ctx, nil
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && !sc.IsSampled() {
		// Inside an RPC span that is not sampled (99 calls in 100 at 1 %):
		// a child would not be either, so skip making one. The pipeline's
		// tier spans see the unsampled parent and skip theirs too.
		return ctx, nil
	}
	return t.tracer.Start(ctx, EvaluateSpanName)
}

// endEvaluate records the outcome on a sampled span and ends it.
func endEvaluate(span trace.Span, req *pb.EvaluateRequest, tenant string, v *pb.Verdict, err error) {
	if span == nil {
		return
	}
	if span.IsRecording() { // unsampled spans skip building attributes
		attrs := []attribute.KeyValue{
			attribute.String("parapet.tenant", tenant),
			attribute.String("parapet.request_id", req.GetRequestId()),
		}
		if err != nil {
			attrs = append(attrs, attribute.String("parapet.decision", "error"))
			st := status.Convert(err)
			span.SetStatus(otelcodes.Error, st.Code().String()+": "+st.Message())
		} else {
			attrs = append(attrs,
				attribute.String("parapet.decision", v.Decision.Word()),
				attribute.Int("parapet.tier", int(v.Tier)),
				attribute.StringSlice("parapet.rule_ids", v.RuleIds),
				attribute.Bool("parapet.cache_hit", v.CacheHit),
				attribute.String("parapet.policy_version", v.PolicyVersion),
				attribute.String("parapet.action_type", v.ActionType),
			)
		}
		span.SetAttributes(attrs...)
	}
	span.End()
}
