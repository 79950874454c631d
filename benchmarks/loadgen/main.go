// Command loadgen drives a running shieldd over gRPC and reports
// throughput, latency percentiles, decisions and every error. It replays
// the labelled corpus; --distinct and --unique make requests miss the
// verdict cache. --mode verify dials through shieldd/client (round robin
// over replicas, retries on UNAVAILABLE) and checks every verdict against
// the corpus's expected decision. See benchmarks/README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/parapet-dev/parapet/benchmarks/internal/workload"
)

func main() {
	// SIGTERM too: in a container loadgen is PID 1, which ignores signals
	// it does not handle. In verify mode a signal ends the run early, with
	// a report; the other modes abort.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: 0 success, 1 errors were counted (or,
// in verify mode, a verdict differed from the expected decision), 2 the
// run could not start.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg Config
	var corpusDir string
	var asJSON bool
	var tokenFile string
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:7700", "shieldd gRPC address")
	fs.IntVar(&cfg.Concurrency, "concurrency", 16, "concurrent workers, each with one request in flight")
	fs.IntVar(&cfg.Conns, "conns", 1, "gRPC connections shared by the workers")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "measured time per mode")
	fs.DurationVar(&cfg.Warmup, "warmup", 2*time.Second, "untimed warm-up per mode (verify has none: every request is checked)")
	fs.StringVar(&cfg.Mode, "mode", ModeEvaluate, "evaluate, health, both (health and evaluate, compared), stream (EvaluateStream), stream-vs-unary (evaluate and stream, compared), or verify (through shieldd/client: every verdict checked, lost decisions counted)")
	fs.IntVar(&cfg.Rounds, "rounds", 10, "both, stream-vs-unary: alternate the two modes this many times, each running --duration/`N` a turn, so that drift in the machine's speed affects both alike (1: one after the other)")
	fs.IntVar(&cfg.Streams, "streams", 0, "stream modes: EvaluateStream streams sharing the --concurrency requests in flight (0: one per connection)")
	fs.StringVar(&corpusDir, "corpus", "", "directory of case files (default: the embedded rules/corpus)")
	fs.Uint64Var(&cfg.Distinct, "distinct", 0, "fill the cache with `N` verdicts: the first 2N evaluate requests (warm-up included) are N unique requests, each sent twice in a row (shieldd caches a verdict on its request's second sighting)")
	fs.BoolVar(&cfg.Unique, "unique", false, "make every evaluate request unique (the uncached server path)")
	fs.Func("vary", "how --distinct and --unique make a request distinct: `workspace` (its workspace id; the corpus's verdicts, so the cache shares their shapes) or content (the action's longest string argument too, so verdicts carry evidence of their own, as distinct actions do; gRPC only)", func(s string) error {
		v, err := workload.ParseVary(s)
		cfg.Vary = v
		return err
	})
	fs.BoolVar(&cfg.FullClient, "full-client", false, "gRPC evaluate: call with the generated client and decode every response in full (default: corpus requests encoded once, only each verdict's decision read); --http: send through net/http's client (default: one lean HTTP/1.1 keep-alive connection per worker). The defaults keep the load tool's CPU, which it may share with the server, small")
	fs.Int64Var(&cfg.MaxRequests, "max-requests", 0, "bound on measured requests per mode (0: none)")
	fs.StringVar(&cfg.MetricsURL, "metrics-url", "", "shieldd /metrics `URL` to scrape after the run, e.g. http://127.0.0.1:7701/metrics")
	fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
	fs.StringVar(&cfg.HTTP, "http", "", "drive shieldd's HTTP mirror at `URL` (e.g. http://127.0.0.1:7701) instead of gRPC: evaluate, health and both modes")
	fs.StringVar(&cfg.HTTPEvalPath, "http-eval-path", "/v1/evaluate", "--http: path the evaluate mode POSTs to (OPA: /v1/data/parapet/decision)")
	fs.StringVar(&cfg.HTTPHealthPath, "http-health-path", "/healthz", "--http: path the health mode GETs (OPA: /health)")
	fs.BoolVar(&cfg.HTTPInput, "http-input", false, "--http: send each request as {\"input\": request} (OPA's data API)")
	fs.IntVar(&cfg.ServerPID, "server-pid", 0, "report the server's CPU time per request, read from /proc/`PID`/stat around each measured turn")
	fs.StringVar(&tokenFile, "token-file", "", "`FILE` holding a bearer token sent on every call (shieldd --auth static)")
	fs.IntVar(&cfg.Replicas, "replicas", 1, "verify: wait until `N` distinct replicas answer before the load starts")
	fs.DurationVar(&cfg.Wait, "wait", 30*time.Second, "verify: bound on the wait for --replicas")
	fs.DurationVar(&cfg.Progress, "progress", 0, "verify: print a progress line to stderr this often (0: never)")
	fs.DurationVar(&cfg.CallTimeout, "call-timeout", 0, "verify: bound on each call, retries included (0: shieldd/client's 5s)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "loadgen: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			fmt.Fprintf(stderr, "loadgen: --token-file: %v\n", err)
			return 2
		}
		if cfg.Token = strings.TrimSpace(string(b)); cfg.Token == "" {
			fmt.Fprintf(stderr, "loadgen: --token-file %s is empty\n", tokenFile)
			return 2
		}
	}
	if cfg.Mode == ModeVerify {
		return runVerify(ctx, cfg, corpusDir, asJSON, stdout, stderr)
	}
	wl, err := workload.Load(corpusDir)
	if err != nil {
		fmt.Fprintf(stderr, "loadgen: %v\n", err)
		return 2
	}
	rep, err := Run(ctx, cfg, wl)
	if err != nil {
		fmt.Fprintf(stderr, "loadgen: %v\n", err)
		return 2
	}
	if asJSON {
		if err := writeJSON(stdout, rep); err != nil {
			fmt.Fprintf(stderr, "loadgen: %v\n", err)
			return 2
		}
	} else {
		writeText(stdout, rep)
	}
	if n := rep.Errors(); n > 0 {
		fmt.Fprintf(stderr, "loadgen: %d requests failed\n", n)
		return 1
	}
	return 0
}
