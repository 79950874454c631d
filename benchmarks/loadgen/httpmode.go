package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/parapet-dev/parapet/benchmarks/internal/workload"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// HTTP mode (--http URL): the evaluate and health modes over HTTP/1.1
// with keep-alive, one connection per worker. Bodies are the protojson
// EvaluateRequest a JSON client would send (json_name spelling), made
// once per corpus action; a unique request is encoded per call. With
// --http-input the body is wrapped as {"input": …}, which is how OPA's
// data API takes it, so one load tool drives both servers.

// httpTarget is what the HTTP mode sends where.
type httpTarget struct {
	client    *http.Client
	evalURL   string
	healthURL string
	wrapInput bool
	base      [][]byte // the corpus as sent when not varied
	// distinct is each corpus body split around the number that makes
	// its workspace id distinct (workload.DistinctID), so a unique
	// request is two copies and a number, not a protojson encoding.
	distinct   []distinctBody
	bodies     [][]byte // each worker's distinct body, reused
	authHeader string
	// lean, unless --full-client, carries the measured requests
	// (leanhttp.go); client serves the preflight either way.
	lean *leanHTTP
	// evalPath and healthPath are the request targets lean sends.
	evalPath, healthPath string
}

// distinctBody is a request body before and after its distinct number.
type distinctBody struct{ head, tail []byte }

// numberMark stands for the distinct number while the bodies are encoded:
// JSON encodes it as it is, and no corpus request contains it.
const numberMark = "{{loadgen-distinct-number}}"

func newHTTPTarget(cfg Config, items []workload.Item, nonce string) (*httpTarget, error) {
	base := strings.TrimRight(cfg.HTTP, "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("--http must be a URL such as http://127.0.0.1:7701, got %q", cfg.HTTP)
	}
	t := &httpTarget{
		client: &http.Client{
			Timeout: 10 * time.Second,
			Transport: &http.Transport{
				MaxIdleConns:        cfg.Concurrency,
				MaxIdleConnsPerHost: cfg.Concurrency,
				IdleConnTimeout:     time.Minute,
			},
		},
		evalURL:    base + cfg.HTTPEvalPath,
		healthURL:  base + cfg.HTTPHealthPath,
		evalPath:   cfg.HTTPEvalPath,
		healthPath: cfg.HTTPHealthPath,
		wrapInput:  cfg.HTTPInput,
		bodies:     make([][]byte, cfg.Concurrency),
	}
	if cfg.Token != "" {
		t.authHeader = "Bearer " + cfg.Token
	}
	if !cfg.FullClient {
		var err error
		if t.lean, err = newLeanHTTP(base, cfg.Concurrency, t.client.Timeout, t.authHeader); err != nil {
			return nil, fmt.Errorf("--http %s: %w", cfg.HTTP, err)
		}
	}
	for _, it := range items {
		b, err := t.body(it.Proto(""))
		if err != nil {
			return nil, err
		}
		t.base = append(t.base, b)
		if cfg.Unique || cfg.Distinct > 0 {
			m, err := t.body(it.Proto(workload.DistinctID(it.Request.Caller.WorkspaceID, nonce, 0) + numberMark))
			if err != nil {
				return nil, err
			}
			head, tail, ok := bytes.Cut(m, []byte("0"+numberMark))
			if !ok || bytes.Contains(tail, []byte(numberMark)) {
				return nil, fmt.Errorf("%s: the distinct workspace id is not once in the encoded request", it.Name)
			}
			t.distinct = append(t.distinct, distinctBody{head, tail})
		}
	}
	return t, nil
}

// distinctBody returns corpus body k with the workspace id
// workload.DistinctID(…, nonce, i), in worker w's buffer.
func (t *httpTarget) distinctBody(w, k int, i uint64) []byte {
	d := t.distinct[k]
	b := append(t.bodies[w][:0], d.head...)
	b = strconv.AppendUint(b, i, 10)
	b = append(b, d.tail...)
	t.bodies[w] = b
	return b
}

func (t *httpTarget) close() {
	if t.lean != nil {
		t.lean.close()
	}
	t.client.CloseIdleConnections()
}

var requestJSON = protojson.MarshalOptions{}

func (t *httpTarget) body(req *pb.EvaluateRequest) ([]byte, error) {
	b, err := requestJSON.Marshal(req)
	if err != nil {
		return nil, err
	}
	if t.wrapInput {
		b = append(append([]byte(`{"input":`), b...), '}')
	}
	return b, nil
}

// post sends body and returns the response body of a 200, or an error
// code for the tally ("HTTP 429", "transport").
func (t *httpTarget) do(ctx context.Context, method, url string, body []byte) ([]byte, string) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, "request"
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if t.authHeader != "" {
		req.Header.Set("Authorization", t.authHeader)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, "transport"
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "transport"
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "HTTP " + fmt.Sprint(resp.StatusCode)
	}
	return out, ""
}

// send is one measured request as worker w: on w's lean connection, or
// through net/http with --full-client.
func (t *httpTarget) send(ctx context.Context, w int, method, path, url string, body []byte) ([]byte, string) {
	if t.lean != nil {
		return t.lean.do(ctx, w, method, path, body)
	}
	return t.do(ctx, method, url, body)
}

func (r *runner) httpHealth(ctx context.Context, t *tally, w int) bool {
	if _, code := r.http.send(ctx, w, http.MethodGet, r.http.healthPath, r.http.healthURL, nil); code != "" {
		t.fail(code)
		return false
	}
	return true
}

func (r *runner) httpEvaluate(ctx context.Context, t *tally, w int) bool {
	k, i, distinct := r.choose(t)
	body := r.http.base[k]
	if distinct {
		body = r.http.distinctBody(w, k, i)
	}
	out, code := r.http.send(ctx, w, http.MethodPost, r.http.evalPath, r.http.evalURL, body)
	if code != "" {
		t.fail(code)
		return false
	}
	d, ok := decisionOf(out)
	if !ok {
		t.fail("no_verdict")
		return false
	}
	return t.decision(true, d)
}

// decisionOf finds the first "decision" member of a response (shieldd:
// verdict.decision, an enum name; OPA: result.decision, a word) without
// decoding the whole body: the load tool shares the machine with the
// server, so its own cost is kept small.
func decisionOf(body []byte) (pb.VerdictDecision, bool) {
	const key = `"decision":`
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return 0, false
	}
	rest := bytes.TrimLeft(body[i+len(key):], " \t\r\n")
	if len(rest) == 0 || rest[0] != '"' {
		return 0, false
	}
	end := bytes.IndexByte(rest[1:], '"')
	if end < 0 {
		return 0, false
	}
	word := strings.ToUpper(strings.TrimPrefix(string(rest[1:1+end]), "VERDICT_DECISION_"))
	d, ok := pb.VerdictDecision_value["VERDICT_DECISION_"+word]
	return pb.VerdictDecision(d), ok
}
