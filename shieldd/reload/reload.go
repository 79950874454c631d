// Package reload re-reads shieldd's policy files while it serves: on
// SIGHUP, and when a watched file changes (watch.go). A reload swaps in
// what loads and keeps the running policy where the new file is broken;
// the error is logged, counted in metrics and reported by GetShieldStatus
// until a later reload succeeds.
package reload

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/parapet-dev/parapet/rules/policy"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/tenant"
)

// Tokens is a credential set re-read on SIGHUP (auth.StaticTokens).
type Tokens interface {
	Reload() error
	Len() int
}

// Config configures a Reloader.
type Config struct {
	// Pipeline is the running pipeline; its policy at New decides what is
	// re-read: a file is, an embedded policy is part of the binary and is not.
	Pipeline *pipeline.Pipeline
	// TenantDir holds <tenant>.yaml policies; "" when there are none.
	TenantDir string
	// Tokens are re-read on SIGHUP only; nil when there are none.
	Tokens Tokens
	Logger *slog.Logger
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// Reloader re-reads the default policy file and the tenant policy
// directory. SIGHUP and the file watcher share one Reloader, and its mutex
// makes their reloads take turns.
type Reloader struct {
	p          *pipeline.Pipeline
	policyFile string // absolute; "" for an embedded policy
	tenantDir  string // absolute; "" without tenant policies
	tokens     Tokens
	log        *slog.Logger
	now        func() time.Time

	mu sync.Mutex // one reload at a time
	// tenantVersions is the applied tenant set, tenant → policy version;
	// guarded by mu.
	tenantVersions map[string]string

	state     atomic.Pointer[state]
	succeeded atomic.Int64
	failed    atomic.Int64
}

// state is what the last reload left; replaced whole.
type state struct {
	policyErr   string       // the default policy file's problems
	tenantErr   *tenantError // nil when the tenant directory loaded
	lastSuccess time.Time    // the last reload that loaded everything (or New)
}

func (s *state) failing() bool { return s.policyErr != "" || s.tenantErr != nil }

// New builds a Reloader and loads the tenant policy directory, if any,
// into the pipeline: a broken directory at startup is an error.
func New(cfg Config) (*Reloader, error) {
	r := &Reloader{p: cfg.Pipeline, tokens: cfg.Tokens, log: cfg.Logger, now: cfg.Now}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.now == nil {
		r.now = time.Now
	}
	// policy.Embedded names its policies' Source "embedded:<name>"; every
	// other Source is the file the policy was read from.
	if src := r.p.Policy().Source; !strings.HasPrefix(src, "embedded:") {
		abs, err := filepath.Abs(src)
		if err != nil {
			return nil, fmt.Errorf("policy file %s: %w", src, err)
		}
		r.policyFile = abs
	}
	if cfg.TenantDir != "" {
		abs, err := filepath.Abs(cfg.TenantDir)
		if err != nil {
			return nil, fmt.Errorf("tenant policy dir %s: %w", cfg.TenantDir, err)
		}
		r.tenantDir = abs
		pols, err := tenant.LoadPolicyDir(r.tenantDir)
		if err != nil {
			return nil, err
		}
		if err := r.p.SetTenantPolicies(pols); err != nil {
			return nil, err
		}
		r.tenantVersions = versions(pols)
	}
	r.state.Store(&state{lastSuccess: r.now()})
	return r, nil
}

// PolicyFile is the default policy's file, or "" when it is embedded.
func (r *Reloader) PolicyFile() string { return r.policyFile }

// Tenants names the tenants with a policy of their own, sorted.
func (r *Reloader) Tenants() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.tenantVersions))
}

// Reload re-reads the default policy file and the tenant policy directory
// and swaps in each one that loads; one that does not keeps its running
// version. trigger says why, for the log. The error, when not nil, is the
// one GetShieldStatus reports until a later reload succeeds.
func (r *Reloader) Reload(trigger string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reloadLocked(trigger)
}

func (r *Reloader) reloadLocked(trigger string) error {
	prev := r.state.Load()
	next := &state{lastSuccess: prev.lastSuccess}
	var errs []string
	if r.policyFile != "" {
		if err := r.reloadPolicy(trigger); err != nil {
			next.policyErr = err.Error()
			errs = append(errs, next.policyErr)
		}
	}
	if r.tenantDir != "" {
		if err := r.reloadTenants(trigger); err != nil {
			next.tenantErr = newTenantError(r.tenantDir, err)
			errs = append(errs, next.tenantErr.full)
		}
	}
	if len(errs) > 0 {
		r.failed.Add(1)
		r.state.Store(next)
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	next.lastSuccess = r.now()
	r.succeeded.Add(1)
	r.state.Store(next)
	if prev.failing() {
		r.log.Info("reload: policy error cleared", "trigger", trigger)
	}
	return nil
}

func (r *Reloader) reloadPolicy(trigger string) error {
	running := r.p.Policy()
	pol, err := policy.LoadFile(r.policyFile)
	if err == nil && pol.Version == running.Version {
		r.log.Info("reload: policy unchanged", "trigger", trigger, "file", r.policyFile, "policy_version", pol.Version)
		return nil
	}
	if err == nil {
		err = r.p.SetPolicy(pol)
	}
	if err != nil {
		r.log.Error("reload: policy kept", "trigger", trigger, "file", r.policyFile,
			"policy_version", running.Version, "err", err)
		return err
	}
	r.log.Info("reload: policy", "trigger", trigger, "file", r.policyFile, "policy", pol.Name,
		"policy_version", pol.Version, "previous_version", running.Version, "rules", pol.RuleCount())
	return nil
}

func (r *Reloader) reloadTenants(trigger string) error {
	pols, err := tenant.LoadPolicyDir(r.tenantDir)
	if err != nil {
		r.log.Error("reload: tenant policies kept", "trigger", trigger, "dir", r.tenantDir, "err", err)
		return err
	}
	next := versions(pols)
	if maps.Equal(next, r.tenantVersions) {
		r.log.Info("reload: tenant policies unchanged", "trigger", trigger, "dir", r.tenantDir, "tenants", len(next))
		return nil
	}
	if err := r.p.SetTenantPolicies(pols); err != nil {
		r.log.Error("reload: tenant policies kept", "trigger", trigger, "dir", r.tenantDir, "err", err)
		return err
	}
	var added, changed, removed []string
	for name, v := range next {
		switch old, ok := r.tenantVersions[name]; {
		case !ok:
			added = append(added, name)
		case old != v:
			changed = append(changed, name)
		}
	}
	for name := range r.tenantVersions {
		if _, ok := next[name]; !ok {
			removed = append(removed, name)
		}
	}
	slices.Sort(added)
	slices.Sort(changed)
	slices.Sort(removed)
	r.tenantVersions = next
	r.log.Info("reload: tenant policies", "trigger", trigger, "dir", r.tenantDir, "tenants", len(next),
		"added", added, "changed", changed, "removed", removed)
	return nil
}

func versions(pols map[string]*policy.Policy) map[string]string {
	m := make(map[string]string, len(pols))
	for name, p := range pols {
		m[name] = p.Version
	}
	return m
}

// reloadTokens re-reads the static tokens file; its errors are logged
// (they are not policy errors), and the running tokens stay.
func (r *Reloader) reloadTokens() {
	if r.tokens == nil {
		return
	}
	if err := r.tokens.Reload(); err != nil {
		r.log.Error("reload: tokens kept", "err", err)
		return
	}
	r.log.Info("reload: tokens", "tokens", r.tokens.Len())
}

// HandleHangup reloads the policies and the tokens on every SIGHUP until
// ctx ends. The signal is caught from when HandleHangup returns.
func (r *Reloader) HandleHangup(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
			}
			r.mu.Lock()
			_ = r.reloadLocked("SIGHUP") // logged and recorded
			r.reloadTokens()
			r.mu.Unlock()
		}
	}()
}

// Status is a snapshot of the reload state.
type Status struct {
	// Err is the last reload's error, every file and line at fault; ""
	// once a reload succeeds.
	Err string
	// LastSuccess is when a reload last loaded every file (at first, when
	// the Reloader was built).
	LastSuccess time.Time
	// Succeeded and Failed count reloads.
	Succeeded, Failed int64
}

// Status reports the reload state.
func (r *Reloader) Status() Status {
	return Status{Err: r.PolicyError(), LastSuccess: r.state.Load().lastSuccess,
		Succeeded: r.succeeded.Load(), Failed: r.failed.Load()}
}

// PolicyError is the last reload's error naming every file and line at
// fault, or "" (server.PolicyErrorReporter).
func (r *Reloader) PolicyError() string {
	s := r.state.Load()
	var parts []string
	if s.policyErr != "" {
		parts = append(parts, s.policyErr)
	}
	if s.tenantErr != nil {
		parts = append(parts, s.tenantErr.full)
	}
	return strings.Join(parts, "\n")
}

// TenantPolicyError is the part of the last reload's error that tenant's
// callers may see: the default policy's problems (it is every tenant's
// fallback) and their own file's; other tenants' files are only counted,
// since their names and contents are not this tenant's business
// (server.PolicyErrorReporter).
func (r *Reloader) TenantPolicyError(tenantName string) string {
	s := r.state.Load()
	var parts []string
	if s.policyErr != "" {
		parts = append(parts, s.policyErr)
	}
	if s.tenantErr != nil {
		parts = append(parts, s.tenantErr.forTenant(tenantName))
	}
	return strings.Join(parts, "\n")
}

// tenantError is a failed load of the tenant directory, split by file so
// that each tenant can be shown only its own problems.
type tenantError struct {
	dir   string
	full  string
	lines []string // one problem line each, each starting with (or naming) its file
}

func newTenantError(dir string, err error) *tenantError {
	te := &tenantError{dir: dir, full: err.Error()}
	// tenant.LoadPolicyDir's error is a header line, then problems that
	// each begin with their file's path (a policy.LoadError adds one
	// "file:line: …" line per problem).
	for i, line := range strings.Split(te.full, "\n") {
		if line = strings.TrimSpace(line); i > 0 && line != "" {
			te.lines = append(te.lines, line)
		}
	}
	return te
}

func (te *tenantError) forTenant(name string) string {
	var own []string
	if tenant.ValidName(name) {
		for _, ext := range []string{".yaml", ".yml"} {
			path := filepath.Join(te.dir, name+ext) + ":"
			for _, line := range te.lines {
				if strings.Contains(line, path) && !slices.Contains(own, line) {
					own = append(own, line)
				}
			}
		}
	}
	var b strings.Builder
	b.WriteString("tenant policies were not reloaded; the running ones stay")
	for _, line := range own {
		b.WriteString("\n  ")
		b.WriteString(line)
	}
	if others := len(te.lines) - len(own); others > 0 {
		fmt.Fprintf(&b, "\n  %d problem(s) in other tenants' policy files (the server log names them)", others)
	}
	return b.String()
}

// Instrument exports the reload state through meter:
// parapet.shield.policy.reloads{result="ok"|"error"} (reloads since
// start), parapet.shield.policy.reload_error (1 while the last reload's
// error stands) and parapet.shield.policy.last_reload_success_timestamp
// (Unix seconds).
func (r *Reloader) Instrument(meter metric.Meter) error {
	reloads, err := meter.Int64ObservableCounter("parapet.shield.policy.reloads",
		metric.WithDescription("Policy reloads (SIGHUP or a watched file change) by result."))
	if err != nil {
		return err
	}
	failing, err := meter.Int64ObservableGauge("parapet.shield.policy.reload_error",
		metric.WithDescription("1 while the last policy reload failed and the previous policy is still running; 0 otherwise."))
	if err != nil {
		return err
	}
	last, err := meter.Float64ObservableGauge("parapet.shield.policy.last_reload_success_timestamp",
		metric.WithUnit("s"),
		metric.WithDescription("Unix time of the last reload that loaded every policy file (or of startup)."))
	if err != nil {
		return err
	}
	ok := metric.WithAttributeSet(attribute.NewSet(attribute.String("result", "ok")))
	bad := metric.WithAttributeSet(attribute.NewSet(attribute.String("result", "error")))
	_, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s := r.state.Load()
		o.ObserveInt64(reloads, r.succeeded.Load(), ok)
		o.ObserveInt64(reloads, r.failed.Load(), bad)
		var v int64
		if s.failing() {
			v = 1
		}
		o.ObserveInt64(failing, v)
		o.ObserveFloat64(last, float64(s.lastSuccess.UnixNano())/1e9)
		return nil
	}, reloads, failing, last)
	return err
}
