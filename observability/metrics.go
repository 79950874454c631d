// Package observability sets up metrics, logging and (later) tracing for
// Parapet's daemons.
package observability

import (
	"net/http"
	"regexp"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// Metrics is an OpenTelemetry meter provider exported in the Prometheus
// text format, with Go runtime and process collectors alongside.
type Metrics struct {
	Provider *sdkmetric.MeterProvider
	// Handler serves GET /metrics.
	Handler http.Handler
	// Registry takes native Prometheus collectors, for hot paths where a
	// synchronous OTel instrument costs too much.
	Registry *prometheus.Registry
}

// NewMetrics creates a meter provider whose instruments are served by
// Handler. Each call has its own registry, so tests can run several.
func NewMetrics() (*Metrics, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		// Plus the runtime's CPU estimates (go_cpu_classes_gc_total_cpu_seconds_total
		// over go_cpu_classes_total_cpu_seconds_total is the garbage
		// collector's share), which the memory limit's tuning is judged by.
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
			collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/cpu/classes/(gc/total|total):cpu-seconds$`)})),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo())
	if err != nil {
		return nil, err
	}
	return &Metrics{
		Provider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp)),
		Handler:  promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}),
		Registry: reg,
	}, nil
}

// Meter returns a named meter.
func (m *Metrics) Meter(name string) metric.Meter { return m.Provider.Meter(name) }
