package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"

	"github.com/parapet-dev/parapet/rules/policy"
	"github.com/parapet-dev/parapet/shieldd/auth"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/server"
	"github.com/parapet-dev/parapet/shieldd/shield"
)

// These tests run verify mode against real in-process shieldd replicas
// that authenticate with a static token, as the compose stack does. They
// assert on counts only, never on timings.

const testToken = "verify-test-token-0123456789"

type replica struct {
	addr string
	stop func() // graceful: drains in-flight calls, returns when stopped
}

func startReplica(t *testing.T, policyName string) *replica {
	t.Helper()
	pol, err := policy.Embedded(policyName)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Config{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(tokens, []byte("tokens:\n  - name: loadgen\n    token: "+testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := auth.LoadStaticTokens(tokens)
	if err != nil {
		t.Fatal(err)
	}
	d, err := server.Listen(server.NewService(&shield.Shield{Pipeline: p, Version: "test"}), server.DaemonConfig{
		GRPCAddr: "127.0.0.1:0", DrainTimeout: 5 * time.Second, Guard: &auth.Guard{Auth: st},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx) }()
	var stopped bool
	r := &replica{addr: d.GRPCAddr()}
	r.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("replica %s: %v", r.addr, err)
		}
	}
	t.Cleanup(r.stop)
	return r
}

// replicaSet resolves the name test:///shieldd to the replicas, as DNS
// does for the compose network alias.
func replicaSet(rs ...*replica) grpc.DialOption {
	res := manual.NewBuilderWithScheme("test")
	var addrs []resolver.Address
	for _, r := range rs {
		addrs = append(addrs, resolver.Address{Addr: r.addr})
	}
	res.InitialState(resolver.State{Addresses: addrs})
	return grpc.WithResolvers(res)
}

func verifyConfig(replicas int, dial ...grpc.DialOption) Config {
	return Config{
		Addr: "test:///shieldd", Mode: ModeVerify, Concurrency: 4, Conns: 1, Duration: time.Minute,
		Token: testToken, Replicas: replicas, Wait: 30 * time.Second, DialOptions: dial,
	}
}

func loadCheckedT(t *testing.T) ([]checkedItem, WorkloadInfo) {
	t.Helper()
	items, info, err := loadChecked("")
	if err != nil {
		t.Fatal(err)
	}
	return items, info
}

// checkBooks asserts the invariants every verify report keeps.
func checkBooks(t *testing.T, rep *VerifyReport) {
	t.Helper()
	if rep.Sent != rep.Answered+rep.Errors {
		t.Errorf("sent %d != answered %d + errors %d", rep.Sent, rep.Answered, rep.Errors)
	}
	if got := sum(rep.Decisions); got != rep.Answered {
		t.Errorf("decisions %v sum to %d, want answered %d", rep.Decisions, got, rep.Answered)
	}
	if got := sum(rep.Replicas); got != rep.Answered {
		t.Errorf("replicas %v sum to %d, want answered %d", rep.Replicas, got, rep.Answered)
	}
	if got := sum(rep.ErrorsByCode); got != rep.Errors {
		t.Errorf("errors by code %v sum to %d, want %d", rep.ErrorsByCode, got, rep.Errors)
	}
	if rep.Attempts < rep.Sent {
		t.Errorf("%d attempts for %d calls", rep.Attempts, rep.Sent)
	}
	if rep.OK != (len(rep.Problems) == 0) {
		t.Errorf("ok %t with problems %q", rep.OK, rep.Problems)
	}
}

func TestVerifyCleanRun(t *testing.T) {
	a, b, c := startReplica(t, "default"), startReplica(t, "default"), startReplica(t, "default")
	items, info := loadCheckedT(t)
	cfg := verifyConfig(3, replicaSet(a, b, c))
	cfg.MaxRequests = int64(2 * len(items))
	rep, err := Verify(t.Context(), cfg, items, info, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkBooks(t, rep)
	if !rep.OK || rep.Sent != cfg.MaxRequests || rep.EndedBy != "max-requests" {
		t.Fatalf("report: ok %t, sent %d of %d, ended by %s, problems %q, mismatches %+v",
			rep.OK, rep.Sent, cfg.MaxRequests, rep.EndedBy, rep.Problems, rep.MismatchExamples)
	}
	if len(rep.ReadyReplicas) != 3 || len(rep.Replicas) != 3 {
		t.Errorf("ready %v, answered by %v: want all three replicas", rep.ReadyReplicas, rep.Replicas)
	}
	for _, d := range []string{"allow", "block", "escalate"} {
		if rep.Decisions[d] == 0 {
			t.Errorf("no %s decision in %v: the corpus exercises all three", d, rep.Decisions)
		}
	}
	var js bytes.Buffer
	if err := json.NewEncoder(&js).Encode(rep); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("JSON report does not read back: %v", err)
	}
	if _, ok := back["service_config"].(map[string]any)["loadBalancingConfig"]; !ok {
		t.Errorf("service_config missing from the report: %v", back["service_config"])
	}
}

// progressWatcher reads verify's progress lines as they are written.
type progressWatcher struct {
	w     *io.PipeWriter
	lines chan string
}

func watchProgress() *progressWatcher {
	r, w := io.Pipe()
	p := &progressWatcher{w: w, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			default: // nobody is waiting: drop
			}
		}
	}()
	return p
}

var answeredRE = regexp.MustCompile(`\banswered=(\d+)`)

// waitAnswered returns once a progress line reports at least n answers.
func (p *progressWatcher) waitAnswered(t *testing.T, n int64) int64 {
	t.Helper()
	bound := time.After(time.Minute) // a hang guard, not a timing assertion
	for {
		select {
		case line := <-p.lines:
			if m := answeredRE.FindStringSubmatch(line); m != nil {
				if got, _ := strconv.ParseInt(m[1], 10, 64); got >= n {
					return got
				}
			}
		case <-bound:
			t.Fatalf("no progress line reached answered=%d", n)
		}
	}
}

// TestVerifyReplicaStopsMidRun stops one of three replicas while the load
// runs: round robin and the retry policy must answer every decision.
func TestVerifyReplicaStopsMidRun(t *testing.T) {
	a, b, c := startReplica(t, "default"), startReplica(t, "default"), startReplica(t, "default")
	items, info := loadCheckedT(t)
	cfg := verifyConfig(3, replicaSet(a, b, c))
	cfg.Progress = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pw := watchProgress()
	type result struct {
		rep *VerifyReport
		err error
	}
	res := make(chan result, 1)
	go func() {
		rep, err := Verify(ctx, cfg, items, info, pw.w)
		res <- result{rep, err}
	}()
	before := pw.waitAnswered(t, 500)
	b.stop() // graceful, with calls in flight
	after := pw.waitAnswered(t, before+1000)
	cancel() // ends the run: in-flight calls finish and are counted
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	rep := r.rep
	checkBooks(t, rep)
	if !rep.OK || rep.Errors != 0 || rep.WrongAllows != 0 || rep.Mismatches != 0 {
		t.Fatalf("replica stop lost decisions: problems %q, errors %v, mismatches %+v", rep.Problems, rep.ErrorsByCode, rep.MismatchExamples)
	}
	if rep.EndedBy != "interrupted" || rep.Answered < after {
		t.Errorf("ended by %s with %d answered, want interrupted after at least %d", rep.EndedBy, rep.Answered, after)
	}
	if len(rep.Replicas) != 3 {
		t.Errorf("answered by %v, want all three replicas (one until it stopped)", rep.Replicas)
	}
	t.Logf("answered %d (%d before the stop), retried calls %d, by replica %v", rep.Answered, before, rep.RetriedCalls, rep.Replicas)
}

// TestVerifyErrorsAreLostNotAllowed: calls refused by the server (no
// token) are lost decisions, never counted as a verdict, and fail the run.
func TestVerifyErrorsAreLostNotAllowed(t *testing.T) {
	a := startReplica(t, "default")
	items, info := loadCheckedT(t)
	cfg := verifyConfig(1, replicaSet(a))
	cfg.Token, cfg.MaxRequests = "", 50
	rep, err := Verify(t.Context(), cfg, items, info, nil)
	if err != nil {
		t.Fatal(err) // health is open: the run starts
	}
	checkBooks(t, rep)
	if rep.OK || rep.Errors != 50 || rep.Answered != 0 || rep.ErrorsByCode["Unauthenticated"] != 50 {
		t.Fatalf("ok %t, errors %d %v, answered %d: want 50 Unauthenticated lost decisions", rep.OK, rep.Errors, rep.ErrorsByCode, rep.Answered)
	}
	if sum(rep.Decisions) != 0 || rep.WrongAllows != 0 {
		t.Errorf("errors counted as decisions: %v, wrong allows %d", rep.Decisions, rep.WrongAllows)
	}
	if len(rep.Problems) == 0 || !strings.Contains(rep.Problems[0], "fail closed") {
		t.Errorf("problems %q", rep.Problems)
	}
}

// TestVerifyReportsWrongAllow: a replica on the permissive policy allows
// actions the corpus expects blocked; verify names them and fails.
func TestVerifyReportsWrongAllow(t *testing.T) {
	a := startReplica(t, "permissive")
	items, info := loadCheckedT(t)
	cfg := verifyConfig(1, replicaSet(a))
	cfg.MaxRequests = int64(len(items))
	rep, err := Verify(t.Context(), cfg, items, info, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkBooks(t, rep)
	if rep.OK || rep.WrongAllows == 0 || rep.Errors != 0 {
		t.Fatalf("ok %t, wrong allows %d, errors %d: want wrong allows reported", rep.OK, rep.WrongAllows, rep.Errors)
	}
	if len(rep.MismatchExamples) == 0 || len(rep.MismatchExamples) > maxExamples {
		t.Errorf("%d mismatch examples", len(rep.MismatchExamples))
	}
	var text bytes.Buffer
	writeVerifyText(&text, rep)
	if !strings.Contains(text.String(), "FAILED") || !strings.Contains(text.String(), "ALLOW verdicts where the corpus expects") {
		t.Errorf("text report:\n%s", text.String())
	}
}

func TestVerifyWaitIsBounded(t *testing.T) {
	items, info := loadCheckedT(t)
	a := startReplica(t, "default")
	cfg := verifyConfig(2, replicaSet(a)) // two wanted, one exists
	cfg.Wait = 300 * time.Millisecond     // bounds the wait; not a timing assertion
	_, err := Verify(t.Context(), cfg, items, info, nil)
	if err == nil || !strings.Contains(err.Error(), "1 of 2 replicas") {
		t.Fatalf("err = %v, want a bounded wait naming 1 of 2 replicas", err)
	}
}

func TestVerifyExitCodes(t *testing.T) {
	a := startReplica(t, "default")
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	args := []string{"--mode", "verify", "--addr", a.addr, "--token-file", tokenFile, "--max-requests", "200", "--json"}
	if code := run(t.Context(), args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut.String())
	}
	var rep VerifyReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || !rep.OK || rep.Answered != 200 {
		t.Fatalf("report %+v, err %v:\n%s", rep, err, out.String())
	}

	out.Reset()
	errOut.Reset()
	args = []string{"--mode", "verify", "--addr", a.addr, "--max-requests", "20"} // no token
	if code := run(t.Context(), args, &out, &errOut); code != 1 {
		t.Fatalf("without a token: exit %d, want 1; stderr:\n%s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "decisions lost") || !strings.Contains(out.String(), "FAILED") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}

	errOut.Reset()
	if code := run(t.Context(), []string{"--mode", "verify", "--replicas", "0"}, &out, &errOut); code != 2 {
		t.Errorf("--replicas 0: exit %d, want 2", code)
	}
	if code := run(t.Context(), []string{"--mode", "verify", "--token-file", filepath.Join(t.TempDir(), "none")}, &out, &errOut); code != 2 {
		t.Errorf("missing token file: exit %d, want 2", code)
	}
}

// TestTokenInBenchmarkModes: --token-file also authenticates the other
// modes, on their plain connections.
func TestTokenInBenchmarkModes(t *testing.T) {
	a := startReplica(t, "default")
	cfg := baseConfig(a.addr)
	cfg.Mode, cfg.Warmup, cfg.MaxRequests, cfg.Token = ModeEvaluate, 0, 100, testToken
	rep, err := Run(t.Context(), cfg, loadWorkload(t))
	if err != nil {
		t.Fatal(err)
	}
	checkPhase(t, rep.Evaluate, ModeEvaluate)
}
