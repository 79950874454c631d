package main

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// The stream phase drives EvaluateStream with the same requests as the
// evaluate phase and the same number in flight: --concurrency requests
// spread over --streams streams (each stream keeps its share in flight,
// sending the next request as soon as an answer frees a slot). A request's
// latency is from its Send to its answer.

// streamCount is how many streams a stream phase opens.
func (c Config) streamCount() int {
	if c.Streams > 0 {
		return c.Streams
	}
	return c.Conns
}

// windows splits n requests in flight over s streams as evenly as possible.
func windows(n, s int) []int {
	w := make([]int, s)
	for i := range w {
		w[i] = n / s
		if i < n%s {
			w[i]++
		}
	}
	return w
}

// driveStreams is drive for EvaluateStream: it runs for d or until max
// requests (0: unbounded) have been sent, and returns the tallies and the
// wall time until the last answer arrived.
func (r *runner) driveStreams(ctx context.Context, d time.Duration, max int64, timed bool) ([]*tally, time.Duration) {
	var budget atomic.Int64
	budget.Store(max)
	n := r.cfg.streamCount()
	perStream := expectedPerWorker(d, max, n)
	start := time.Now()
	deadline := start.Add(d)
	var ts []*tally
	var wg sync.WaitGroup
	for s, window := range windows(r.cfg.Concurrency, n) {
		sent, answered := &tally{}, &tally{}
		if timed {
			answered.lat = make([]int64, 0, perStream)
		}
		ts = append(ts, sent, answered)
		sd := &streamDriver{r: r, client: r.eval[s%len(r.eval)], window: window, deadline: deadline, budget: &budget,
			max: max, timed: timed, sent: sent, answered: answered}
		wg.Go(func() { sd.run(ctx) })
	}
	wg.Wait()
	return ts, time.Since(start)
}

// streamDriver runs one stream. The sender owns sent, the receiver owns
// answered, so neither takes a lock.
type streamDriver struct {
	r        *runner
	client   pb.ShieldServiceClient
	window   int
	deadline time.Time
	budget   *atomic.Int64
	max      int64
	timed    bool

	sent, answered *tally
}

func (sd *streamDriver) run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := sd.client.EvaluateStream(ctx)
	if err != nil {
		sd.sent.requests++
		sd.answered.fail(status.Code(err).String())
		return
	}
	// A slot is a request in flight; its index is the request id, so an
	// answer finds its send time without a map or a lock.
	free := make(chan int, sd.window)
	ids := make([]string, sd.window)
	reqs := make([]*pb.EvaluateRequest, sd.window)
	sentAt := make([]atomic.Int64, sd.window) // ns since base
	for i := range sd.window {
		free <- i
		ids[i] = strconv.Itoa(i)
		reqs[i] = &pb.EvaluateRequest{}
	}
	base := time.Now()

	var streamErr error
	received := make(chan struct{})
	go func() {
		defer close(received)
		for {
			resp, err := stream.Recv()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					streamErr = err
					cancel() // stop the sender
				}
				return
			}
			slot, err := strconv.Atoi(resp.GetRequestId())
			if err != nil || slot < 0 || slot >= sd.window {
				streamErr = status.Errorf(grpccodes.Internal, "answer with unknown request_id %q", resp.GetRequestId())
				cancel()
				return
			}
			took := int64(time.Since(base)) - sentAt[slot].Load()
			var ok bool
			if c := resp.GetErrorCode(); c != 0 {
				sd.answered.fail(grpccodes.Code(c).String())
			} else {
				ok = sd.answered.verdict(resp.GetVerdict())
			}
			if ok && sd.timed {
				sd.answered.lat = append(sd.answered.lat, took)
			}
			free <- slot
		}
	}()

	for {
		var slot int
		select {
		case slot = <-free:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		if sd.max > 0 && sd.budget.Add(-1) < 0 || !time.Now().Before(sd.deadline) {
			free <- slot
			break
		}
		req := reqs[slot] // Send encodes before it returns, so the message is reused
		setRequest(req, sd.r.next(sd.sent))
		req.RequestId = ids[slot]
		sentAt[slot].Store(int64(time.Since(base)))
		if err := stream.Send(req); err != nil {
			free <- slot // not sent; Recv reports why the stream broke
			break
		}
		sd.sent.requests++
	}
	_ = stream.CloseSend()
	<-received
	if streamErr != nil {
		// Requests still in flight when the stream broke are lost.
		code := status.Code(streamErr).String()
		for range sd.window - len(free) {
			sd.answered.fail(code)
		}
	}
}

// setRequest makes dst the request src is, for a stream that sends one
// reusable message per slot instead of allocating one per request.
func setRequest(dst, src *pb.EvaluateRequest) {
	dst.ActionType, dst.PayloadJson = src.ActionType, src.PayloadJson
	dst.ToolName, dst.ToolArgsJson = src.ToolName, src.ToolArgsJson
	dst.SessionId, dst.MinTier = src.SessionId, src.MinTier
	dst.Caller, dst.Context = src.Caller, src.Context
}
