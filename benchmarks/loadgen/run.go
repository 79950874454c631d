package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/parapet-dev/parapet/benchmarks/internal/workload"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// Report is everything one run measured.
type Report struct {
	Addr        string `json:"addr"`
	Mode        string `json:"mode"`
	Concurrency int    `json:"concurrency"`
	Conns       int    `json:"conns"`
	Duration    string `json:"duration"`
	Warmup      string `json:"warmup"`
	Distinct    uint64 `json:"distinct"`
	Unique      bool   `json:"unique"`
	// Vary is how distinct requests were made (empty: none were).
	Vary        workload.Vary `json:"vary,omitempty"`
	MaxRequests int64         `json:"max_requests"`
	Workload    WorkloadInfo  `json:"workload"`
	Health      *Phase        `json:"health,omitempty"`
	Evaluate    *Phase        `json:"evaluate,omitempty"`
	Stream      *Phase        `json:"stream,omitempty"`
	Streams     int           `json:"streams,omitempty"`
	// Rounds is how many alternating turns each side of a comparison had.
	Rounds int     `json:"rounds,omitempty"`
	Ratios *Ratios `json:"ratios,omitempty"`
	// StreamRatios compare EvaluateStream with unary Evaluate
	// (stream-vs-unary).
	StreamRatios *StreamRatios `json:"stream_ratios,omitempty"`
	Server       *ServerInfo   `json:"server,omitempty"`
	// ServerError is why GetShieldStatus failed after the run, if it did.
	ServerError string `json:"server_error,omitempty"`
	// Metrics are values scraped from MetricsURL after the run.
	Metrics      map[string]float64 `json:"metrics,omitempty"`
	MetricsError string             `json:"metrics_error,omitempty"`
}

// WorkloadInfo describes the replayed actions.
type WorkloadInfo struct {
	Source  string `json:"source"`
	Actions int    `json:"actions"`
	Skipped int    `json:"skipped_error_cases"`
}

// Ratios compare Evaluate with the health check in a `both` run.
type Ratios struct {
	// P50 is Evaluate p50 / Health p50 (target ≤ 1.2).
	P50 float64 `json:"p50"`
	// Throughput is Evaluate per second / Health per second (target ≥ 0.85).
	Throughput float64 `json:"throughput"`
}

// StreamRatios compare EvaluateStream with unary Evaluate in a
// stream-vs-unary run.
type StreamRatios struct {
	// Throughput is stream per second / evaluate per second (target ≥ 1.5).
	Throughput float64 `json:"throughput"`
	// P50 is stream p50 / evaluate p50.
	P50 float64 `json:"p50"`
}

// ServerInfo is shieldd's own account after the run (GetShieldStatus).
type ServerInfo struct {
	CacheEntries  int64  `json:"cache_entries"`
	CacheHits     int64  `json:"cache_hits"`
	CacheMisses   int64  `json:"cache_misses"`
	PolicyName    string `json:"policy_name"`
	PolicyVersion string `json:"policy_version"`
	Version       string `json:"version"`
}

// Errors is the number of failed requests, warm-up included.
func (r *Report) Errors() int64 {
	var n int64
	for _, p := range []*Phase{r.Health, r.Evaluate, r.Stream} {
		if p != nil {
			n += p.Errors + p.Warmup.Errors
		}
	}
	return n
}

type runner struct {
	cfg   Config
	items []workload.Item
	base  []*pb.EvaluateRequest // the corpus as sent when not varied
	// encoded is base in its wire form, for the lean client (leanclient.go).
	encoded []encodedRequest
	// distinct is base split for making a request distinct on the wire
	// (lean client, --unique or --distinct).
	distinct []distinctWire
	// content is base made distinct by content (--vary content).
	content []contentWire
	// wire is worker w's buffer for a request made distinct on the wire,
	// as HTTP mode has its bodies: a unique request costs the load tool,
	// which shares the cores with shieldd, no allocation a cached one
	// does not (see evaluate for when a buffer is let go).
	wire   [][]byte
	conns  []*grpc.ClientConn
	eval   []pb.ShieldServiceClient
	health []healthpb.HealthClient
	// seq numbers evaluate requests across phases; it picks the action
	// and decides whether the request is made distinct.
	seq   atomic.Uint64
	nonce string
	// http is set in HTTP mode (--http), which has no gRPC clients.
	http *httpTarget
	// usage is the server's usage per mode (--server-pid, --metrics-url).
	usage map[string]*usageSum
}

// Run drives shieldd at cfg.Addr with wl and reports what it measured.
func Run(ctx context.Context, cfg Config, wl *workload.Workload) (*Report, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, items: wl.Items, nonce: newNonce(), usage: map[string]*usageSum{}, wire: make([][]byte, cfg.Concurrency)}
	for _, it := range wl.Items {
		req := it.Proto("")
		b, err := proto.Marshal(req)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", it.Name, err)
		}
		r.base, r.encoded = append(r.base, req), append(r.encoded, b)
		if cfg.Unique || cfg.Distinct > 0 {
			d, err := newDistinctWire(req)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", it.Name, err)
			}
			r.distinct = append(r.distinct, d)
			if cfg.Vary == workload.VaryContent {
				c, err := newContentWire(it, r.nonce)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", it.Name, err)
				}
				r.content = append(r.content, c)
			}
		}
	}
	if cfg.HTTP != "" {
		var err error
		if r.http, err = newHTTPTarget(cfg, wl.Items, r.nonce); err != nil {
			return nil, err
		}
		defer r.http.close()
	}
	for range cfg.Conns * boolInt(r.http == nil) {
		opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
		if cfg.Token != "" {
			opts = append(opts, grpc.WithPerRPCCredentials(bearer(cfg.Token)))
		}
		cc, err := grpc.NewClient(cfg.Addr, opts...)
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", cfg.Addr, err)
		}
		defer cc.Close()
		r.conns = append(r.conns, cc)
		r.eval = append(r.eval, pb.NewShieldServiceClient(cc))
		r.health = append(r.health, healthpb.NewHealthClient(cc))
	}
	if err := r.preflight(ctx); err != nil {
		return nil, err
	}

	rep := &Report{
		Addr: cfg.Addr, Mode: cfg.Mode, Concurrency: cfg.Concurrency, Conns: cfg.Conns,
		Duration: cfg.Duration.String(), Warmup: cfg.Warmup.String(), Distinct: cfg.Distinct,
		Unique: cfg.Unique, MaxRequests: cfg.MaxRequests, Vary: cfg.varyUsed(),
		Workload: WorkloadInfo{Source: wl.Source, Actions: len(wl.Items), Skipped: wl.Skipped},
	}
	health := r.metered(ctx, ModeHealth, r.unary(ctx, r.checkHealth))
	evaluate := r.metered(ctx, ModeEvaluate, r.unary(ctx, r.evaluate))
	if r.http != nil {
		health = r.metered(ctx, ModeHealth, r.unary(ctx, r.httpHealth))
		evaluate = r.metered(ctx, ModeEvaluate, r.unary(ctx, r.httpEvaluate))
	}
	stream := func(d time.Duration, max int64, timed bool) ([]*tally, time.Duration) {
		return r.driveStreams(ctx, d, max, timed)
	}
	switch cfg.Mode {
	case ModeHealth:
		rep.Health = r.measure(ModeHealth, health)
	case ModeEvaluate:
		rep.Evaluate = r.measure(ModeEvaluate, evaluate)
	case ModeStream:
		rep.Stream = r.measure(ModeStream, stream)
	case ModeBoth:
		rep.Rounds = cfg.rounds()
		rep.Health, rep.Evaluate = r.compare(ModeHealth, health, ModeEvaluate, evaluate)
	case ModeStreamVsUnary:
		rep.Rounds = cfg.rounds()
		rep.Evaluate, rep.Stream = r.compare(ModeEvaluate, evaluate, ModeStream, stream)
	}
	if rep.Stream != nil {
		rep.Streams = cfg.streamCount()
	}
	for _, p := range []*Phase{rep.Health, rep.Evaluate, rep.Stream} {
		r.addUsage(p)
	}
	if r.http != nil {
		rep.Addr = cfg.HTTP
	}
	if (rep.Evaluate != nil || rep.Stream != nil) && r.http == nil {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		st, err := r.eval[0].GetShieldStatus(sctx, &pb.ShieldStatusRequest{})
		cancel()
		if err != nil {
			rep.ServerError = err.Error()
		} else {
			rep.Server = &ServerInfo{
				CacheEntries: st.GetCacheEntries(), CacheHits: st.GetCacheHits(), CacheMisses: st.GetCacheMisses(),
				PolicyName: st.GetPolicyName(), PolicyVersion: st.GetPolicyVersion(), Version: st.GetVersion(),
			}
		}
	}
	if e, s := rep.Evaluate, rep.Stream; e != nil && s != nil && e.LatencyNs.P50 > 0 && e.PerSecond > 0 {
		rep.StreamRatios = &StreamRatios{
			Throughput: s.PerSecond / e.PerSecond,
			P50:        float64(s.LatencyNs.P50) / float64(e.LatencyNs.P50),
		}
	}
	if h, e := rep.Health, rep.Evaluate; h != nil && e != nil && h.LatencyNs.P50 > 0 && h.PerSecond > 0 {
		rep.Ratios = &Ratios{
			P50:        float64(e.LatencyNs.P50) / float64(h.LatencyNs.P50),
			Throughput: e.PerSecond / h.PerSecond,
		}
	}
	if cfg.MetricsURL != "" {
		var err error
		if rep.Metrics, err = scrape(ctx, cfg.MetricsURL); err != nil {
			rep.MetricsError = err.Error()
		}
	}
	return rep, nil
}

// preflight fails fast, with a clear message, when nothing answers.
func (r *runner) preflight(ctx context.Context) error {
	if r.http != nil {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if _, code := r.http.do(cctx, "GET", r.http.healthURL, nil); code != "" {
			return fmt.Errorf("%s did not answer GET %s: %s", r.cfg.HTTP, r.cfg.HTTPHealthPath, code)
		}
		return nil
	}
	for i, h := range r.health {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := h.Check(cctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true))
		cancel()
		if err != nil {
			return fmt.Errorf("shieldd at %s (connection %d) did not answer a health check: %w", r.cfg.Addr, i, err)
		}
		if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			return fmt.Errorf("shieldd at %s is %s", r.cfg.Addr, resp.GetStatus())
		}
	}
	return nil
}

// callFunc sends one request as worker w and records its outcome in t;
// it reports whether the request succeeded.
type callFunc func(ctx context.Context, t *tally, w int) bool

var healthReq = &healthpb.HealthCheckRequest{}

func (r *runner) checkHealth(ctx context.Context, t *tally, w int) bool {
	resp, err := r.health[w%len(r.health)].Check(ctx, healthReq)
	if err != nil {
		t.fail(status.Code(err).String())
		return false
	}
	if s := resp.GetStatus(); s != healthpb.HealthCheckResponse_SERVING {
		t.fail(s.String())
		return false
	}
	return true
}

// next picks the next evaluate request: the corpus in order, made
// distinct as --distinct and --unique ask. Unary and stream phases share it.
func (r *runner) next(t *tally) *pb.EvaluateRequest {
	k, fresh := r.pick(t)
	if fresh != nil {
		return fresh
	}
	return r.base[k]
}

// choose numbers the next evaluate request and picks its corpus action
// k; distinct says whether the request must be made distinct (--unique,
// or the --distinct fill), which t counts, and i is then the number that
// makes it so (Config.distinctID).
func (r *runner) choose(t *tally) (k int, i uint64, distinct bool) {
	i = r.seq.Add(1) - 1
	if id, ok := r.cfg.distinctID(i); ok {
		t.distinct++
		return int(id % uint64(len(r.items))), id, true
	}
	return int(i % uint64(len(r.items))), i, false
}

// pick is next's choice: the corpus index, and the request made distinct
// when it must be (nil: send the corpus's own).
func (r *runner) pick(t *tally) (int, *pb.EvaluateRequest) {
	k, i, distinct := r.choose(t)
	if distinct {
		return k, r.distinctRequest(k, i)
	}
	return k, nil
}

// distinctRequest is corpus action k made distinct for request number i,
// as --vary says.
func (r *runner) distinctRequest(k int, i uint64) *pb.EvaluateRequest {
	it := r.items[k]
	return workload.RequestProto(it.Distinct(r.cfg.Vary, r.nonce, i), it.MinTier)
}

// encodeDistinct is distinctRequest in wire form, in worker w's buffer:
// a splice of bytes encoded once (leanclient.go).
func (r *runner) encodeDistinct(w, k int, i uint64) encodedRequest {
	var req encodedRequest
	if c := r.contentWire(k); c != nil {
		req = c.encode(r.wire[w], i)
	} else {
		req = r.distinct[k].encode(r.wire[w], r.nonce, i)
	}
	r.wire[w] = req
	return req
}

// contentWire is corpus action k's contentWire when --vary content
// varies it, or nil.
func (r *runner) contentWire(k int) *contentWire {
	if r.cfg.Vary == workload.VaryContent && r.content[k].at >= 0 {
		return &r.content[k]
	}
	return nil
}

func (r *runner) evaluate(ctx context.Context, t *tally, w int) bool {
	if !r.cfg.FullClient {
		k, i, distinct := r.choose(t)
		req := r.encoded[k]
		if distinct {
			req = r.encodeDistinct(w, k, i)
		}
		resp, err := leanEvaluate(ctx, r.conns[w%len(r.conns)], req)
		if err != nil {
			// A reply means the server read the whole request, so gRPC is
			// done with its bytes and the buffer can take the next one.
			// After an error it may still be sending them: let it keep
			// them.
			r.wire[w] = nil
			t.fail(status.Code(err).String())
			return false
		}
		return t.decision(resp.hasVerdict, resp.decision)
	}
	resp, err := r.eval[w%len(r.eval)].Evaluate(ctx, r.next(t))
	if err != nil {
		t.fail(status.Code(err).String())
		return false
	}
	return t.verdict(resp.GetVerdict())
}

// verdict counts a decided verdict, or a failure when there is none.
func (t *tally) verdict(v *pb.Verdict) bool {
	return t.decision(v != nil, v.GetDecision())
}

// decision counts a verdict's decision, or a failure when there is no
// verdict or it names no decision.
func (t *tally) decision(hasVerdict bool, d pb.VerdictDecision) bool {
	if !hasVerdict {
		t.fail("no_verdict")
		return false
	}
	if d <= pb.VerdictDecision_VERDICT_DECISION_UNSPECIFIED || int(d) >= len(t.decisions) {
		// An unset decision must never read as a decision at all.
		t.fail("unspecified_decision")
		return false
	}
	t.decisions[d]++
	return true
}

// unary is the driver of a unary call: each worker one request in flight.
func (r *runner) unary(ctx context.Context, call callFunc) driveFunc {
	return func(d time.Duration, max int64, timed bool) ([]*tally, time.Duration) {
		return r.drive(ctx, call, d, max, timed)
	}
}

// driveFunc runs load for d or max requests (0: unbounded), keeping
// latencies when timed, and returns the tallies and the wall time.
type driveFunc func(d time.Duration, max int64, timed bool) ([]*tally, time.Duration)

// measure is one mode's phase: warm-up, then the measured run.
func (r *runner) measure(mode string, drive driveFunc) *Phase {
	warm := r.warmup(drive)
	ts, elapsed := drive(r.cfg.Duration, r.cfg.MaxRequests, true)
	return summarize(mode, ts, elapsed, warm)
}

// compare measures two modes in alternating rounds (Config.Rounds):
// each mode's warm-up, then turns of Duration/Rounds in the order
// A B, B A, A B, … Each mode's figures cover all of its turns.
func (r *runner) compare(modeA string, a driveFunc, modeB string, b driveFunc) (*Phase, *Phase) {
	warmA, warmB := r.warmup(a), r.warmup(b)
	n := r.cfg.rounds()
	turn := r.cfg.Duration / time.Duration(n)
	var tsA, tsB []*tally
	var elapsedA, elapsedB time.Duration
	for i := range n {
		// MaxRequests is shared out between the rounds (validate makes
		// sure each gets at least one).
		var max int64
		if m := r.cfg.MaxRequests; m > 0 {
			max = m / int64(n)
			if int64(i) < m%int64(n) {
				max++
			}
		}
		runA := func() {
			ts, el := a(turn, max, true)
			tsA, elapsedA = append(tsA, ts...), elapsedA+el
		}
		runB := func() {
			ts, el := b(turn, max, true)
			tsB, elapsedB = append(tsB, ts...), elapsedB+el
		}
		if i%2 == 0 {
			runA()
			runB()
		} else {
			runB()
			runA()
		}
	}
	return summarize(modeA, tsA, elapsedA, warmA), summarize(modeB, tsB, elapsedB, warmB)
}

// warmup runs drive untimed for Config.Warmup, if any.
func (r *runner) warmup(drive driveFunc) Warmup {
	if r.cfg.Warmup <= 0 {
		return Warmup{}
	}
	ts, _ := drive(r.cfg.Warmup, 0, false)
	req, _, fails, _, _ := merge(ts)
	return Warmup{Requests: req, Errors: sum(fails), ErrorsByCode: nonEmpty(fails)}
}

// summarize makes a phase of the measured tallies and wall time.
func summarize(mode string, ts []*tally, elapsed time.Duration, warm Warmup) *Phase {
	p := &Phase{Mode: mode, Warmup: warm}
	req, lat, fails, dec, distinct := merge(ts)
	p.Requests, p.Errors, p.ErrorsByCode, p.Distinct = req, sum(fails), nonEmpty(fails), distinct
	p.ElapsedSeconds = elapsed.Seconds()
	p.PerSecond = float64(len(lat)) / elapsed.Seconds()
	p.LatencyNs = percentiles(lat)
	if mode == ModeEvaluate || mode == ModeStream {
		p.Decisions = map[string]int64{}
		for d, n := range dec[1:] {
			p.Decisions[decisionNames[d+1]] = n
		}
	}
	return p
}

// drive runs the workers for d or until max requests (0: unbounded) have
// started, and returns their tallies and the wall time until the last
// in-flight request finished.
func (r *runner) drive(ctx context.Context, call callFunc, d time.Duration, max int64, timed bool) ([]*tally, time.Duration) {
	n := r.cfg.Concurrency
	ts := make([]*tally, n)
	per := expectedPerWorker(d, max, n)
	for w := range ts {
		ts[w] = &tally{}
		if timed {
			ts[w].lat = make([]int64, 0, per)
		}
	}
	var budget atomic.Int64
	budget.Store(max)
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			t := ts[w]
			for ctx.Err() == nil {
				if max > 0 && budget.Add(-1) < 0 {
					return
				}
				t0 := time.Now()
				if !t0.Before(deadline) {
					return
				}
				ok := call(ctx, t, w)
				t.requests++
				if ok && timed {
					t.lat = append(t.lat, int64(time.Since(t0)))
				}
			}
		})
	}
	wg.Wait()
	return ts, time.Since(start)
}

// expectedPerWorker sizes the latency slices so the hot loop rarely
// grows them: the request bound when there is one, else a generous
// loopback rate (200 000 requests/s in all), capped at 8 Mi entries.
func expectedPerWorker(d time.Duration, max int64, workers int) int {
	total := int64(d.Seconds() * 200_000)
	if max > 0 {
		total = max
	}
	total = min(total, 8<<20)
	return int(total/int64(workers)) + 1
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func nonEmpty(m map[string]int64) map[string]int64 {
	if len(m) == 0 {
		return nil
	}
	return m
}

func newNonce() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// bearer sends a static token as "authorization: Bearer <token>" on the
// benchmark modes' plain gRPC connections (verify mode uses
// shieldd/client's own).
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

// RequireTransportSecurity is false: the benchmark dials plaintext, on
// loopback or a private network.
func (bearer) RequireTransportSecurity() bool { return false }

var _ credentials.PerRPCCredentials = bearer("")
