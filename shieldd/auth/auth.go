// Package auth authenticates shieldd's callers: static bearer tokens from a
// file, the HMAC bearer token of the crawbl protocol, or mTLS client
// certificates. The authenticated identity selects the caller's tenant and
// overrides what a request body claims.
//
// Every failure answers the same Unauthenticated message; why it failed is
// logged server-side only, so a caller learns nothing about which part of
// its credentials was wrong.
package auth

import (
	"context"
	"crypto/x509"
	"fmt"
	"log/slog"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Modes.
const (
	ModeNone   = "none"
	ModeStatic = "static"
	ModeHMAC   = "hmac"
	ModeMTLS   = "mtls"
)

// Identity is an authenticated caller.
type Identity struct {
	// Method is the mode that authenticated the caller.
	Method string
	// Subject names the caller: a static token's name, the HMAC token's
	// user, the client certificate's URI SAN or CN.
	Subject string
	// Tenant is the tenant the caller is judged as; never empty.
	Tenant string
	// User and Workspace, when set, override the request's user_id and
	// workspace_id.
	User, Workspace string
}

// Principal is "method:subject", as recorded in the audit log.
func (id Identity) Principal() string { return id.Method + ":" + id.Subject }

// Credentials are what a caller presented.
type Credentials struct {
	// Authorization is the raw Authorization header / metadata value.
	Authorization string
	// PeerCertificates is the TLS client chain, leaf first (not verified).
	PeerCertificates []*x509.Certificate
}

// bearer returns the token of an "Authorization: Bearer <token>" value.
func (c Credentials) bearer() (string, error) {
	if c.Authorization == "" {
		return "", fail(ReasonMissing, "no authorization")
	}
	scheme, tok, ok := strings.Cut(c.Authorization, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(tok) == "" {
		return "", fail(ReasonMalformed, "authorization is not a bearer token")
	}
	return strings.TrimSpace(tok), nil
}

// Authenticator checks credentials.
type Authenticator interface {
	Authenticate(Credentials) (Identity, error)
	// Mode is ModeStatic, ModeHMAC or ModeMTLS.
	Mode() string
}

// Failure reasons: a small fixed set, used as a metric label.
const (
	ReasonMissing        = "missing"
	ReasonMalformed      = "malformed"
	ReasonBadSignature   = "bad_signature"
	ReasonExpired        = "expired"
	ReasonUnknownToken   = "unknown_token"
	ReasonBadCertificate = "bad_certificate"
)

// Error is why authentication failed. It is logged, never sent.
type Error struct {
	Reason string
	Detail string
}

func (e *Error) Error() string { return e.Reason + ": " + e.Detail }

func fail(reason, format string, args ...any) *Error {
	return &Error{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// ErrUnauthenticated is the one answer to every failed authentication.
var ErrUnauthenticated = status.Error(codes.Unauthenticated, "authentication required: missing or invalid credentials")

type ctxKey struct{}

// NewContext returns ctx carrying id.
func NewContext(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// FromContext returns the caller's identity; false when authentication is off.
func FromContext(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(ctxKey{}).(Identity)
	return id, ok
}

// Guard applies an Authenticator to gRPC calls and HTTP requests.
type Guard struct {
	// Auth is nil when authentication is off: calls pass without identity.
	Auth   Authenticator
	Logger *slog.Logger
	// Failures counts failed authentications by reason (optional).
	Failures *prometheus.CounterVec
}

// NewFailureCounter registers parapet_shield_auth_failures_total on reg.
func NewFailureCounter(reg prometheus.Registerer) (*prometheus.CounterVec, error) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "parapet_shield_auth_failures_total",
		Help: "Calls refused as unauthenticated, by reason.",
	}, []string{"reason"})
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	for _, r := range []string{ReasonMissing, ReasonMalformed, ReasonBadSignature, ReasonExpired, ReasonUnknownToken, ReasonBadCertificate} {
		c.WithLabelValues(r)
	}
	return c, nil
}

// Check authenticates c for the call named what (a method or path) from
// peer, and returns ctx with the identity. The error is always
// ErrUnauthenticated; the reason goes to the log.
func (g *Guard) Check(ctx context.Context, c Credentials, what, peer string) (context.Context, error) {
	if g == nil || g.Auth == nil {
		return ctx, nil
	}
	id, err := g.Auth.Authenticate(c)
	if err != nil {
		reason := ReasonMalformed
		if ae, ok := err.(*Error); ok {
			reason = ae.Reason
		}
		if g.Failures != nil {
			g.Failures.WithLabelValues(reason).Inc()
		}
		if g.Logger != nil {
			g.Logger.InfoContext(ctx, "authentication failed", "mode", g.Auth.Mode(), "call", what, "peer", peer, "reason", err.Error())
		}
		return ctx, ErrUnauthenticated
	}
	return NewContext(ctx, id), nil
}
