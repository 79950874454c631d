package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/parapet-dev/parapet/observability"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/shieldd/auth"
)

// DefaultMaxMessageBytes bounds a gRPC message (and an HTTP body).
const DefaultMaxMessageBytes = 1 << 20

// GRPCOptions configure the gRPC server.
type GRPCOptions struct {
	Logger          *slog.Logger
	MaxMessageBytes int
	// Guard authenticates calls (health and reflection stay open); nil or
	// a Guard without an Authenticator lets every call through.
	Guard *auth.Guard
	// TLS serves gRPC over TLS; nil is plaintext.
	TLS *tls.Config
}

// NewGRPC builds the gRPC server with ShieldService, grpc.health.v1 and
// reflection registered. The returned health server lets the caller mark
// the service NOT_SERVING while draining.
func NewGRPC(svc *ShieldService, o GRPCOptions) (*grpc.Server, *health.Server) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	log := o.Logger
	recoverOpt := recovery.WithRecoveryHandlerContext(func(ctx context.Context, p any) error {
		log.ErrorContext(ctx, "panic in gRPC handler", "panic", p, "stack", string(debug.Stack()))
		return status.Error(codes.Internal, "internal error; the action was not evaluated")
	})
	logLevel := func(c codes.Code) logging.Level {
		switch c {
		case codes.OK, codes.Canceled:
			return logging.LevelDebug
		case codes.InvalidArgument, codes.ResourceExhausted, codes.NotFound, codes.Unauthenticated:
			return logging.LevelInfo
		}
		return logging.LevelError
	}
	logOpts := []logging.Option{logging.WithLogOnEvents(logging.FinishCall), logging.WithLevels(logLevel)}
	grpcLog := observability.GRPCLogger(log)
	guard := o.Guard
	if guard == nil {
		guard = &auth.Guard{}
	}
	opts := []grpc.ServerOption{
		// Calls run on long-lived workers instead of a new goroutine each:
		// an uncached decision needs a deeper stack than a goroutine
		// starts with (canonicalisation's JSON parser has a large frame),
		// and growing a fresh one by copying was a fifth of the uncached
		// server's CPU. A worker keeps its grown stack for later calls;
		// calls beyond the workers still get goroutines of their own.
		grpc.NumStreamWorkers(streamWorkers()),
		grpc.ForceServerCodecV2(requestCodec{}),
		grpc.MaxRecvMsgSize(o.MaxMessageBytes),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 2 * time.Minute, Timeout: 20 * time.Second}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 15 * time.Second, PermitWithoutStream: true}),
		// Authentication comes first, so that an unauthenticated caller
		// learns nothing about its request either (Judge validates it).
		grpc.ChainUnaryInterceptor(
			recovery.UnaryServerInterceptor(recoverOpt),
			quietUnaryLogging(log, logLevel, logging.UnaryServerInterceptor(grpcLog, logOpts...)),
			guard.UnaryInterceptor(),
		),
		grpc.ChainStreamInterceptor(
			recovery.StreamServerInterceptor(recoverOpt),
			logging.StreamServerInterceptor(grpcLog, logOpts...),
			guard.StreamInterceptor(),
		),
	}
	if o.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(o.TLS)))
	}
	if svc.Shield.Tracing != nil {
		opts = append(opts, tracingOption(svc.Shield.Tracing))
	}
	s := grpc.NewServer(opts...)
	pb.RegisterShieldServiceServer(s, svc)
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(pb.ShieldService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s, hs)
	reflection.Register(s)
	return s, hs
}

// streamWorkers is how many call workers the gRPC server keeps: enough
// for the calls that run at once on every core, with some waiting on I/O.
func streamWorkers() uint32 { return uint32(16 * runtime.GOMAXPROCS(0)) }

// requestCodec is the proto codec, except that an EvaluateRequest whose
// wire form cannot be decoded (for example invalid UTF-8 in a string
// field, which only non-Go clients can send) is marked instead of failing,
// so the validator rejects it as InvalidArgument naming the problem rather
// than gRPC's generic Internal error.
type requestCodec struct{}

func (requestCodec) Name() string { return "proto" }

func (requestCodec) Marshal(v any) (mem.BufferSlice, error) {
	if r, ok := v.(*pb.EvaluateResponse); ok && fastJSON {
		if b, ok := marshalEvaluateResponse(r); ok {
			return b, nil
		}
	}
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("cannot marshal %T: not a proto message", v)
	}
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, err
	}
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

func (requestCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("cannot unmarshal into %T: not a proto message", v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	err := proto.Unmarshal(buf.ReadOnlyData(), m)
	if err != nil {
		if req, ok := m.(*pb.EvaluateRequest); ok {
			pb.MarkDecodeError(req, err)
			return nil
		}
	}
	return err
}
