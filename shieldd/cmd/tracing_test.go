package cmd

import (
	"bytes"
	"context"
	"encoding/hex"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/parapet-dev/parapet/internal/proctest"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/shieldd/shield"
)

// otlpReceiver is a real OTLP/gRPC trace collector on 127.0.0.1: it keeps
// every span exported to it, with its resource's service name.
type otlpReceiver struct {
	collectorpb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []receivedSpan
}

type receivedSpan struct {
	service string
	span    *tracepb.Span
}

func (r *otlpReceiver) Export(_ context.Context, req *collectorpb.ExportTraceServiceRequest) (*collectorpb.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, receivedSpan{service, s})
			}
		}
	}
	return &collectorpb.ExportTraceServiceResponse{}, nil
}

func (r *otlpReceiver) received() []receivedSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]receivedSpan(nil), r.spans...)
}

// startOTLPReceiver listens and points the standard OTEL_* environment at
// it; the process's tracing globals are restored when the test ends.
func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &otlpReceiver{}
	s := grpc.NewServer()
	collectorpb.RegisterTraceServiceServer(s, r)
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+lis.Addr().String()) // http: plaintext
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	// serve sets these from --trace-sample-ratio; t.Setenv restores them.
	t.Setenv("OTEL_TRACES_SAMPLER", "")
	t.Setenv("OTEL_TRACES_SAMPLER_ARG", "")
	tp, prop := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	t.Cleanup(func() { otel.SetTracerProvider(tp); otel.SetTextMapPropagator(prop) })
	return r
}

// serveForTracing runs `shieldd serve` with args until the returned stop
// is called, and dials it as an engine whose trace decision is sampled.
func serveForTracing(t *testing.T, args ...string) (client pb.ShieldServiceClient, log func() string, stop func()) {
	t.Helper()
	var stderr proctest.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- RunContext(ctx, append([]string{"shieldd", "serve", "--grpc-addr", "127.0.0.1:0", "--http-addr", "off"}, args...),
			&bytes.Buffer{}, &stderr)
	}()
	re := regexp.MustCompile(`grpc=(127\.0\.0\.1:\d+)`)
	var addr string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && addr == ""; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		cancel()
		t.Fatalf("serve did not report its address:\n%s", stderr.String())
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(otelgrpc.NewClientHandler(otelgrpc.WithPropagators(propagation.TraceContext{}),
			otelgrpc.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))))))
	if err != nil {
		t.Fatal(err)
	}
	stop = func() {
		conn.Close()
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Fatalf("serve exit %d\n%s", code, stderr.String())
			}
		case <-time.After(15 * time.Second):
			t.Fatal("serve did not stop")
		}
	}
	return pb.NewShieldServiceClient(conn), stderr.String, stop
}

// callTraced evaluates one action inside a sampled span of the caller's
// own and returns the caller's trace id.
func callTraced(t *testing.T, client pb.ShieldServiceClient) string {
	t.Helper()
	// Not the SDK's default sampler: that reads OTEL_TRACES_SAMPLER, which
	// serve has just set for shieldd.
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	ctx, span := tp.Tracer("engine").Start(context.Background(), "tool-call")
	defer span.End()
	if _, err := client.Evaluate(ctx, &pb.EvaluateRequest{ActionType: "read_file", PayloadJson: `{"path":"README.md"}`,
		Caller: &pb.CallerContext{WorkspaceRoot: "/w"}}); err != nil {
		t.Fatal(err)
	}
	return span.SpanContext().TraceID().String()
}

func TestServeExportsEvaluationSpans(t *testing.T) {
	rcv := startOTLPReceiver(t)
	client, log, stop := serveForTracing(t, "--trace-sample-ratio", "0.01")
	traceID := callTraced(t, client)
	if !strings.Contains(log(), `tracing="parentbased_traceidratio 0.01"`) {
		t.Errorf("start-up log does not state the sampling:\n%s", log())
	}
	stop() // shutting down exports what is buffered

	var eval, rpc *tracepb.Span
	for _, s := range rcv.received() {
		if s.service != "shieldd" {
			t.Errorf("span %q from service %q", s.span.GetName(), s.service)
		}
		switch s.span.GetName() {
		case shield.EvaluateSpanName:
			eval = s.span
		case "openparallax.v1.ShieldService/Evaluate":
			rpc = s.span
		}
	}
	if eval == nil || rpc == nil {
		t.Fatalf("received %v; want the evaluation span and the RPC's server span\n%s", rcv.received(), log())
	}
	if got := hex.EncodeToString(eval.GetTraceId()); got != traceID {
		t.Fatalf("evaluation span in trace %s, want the caller's %s", got, traceID)
	}
	if !bytes.Equal(eval.GetParentSpanId(), rpc.GetSpanId()) {
		t.Fatal("the evaluation span is not a child of the RPC's server span")
	}
	attrs := map[string]string{}
	for _, kv := range eval.GetAttributes() {
		attrs[kv.GetKey()] = kv.GetValue().String()
	}
	for _, k := range []string{"parapet.decision", "parapet.tier", "parapet.rule_ids", "parapet.cache_hit", "parapet.policy_version", "parapet.tenant"} {
		if _, ok := attrs[k]; !ok {
			t.Errorf("evaluation span lacks %s: %v", k, attrs)
		}
	}
}

func TestServeTracingOff(t *testing.T) {
	rcv := startOTLPReceiver(t)
	client, log, stop := serveForTracing(t, "--trace-sample-ratio", "0")
	callTraced(t, client)
	if !strings.Contains(log(), `tracing="off (--trace-sample-ratio 0)"`) {
		t.Errorf("start-up log does not say tracing is off:\n%s", log())
	}
	stop()
	if got := rcv.received(); len(got) != 0 {
		t.Fatalf("%d spans exported at ratio 0", len(got))
	}

	code, _, errOut := run(t, "serve", "--grpc-addr", "127.0.0.1:0", "--http-addr", "off", "--trace-sample-ratio", "5%")
	if code != 2 || !strings.Contains(errOut, "--trace-sample-ratio must be a number from 0 to 1") {
		t.Fatalf("bad ratio: exit %d, %q", code, errOut)
	}
}
