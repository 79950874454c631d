package pipeline

import (
	"testing"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// sliceProvider is a tracer provider whose type is not comparable.
type sliceProvider struct {
	noop.TracerProvider
	scopes []string
}

func TestTracerForKeepsComparableProvidersOnly(t *testing.T) {
	p := newTestPipeline(t, Config{})
	a, b := &countingProvider{}, &countingProvider{}
	p.tracerFor(a)
	p.tracerFor(a)
	p.tracerFor(b)
	p.tracerFor(b)
	if a.calls != 1 || b.calls != 1 {
		t.Fatalf("tracers asked %d and %d times, want once each while kept", a.calls, b.calls)
	}
	// Neither kept nor compared in a way that panics.
	for range 2 {
		p.tracerFor(sliceProvider{scopes: []string{"x"}})
	}
	p.tracerFor(a)
	if a.calls != 2 {
		t.Fatalf("provider a asked %d times, want 2 after another provider", a.calls)
	}
}

type countingProvider struct {
	noop.TracerProvider
	calls int
}

func (c *countingProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	c.calls++
	return c.TracerProvider.Tracer(name, opts...)
}
