package main

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"

	"github.com/parapet-dev/parapet/benchmarks/internal/workload"
)

// Modes.
const (
	ModeEvaluate = "evaluate"
	ModeHealth   = "health"
	// ModeBoth runs health and evaluate at the same concurrency and
	// duration, in alternating rounds (Config.Rounds), and compares them.
	ModeBoth = "both"
	// ModeStream drives EvaluateStream (stream.go): --concurrency requests
	// in flight over --streams streams.
	ModeStream = "stream"
	// ModeStreamVsUnary runs evaluate (unary) and stream at the same
	// concurrency and duration, in alternating rounds, and compares them.
	ModeStreamVsUnary = "stream-vs-unary"
	// ModeVerify dials through shieldd/client (round robin over every
	// replica, retries on UNAVAILABLE), checks every verdict against the
	// corpus's expected decision and counts lost decisions (verify.go).
	ModeVerify = "verify"
)

// Config is one load-generator run.
type Config struct {
	Addr        string
	Concurrency int
	// Conns is the number of gRPC connections the workers share.
	Conns    int
	Duration time.Duration
	Warmup   time.Duration
	Mode     string
	// Distinct makes the first 2×Distinct evaluate requests (warm-up
	// included) Distinct unique requests, each sent twice in a row, so
	// the server's cache fills with that many verdicts: shieldd caches a
	// verdict on its request's second sighting.
	Distinct uint64
	// Unique makes every evaluate request unique: the uncached server path.
	Unique bool
	// Vary is how --distinct and --unique make a request distinct
	// (workload.Vary; empty: by workspace id). VaryContent is gRPC only.
	Vary workload.Vary
	// FullClient makes unary Evaluate calls with the generated client,
	// decoding every response in full, instead of the lean client
	// (leanclient.go); in HTTP mode it sends through net/http instead of
	// the lean HTTP/1.1 connections (leanhttp.go).
	FullClient bool
	// MaxRequests bounds the measured requests of each phase (0: no bound).
	MaxRequests int64
	// MetricsURL is scraped after the run when set.
	MetricsURL string
	// HTTP, when set, is the base URL the evaluate and health modes use
	// instead of gRPC (httpmode.go): POST HTTPEvalPath, GET HTTPHealthPath.
	HTTP           string
	HTTPEvalPath   string
	HTTPHealthPath string
	// HTTPInput wraps each body as {"input": …} (OPA's data API).
	HTTPInput bool
	// ServerPID is the server process whose CPU time per request is
	// reported (0: not measured).
	ServerPID int
	// Token is sent as a bearer token on every call (--token-file).
	Token string
	// Streams is how many EvaluateStream streams the stream phase opens
	// (0: one per connection); Concurrency is spread over them.
	Streams int
	// Rounds splits the measured time of a comparison (both,
	// stream-vs-unary) into this many turns per mode, taken in the order
	// A B, B A, A B, …: a machine whose speed drifts during the run then
	// slows both sides alike, instead of whichever ran second. 0 means 1
	// (one turn each, A then B).
	Rounds int

	// Verify mode only.
	//
	// Replicas is how many distinct replicas must answer before the load
	// starts; Wait bounds that wait.
	Replicas int
	Wait     time.Duration
	// Progress prints a progress line to stderr this often (0: never).
	Progress time.Duration
	// CallTimeout bounds each call, retries included (0: the client's 5 s).
	CallTimeout time.Duration
	// DialOptions are added to the client's (tests: a manual resolver).
	DialOptions []grpc.DialOption
}

// varyUsed is how distinct requests are made, or "" when none are.
func (c Config) varyUsed() workload.Vary {
	switch {
	case !c.Unique && c.Distinct == 0:
		return ""
	case c.Vary == "":
		return workload.VaryWorkspace
	}
	return c.Vary
}

func (c Config) validate() error {
	var errs []error
	switch c.Mode {
	case ModeEvaluate, ModeHealth, ModeBoth, ModeStream, ModeStreamVsUnary, ModeVerify:
	default:
		errs = append(errs, fmt.Errorf("--mode must be evaluate, health, both, stream, stream-vs-unary or verify, not %q", c.Mode))
	}
	if c.Streams < 0 {
		errs = append(errs, fmt.Errorf("--streams must not be negative, got %d", c.Streams))
	} else if (c.Mode == ModeStream || c.Mode == ModeStreamVsUnary) && c.Concurrency >= 1 && c.streamCount() > c.Concurrency {
		errs = append(errs, fmt.Errorf("--streams (or --conns) %d is more than --concurrency %d: each stream needs a request in flight", c.streamCount(), c.Concurrency))
	}
	if c.Addr == "" {
		errs = append(errs, errors.New("--addr is empty"))
	}
	if c.Concurrency < 1 {
		errs = append(errs, fmt.Errorf("--concurrency must be at least 1, got %d", c.Concurrency))
	}
	if c.Conns < 1 {
		errs = append(errs, fmt.Errorf("--conns must be at least 1, got %d", c.Conns))
	}
	if c.Duration <= 0 {
		errs = append(errs, fmt.Errorf("--duration must be positive, got %s", c.Duration))
	}
	if c.Warmup < 0 {
		errs = append(errs, fmt.Errorf("--warmup must not be negative, got %s", c.Warmup))
	}
	if c.MaxRequests < 0 {
		errs = append(errs, fmt.Errorf("--max-requests must not be negative, got %d", c.MaxRequests))
	}
	if c.Mode == ModeVerify {
		if c.Replicas < 1 {
			errs = append(errs, fmt.Errorf("--replicas must be at least 1, got %d", c.Replicas))
		}
		if c.Wait <= 0 {
			errs = append(errs, fmt.Errorf("--wait must be positive, got %s", c.Wait))
		}
	}
	if c.Vary != "" {
		if _, err := workload.ParseVary(string(c.Vary)); err != nil {
			errs = append(errs, fmt.Errorf("--%w", err))
		}
	}
	if c.Vary == workload.VaryContent && (c.HTTP != "" || c.Mode == ModeVerify) {
		errs = append(errs, errors.New("--vary content is for gRPC evaluate and stream modes; --http and --mode verify vary by workspace only"))
	}
	if c.Rounds < 0 {
		errs = append(errs, fmt.Errorf("--rounds must not be negative, got %d", c.Rounds))
	} else if c.comparison() && c.MaxRequests > 0 && c.MaxRequests < int64(c.rounds()) {
		errs = append(errs, fmt.Errorf("--max-requests %d is fewer than --rounds %d: each round needs at least one request", c.MaxRequests, c.rounds()))
	}
	if c.HTTP != "" && c.Mode != ModeEvaluate && c.Mode != ModeHealth && c.Mode != ModeBoth {
		errs = append(errs, fmt.Errorf("--http works with --mode evaluate, health or both, not %q", c.Mode))
	}
	if c.ServerPID < 0 {
		errs = append(errs, fmt.Errorf("--server-pid must not be negative, got %d", c.ServerPID))
	}
	if c.Progress < 0 {
		errs = append(errs, fmt.Errorf("--progress must not be negative, got %s", c.Progress))
	}
	if c.CallTimeout < 0 {
		errs = append(errs, fmt.Errorf("--call-timeout must not be negative, got %s", c.CallTimeout))
	}
	return errors.Join(errs...)
}

// comparison reports whether the mode compares two kinds of request.
func (c Config) comparison() bool { return c.Mode == ModeBoth || c.Mode == ModeStreamVsUnary }

// rounds is Rounds, at least 1.
func (c Config) rounds() int { return max(c.Rounds, 1) }

// distinctID reports whether evaluate request i must be made distinct
// and, if so, the number that makes it so: --unique gives every request
// its own; --distinct N gives requests 2j and 2j+1 number j, for j < N.
func (c Config) distinctID(i uint64) (uint64, bool) {
	switch {
	case c.Unique:
		return i, true
	case i/2 < c.Distinct:
		return i / 2, true
	}
	return 0, false
}
