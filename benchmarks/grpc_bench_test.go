package benchmarks

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/parapet-dev/parapet/benchmarks/internal/testserver"
	"github.com/parapet-dev/parapet/benchmarks/internal/workload"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
)

// The gRPC pair runs Evaluate and the standard health check against the
// same in-process shieldd over loopback, with the same client and
// parallelism: the health check is the floor of what any RPC costs here,
// so the ratio isolates what a decision adds. ns/op is wall time per
// request across all goroutines (the inverse of throughput); "p50-ns" and
// "p99-ns" are per-request latencies with grpcParallelism × GOMAXPROCS
// requests in flight; "cpu-ns/op" is the process's CPU time per request,
// client and server together (both run here), which other load on the
// machine does not inflate as it does ns/op.

// grpcParallelism × GOMAXPROCS goroutines: 16 on 2 cores, like the load
// generator's default concurrency.
const grpcParallelism = 8

func dial(b *testing.B, addr string) *grpc.ClientConn {
	b.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cc.Close() })
	return cc
}

// runParallel runs call from parallel goroutines, each recording its own
// latencies (no shared state in the loop), and reports their percentiles.
func runParallel(b *testing.B, call func(ctx context.Context, i uint64) error) {
	ctx := context.Background()
	var next atomic.Uint64
	var (
		mu   sync.Mutex // guards perG; taken once per goroutine, after its loop
		perG [][]int64
	)
	b.ReportAllocs()
	b.SetParallelism(grpcParallelism)
	b.ResetTimer()
	cpu := processCPU(b)
	b.RunParallel(func(p *testing.PB) {
		lat := make([]int64, 0, b.N/grpcParallelism+1)
		for p.Next() {
			start := time.Now()
			if err := call(ctx, next.Add(1)); err != nil {
				b.Error(err)
				return
			}
			lat = append(lat, int64(time.Since(start)))
		}
		mu.Lock()
		perG = append(perG, lat)
		mu.Unlock()
	})
	b.StopTimer()
	reportCPU(b, cpu)
	var all []float64
	for _, lat := range perG {
		for _, ns := range lat {
			all = append(all, float64(ns))
		}
	}
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	b.ReportMetric(rank(all, 0.50), "p50-ns")
	b.ReportMetric(rank(all, 0.99), "p99-ns")
}

// BenchmarkGRPCEvaluate replays the corpus: after the first pass every
// decision is a cache hit, as in production's steady state.
func BenchmarkGRPCEvaluate(b *testing.B) {
	wl := loadWorkload(b)
	srv := testserver.Start(b, pipeline.Config{})
	client := pb.NewShieldServiceClient(dial(b, srv.GRPCAddr))
	reqs := make([]*pb.EvaluateRequest, len(wl.Items))
	for i, it := range wl.Items {
		reqs[i] = it.Proto("")
		if _, err := client.Evaluate(context.Background(), reqs[i]); err != nil {
			b.Fatalf("%s: %v", it.Name, err)
		}
	}
	runParallel(b, func(ctx context.Context, i uint64) error {
		_, err := client.Evaluate(ctx, reqs[i%uint64(len(reqs))])
		return err
	})
}

// BenchmarkGRPCEvaluateUncached makes every request distinct (see
// workload.DistinctID), so each one is decided from scratch.
func BenchmarkGRPCEvaluateUncached(b *testing.B) {
	wl := loadWorkload(b)
	srv := testserver.Start(b, pipeline.Config{})
	client := pb.NewShieldServiceClient(dial(b, srv.GRPCAddr))
	runParallel(b, func(ctx context.Context, i uint64) error {
		it := wl.Items[i%uint64(len(wl.Items))]
		_, err := client.Evaluate(ctx, it.Proto(workload.DistinctID(it.Request.Caller.WorkspaceID, "grpc", i)))
		return err
	})
}

// BenchmarkGRPCHealth is grpc.health.v1.Health/Check on the same server.
func BenchmarkGRPCHealth(b *testing.B) {
	srv := testserver.Start(b, pipeline.Config{})
	client := healthpb.NewHealthClient(dial(b, srv.GRPCAddr))
	req := &healthpb.HealthCheckRequest{}
	runParallel(b, func(ctx context.Context, _ uint64) error {
		_, err := client.Check(ctx, req)
		return err
	})
}
