package main

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/parapet-dev/parapet/benchmarks/internal/testserver"
	"github.com/parapet-dev/parapet/benchmarks/internal/workload"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
)

// The lean client reads the same decision as the generated client, for
// every corpus action, from a real shieldd.
func TestLeanClientReadsTheDecision(t *testing.T) {
	wl := loadWorkload(t)
	srv := testserver.Start(t, pipeline.Config{})
	cc, err := grpc.NewClient(srv.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	client := pb.NewShieldServiceClient(cc)
	ctx := context.Background()
	for _, it := range wl.Items {
		req := it.Proto("")
		full, err := client.Evaluate(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", it.Name, err)
		}
		b, err := proto.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		for _, sent := range []any{encodedRequest(b), req} {
			lean, err := leanEvaluate(ctx, cc, sent)
			if err != nil {
				t.Fatalf("%s: %v", it.Name, err)
			}
			if !lean.hasVerdict || lean.decision != full.GetVerdict().GetDecision() {
				t.Fatalf("%s: lean client read %+v, generated client %v", it.Name, lean, full.GetVerdict().GetDecision())
			}
		}
	}
}

// FuzzReadDecision holds readDecision to proto.Unmarshal: whatever
// proto.Unmarshal decodes, readDecision reads without error and finds the
// same verdict and decision; whatever readDecision rejects, proto.Unmarshal
// rejects too. (readDecision does not check strings' UTF-8, so it may
// accept what proto.Unmarshal refuses.)
func FuzzReadDecision(f *testing.F) {
	for _, r := range []*pb.EvaluateResponse{
		{},
		{RequestId: "r1"},
		{Verdict: &pb.Verdict{}},
		{Verdict: &pb.Verdict{Decision: pb.VerdictDecision_VERDICT_DECISION_BLOCK, Tier: 1, Reasoning: "no", RuleIds: []string{"a", "b"},
			Findings: []*pb.Finding{{RuleId: "a", Evidence: "x"}}, Confinement: &pb.Confinement{ConnectPorts: []uint32{443}}}, RequestId: "r2"},
		{Verdict: &pb.Verdict{Decision: pb.VerdictDecision(-1)}},
	} {
		b, err := proto.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(append(b, b...)) // a repeated verdict merges
	}
	f.Add([]byte{0x0a, 0x02, 0x08})       // truncated verdict
	f.Add([]byte{0x08, 0x01})             // field 1 with the wrong wire type
	f.Add([]byte{0x0b, 0x08, 0x01, 0x0c}) // a group
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := readDecision(b)
		var want pb.EvaluateResponse
		werr := proto.Unmarshal(b, &want)
		if werr != nil {
			return
		}
		if err != nil {
			t.Fatalf("readDecision: %v; proto.Unmarshal decoded %v", err, &want)
		}
		if got.hasVerdict != (want.Verdict != nil) || got.decision != want.GetVerdict().GetDecision() {
			t.Fatalf("readDecision %+v; proto.Unmarshal %v", got, &want)
		}
	})
}

// TestDistinctWire: a request made distinct on the wire decodes to the
// request workload.DistinctID names, for every corpus action. One buffer
// takes them all in turn, as a worker's does.
func TestDistinctWire(t *testing.T) {
	var buf []byte
	for _, it := range loadWorkload(t).Items {
		d, err := newDistinctWire(it.Proto(""))
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range []uint64{0, 9, 1 << 40} {
			got := &pb.EvaluateRequest{}
			buf = d.encode(buf, "n0nce", i)
			if err := proto.Unmarshal(buf, got); err != nil {
				t.Fatalf("%s: %v", it.Name, err)
			}
			if want := it.Proto(workload.DistinctID(it.Request.Caller.WorkspaceID, "n0nce", i)); !proto.Equal(got, want) {
				t.Fatalf("%s, %d: got\n%v\nwant\n%v", it.Name, i, got, want)
			}
		}
	}
}

// TestContentWire: a request made distinct by content and spliced from
// its encoding for request 0 decodes to the request workload.Distinct
// builds, for every corpus action; actions without a string argument
// are left to the workspace splice. One buffer takes them all in turn,
// as a worker's does.
func TestContentWire(t *testing.T) {
	var buf []byte
	varied := 0
	for _, it := range loadWorkload(t).Items {
		c, err := newContentWire(it, "n0nce")
		if err != nil {
			t.Fatal(err)
		}
		if c.at < 0 {
			if want := it.Distinct(workload.VaryContent, "n0nce", 1); string(want.Payload) != string(it.Request.Payload) {
				t.Fatalf("%s: no splice point, but the content varies: %s", it.Name, want.Payload)
			}
			continue
		}
		varied++
		for _, i := range []uint64{0, 9, 123_456_789_012} {
			got := &pb.EvaluateRequest{}
			buf = c.encode(buf, i)
			if err := proto.Unmarshal(buf, got); err != nil {
				t.Fatalf("%s: %v", it.Name, err)
			}
			if want := workload.RequestProto(it.Distinct(workload.VaryContent, "n0nce", i), it.MinTier); !proto.Equal(got, want) {
				t.Fatalf("%s, %d: got\n%v\nwant\n%v", it.Name, i, got, want)
			}
		}
	}
	if varied == 0 {
		t.Fatal("no corpus action was varied by content")
	}
}
