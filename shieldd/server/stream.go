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

// EvaluateStream judges a stream of requests. Each one goes through Judge,
// exactly as a unary Evaluate does (caller identity, tenant rate limit,
// pipeline, audit record, metrics); up to MaxStreamInFlight are judged at
// once, so a slow one (Tier 2) does not hold up the rest, and answers go
// back as they are ready, correlated by request_id. A request that cannot
// be judged gets an error answer and the stream goes on; the stream itself
// ends when the client closes its side (after every pending answer is
// sent), when it goes away, or on a transport error such as an oversized
// message.
func (s *ShieldService) EvaluateStream(stream pb.ShieldService_EvaluateStreamServer) error {
	ctx := stream.Context()
	out := &streamSender{stream: stream}
	// Workers are started on demand and kept for the stream's life: a
	// burst does not start and stop a goroutine per request.
	jobs := make(chan *pb.EvaluateRequest)
	var workers sync.WaitGroup
	started := 0
	worker := func(req *pb.EvaluateRequest) {
		defer workers.Done()
		for ok := true; ok; req, ok = <-jobs {
			if ctx.Err() != nil {
				continue // nobody will read the answer; drain without judging
			}
			out.send(s.answer(ctx, req))
		}
	}

	var recvErr error
	for {
		req, err := stream.Recv()
		if err != nil {
			recvErr = err
			break
		}
		select {
		case jobs <- req: // an idle worker took it
			continue
		default:
		}
		if started < MaxStreamInFlight {
			started++
			workers.Add(1)
			go worker(req)
			continue
		}
		select { // every worker is busy: stop reading until one is free
		case jobs <- req:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			recvErr = status.FromContextError(ctx.Err()).Err()
			break
		}
	}
	close(jobs)
	workers.Wait()

	if err := out.failed(); err != nil {
		return err
	}
	if errors.Is(recvErr, io.EOF) {
		return nil // the client closed its side and has every answer
	}
	return recvErr
}

// answer judges one streamed request; it never panics and never answers
// without either a decided verdict or an error.
func (s *ShieldService) answer(ctx context.Context, req *pb.EvaluateRequest) (resp *pb.EvaluateStreamResponse) {
	id := req.GetRequestId()
	defer func() {
		if p := recover(); p != nil {
			s.logger().ErrorContext(ctx, "panic in EvaluateStream", "panic", p, "request_id", id, "stack", string(debug.Stack()))
			resp = streamError(id, status.Error(codes.Internal, "internal error; the action was not evaluated"))
		}
	}()
	if strings.TrimSpace(id) == "" {
		return streamError(id, status.Error(codes.InvalidArgument,
			"request_id is empty: a streamed request needs one to be matched with its answer"))
	}
	// The unary path validates in an interceptor; here a bad request must
	// not end the stream for the good ones, so it is checked per message.
	if err := req.Validate(); err != nil {
		return streamError(id, status.Error(codes.InvalidArgument, err.Error()))
	}
	v, err := s.Judge(ctx, req)
	if err != nil {
		if c := status.Code(err); c != codes.InvalidArgument && c != codes.ResourceExhausted && c != codes.Canceled {
			s.logger().WarnContext(ctx, "EvaluateStream request failed", "code", c.String(), "err", status.Convert(err).Message(), "request_id", id)
		}
		return streamError(id, err)
	}
	if v.GetDecision() == pb.VerdictDecision_VERDICT_DECISION_UNSPECIFIED {
		return streamError(id, status.Error(codes.Internal, "the pipeline returned no decision"))
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
