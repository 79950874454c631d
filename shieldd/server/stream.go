package server

import (
	"context"
	"errors"
	"io"
	"runtime/debug"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// MaxStreamInFlight bounds the requests of one EvaluateStream that are
// being evaluated or waiting for their answer to be sent. When all of
// them are busy the stream reads no further, so a client that sends
// faster than the shield answers is held back by HTTP/2 flow control
// instead of growing the server's memory.
const MaxStreamInFlight = 64

// errStreamsDraining ends open streams when shieldd shuts down: answers to
// requests already being judged are sent first; the client sends the rest
// again, to another replica.
var errStreamsDraining = status.Error(codes.Unavailable,
	"shieldd is shutting down: requests on this stream that got no answer were not judged; send them again")

// EvaluateStream judges a stream of requests. Each one goes through Judge,
// exactly as a unary Evaluate does (caller identity, tenant rate limit,
// pipeline, audit record, metrics); up to MaxStreamInFlight are judged at
// once, so a slow one (Tier 2) does not hold up the rest, and answers go
// back as they are ready, correlated by request_id. A request that cannot
// be judged gets an error answer and the stream goes on; the stream itself
// ends when the client closes its side (after every pending answer is
// sent), when it goes away, on a transport error such as an oversized
// message, or when shieldd shuts down (StopStreams: Unavailable, after
// the answers already being worked on).
func (s *ShieldService) EvaluateStream(stream pb.ShieldService_EvaluateStreamServer) error {
	ctx := stream.Context()
	d := &streamDispatch{s: s, ctx: ctx, out: &streamSender{stream: stream}, jobs: make(chan *pb.EvaluateRequest)}
	// The receiving loop runs on its own goroutine so that a shutdown can
	// end a stream whose client is idle (blocked in Recv).
	received := make(chan error, 1)
	go func() { received <- d.receive(stream) }()
	var err error
	select {
	case err = <-received:
	case <-s.streams.draining():
		d.stopReceiving()
		err = errStreamsDraining
	}
	close(d.jobs)
	d.workers.Wait()

	if err := d.out.failed(); err != nil {
		return err
	}
	if errors.Is(err, io.EOF) {
		return nil // the client closed its side and has every answer
	}
	return err
}

// streamDispatch hands one stream's requests to its workers. Workers are
// started on demand and kept for the stream's life: a burst does not start
// and stop a goroutine per request.
type streamDispatch struct {
	s   *ShieldService
	ctx context.Context
	out *streamSender

	jobs    chan *pb.EvaluateRequest
	workers sync.WaitGroup
	started int
	// mu is held while a request is handed over, so that stopReceiving
	// returns only when no hand-over can follow.
	mu      sync.Mutex
	stopped bool
}

// receive reads requests until the stream ends and hands each to a worker;
// when all are busy it stops reading until one is free.
func (d *streamDispatch) receive(stream pb.ShieldService_EvaluateStreamServer) error {
	for {
		req, err := stream.Recv()
		if err != nil {
			return err
		}
		d.mu.Lock()
		if d.stopped {
			d.mu.Unlock()
			return nil // shutting down: the request is not judged
		}
		err = d.dispatch(req)
		d.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

func (d *streamDispatch) dispatch(req *pb.EvaluateRequest) error {
	select {
	case d.jobs <- req: // an idle worker took it
		return nil
	default:
	}
	if d.started < MaxStreamInFlight {
		d.started++
		d.workers.Add(1)
		go d.work(req)
		return nil
	}
	select { // every worker is busy: stop reading until one is free
	case d.jobs <- req:
		return nil
	case <-d.ctx.Done():
		return status.FromContextError(d.ctx.Err()).Err()
	}
}

func (d *streamDispatch) work(req *pb.EvaluateRequest) {
	defer d.workers.Done()
	for ok := true; ok; req, ok = <-d.jobs {
		if d.ctx.Err() != nil {
			continue // nobody will read the answer; drain without judging
		}
		d.out.send(d.s.answer(d.ctx, req))
	}
}

// stopReceiving makes receive hand over no more requests.
func (d *streamDispatch) stopReceiving() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopped = true
}

// streamDrain tells open streams that shieldd is shutting down.
type streamDrain struct {
	once sync.Once
	ch   chan struct{}
	stop sync.Once
}

func (sd *streamDrain) draining() chan struct{} {
	sd.once.Do(func() { sd.ch = make(chan struct{}) })
	return sd.ch
}

// StopStreams ends every open EvaluateStream, now and later, with
// Unavailable once the answers already being worked on are sent. The
// daemon calls it when it starts draining: streams live as long as their
// clients, and would otherwise hold the drain up to its timeout.
func (s *ShieldService) StopStreams() {
	ch := s.streams.draining()
	s.streams.stop.Do(func() { close(ch) })
}

// answer judges one streamed request; it never panics and never answers
// without either a decided verdict or an error.
func (s *ShieldService) answer(ctx context.Context, req *pb.EvaluateRequest) (resp *pb.EvaluateStreamResponse) {
	id := req.GetRequestId()
	defer func() {
		if p := recover(); p != nil {
			s.Shield.Log().ErrorContext(ctx, "panic in EvaluateStream", "panic", p, "request_id", id, "stack", string(debug.Stack()))
			resp = streamError(id, status.Error(codes.Internal, "internal error; the action was not evaluated"))
		}
	}()
	if strings.TrimSpace(id) == "" {
		return streamError(id, status.Error(codes.InvalidArgument,
			"request_id is empty: a streamed request needs one to be matched with its answer"))
	}
	// The unary path validates in an interceptor; here a bad request must
	// not end the stream for the good ones, so it is checked per message.
	v, err := s.Shield.Judge(ctx, req)
	if err != nil {
		if c := status.Code(err); c != codes.InvalidArgument && c != codes.ResourceExhausted && c != codes.Canceled {
			s.Shield.Log().WarnContext(ctx, "EvaluateStream request failed", "code", c.String(), "err", status.Convert(err).Message(), "request_id", id)
		}
		return streamError(id, err)
	}
	return &pb.EvaluateStreamResponse{RequestId: id, Verdict: v}
}

// streamError is the answer to a request that was not judged: the gRPC
// code (numeric, as error_code is an int32) and its message. It carries no
// verdict, so it can never be read as ALLOW.
func streamError(id string, err error) *pb.EvaluateStreamResponse {
	st := status.Convert(err)
	code := st.Code()
	if code == codes.OK {
		code = codes.Internal // an error is never OK
	}
	return &pb.EvaluateStreamResponse{RequestId: id, ErrorCode: int32(code), ErrorMessage: st.Message()}
}

// streamSender serialises Send, which gRPC allows from one goroutine at a
// time. After the first failure (the client is gone) it sends nothing more.
type streamSender struct {
	mu     sync.Mutex
	stream pb.ShieldService_EvaluateStreamServer
	err    error
}

func (o *streamSender) send(resp *pb.EvaluateStreamResponse) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err == nil {
		o.err = o.stream.Send(resp)
	}
}

// failed is the first Send error (a gRPC status), or nil.
func (o *streamSender) failed() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}
