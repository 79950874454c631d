package server

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// quietUnaryLogging stands in for the go-grpc-middleware logging
// interceptor (full, built with the same level function) while calls
// that end OK are not logged at the logger's level (Debug is off, the
// default): that interceptor builds ~5 KB of fields for every call before
// it knows whether the line is wanted. Here an OK call costs nothing, and
// a failed one is logged only when its level is on, with the same
// message and fields the middleware writes.
func quietUnaryLogging(log *slog.Logger, level logging.CodeToLevel, full grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if log.Enabled(ctx, slog.Level(level(codes.OK))) {
			return full(ctx, req, info, handler)
		}
		start := time.Now()
		resp, err := handler(ctx, req)
		if err == nil {
			return resp, nil
		}
		code := status.Code(err)
		lvl := slog.Level(level(code))
		if !log.Enabled(ctx, lvl) {
			return resp, err
		}
		service, method, _ := strings.Cut(strings.TrimPrefix(info.FullMethod, "/"), "/")
		fields := []any{
			logging.SystemTag[0], logging.SystemTag[1],
			logging.ComponentFieldKey, logging.KindServerFieldValue,
			logging.ServiceFieldKey, service,
			logging.MethodFieldKey, method,
			logging.MethodTypeFieldKey, "unary",
		}
		if p, ok := peer.FromContext(ctx); ok {
			fields = append(fields, "peer.address", p.Addr.String())
		}
		fields = append(fields, "grpc.start_time", start.Format(time.RFC3339))
		if d, ok := ctx.Deadline(); ok {
			fields = append(fields, "grpc.request.deadline", d.Format(time.RFC3339))
		}
		ms := float32(time.Since(start).Nanoseconds()/1000) / 1000
		fields = append(fields, "grpc.code", code.String(), "grpc.error", fmt.Sprintf("%v", err), "grpc.time_ms", fmt.Sprintf("%v", ms))
		log.Log(ctx, lvl, "finished call", fields...)
		return resp, err
	}
}
