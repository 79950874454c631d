package benchmarks

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/parapet-dev/parapet/observability"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/shieldd/audit"
	"github.com/parapet-dev/parapet/shieldd/auth"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/server"
	"github.com/parapet-dev/parapet/shieldd/shield"
	"github.com/parapet-dev/parapet/shieldd/tenant"
)

// BenchmarkEvaluateOverhead measures what HMAC authentication, the audit
// log in batch mode and tracing at 1 % sampling add to an Evaluate over
// gRPC. Real shieldd servers run in this process on 127.0.0.1:0, built as
// `shieldd serve` builds them (pipeline with metrics, tenant metrics,
// interceptors): "off" with all three off, "all" with all three on, and
// one with each alone. Tracing is set up exactly as serve does it
// (server.StartServeTracing with --trace-sample-ratio 0.01) and exports
// over OTLP/gRPC to a real receiver in this process. Each iteration calls
// every server once, starting with a different one each time, so all see
// the same machine; the corpus is replayed, so after warm-up decisions
// are cache hits and the overhead is at its largest relative to the call.
// Reported: p50 of each server and p50-ratio (all ÷ off, target ≤ 1.3).
// ns/op is the wall time of one round of calls.
func BenchmarkEvaluateOverhead(b *testing.B) {
	wl := loadWorkload(b)
	reqs := make([]*pb.EvaluateRequest, len(wl.Items))
	for i, it := range wl.Items {
		reqs[i] = it.Proto("")
	}
	servers, rcv, tracing := overheadServers(b, reqs)
	ctx := context.Background()
	for _, inflight := range []int{1, 16} {
		b.Run(fmt.Sprintf("inflight=%d", inflight), func(b *testing.B) {
			spansBefore := rcv.count()
			var next atomic.Int64
			var mu sync.Mutex
			lat := make([][]float64, len(servers))
			b.ResetTimer()
			var wg sync.WaitGroup
			for range inflight {
				wg.Go(func() {
					mine := make([][]float64, len(servers))
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							break
						}
						req := reqs[i%int64(len(reqs))]
						// Each iteration calls every server once, starting
						// with a different one each time.
						for k := range servers {
							c := (int(i) + k) % len(servers)
							start := time.Now()
							if _, err := servers[c].client.Evaluate(ctx, req); err != nil {
								b.Errorf("%s: %v", servers[c].name, err)
								return
							}
							mine[c] = append(mine[c], float64(time.Since(start)))
						}
					}
					mu.Lock()
					for c := range lat {
						lat[c] = append(lat[c], mine[c]...)
					}
					mu.Unlock()
				})
			}
			wg.Wait()
			b.StopTimer()
			p50 := make([]float64, len(servers))
			for c := range servers {
				if len(lat[c]) == 0 {
					return
				}
				slices.Sort(lat[c])
				p50[c] = rank(lat[c], 0.5)
				b.ReportMetric(p50[c], "p50-"+servers[c].name+"-ns")
			}
			b.ReportMetric(p50[1]/p50[0], "p50-ratio")
			// Spans really leave the process: about 2 per 100 calls on each
			// traced server (the RPC's server span and shieldd.evaluate).
			if tp, ok := tracing.Provider().(*sdktrace.TracerProvider); ok {
				tp.ForceFlush(context.Background())
			}
			b.ReportMetric(float64(rcv.count()-spansBefore)/float64(b.N), "spans/op")
		})
	}
}

// BenchmarkEvaluateOverheadCPU is the same servers one at a time, 16
// calls in flight, reporting "cpu-ns/op": this process's CPU time (client,
// servers, audit writer, span export, GC) per call. Unlike latency it is
// not inflated by waiting for a core, so the difference from "off" is
// what each feature costs per call on a busy machine.
func BenchmarkEvaluateOverheadCPU(b *testing.B) {
	wl := loadWorkload(b)
	reqs := make([]*pb.EvaluateRequest, len(wl.Items))
	for i, it := range wl.Items {
		reqs[i] = it.Proto("")
	}
	servers, _, _ := overheadServers(b, reqs)
	for _, s := range servers {
		b.Run(s.name, func(b *testing.B) {
			cpu := processCPU(b)
			runParallel(b, func(ctx context.Context, i uint64) error {
				_, err := s.client.Evaluate(ctx, reqs[i%uint64(len(reqs))])
				return err
			})
			reportCPU(b, cpu)
		})
	}
}

// overheadServer is one shieldd of the overhead benchmarks and a client
// that calls it as an engine would (with a bearer token when it
// authenticates).
type overheadServer struct {
	name   string
	client pb.ShieldServiceClient
}

// overheadServers starts "off", "all", "auth", "audit" and "tracing",
// each with its cache warmed on reqs, and the OTLP receiver the traced
// ones export to.
func overheadServers(b *testing.B, reqs []*pb.EvaluateRequest) ([]overheadServer, *otlpReceiver, *server.ServeTracing) {
	b.Helper()
	rcv := startOTLPReceiver(b)
	b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+rcv.addr) // http: plaintext
	b.Setenv("OTEL_TRACES_EXPORTER", "")
	b.Setenv("OTEL_TRACES_SAMPLER", "") // StartServeTracing sets these; restored after
	b.Setenv("OTEL_TRACES_SAMPLER_ARG", "")
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	b.Cleanup(func() { otel.SetTracerProvider(prevTP); otel.SetTextMapPropagator(prevProp) })
	tracing, err := server.StartServeTracing(context.Background(), "0.01")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tracing.Shutdown(context.Background()) })
	if tracing.Tracing == nil {
		b.Fatalf("tracing is off: %s", tracing.Sampler)
	}

	key := []byte("overhead benchmark key, long enough")
	hmac, err := auth.NewHMAC(key)
	if err != nil {
		b.Fatal(err)
	}
	token, err := auth.Mint(key, "bench-user", "bench-ws", time.Now())
	if err != nil {
		b.Fatal(err)
	}
	auditCfg := func() *audit.Config {
		return &audit.Config{
			Path: filepath.Join(b.TempDir(), "audit.jsonl"), Mode: audit.ModeBatch,
			MaxBytes: 100 << 20, BatchWindow: 10 * time.Millisecond, BatchMaxRecords: 512, // serve's defaults
		}
	}
	// "all" against "off" is the target; the single-feature servers show
	// where the difference comes from.
	servers := []struct {
		name  string
		authn auth.Authenticator
		trace *shield.Tracing
		audit *audit.Config
	}{
		{"off", nil, nil, nil},
		{"all", hmac, tracing.Tracing, auditCfg()},
		{"auth", hmac, nil, nil},
		{"audit", nil, nil, auditCfg()},
		{"tracing", nil, tracing.Tracing, nil},
	}
	out := make([]overheadServer, len(servers))
	ctx := context.Background()
	for i, s := range servers {
		addr := startShieldd(b, s.authn, s.trace, s.audit)
		var opts []grpc.DialOption
		if s.authn != nil {
			opts = append(opts, grpc.WithPerRPCCredentials(staticBearer(token)))
		}
		out[i] = overheadServer{s.name, pb.NewShieldServiceClient(dialWith(b, addr, opts...))}
		for range 2 { // warm the cache, which admits a request on its second sighting
			for _, r := range reqs {
				if _, err := out[i].client.Evaluate(ctx, r); err != nil {
					b.Fatalf("%s: %v", s.name, err)
				}
			}
		}
	}

	return out, rcv, tracing
}

// startShieldd serves the default pipeline as shieldd serve wires it;
// authn, tracing and auditCfg nil leave each off.
func startShieldd(b *testing.B, authn auth.Authenticator, tracing *shield.Tracing, auditCfg *audit.Config) string {
	b.Helper()
	m, err := observability.NewMetrics()
	if err != nil {
		b.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Config{})
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Instrument(m.Meter("parapet/shieldd"), m.Registry); err != nil {
		b.Fatal(err)
	}
	tm, err := tenant.NewMetrics(m.Registry, tenant.NewLabels(50, nil))
	if err != nil {
		b.Fatal(err)
	}
	svc := server.NewService(&shield.Shield{Pipeline: p, Version: "bench", TenantMetrics: tm, Tracing: tracing})
	if auditCfg != nil {
		if svc.Shield.Audit, err = audit.Open(*auditCfg); err != nil {
			b.Fatal(err)
		}
	}
	failures, err := auth.NewFailureCounter(m.Registry)
	if err != nil {
		b.Fatal(err)
	}
	d, err := server.Listen(svc, server.DaemonConfig{
		GRPCAddr: "127.0.0.1:0", Metrics: m.Handler, DrainTimeout: 5 * time.Second,
		Guard: &auth.Guard{Auth: authn, Failures: failures},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("shieldd: %v", err)
		}
		if svc.Shield.Audit != nil {
			if err := svc.Shield.Audit.Close(); err != nil {
				b.Errorf("audit log: %v", err)
			}
		}
	})
	return d.GRPCAddr()
}

func dialWith(b *testing.B, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	b.Helper()
	cc, err := grpc.NewClient(addr, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cc.Close() })
	return cc
}

// staticBearer sends "authorization: Bearer <token>" on plaintext loopback.
type staticBearer string

func (t staticBearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}
func (staticBearer) RequireTransportSecurity() bool { return false }

// otlpReceiver is a real OTLP/gRPC trace collector on 127.0.0.1 that
// counts the spans exported to it.
type otlpReceiver struct {
	collectorpb.UnimplementedTraceServiceServer
	addr  string
	spans atomic.Int64
}

func (r *otlpReceiver) Export(_ context.Context, req *collectorpb.ExportTraceServiceRequest) (*collectorpb.ExportTraceServiceResponse, error) {
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			r.spans.Add(int64(len(ss.GetSpans())))
		}
	}
	return &collectorpb.ExportTraceServiceResponse{}, nil
}

func (r *otlpReceiver) count() int64 { return r.spans.Load() }

func startOTLPReceiver(b *testing.B) *otlpReceiver {
	b.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	r := &otlpReceiver{addr: lis.Addr().String()}
	s := grpc.NewServer()
	collectorpb.RegisterTraceServiceServer(s, r)
	go s.Serve(lis)
	b.Cleanup(s.Stop)
	return r
}
