package main

import (
	"bytes"
	"os"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/parapet-dev/parapet/benchmarks/internal/testserver"
	"github.com/parapet-dev/parapet/benchmarks/internal/workload"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
)

// TestRunHTTP drives a real shieldd's HTTP mirror, through the lean
// client and through net/http (--full-client): the books balance, the
// decisions are read from the JSON responses, and the server's CPU and GC
// share are reported (the test process is the server).
func TestRunHTTP(t *testing.T) {
	srv := testserver.Start(t, pipeline.Config{})
	wl := loadWorkload(t)
	for _, run := range []struct{ unique, full bool }{{false, false}, {true, false}, {false, true}} {
		unique := run.unique
		cfg := baseConfig(srv.GRPCAddr)
		cfg.Mode, cfg.Unique, cfg.FullClient = ModeBoth, unique, run.full
		cfg.HTTP, cfg.HTTPEvalPath, cfg.HTTPHealthPath = "http://"+srv.HTTPAddr, "/v1/evaluate", "/healthz"
		cfg.ServerPID, cfg.MetricsURL, cfg.Rounds = os.Getpid(), "http://"+srv.HTTPAddr+"/metrics", 2
		rep, err := Run(t.Context(), cfg, wl)
		if err != nil {
			t.Fatal(err)
		}
		checkPhase(t, rep.Health, ModeHealth)
		checkPhase(t, rep.Evaluate, ModeEvaluate)
		if unique && rep.Evaluate.Distinct != rep.Evaluate.Requests {
			t.Errorf("unique: %d of %d requests distinct", rep.Evaluate.Distinct, rep.Evaluate.Requests)
		}
		for _, p := range []*Phase{rep.Health, rep.Evaluate} {
			if p.GCCyclesPerSecond == nil || *p.GCCyclesPerSecond < 0 {
				t.Errorf("%s: GC cycles per second %v", p.Mode, p.GCCyclesPerSecond)
			}
			// runtime/metrics moves its CPU classes only when a collection
			// ends: turns in which none ended have no share to give.
			collected := p.GCCyclesPerSecond != nil && *p.GCCyclesPerSecond > 0
			if p.GCCPUShare == nil && collected || p.GCCPUShare != nil && (*p.GCCPUShare < 0 || *p.GCCPUShare > 1) {
				t.Errorf("%s: GC CPU share %v after %v GC cycles/s, want a fraction", p.Mode, p.GCCPUShare, p.GCCyclesPerSecond)
			}
			if p.GCServerCPUShare == nil || !(*p.GCServerCPUShare >= 0) {
				t.Errorf("%s: GC share of the server's CPU %v, want a share", p.Mode, p.GCServerCPUShare)
			}
		}
	}
	cfg := baseConfig(srv.GRPCAddr)
	cfg.Mode, cfg.HTTP = ModeStream, "http://"+srv.HTTPAddr
	if _, err := Run(t.Context(), cfg, wl); err == nil {
		t.Error("--http with --mode stream: no error")
	}
}

func TestDecisionOf(t *testing.T) {
	for body, want := range map[string]pb.VerdictDecision{
		`{"verdict":{"decision":"VERDICT_DECISION_BLOCK","tier":1}}`: pb.VerdictDecision_VERDICT_DECISION_BLOCK,
		`{"verdict": {"decision": "VERDICT_DECISION_ALLOW"}}`:        pb.VerdictDecision_VERDICT_DECISION_ALLOW,
		`{"result":{"decision":"escalate","rule":"x"}}`:              pb.VerdictDecision_VERDICT_DECISION_ESCALATE,
	} {
		if got, ok := decisionOf([]byte(body)); !ok || got != want {
			t.Errorf("decisionOf(%s) = %v, %v; want %v", body, got, ok, want)
		}
	}
	for _, body := range []string{`{}`, `{"result":{}}`, `{"decision":3}`, `{"decision":"maybe"}`, `{"decision":"`} {
		if d, ok := decisionOf([]byte(body)); ok {
			t.Errorf("decisionOf(%s) = %v; want none", body, d)
		}
	}
}

func TestParseStatCPU(t *testing.T) {
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime …
	got, err := parseStatCPU("42 (a) b) c) S 1 42 42 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 8 0")
	if err != nil || got != 3*time.Second {
		t.Errorf("parseStatCPU = %v, %v; want 3s", got, err)
	}
	if _, err := parseStatCPU("42 (x) S 1"); err == nil {
		t.Error("short stat line: no error")
	}
	if _, err := processCPU(os.Getpid()); err != nil {
		t.Errorf("processCPU(self): %v", err)
	}
}

// TestDistinctBodies: a unique HTTP body spliced from its corpus template
// is the request workload.DistinctID names, for every corpus action, bare
// and wrapped for OPA.
func TestDistinctBodies(t *testing.T) {
	wl := loadWorkload(t)
	for _, wrap := range []bool{false, true} {
		cfg := baseConfig("127.0.0.1:1")
		cfg.Unique, cfg.HTTP, cfg.HTTPInput = true, "http://127.0.0.1:1", wrap
		ht, err := newHTTPTarget(cfg, wl.Items, "n0nce")
		if err != nil {
			t.Fatal(err)
		}
		for k, it := range wl.Items {
			for _, i := range []uint64{0, 7, 1234567890123} {
				body := ht.distinctBody(k%cfg.Concurrency, k, i)
				if wrap {
					inner, ok := bytes.CutPrefix(body, []byte(`{"input":`))
					if !ok || !bytes.HasSuffix(inner, []byte("}")) {
						t.Fatalf("%s: not wrapped: %s", it.Name, body)
					}
					body = inner[:len(inner)-1]
				}
				got := &pb.EvaluateRequest{}
				if err := protojson.Unmarshal(body, got); err != nil {
					t.Fatalf("%s: %v\n%s", it.Name, err, body)
				}
				if want := it.Proto(workload.DistinctID(it.Request.Caller.WorkspaceID, "n0nce", i)); !proto.Equal(got, want) {
					t.Fatalf("%s, %d: spliced body\n%v\nwant\n%v", it.Name, i, got, want)
				}
			}
		}
	}
}
