package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/engine"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// percentile returns the p-th percentile (0-100) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i]
}

// BenchmarkToolCallRoundTrip measures one tool call as the agent sees it:
// ToolCallProposed(read_file of a small file) sent over a real gRPC stream
// to the engine, through the embedded shield (a cache hit from the third
// call: the cache keeps a verdict from its second sighting) and the tool, until the ToolResultDelivery arrives. ns/op is the
// mean; p50/p90 are reported as metrics, with the shield's and the tool's
// own p50 measured alone and overhead_p50 = p50 - shield_p50 - tool_p50:
// what the engine and the transport add per call.
func BenchmarkToolCallRoundTrip(b *testing.B) {
	h := newHarness(b, nil)
	if err := os.WriteFile(filepath.Join(h.ws, "small.txt"), []byte("line one\nline two\nline three\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	const args = `{"path":"small.txt"}`

	stream, _ := h.open(b, ready("atlas:"+h.eng.NewAgentToken(), sandboxedJSON))
	if d, err := stream.Recv(); err != nil || d.GetInitialToolDefs() == nil {
		b.Fatalf("no InitialToolDefs: %v %v", d, err)
	}
	if _, err := h.eng.WaitAgent(context.Background()); err != nil {
		b.Fatal(err)
	}
	tr, err := h.eng.Submit(context.Background(), engine.Message{Content: "read it, many times"})
	if err != nil {
		b.Fatal(err)
	}
	go func() { // a client following the turn, as SendMessage does
		for range tr.Events {
		}
	}()
	d, err := stream.Recv()
	if err != nil || d.GetProcess() == nil {
		b.Fatalf("no ProcessRequest: %v %v", d, err)
	}
	sid, mid := tr.SessionID, tr.MessageID

	roundTrip := func(ev *pb.AgentEvent) *pb.ToolResultDelivery {
		if err := stream.Send(ev); err != nil {
			b.Fatal(err)
		}
		d, err := stream.Recv()
		if err != nil {
			b.Fatal(err)
		}
		r := d.GetToolResult()
		if r == nil || r.GetIsError() {
			b.Fatalf("tool call failed: %v", d)
		}
		return r
	}
	roundTrip(proposal(sid, mid, "warmup", "read_file", args)) // fills the shield cache

	events := make([]*pb.AgentEvent, b.N)
	for i := range events {
		events[i] = proposal(sid, mid, "c"+strconv.Itoa(i), "read_file", args)
	}
	rt := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		roundTrip(events[i])
		rt[i] = time.Since(start)
	}
	b.StopTimer()

	// The shield alone, on the request the engine sends for this call.
	call, err := h.reg.Prepare("read_file", []byte(args))
	if err != nil {
		b.Fatal(err)
	}
	host, _ := os.Hostname()
	req := &pb.EvaluateRequest{ActionType: call.Name, PayloadJson: string(call.Payload), SessionId: sid, RequestId: "c0",
		Caller: &pb.CallerContext{EngineId: host + "-" + strconv.Itoa(os.Getpid()), AgentName: h.cfg.AgentName,
			WorkspaceRoot: h.cfg.Workspace, HomeDir: h.cfg.Home}}
	ctx := context.Background()
	shield := make([]time.Duration, b.N)
	for i := range b.N {
		start := time.Now()
		v, err := h.shield.Evaluate(ctx, req)
		shield[i] = time.Since(start)
		if err != nil || v.GetDecision() != pb.VerdictDecision_VERDICT_DECISION_ALLOW {
			b.Fatalf("shield: %v %v", v, err)
		}
	}
	// The tool alone.
	tool := make([]time.Duration, b.N)
	for i := range b.N {
		start := time.Now()
		res := h.reg.Execute(ctx, "read_file", []byte(args))
		tool[i] = time.Since(start)
		if res.IsError {
			b.Fatalf("tool: %s", res.Output)
		}
	}

	for _, s := range [][]time.Duration{rt, shield, tool} {
		slices.Sort(s)
	}
	p50, shieldP50, toolP50 := percentile(rt, 50), percentile(shield, 50), percentile(tool, 50)
	b.ReportMetric(float64(p50.Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(percentile(rt, 90).Nanoseconds()), "p90-ns")
	b.ReportMetric(float64(shieldP50.Nanoseconds()), "shield_p50-ns")
	b.ReportMetric(float64(toolP50.Nanoseconds()), "tool_p50-ns")
	b.ReportMetric(float64((p50 - shieldP50 - toolP50).Nanoseconds()), "overhead_p50-ns")
}
