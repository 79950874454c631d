package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// Stream sends Evaluate calls from many goroutines over one EvaluateStream,
// for engines with high volume: no HTTP/2 stream or headers per call.
// Answers are matched to calls by request_id. When the stream breaks (the
// replica stops, the network fails) every call waiting on it gets an error
// and the next call opens a new stream, on whichever replica the balancer
// picks. As with Client.Evaluate, any error means the action must not run.
//
// Trace context travels once, when a stream opens, so calls over a Stream
// do not join their callers' traces; use Client.Evaluate where that
// matters.
type Stream struct {
	c      *Client
	prefix string // makes generated request ids unique per Stream
	seq    atomic.Uint64

	mu     sync.Mutex
	cur    *streamConn
	closed bool
}

// ErrStreamClosed is returned by Stream.Evaluate after Close.
var ErrStreamClosed = errors.New("shieldd stream is closed")

// Stream returns a Stream on c's connection. The stream itself opens on
// the first call.
func (c *Client) Stream() *Stream {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &Stream{c: c, prefix: "s-" + hex.EncodeToString(b[:]) + "-"}
}

// Evaluate asks shieldd for a verdict over the stream. The request keeps
// its request_id when it has one (it must not equal another in flight on
// this Stream); otherwise one is generated. The call is bounded by the
// client's timeout.
func (s *Stream) Evaluate(ctx context.Context, req *pb.EvaluateRequest) (*pb.Verdict, error) {
	ctx, cancel := context.WithTimeout(ctx, s.c.timeout)
	defer cancel()
	sc, err := s.conn()
	if err != nil {
		return nil, err
	}
	id := req.GetRequestId()
	if id == "" {
		id = s.prefix + strconv.FormatUint(s.seq.Add(1), 10)
		req = proto.Clone(req).(*pb.EvaluateRequest) // the caller's message is not changed
		req.RequestId = id
	}
	answer, err := sc.register(id)
	if err != nil {
		return nil, fmt.Errorf("shieldd %s: %w", s.c.target, err)
	}
	defer sc.unregister(id) // a call that gives up leaves no entry behind
	if err := sc.send(req); err != nil {
		if !errors.Is(err, io.EOF) {
			sc.fail(err)
		} // io.EOF: the stream has ended, and Recv is about to say why
		select {
		case <-sc.done:
			return nil, sc.failure()
		case <-ctx.Done():
			return nil, fmt.Errorf("shieldd %s: %w", s.c.target, status.FromContextError(ctx.Err()).Err())
		}
	}
	select {
	case resp := <-answer:
		return s.verdict(resp)
	case <-sc.done:
		return nil, sc.failure()
	case <-ctx.Done():
		return nil, fmt.Errorf("shieldd %s: %w", s.c.target, status.FromContextError(ctx.Err()).Err())
	}
}

// verdict reads an answer: an error answer, or one without a decided
// verdict, is an error, never a decision.
func (s *Stream) verdict(resp *pb.EvaluateStreamResponse) (*pb.Verdict, error) {
	if c := resp.GetErrorCode(); c != 0 || resp.GetErrorMessage() != "" {
		code := codes.Code(c)
		if code == codes.OK {
			code = codes.Unknown
		}
		return nil, fmt.Errorf("shieldd %s: %w", s.c.target, status.Error(code, resp.GetErrorMessage()))
	}
	v := resp.GetVerdict()
	if !v.GetDecision().Decided() {
		return nil, fmt.Errorf("shieldd %s answered without a decision", s.c.target)
	}
	return v, nil
}

// conn is the open stream, opening a new one when there is none or the
// last one broke.
func (s *Stream) conn() (*streamConn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrStreamClosed
	}
	if s.cur != nil && !s.cur.broken() {
		return s.cur, nil
	}
	ctx, cancel := context.WithCancel(context.Background()) // the stream outlives any one call
	stream, err := s.c.shield.EvaluateStream(ctx)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("shieldd %s: opening a stream: %w", s.c.target, err)
	}
	sc := &streamConn{target: s.c.target, stream: stream, cancel: cancel,
		pending: map[string]chan *pb.EvaluateStreamResponse{}, done: make(chan struct{})}
	go sc.receive()
	s.cur = sc
	return sc, nil
}

// Close ends the stream; calls waiting on it get an error, and later
// calls get ErrStreamClosed. It does not close the Client.
func (s *Stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.cur != nil {
		s.cur.fail(ErrStreamClosed)
	}
	return nil
}

// streamConn is one open EvaluateStream and the calls waiting on it.
type streamConn struct {
	target string
	stream pb.ShieldService_EvaluateStreamClient
	cancel context.CancelFunc
	sendMu sync.Mutex // gRPC allows one SendMsg at a time

	mu      sync.Mutex
	pending map[string]chan *pb.EvaluateStreamResponse
	err     error         // why the stream broke; set before done closes
	done    chan struct{} // closed when the stream broke
}

func (sc *streamConn) register(id string) (<-chan *pb.EvaluateStreamResponse, error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.err != nil {
		return nil, sc.err
	}
	if _, dup := sc.pending[id]; dup {
		return nil, fmt.Errorf("request_id %q is already waiting for an answer on this stream", id)
	}
	ch := make(chan *pb.EvaluateStreamResponse, 1)
	sc.pending[id] = ch
	return ch, nil
}

func (sc *streamConn) unregister(id string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	delete(sc.pending, id)
}

func (sc *streamConn) send(req *pb.EvaluateRequest) error {
	sc.sendMu.Lock()
	defer sc.sendMu.Unlock()
	return sc.stream.Send(req)
}

// receive delivers answers until the stream ends.
func (sc *streamConn) receive() {
	for {
		resp, err := sc.stream.Recv()
		if err != nil {
			sc.fail(err)
			return
		}
		sc.mu.Lock()
		ch, ok := sc.pending[resp.GetRequestId()]
		delete(sc.pending, resp.GetRequestId())
		sc.mu.Unlock()
		if ok { // else the call gave up (its deadline passed)
			ch <- resp
		}
	}
}

// fail marks the stream broken (once) and ends it.
func (sc *streamConn) fail(err error) {
	sc.mu.Lock()
	if sc.err == nil {
		if !errors.Is(err, ErrStreamClosed) {
			err = fmt.Errorf("shieldd %s: stream: %w", sc.target, err)
		}
		sc.err = err
		close(sc.done)
	}
	sc.mu.Unlock()
	sc.cancel()
}

func (sc *streamConn) broken() bool {
	select {
	case <-sc.done:
		return true
	default:
		return false
	}
}

func (sc *streamConn) failure() error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.err
}
