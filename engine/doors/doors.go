// Package doors holds what the engine's front doors share: each door
// (openclaude, crawbl, ...) is a thin adapter that speaks another agent
// protocol and drives the engine through the same calls ClientService
// makes — Submit, ResolveApproval — so every tool call that arrives
// through any door passes the one gate (shield → approval broker →
// action-hash re-check → execution) and lands in the one session store.
package doors

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/parapet-dev/parapet/engine"
)

// Engine is what a door needs of *engine.Engine.
type Engine interface {
	Submit(ctx context.Context, m engine.Message) (*engine.Turn, error)
	ResolveApproval(id, sessionID string, approved bool, by string) error
}

// Refusal returns the engine's code and message of a Submit error (a
// CodedError), or INTERNAL with the error's text.
func Refusal(err error) (code, msg string) {
	var ce *engine.CodedError
	if errors.As(err, &ce) {
		return ce.Code, ce.Msg
	}
	return "INTERNAL", err.Error()
}

// ClientFault reports whether an engine refusal code is about the
// request itself (the client can fix it), as opposed to the engine's state.
func ClientFault(code string) bool {
	switch code {
	case "INVALID_MESSAGE", "MESSAGE_TOO_LARGE", "INVALID_SESSION_ID", "SESSION_NOT_FOUND":
		return true
	}
	return false
}

// Transient reports whether an engine refusal code may go away by itself
// (the agent reconnects, another turn ends, the database recovers).
func Transient(code string) bool {
	switch code {
	case "AGENT_BUSY", "AGENT_UNAVAILABLE", "STORE_UNAVAILABLE":
		return true
	}
	return false
}

// CheckLoopback accepts a loopback HOST:PORT: a door there serves any
// local caller, as the web page does; elsewhere it needs RequireToken.
func CheckLoopback(flag, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: want a loopback HOST:PORT", flag, addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("%s %q: port %q is not a number from 0 to 65535", flag, addr, port)
	}
	if ip, err := netip.ParseAddr(host); host == "localhost" || (err == nil && ip.IsLoopback()) {
		return nil
	}
	return fmt.Errorf("%s %q: the host is not loopback (127.0.0.1, [::1] or localhost)", flag, addr)
}

// RequireToken returns server options that refuse every call (unary or
// streaming) not carrying "authorization: Bearer <token>" — the engine's
// client token — except gRPC health and reflection. A door listening
// beyond loopback serves only callers that hold the token, as
// ClientService does.
func RequireToken(token string) []grpc.ServerOption {
	ok := func(ctx context.Context, method string) error {
		if strings.HasPrefix(method, "/grpc.health.v1.Health/") || strings.HasPrefix(method, "/grpc.reflection.") {
			return nil
		}
		v := metadata.ValueFromIncomingContext(ctx, "authorization")
		if len(v) == 1 {
			if got, found := strings.CutPrefix(v[0], "Bearer "); found && token != "" &&
				subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1 {
				return nil
			}
		}
		return status.Error(codes.Unauthenticated, "this door needs the engine's client token (metadata \"authorization: Bearer TOKEN\", from WORKSPACE/.parapet/state.json)")
	}
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := ok(ctx, info.FullMethod); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := ok(ss.Context(), info.FullMethod); err != nil {
				return err
			}
			return h(srv, ss)
		}),
	}
}
