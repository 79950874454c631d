package client_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/shieldd/client"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/server"
	"github.com/parapet-dev/parapet/shieldd/shield"
)

// The caller's trace context must reach shieldd in the W3C traceparent
// header, so a verdict's span joins the engine's trace.
func TestTraceContextPropagates(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	defer func() { otel.SetTracerProvider(prevTP); otel.SetTextMapPropagator(prevProp) }()

	var mu sync.Mutex
	var seen []string
	capture := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		mu.Lock()
		seen = append(seen, md.Get("traceparent")...)
		mu.Unlock()
		return h(ctx, req)
	}
	p, err := pipeline.New(pipeline.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(grpc.UnaryInterceptor(capture))
	pb.RegisterShieldServiceServer(s, server.NewService(&shield.Shield{Pipeline: p}))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(lis)
	defer s.Stop()

	c, err := client.Dial(lis.Addr().String(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, span := tp.Tracer("test").Start(context.Background(), "tool-call")
	if _, err := c.Evaluate(ctx, request("ls")); err != nil {
		t.Fatal(err)
	}
	span.End()
	traceID := span.SpanContext().TraceID().String()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || !strings.Contains(seen[0], traceID) {
		t.Fatalf("traceparent seen by the server %q, want trace %s", seen, traceID)
	}
}
