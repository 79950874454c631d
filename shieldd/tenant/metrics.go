package tenant

import (
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Label values for tenants that get no label of their own.
const (
	LabelOther = "other"
	LabelNone  = "none" // requests that name no tenant
)

// Labels maps tenants to metric label values, at most max distinct
// tenants: configured tenants first, in name order, then tenants in the
// order they are first seen; every later tenant is "other".
type Labels struct {
	mu     sync.RWMutex
	max    int
	labels map[string]string
}

// NewLabels admits the first max of configured (sorted by name).
func NewLabels(max int, configured []string) *Labels {
	l := &Labels{max: max, labels: map[string]string{}}
	names := slices.Clone(configured)
	slices.Sort(names)
	for _, n := range slices.Compact(names) {
		l.Label(n)
	}
	return l
}

// Label is tenant's label value.
func (l *Labels) Label(tenant string) string {
	if tenant == "" {
		return LabelNone
	}
	l.mu.RLock()
	v, ok := l.labels[tenant]
	full := len(l.labels) >= l.max
	l.mu.RUnlock()
	if ok {
		return v
	}
	if full {
		return LabelOther
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if v, ok := l.labels[tenant]; ok {
		return v
	}
	if len(l.labels) >= l.max {
		return LabelOther
	}
	l.labels[tenant] = tenant
	return tenant
}

// Metrics counts decisions and rate-limited requests per tenant label.
type Metrics struct {
	labels    *Labels
	decisions *prometheus.CounterVec
	limited   *prometheus.CounterVec
}

// NewMetrics registers parapet_shield_tenant_decisions_total{tenant,decision}
// and parapet_shield_tenant_rate_limited_total{tenant} on reg.
func NewMetrics(reg prometheus.Registerer, labels *Labels) (*Metrics, error) {
	m := &Metrics{
		labels: labels,
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parapet_shield_tenant_decisions_total",
			Help: "Verdicts by tenant (the first tenants by name; the rest are \"other\") and decision.",
		}, []string{"tenant", "decision"}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parapet_shield_tenant_rate_limited_total",
			Help: "Requests refused over their tenant's rate limit.",
		}, []string{"tenant"}),
	}
	for _, c := range []prometheus.Collector{m.decisions, m.limited} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Decision counts one verdict ("allow", "block", "escalate" or "error").
func (m *Metrics) Decision(tenant, decision string) {
	if m != nil {
		m.decisions.WithLabelValues(m.labels.Label(tenant), decision).Inc()
	}
}

// Limited counts one rate-limited request.
func (m *Metrics) Limited(tenant string) {
	if m != nil {
		m.limited.WithLabelValues(m.labels.Label(tenant)).Inc()
	}
}
