package engine

// ClientService's credential: every call, unary or streaming, carries the
// engine's client token as "authorization: Bearer TOKEN" metadata. The
// process manager keeps the token in WORKSPACE/.parapet/state.json (mode
// 0600), where agentctl reads it; a process that cannot read that file
// cannot drive the engine or answer its approvals.

import (
	"context"
	"crypto/subtle"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// ClientAuthKey is the metadata key of the client token.
const ClientAuthKey = "authorization"

var errClientToken = status.Error(codes.Unauthenticated,
	"ClientService needs the engine's client token (metadata \"authorization: Bearer TOKEN\"); agentctl reads it from WORKSPACE/.parapet/state.json")

// ClientToken is the token every ClientService call must carry.
func (e *Engine) ClientToken() string { return e.cfg.ClientToken }

// clientTokenOK reports whether ctx's metadata carries the client token.
func (e *Engine) clientTokenOK(ctx context.Context) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(ClientAuthKey)
	if len(vals) != 1 {
		return false
	}
	got, ok := strings.CutPrefix(vals[0], "Bearer ")
	return ok && e.cfg.ClientToken != "" && subtle.ConstantTimeCompare([]byte(got), []byte(e.cfg.ClientToken)) == 1
}

// clientServiceDesc is ClientService's description with every handler
// checking the token first. Wrapping the handlers, rather than asking
// each host to install interceptors, means a server that registers
// ClientService cannot serve it unguarded, and a method added later is
// guarded too.
func (e *Engine) clientServiceDesc() *grpc.ServiceDesc {
	desc := pb.ClientService_ServiceDesc
	desc.Methods = make([]grpc.MethodDesc, len(pb.ClientService_ServiceDesc.Methods))
	for i, m := range pb.ClientService_ServiceDesc.Methods {
		h := m.Handler
		m.Handler = func(srv any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
			if !e.clientTokenOK(ctx) {
				return nil, errClientToken
			}
			return h(srv, ctx, dec, icpt)
		}
		desc.Methods[i] = m
	}
	desc.Streams = make([]grpc.StreamDesc, len(pb.ClientService_ServiceDesc.Streams))
	for i, s := range pb.ClientService_ServiceDesc.Streams {
		h := s.Handler
		s.Handler = func(srv any, stream grpc.ServerStream) error {
			if !e.clientTokenOK(stream.Context()) {
				return errClientToken
			}
			return h(srv, stream)
		}
		desc.Streams[i] = s
	}
	return &desc
}

// ClientCredentials sends token on every call, as ClientService requires
// (grpc.WithPerRPCCredentials).
func ClientCredentials(token string) credentials.PerRPCCredentials { return clientCreds(token) }

type clientCreds string

func (c clientCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{ClientAuthKey: "Bearer " + string(c)}, nil
}

// RequireTransportSecurity is false: the engine serves loopback only.
func (clientCreds) RequireTransportSecurity() bool { return false }
