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
	noopmetric "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc"

	"github.com/parapet-dev/parapet/observability"
	"github.com/parapet-dev/parapet/shieldd/shield"
)

// grpcOption is the otelgrpc server handler: it takes the W3C trace
// context the caller sent (shieldd/client sends it) and makes the RPC's
// server span, parent of the evaluation spans. Health checks, which load
// balancers send all the time, make none. Its per-RPC metrics are off:
// the pipeline keeps its own, cheaper ones; unsampled calls skip its
// per-event work (unsampledSkipping).
func tracingOption(t *shield.Tracing) grpc.ServerOption {
	return grpc.StatsHandler(unsampledSkipping{otelgrpc.NewServerHandler(
		otelgrpc.WithTracerProvider(t.Provider()),
		otelgrpc.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})),
		otelgrpc.WithMeterProvider(noopmetric.NewMeterProvider()),
		otelgrpc.WithFilter(filters.Not(filters.HealthCheck())),
	)})
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
	*shield.Tracing
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
		st.Tracing = shield.NewTracing(t.Provider)
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
