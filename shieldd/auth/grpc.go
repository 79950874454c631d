package auth

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	middleware "github.com/grpc-ecosystem/go-grpc-middleware/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
)

// IsOpenMethod reports whether a gRPC method is served without authentication:
// health checks, server reflection and ShieldService.Health (liveness).
func IsOpenMethod(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/"+healthpb.Health_ServiceDesc.ServiceName+"/") ||
		strings.HasPrefix(fullMethod, "/grpc.reflection.v1.ServerReflection/") ||
		strings.HasPrefix(fullMethod, "/grpc.reflection.v1alpha.ServerReflection/") ||
		fullMethod == "/openparallax.v1.ShieldService/Health"
}

// grpcCredentials collects the authorization metadata and TLS chain of a call.
func grpcCredentials(ctx context.Context) (Credentials, string) {
	var c Credentials
	// ValueFromIncomingContext reads one key; FromIncomingContext would copy
	// every header of the call, a third of what authentication costs.
	if v := metadata.ValueFromIncomingContext(ctx, "authorization"); len(v) == 1 {
		c.Authorization = v[0]
	} else if len(v) > 1 {
		c.Authorization = "multiple" // ambiguous: refuse rather than pick one
	}
	p, ok := peer.FromContext(ctx)
	if !ok {
		return c, ""
	}
	if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok {
		c.PeerCertificates = ti.State.PeerCertificates
	}
	return c, p.Addr.String()
}

// UnaryInterceptor authenticates unary calls.
func (g *Guard) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if g.Auth == nil || IsOpenMethod(info.FullMethod) {
			return handler(ctx, req)
		}
		c, addr := grpcCredentials(ctx)
		ctx, err := g.Check(ctx, c, info.FullMethod, addr)
		if err != nil {
			return nil, err
		}
		return handler(ctx, req)
	}
}

// StreamInterceptor authenticates streaming calls once, when they open.
func (g *Guard) StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if g.Auth == nil || IsOpenMethod(info.FullMethod) {
			return handler(srv, ss)
		}
		c, addr := grpcCredentials(ss.Context())
		ctx, err := g.Check(ss.Context(), c, info.FullMethod, addr)
		if err != nil {
			return err
		}
		wrapped := middleware.WrapServerStream(ss)
		wrapped.WrappedContext = ctx
		return handler(srv, wrapped)
	}
}

// HTTPCredentials collects the Authorization header and TLS chain of a request.
func HTTPCredentials(r *http.Request) Credentials {
	c := Credentials{}
	if v := r.Header.Values("Authorization"); len(v) == 1 {
		c.Authorization = v[0]
	} else if len(v) > 1 {
		c.Authorization = "multiple"
	}
	if r.TLS != nil {
		c.PeerCertificates = r.TLS.PeerCertificates
	}
	return c
}

// Config selects and configures an authentication mode.
type Config struct {
	Mode string
	// TokensFile is the static tokens file (ModeStatic).
	TokensFile string
	// HMACKey is the shared key (ModeHMAC); HMACSkew defaults to ±5 min.
	HMACKey  []byte
	HMACSkew time.Duration
	// ClientCAFile is the PEM CA bundle for client certificates (ModeMTLS).
	ClientCAFile string
	// TLSCertFile and TLSKeyFile enable TLS (required for ModeMTLS).
	TLSCertFile, TLSKeyFile string
}

// New builds the authenticator (nil for ModeNone) and the server TLS
// configuration (nil for plaintext).
func New(cfg Config) (Authenticator, *tls.Config, error) {
	var a Authenticator
	switch cfg.Mode {
	case ModeNone, "":
	case ModeStatic:
		if cfg.TokensFile == "" {
			return nil, nil, fmt.Errorf("--auth static needs a tokens file")
		}
		s, err := LoadStaticTokens(cfg.TokensFile)
		if err != nil {
			return nil, nil, err
		}
		a = s
	case ModeHMAC:
		h, err := NewHMAC(cfg.HMACKey)
		if err != nil {
			return nil, nil, err
		}
		if cfg.HMACSkew > 0 {
			h.Skew = cfg.HMACSkew
		}
		a = h
	case ModeMTLS:
		if cfg.ClientCAFile == "" || cfg.TLSCertFile == "" || cfg.TLSKeyFile == "" {
			return nil, nil, fmt.Errorf("--auth mtls needs a client CA, a server certificate and its key")
		}
		m, err := NewMTLS(cfg.ClientCAFile)
		if err != nil {
			return nil, nil, err
		}
		a = m
	default:
		return nil, nil, fmt.Errorf("auth mode %q: want none, static, hmac or mtls", cfg.Mode)
	}
	if cfg.TLSCertFile == "" && cfg.TLSKeyFile == "" {
		return a, nil, nil
	}
	tlsCfg, err := ServerTLS(cfg.TLSCertFile, cfg.TLSKeyFile, cfg.Mode == ModeMTLS)
	if err != nil {
		return nil, nil, err
	}
	return a, tlsCfg, nil
}

// IsLoopback reports whether a bound listener address only accepts
// connections from this machine.
func IsLoopback(addr net.Addr) bool {
	switch a := addr.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
