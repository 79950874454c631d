package crawbl

import (
	"context"
	"strings"

	middleware "github.com/grpc-ecosystem/go-grpc-middleware/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Verifier checks a crawbl bearer token and returns its user and
// workspace. shieldd/auth.HMAC is the one implementation (agentctl passes
// it in), so the door does not import the shield's packages.
type Verifier interface {
	Verify(token string) (user, workspace string, err error)
}

// Identity is the caller a valid token names.
type Identity struct{ User, Workspace string }

type identityKey struct{}

// identityFrom returns the caller's identity; false only when no
// Verifier is configured (tests of the door's logic alone).
func identityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// errUnauthenticated is the one answer to every failed check; why it
// failed is logged, never sent.
var errUnauthenticated = status.Error(codes.Unauthenticated, "authentication required: missing or invalid bearer token")

// exempt reports the methods served without a token: gRPC health and
// reflection.
func exempt(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/"+healthpb.Health_ServiceDesc.ServiceName+"/") ||
		strings.HasPrefix(fullMethod, "/grpc.reflection.v1.ServerReflection/") ||
		strings.HasPrefix(fullMethod, "/grpc.reflection.v1alpha.ServerReflection/")
}

func (s *Server) authenticate(ctx context.Context, method string) (context.Context, error) {
	v := metadata.ValueFromIncomingContext(ctx, "authorization")
	why := ""
	var id Identity
	switch {
	case len(v) == 0:
		why = "no authorization"
	case len(v) > 1:
		why = "more than one authorization value"
	default:
		scheme, tok, ok := strings.Cut(v[0], " ")
		if !ok || !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(tok) == "" {
			why = "authorization is not a bearer token"
			break
		}
		var err error
		if id.User, id.Workspace, err = s.opts.Verifier.Verify(strings.TrimSpace(tok)); err != nil {
			why = err.Error()
		}
	}
	if why != "" {
		s.log.Info("crawbl call refused", "call", method, "reason", why)
		return ctx, errUnauthenticated
	}
	return context.WithValue(ctx, identityKey{}, id), nil
}

// UnaryInterceptor checks the bearer token of every unary call.
func (s *Server) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if exempt(info.FullMethod) {
			return handler(ctx, req)
		}
		ctx, err := s.authenticate(ctx, info.FullMethod)
		if err != nil {
			return nil, err
		}
		return handler(ctx, req)
	}
}

// StreamInterceptor checks the bearer token of every stream when it opens.
func (s *Server) StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if exempt(info.FullMethod) {
			return handler(srv, ss)
		}
		ctx, err := s.authenticate(ss.Context(), info.FullMethod)
		if err != nil {
			return err
		}
		wrapped := middleware.WrapServerStream(ss)
		wrapped.WrappedContext = ctx
		return handler(srv, wrapped)
	}
}

// ServerOptions are the interceptors a gRPC server serving this door
// must have.
func (s *Server) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(s.UnaryInterceptor()), grpc.ChainStreamInterceptor(s.StreamInterceptor())}
}
