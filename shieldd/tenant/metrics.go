package tenant

import (
	"slices"
	"sync"
	"sync/atomic"

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
	// byTenant holds the counters of each tenant that has a label of its
	// own (at most labels.max of them, plus "" for none), resolved once:
	// WithLabelValues hashes both label values and takes a lock on every
	// call. Tenants counted as "other" are not kept here (they are
	// unbounded) and share otherCounters.
	byTenant      sync.Map // tenant → *tenantCounters
	otherCounters *tenantCounters
}

// decisionWords are the decisions Decision counts without a label lookup.
var decisionWords = [...]string{"allow", "block", "escalate", "error"}

// tenantCounters are one label's counters, each made on first use (so
// that only series that count something are exported, as before).
type tenantCounters struct {
	label     string
	decisions [len(decisionWords)]atomic.Pointer[counterRef]
	limited   atomic.Pointer[counterRef]
}

type counterRef struct{ prometheus.Counter }

func (m *Metrics) newCounters(label string) *tenantCounters { return &tenantCounters{label: label} }

// get is the counter in slot, made with make the first time.
func get(slot *atomic.Pointer[counterRef], make func() prometheus.Counter) prometheus.Counter {
	if c := slot.Load(); c != nil {
		return c.Counter
	}
	slot.CompareAndSwap(nil, &counterRef{make()}) // a racing maker got the same child of the vector
	return slot.Load().Counter
}

// counters are tenant's counters.
func (m *Metrics) counters(tenant string) *tenantCounters {
	if c, ok := m.byTenant.Load(tenant); ok {
		return c.(*tenantCounters)
	}
	label := m.labels.Label(tenant)
	if label == LabelOther && tenant != LabelOther {
		return m.otherCounters
	}
	c, _ := m.byTenant.LoadOrStore(tenant, m.newCounters(label))
	return c.(*tenantCounters)
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
	m.otherCounters = m.newCounters(LabelOther)
	return m, nil
}

// Decision counts one verdict ("allow", "block", "escalate" or "error").
func (m *Metrics) Decision(tenant, decision string) {
	if m == nil {
		return
	}
	for i, d := range decisionWords {
		if d == decision {
			c := m.counters(tenant)
			get(&c.decisions[i], func() prometheus.Counter { return m.decisions.WithLabelValues(c.label, d) }).Inc()
			return
		}
	}
	m.decisions.WithLabelValues(m.labels.Label(tenant), decision).Inc()
}

// Limited counts one rate-limited request.
func (m *Metrics) Limited(tenant string) {
	if m != nil {
		c := m.counters(tenant)
		get(&c.limited, func() prometheus.Counter { return m.limited.WithLabelValues(c.label) }).Inc()
	}
}
