package tenant

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const strictPolicy = "version: 1\nname: strict-acme\ndeny:\n  - id: no-writes\n    match:\n      action: [write_file]\n"

func TestLoadPolicyDir(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "acme.yaml"), []byte(strictPolicy), 0o600)
	os.WriteFile(filepath.Join(dir, "beta.yml"), []byte(strictPolicy), 0o600)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("not a policy"), 0o600)
	pols, err := LoadPolicyDir(dir)
	if err != nil || len(pols) != 2 || pols["acme"] == nil || pols["beta"] == nil {
		t.Fatalf("%v %v", pols, err)
	}
	os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("version: 1\ndeny:\n  - id: x\n    mach: {}\n"), 0o600)
	if _, err := LoadPolicyDir(dir); err == nil || !strings.Contains(err.Error(), "broken.yaml") {
		t.Fatalf("a broken file did not fail the set: %v", err)
	}
	if _, err := LoadPolicyDir(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a missing dir loaded")
	}
	for _, bad := range []string{"", "..", "a/b", ".hidden", strings.Repeat("a", 200)} {
		if ValidName(bad) {
			t.Errorf("%q accepted as a tenant name", bad)
		}
	}
}

func TestLimiterPerTenant(t *testing.T) {
	// A refill of one token per 1000 s: nothing refills during the test.
	l := NewLimiter(0.001, 2)
	for range 2 {
		if err := l.Allow("acme"); err != nil {
			t.Fatal(err)
		}
	}
	err := l.Allow("acme")
	var le *LimitError
	if !errors.As(err, &le) || status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "rate limit of 0.001 requests/s (burst 2)") {
		t.Fatalf("over the limit: %v", err)
	}
	if err := l.Allow("beta"); err != nil {
		t.Fatalf("another tenant's bucket was used: %v", err)
	}
	if NewLimiter(0, 0).Allow("x") != nil {
		t.Fatal("a disabled limiter refused")
	}
}

func TestLabelsAreBounded(t *testing.T) {
	l := NewLabels(3, []string{"zeta", "alpha"})
	if l.Label("alpha") != "alpha" || l.Label("zeta") != "zeta" || l.Label("") != LabelNone {
		t.Fatal("configured tenants lack labels")
	}
	if l.Label("first-seen") != "first-seen" || l.Label("second-seen") != LabelOther {
		t.Fatal("labels beyond the bound")
	}
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, NewLabels(2, nil))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		m.Decision(fmt.Sprintf("t%02d", i), "allow")
	}
	m.Limited("t00")
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]float64{}
	for _, f := range fams {
		if f.GetName() != "parapet_shield_tenant_decisions_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			series[m.GetLabel()[1].GetValue()] = m.GetCounter().GetValue() // labels sorted: decision, tenant
		}
	}
	if len(series) != 3 || series[LabelOther] != 48 {
		t.Fatalf("series for 50 tenants: %v; want t00, t01 and other=48", series)
	}
}

// TestMetricsConcurrentCounts: counters resolved once per tenant and made
// on first use add up under concurrent calls, for admitted tenants,
// "other" tenants and no tenant alike.
func TestMetricsConcurrentCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, NewLabels(2, []string{"a", "b"}))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				m.Decision([]string{"a", "b", "", fmt.Sprintf("x%d", g)}[i%4], []string{"allow", "block", "error", "odd"}[i%4])
				m.Limited("a")
			}
		})
	}
	wg.Wait()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, s := range f.GetMetric() {
			key := f.GetName()
			for _, l := range s.GetLabel() {
				key += "," + l.GetValue()
			}
			got[key] = s.GetCounter().GetValue()
		}
	}
	want := map[string]float64{
		"parapet_shield_tenant_decisions_total,allow,a":    200,
		"parapet_shield_tenant_decisions_total,block,b":    200,
		"parapet_shield_tenant_decisions_total,error,none": 200,
		"parapet_shield_tenant_decisions_total,odd,other":  200,
		"parapet_shield_tenant_rate_limited_total,a":       800,
	}
	if !maps.Equal(got, want) {
		t.Errorf("series %v; want %v", got, want)
	}
}
