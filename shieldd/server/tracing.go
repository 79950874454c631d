package server

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc/filters"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	noopmetric "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/parapet-dev/parapet/observability"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// EvaluateSpanName names the span each evaluation makes. Tier spans the
// pipeline makes are its children: the pipeline gets its context.
const EvaluateSpanName = "shieldd.evaluate"

const tracerName = "github.com/parapet-dev/parapet/shieldd/server"

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

// grpcOption is the otelgrpc server handler: it takes the W3C trace
// context the caller sent (shieldd/client sends it) and makes the RPC's
// server span, parent of the evaluation spans. Health checks, which load
// balancers send all the time, make none. Its per-RPC metrics are off:
// the pipeline keeps its own, cheaper ones; unsampled calls skip its
// per-event work (unsampledSkipping).
func (t *Tracing) grpcOption() grpc.ServerOption {
	return grpc.StatsHandler(unsampledSkipping{otelgrpc.NewServerHandler(
		otelgrpc.WithTracerProvider(t.provider),
		otelgrpc.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})),
		otelgrpc.WithMeterProvider(noopmetric.NewMeterProvider()),
		otelgrpc.WithFilter(filters.Not(filters.HealthCheck())),
	)})
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
				attribute.String("parapet.decision", decisionName(v.Decision)),
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

// TraceSampler is the sampler --trace-sample-ratio stands for. 0 records
// nothing, not even for a caller whose trace is sampled; above 0 the
// caller's decision is followed (parent-based), and traces that start at
// shieldd are kept at that ratio.
func TraceSampler(ratio float64) sdktrace.Sampler {
	if ratio <= 0 {
		return sdktrace.NeverSample()
	}
	return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))
}

// traceSamplerEnv is TraceSampler in the SDK's standard variables,
// OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG.
func traceSamplerEnv(ratio float64) (sampler, arg string) {
	if ratio <= 0 {
		return "always_off", ""
	}
	return "parentbased_traceidratio", strconv.FormatFloat(ratio, 'g', -1, 64)
}

// ParseTraceSampleRatio reads --trace-sample-ratio: "" is unset, else a
// number from 0 to 1.
func ParseTraceSampleRatio(s string) (ratio float64, set bool, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false, nil
	}
	r, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(r) || r < 0 || r > 1 {
		return 0, false, fmt.Errorf("--trace-sample-ratio must be a number from 0 to 1 (0.01 keeps 1 %% of traces), got %q", s)
	}
	return r, true, nil
}

// ServeTracing is tracing as shieldd serve sets it up.
type ServeTracing struct {
	// Tracing is nil when tracing is off.
	*Tracing
	// Sampler says what is sampled, for the start-up log.
	Sampler string
	// Shutdown exports the spans still buffered.
	Shutdown func(context.Context) error
}

// StartServeTracing installs the process's tracer provider
// (observability.NewTracing: OTLP export configured by the standard
// OTEL_* variables, W3C propagation) with the sampling of ratioFlag
// (--trace-sample-ratio; "" leaves OTEL_TRACES_SAMPLER, or the SDK's
// default parentbased_always_on, in charge). The flag is applied by
// setting OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG for this
// process, so it wins over values already there. Tracing is off, and
// costs nothing per call, when no exporter is configured or the ratio is 0.
func StartServeTracing(ctx context.Context, ratioFlag string) (*ServeTracing, error) {
	ratio, set, err := ParseTraceSampleRatio(ratioFlag)
	if err != nil {
		return nil, err
	}
	if set {
		name, arg := traceSamplerEnv(ratio)
		if err := os.Setenv("OTEL_TRACES_SAMPLER", name); err != nil {
			return nil, err
		}
		if err := os.Setenv("OTEL_TRACES_SAMPLER_ARG", arg); err != nil {
			return nil, err
		}
	}
	t, err := observability.NewTracing(ctx, "shieldd")
	if err != nil {
		return nil, err
	}
	st := &ServeTracing{Shutdown: t.Shutdown}
	switch {
	case !t.Exporting:
		st.Sampler = "off (no OTLP exporter configured: set OTEL_EXPORTER_OTLP_ENDPOINT)"
	case set && ratio == 0:
		st.Sampler = "off (--trace-sample-ratio 0)"
	default:
		st.Tracing = NewTracing(t.Provider)
		st.Sampler = os.Getenv("OTEL_TRACES_SAMPLER")
		if st.Sampler == "" {
			st.Sampler = "parentbased_always_on"
		}
		if arg := os.Getenv("OTEL_TRACES_SAMPLER_ARG"); arg != "" {
			st.Sampler += " " + arg
		}
	}
	return st, nil
}
