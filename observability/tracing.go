package observability

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
)

// Tracing is the process's tracer provider. Spans are always created, so
// trace context reaches the services a process calls; they are exported
// over OTLP only when the standard OTEL_* environment asks for it
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or
// OTEL_TRACES_EXPORTER=otlp). Sampling follows OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG, as the SDK reads them (default: parent-based,
// always on).
type Tracing struct {
	Provider *sdktrace.TracerProvider
	// Exporting says whether spans leave the process.
	Exporting bool
}

// NewTracing installs a tracer provider and the W3C trace-context
// propagator as the process's globals.
func NewTracing(ctx context.Context, service string) (*Tracing, error) {
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(service)))
	if err != nil {
		return nil, fmt.Errorf("tracing resource: %w", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	t := &Tracing{}
	if otlpRequested() {
		exp, err := otlptracegrpc.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("OTLP trace exporter: %w", err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
		t.Exporting = true
	}
	t.Provider = sdktrace.NewTracerProvider(opts...)
	otel.SetTracerProvider(t.Provider)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return t, nil
}

// Shutdown flushes and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error { return t.Provider.Shutdown(ctx) }

func otlpRequested() bool {
	if v := os.Getenv("OTEL_TRACES_EXPORTER"); v != "" {
		return v == "otlp"
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}
