package benchmarks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/parapet-dev/parapet/benchmarks/internal/testserver"
	"github.com/parapet-dev/parapet/benchmarks/internal/workload"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
)

// The HTTP trio is the gRPC one over shieldd's HTTP/JSON mirror: POST
// /v1/evaluate with the protojson body a JSON client sends, and GET
// /healthz, against an in-process shieldd over loopback, with
// grpcParallelism × GOMAXPROCS keep-alive connections. With -cpuprofile,
// the server's share of the profile is what runs under
// net/http.(*conn).serve (see README.md, "Profiling").

func httpClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxIdleConns: 256}}
}

func httpCall(ctx context.Context, c *http.Client, method, url string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, b)
	}
	return nil
}

func httpBody(b *testing.B, req *pb.EvaluateRequest) []byte {
	body, err := protojson.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// BenchmarkHTTPEvaluate replays the corpus: cache hits after the first pass.
func BenchmarkHTTPEvaluate(b *testing.B) {
	wl := loadWorkload(b)
	srv := testserver.Start(b, pipeline.Config{})
	c, url := httpClient(), "http://"+srv.HTTPAddr+"/v1/evaluate"
	bodies := make([][]byte, len(wl.Items))
	for i, it := range wl.Items {
		bodies[i] = httpBody(b, it.Proto(""))
		if err := httpCall(context.Background(), c, http.MethodPost, url, bodies[i]); err != nil {
			b.Fatalf("%s: %v", it.Name, err)
		}
	}
	runParallel(b, func(ctx context.Context, i uint64) error {
		return httpCall(ctx, c, http.MethodPost, url, bodies[i%uint64(len(bodies))])
	})
}

// BenchmarkHTTPEvaluateUncached makes every request distinct; the client
// encodes each body (as a real client would), which is in the profile too.
func BenchmarkHTTPEvaluateUncached(b *testing.B) {
	wl := loadWorkload(b)
	srv := testserver.Start(b, pipeline.Config{})
	c, url := httpClient(), "http://"+srv.HTTPAddr+"/v1/evaluate"
	runParallel(b, func(ctx context.Context, i uint64) error {
		it := wl.Items[i%uint64(len(wl.Items))]
		return httpCall(ctx, c, http.MethodPost, url, httpBody(b, it.Proto(workload.DistinctID(it.Request.Caller.WorkspaceID, "http", i))))
	})
}

// BenchmarkHTTPHealth is GET /healthz on the same server.
func BenchmarkHTTPHealth(b *testing.B) {
	srv := testserver.Start(b, pipeline.Config{})
	c, url := httpClient(), "http://"+srv.HTTPAddr+"/healthz"
	runParallel(b, func(ctx context.Context, _ uint64) error {
		return httpCall(ctx, c, http.MethodGet, url, nil)
	})
}
