package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/parapet-dev/parapet/benchmarks/internal/workload"
	"github.com/parapet-dev/parapet/observability"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/corpus"
	"github.com/parapet-dev/parapet/rules/policytest"
	"github.com/parapet-dev/parapet/shieldd/client"
)

// Verify mode is the load generator as a client of replicated shieldd. It
// dials through shieldd/client, so it applies the shipped service config
// (round robin over every address the name resolves to, retries on
// UNAVAILABLE), waits until --replicas distinct replicas answer, then
// replays the labelled corpus and checks every verdict against its case's
// expected decision.
//
// A call that ends in an error is a lost decision. The gate fails closed
// (such an action is blocked), so it is never counted as any decision,
// least of all ALLOW; it is counted as an error and fails the run. So does
// any verdict other than the expected one, and an ALLOW where BLOCK or
// ESCALATE was expected is reported on its own (wrong_allows).

// VerifyReport is what a verify run found.
type VerifyReport struct {
	Addr string `json:"addr"`
	Mode string `json:"mode"`
	// ServiceConfig is the gRPC service config the client applied.
	ServiceConfig json.RawMessage `json:"service_config"`
	Concurrency   int             `json:"concurrency"`
	Clients       int             `json:"clients"`
	Distinct      uint64          `json:"distinct"`
	Unique        bool            `json:"unique"`
	MaxRequests   int64           `json:"max_requests"`
	Workload      WorkloadInfo    `json:"workload"`
	// ReadyReplicas answered a health check before the load started.
	ReadyReplicas []string `json:"ready_replicas"`
	WaitedSeconds float64  `json:"waited_seconds"`
	// EndedBy is duration, max-requests or interrupted (a signal).
	EndedBy        string  `json:"ended_by"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	// Sent = Answered + Errors.
	Sent     int64 `json:"sent"`
	Answered int64 `json:"answered"`
	// Errors are lost decisions: each would be a BLOCK at the gate.
	Errors       int64            `json:"errors"`
	ErrorsByCode map[string]int64 `json:"errors_by_code,omitempty"`
	// Decisions counts answered verdicts only; they sum to Answered.
	Decisions map[string]int64 `json:"decisions"`
	// Mismatches are verdicts other than the case's expected decision;
	// WrongAllows are the ALLOWs among them.
	Mismatches       int64      `json:"mismatches"`
	WrongAllows      int64      `json:"wrong_allows"`
	MismatchExamples []Mismatch `json:"mismatch_examples,omitempty"`
	// Attempts counts RPC attempts, retries included; RetriedCalls the
	// calls that needed more than one.
	Attempts     int64 `json:"attempts"`
	RetriedCalls int64 `json:"retried_calls"`
	// Replicas counts answered decisions by the replica (peer address)
	// that gave them.
	Replicas map[string]int64 `json:"replicas"`
	OK       bool             `json:"ok"`
	// Problems say why OK is false.
	Problems []string `json:"problems,omitempty"`
}

// Mismatch is one verdict that differed from the expected decision.
type Mismatch struct {
	Case     string   `json:"case"`
	Expected string   `json:"expected"`
	Got      string   `json:"got"`
	Tier     int32    `json:"tier"`
	RuleIDs  []string `json:"rule_ids,omitempty"`
	Replica  string   `json:"replica"`
}

// maxExamples bounds the mismatches kept for the report.
const maxExamples = 10

// checkedItem is one corpus action and the decision its case expects.
type checkedItem struct {
	item   workload.Item
	req    *pb.EvaluateRequest
	expect pb.VerdictDecision
}

func decisionName(d pb.VerdictDecision) string {
	if d.Decided() {
		return d.Word()
	}
	return d.String()
}

// loadChecked reads the cases in dir (the embedded corpus when "") with
// their expectations. Cases that expect an error are left out, as in the
// other modes.
func loadChecked(dir string) ([]checkedItem, WorkloadInfo, error) {
	var cases []policytest.Case
	var err error
	info := WorkloadInfo{Source: dir}
	if dir == "" {
		info.Source = "rules/corpus (embedded)"
		cases, err = policytest.LoadFS(corpus.FS, ".")
	} else {
		cases, err = policytest.LoadDir(dir)
	}
	if err != nil {
		return nil, info, fmt.Errorf("%s: %w", info.Source, err)
	}
	var items []checkedItem
	for _, c := range cases {
		want, ok := pb.ParseDecision(c.Expect)
		if !ok {
			info.Skipped++
			continue
		}
		it := workload.Item{Name: c.Name, Request: c.Request, MinTier: c.MinTier}
		items = append(items, checkedItem{item: it, req: it.Proto(""), expect: want})
	}
	if len(items) == 0 {
		return nil, info, fmt.Errorf("%s: no usable cases (%d expect an error)", info.Source, info.Skipped)
	}
	info.Actions = len(items)
	return items, info, nil
}

// runVerify is run for --mode verify.
func runVerify(ctx context.Context, cfg Config, corpusDir string, asJSON bool, stdout, stderr io.Writer) int {
	items, info, err := loadChecked(corpusDir)
	if err != nil {
		fmt.Fprintf(stderr, "loadgen: %v\n", err)
		return 2
	}
	// Client spans (shieldd/client's otelgrpc handler) go to an OTLP
	// collector when the standard OTEL_* environment names one, as in the
	// compose stack's observability profile; otherwise they stay local.
	tr, err := observability.NewTracing(ctx, "parapet-loadgen")
	if err != nil {
		fmt.Fprintf(stderr, "loadgen: %v\n", err)
		return 2
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tr.Shutdown(sctx); err != nil {
			fmt.Fprintf(stderr, "loadgen: flushing traces: %v\n", err)
		}
	}()
	rep, err := Verify(ctx, cfg, items, info, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "loadgen: %v\n", err)
		return 2
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "loadgen: %v\n", err)
			return 2
		}
	} else {
		writeVerifyText(stdout, rep)
	}
	if !rep.OK {
		fmt.Fprintf(stderr, "loadgen: verify failed: %s\n", strings.Join(rep.Problems, "; "))
		return 1
	}
	return 0
}

// callInfo is filled in for one call by the interceptor and stats handler
// below; it travels in the call's context.
type callInfo struct {
	peer     string
	attempts atomic.Int32
}

type callInfoKey struct{}

func withCallInfo(ctx context.Context) (context.Context, *callInfo) {
	ci := &callInfo{}
	return context.WithValue(ctx, callInfoKey{}, ci), ci
}

// observePeer records the replica that answered: with retries, the peer of
// the attempt that completed.
func observePeer(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	ci, _ := ctx.Value(callInfoKey{}).(*callInfo)
	if ci == nil {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	var p peer.Peer
	err := invoker(ctx, method, req, reply, cc, append(opts, grpc.Peer(&p))...)
	if p.Addr != nil {
		ci.peer = p.Addr.String()
	}
	return err
}

// attemptCounter counts the attempts of each call: gRPC reports a Begin
// per attempt, retries (and transparent retries) included.
type attemptCounter struct{}

func (attemptCounter) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (attemptCounter) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if b, ok := s.(*stats.Begin); ok && b.IsClient() {
		if ci, _ := ctx.Value(callInfoKey{}).(*callInfo); ci != nil {
			ci.attempts.Add(1)
		}
	}
}
func (attemptCounter) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (attemptCounter) HandleConn(context.Context, stats.ConnStats)                       {}

// verifyTally is the run's record. Verify mode checks correctness, not
// speed, so one mutex is fine.
type verifyTally struct {
	mu                         sync.Mutex
	sent, answered, errors     int64
	mismatches, wrongAllows    int64
	attempts, retried          int64
	byCode, decisions, replica map[string]int64
	examples                   []Mismatch
}

type verifier struct {
	cfg     Config
	items   []checkedItem
	clients []*client.Client
	seq     atomic.Uint64
	nonce   string
	t       verifyTally
}

// Verify waits for cfg.Replicas replicas, drives the load and checks every
// verdict. Progress lines, when asked for, go to progress. An error means
// the run could not start.
func Verify(ctx context.Context, cfg Config, items []checkedItem, info WorkloadInfo, progress io.Writer) (*VerifyReport, error) {
	cfg.Mode = ModeVerify
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	v := &verifier{cfg: cfg, items: items, nonce: newNonce()}
	v.t.byCode, v.t.decisions, v.t.replica = map[string]int64{}, map[string]int64{}, map[string]int64{}
	for _, d := range decisionNames[1:] {
		v.t.decisions[d] = 0
	}
	t0 := time.Now()
	ready, err := v.waitReady(ctx)
	if err != nil {
		return nil, err
	}
	defer v.close()
	rep := &VerifyReport{
		Addr: cfg.Addr, Mode: ModeVerify, ServiceConfig: json.RawMessage(compactJSON(client.ServiceConfig)),
		Concurrency: cfg.Concurrency, Clients: cfg.Conns, Distinct: cfg.Distinct, Unique: cfg.Unique,
		MaxRequests: cfg.MaxRequests, Workload: info, ReadyReplicas: ready, WaitedSeconds: time.Since(t0).Seconds(),
	}
	if progress != nil {
		fmt.Fprintf(progress, "loadgen: ready: %d replica(s) answer at %s: %s\n", len(ready), cfg.Addr, strings.Join(ready, " "))
		fmt.Fprintf(progress, "loadgen: load started: %d workers, at most %s\n", cfg.Concurrency, cfg.Duration)
	}

	start := time.Now()
	stopProgress := v.reportProgress(progress, start)
	var budget atomic.Int64
	budget.Store(cfg.MaxRequests)
	var exhausted atomic.Bool
	deadline := start.Add(cfg.Duration)
	var wg sync.WaitGroup
	for w := range cfg.Concurrency {
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(deadline) {
				if cfg.MaxRequests > 0 && budget.Add(-1) < 0 {
					exhausted.Store(true)
					return
				}
				v.call(v.clients[w%len(v.clients)])
			}
		})
	}
	wg.Wait()
	rep.ElapsedSeconds = time.Since(start).Seconds()
	stopProgress()
	switch {
	case ctx.Err() != nil:
		rep.EndedBy = "interrupted"
	case exhausted.Load():
		rep.EndedBy = "max-requests"
	default:
		rep.EndedBy = "duration"
	}
	v.fill(rep)
	return rep, nil
}

// call sends one request and records its outcome. The call's context is
// not the run's: a signal stops new requests, but one in flight finishes
// (within the client's timeout) and is counted.
func (v *verifier) call(c *client.Client) {
	i := v.seq.Add(1) - 1
	id, distinct := v.cfg.distinctID(i)
	if distinct {
		i = id
	}
	it := v.items[i%uint64(len(v.items))]
	req := it.req
	if distinct {
		req = it.item.Proto(workload.DistinctID(it.item.Request.Caller.WorkspaceID, v.nonce, i))
	}
	ctx, ci := withCallInfo(context.Background())
	verdict, err := c.Evaluate(ctx, req)

	t := &v.t
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sent++
	n := int64(ci.attempts.Load())
	t.attempts += n
	if n > 1 {
		t.retried++
	}
	if err != nil {
		// Fail closed: an error is a lost decision, never a verdict.
		t.errors++
		code := "no_decision" // shieldd answered without a decision
		if s, ok := status.FromError(err); ok {
			code = s.Code().String()
		}
		t.byCode[code]++
		return
	}
	t.answered++
	got := verdict.GetDecision()
	t.decisions[decisionName(got)]++
	t.replica[ci.peer]++
	if got != it.expect {
		t.mismatches++
		if got == pb.VerdictDecision_VERDICT_DECISION_ALLOW {
			t.wrongAllows++
		}
		if len(t.examples) < maxExamples {
			t.examples = append(t.examples, Mismatch{
				Case: it.item.Name, Expected: decisionName(it.expect), Got: decisionName(got),
				Tier: verdict.GetTier(), RuleIDs: verdict.GetRuleIds(), Replica: ci.peer,
			})
		}
	}
}

func (v *verifier) fill(rep *VerifyReport) {
	t := &v.t
	t.mu.Lock()
	defer t.mu.Unlock()
	rep.Sent, rep.Answered, rep.Errors = t.sent, t.answered, t.errors
	rep.ErrorsByCode = nonEmpty(t.byCode)
	rep.Decisions = t.decisions
	rep.Mismatches, rep.WrongAllows, rep.MismatchExamples = t.mismatches, t.wrongAllows, t.examples
	rep.Attempts, rep.RetriedCalls = t.attempts, t.retried
	rep.Replicas = t.replica
	if t.errors > 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%d of %d decisions lost (%s); fail closed, each is a BLOCK at the gate",
			t.errors, t.sent, codes(t.byCode)))
	}
	if t.wrongAllows > 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%d ALLOW verdicts where the corpus expects BLOCK or ESCALATE", t.wrongAllows))
	}
	if other := t.mismatches - t.wrongAllows; other > 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%d other verdicts differ from the expected decision", other))
	}
	if t.sent == 0 {
		rep.Problems = append(rep.Problems, "no request was sent")
	}
	rep.OK = len(rep.Problems) == 0
}

// reportProgress prints a line every cfg.Progress until the returned stop
// is called. active_replicas counts the replicas that answered since the
// previous line.
func (v *verifier) reportProgress(w io.Writer, start time.Time) (stop func()) {
	if w == nil || v.cfg.Progress <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(v.cfg.Progress)
		defer tick.Stop()
		last := map[string]int64{}
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			t := &v.t
			t.mu.Lock()
			active := 0
			for p, n := range t.replica {
				if n > last[p] {
					active++
				}
				last[p] = n
			}
			line := fmt.Sprintf("loadgen: progress elapsed=%.1fs sent=%d answered=%d errors=%d mismatches=%d wrong_allows=%d retried=%d active_replicas=%d",
				time.Since(start).Seconds(), t.sent, t.answered, t.errors, t.mismatches, t.wrongAllows, t.retried, active)
			t.mu.Unlock()
			fmt.Fprintln(w, line)
		}
	}()
	return func() { close(done); <-finished }
}

// dial makes cfg.Conns clients through shieldd/client, observing the peer
// and attempts of each call.
func (v *verifier) dial() ([]*client.Client, error) {
	var cs []*client.Client
	for range v.cfg.Conns {
		opts := append([]grpc.DialOption{
			grpc.WithChainUnaryInterceptor(observePeer),
			grpc.WithStatsHandler(attemptCounter{}),
		}, v.cfg.DialOptions...)
		c, err := client.Dial(v.cfg.Addr, client.Options{Timeout: v.cfg.CallTimeout, Token: v.cfg.Token, DialOptions: opts})
		if err != nil {
			closeAll(cs)
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

func closeAll(cs []*client.Client) {
	for _, c := range cs {
		c.Close()
	}
}

func (v *verifier) close() { closeAll(v.clients) }

// dialWindow is how long one set of connections is probed before it is
// dialled again: the DNS resolver re-resolves only when a connection
// fails, so replicas that started after the first lookup would otherwise
// never be found.
const dialWindow = 2 * time.Second

// waitReady dials and health-checks until every client has seen
// cfg.Replicas distinct healthy replicas, within cfg.Wait. It returns the
// replicas seen.
func (v *verifier) waitReady(ctx context.Context) ([]string, error) {
	deadline := time.Now().Add(v.cfg.Wait)
	var lastErr error
	var best []string
	for {
		cs, err := v.dial()
		if err != nil {
			return nil, err
		}
		seen, ok, err := v.probe(ctx, cs, earliest(deadline, time.Now().Add(dialWindow)))
		if len(seen) > len(best) {
			best = seen
		}
		if err != nil {
			lastErr = err
		}
		if ok {
			v.clients = cs
			return seen, nil
		}
		closeAll(cs)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("interrupted while waiting for %d replicas at %s", v.cfg.Replicas, v.cfg.Addr)
		}
		if !time.Now().Before(deadline) {
			msg := fmt.Sprintf("%d of %d replicas at %s answered a health check within %s", len(best), v.cfg.Replicas, v.cfg.Addr, v.cfg.Wait)
			if len(best) > 0 {
				msg += " (" + strings.Join(best, ", ") + ")"
			}
			if lastErr != nil {
				msg += "; last error: " + lastErr.Error()
			}
			return nil, fmt.Errorf("%s", msg)
		}
		sleepCtx(ctx, 250*time.Millisecond)
	}
}

// probe health-checks through each client until it has seen cfg.Replicas
// distinct healthy replicas or until the deadline. It returns the
// replicas the first client saw.
func (v *verifier) probe(ctx context.Context, cs []*client.Client, deadline time.Time) ([]string, bool, error) {
	var lastErr error
	var first []string
	for i, c := range cs {
		seen := map[string]bool{}
		for len(seen) < v.cfg.Replicas {
			if ctx.Err() != nil || !time.Now().Before(deadline) {
				if i == 0 {
					first = slices.Sorted(maps.Keys(seen))
				}
				return first, false, lastErr
			}
			pctx, cancel := context.WithDeadline(ctx, earliest(deadline, time.Now().Add(time.Second)))
			pctx, ci := withCallInfo(pctx)
			resp, err := c.Health(pctx)
			cancel()
			switch {
			case err != nil:
				lastErr = err
				sleepCtx(ctx, 50*time.Millisecond)
			case !resp.GetHealthy():
				lastErr = fmt.Errorf("replica %s reports itself unhealthy", ci.peer)
				sleepCtx(ctx, 50*time.Millisecond)
			default:
				seen[ci.peer] = true
				sleepCtx(ctx, 10*time.Millisecond)
			}
		}
		if i == 0 {
			first = slices.Sorted(maps.Keys(seen))
		}
	}
	return first, true, nil
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func compactJSON(s string) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return []byte(`null`)
	}
	return b.Bytes()
}

// writeVerifyText prints a verify report for people.
func writeVerifyText(w io.Writer, rep *VerifyReport) {
	fmt.Fprintf(w, "shieldd %s: verify through shieldd/client (round robin, retries on UNAVAILABLE), concurrency %d over %d client(s)\n",
		rep.Addr, rep.Concurrency, rep.Clients)
	fmt.Fprintf(w, "workload: %d actions from %s (%d error-expecting cases skipped); distinct %d, unique %t\n",
		rep.Workload.Actions, rep.Workload.Source, rep.Workload.Skipped, rep.Distinct, rep.Unique)
	fmt.Fprintf(w, "ready: %d replica(s) after %.1fs: %s\n", len(rep.ReadyReplicas), rep.WaitedSeconds, strings.Join(rep.ReadyReplicas, " "))
	fmt.Fprintf(w, "sent %d, answered %d, errors %d (lost decisions); ended by %s after %.1fs\n",
		rep.Sent, rep.Answered, rep.Errors, rep.EndedBy, rep.ElapsedSeconds)
	fmt.Fprintf(w, "decisions: allow %d, block %d, escalate %d; mismatches %d, wrong allows %d\n",
		rep.Decisions["allow"], rep.Decisions["block"], rep.Decisions["escalate"], rep.Mismatches, rep.WrongAllows)
	fmt.Fprintf(w, "retries: %d calls retried, %d attempts for %d calls\n", rep.RetriedCalls, rep.Attempts, rep.Sent)
	var parts []string
	for _, k := range sortedKeys(rep.Replicas) {
		parts = append(parts, fmt.Sprintf("%s %d", k, rep.Replicas[k]))
	}
	fmt.Fprintf(w, "answered by replica: %s\n", strings.Join(parts, ", "))
	if rep.Errors > 0 {
		fmt.Fprintf(w, "errors: %s\n", codes(rep.ErrorsByCode))
	}
	for _, m := range rep.MismatchExamples {
		fmt.Fprintf(w, "mismatch: %s: want %s, got %s (tier %d, rules %v) from %s\n", m.Case, m.Expected, m.Got, m.Tier, m.RuleIDs, m.Replica)
	}
	if rep.OK {
		fmt.Fprintln(w, "OK: every decision answered, none differs from the corpus")
	} else {
		fmt.Fprintf(w, "FAILED: %s\n", strings.Join(rep.Problems, "; "))
	}
}
