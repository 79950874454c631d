package tenant

import (
	"fmt"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// maxLimiters bounds the buckets kept. Tenants come from authenticated
// identities, but without authentication a request names its own tenant;
// the least recently seen bucket is dropped beyond this.
const maxLimiters = 10_000

// Limiter is a token bucket per tenant.
type Limiter struct {
	perSecond rate.Limit
	burst     int
	buckets   *lru.Cache[string, *rate.Limiter]
}

// NewLimiter allows each tenant perSecond requests a second on average
// and burst at once. It returns nil (no limit) when perSecond <= 0.
func NewLimiter(perSecond float64, burst int) *Limiter {
	if perSecond <= 0 {
		return nil
	}
	if burst <= 0 {
		burst = max(1, int(perSecond))
	}
	c, _ := lru.New[string, *rate.Limiter](maxLimiters)
	return &Limiter{perSecond: rate.Limit(perSecond), burst: burst, buckets: c}
}

// Allow takes a token from tenant's bucket, or returns a *LimitError.
func (l *Limiter) Allow(tenant string) error {
	if l == nil {
		return nil
	}
	b, ok := l.buckets.Get(tenant)
	if !ok {
		b = rate.NewLimiter(l.perSecond, l.burst)
		if prev, found, _ := l.buckets.PeekOrAdd(tenant, b); found {
			b = prev
		}
	}
	if !b.Allow() {
		return &LimitError{Tenant: tenant, PerSecond: float64(l.perSecond), Burst: l.burst}
	}
	return nil
}

// LimitError is a request over its tenant's rate limit. It converts to a
// gRPC ResourceExhausted status; the HTTP mirror answers 429.
type LimitError struct {
	Tenant    string
	PerSecond float64
	Burst     int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("tenant %q is over its rate limit of %g requests/s (burst %d); the action was not evaluated, retry later",
		e.Tenant, e.PerSecond, e.Burst)
}

// GRPCStatus makes the error a ResourceExhausted status.
func (e *LimitError) GRPCStatus() *status.Status {
	return status.New(codes.ResourceExhausted, e.Error())
}
