package web

import (
	"context"
	"errors"
	"io"
	"net/http"

	"google.golang.org/grpc/metadata"

	"github.com/parapet-dev/parapet/engine"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// Response headers of a message stream: which session and message the
// turn belongs to (a new session's id is only known here).
const (
	SessionIDHeader = "X-Parapet-Session-Id"
	MessageIDHeader = "X-Parapet-Message-Id"
)

func (s *Server) getStatus(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	defer cancel()
	resp, err := s.opts.Client.GetStatus(ctx, &pb.StatusRequest{})
	if err != nil {
		writeGRPCError(w, err)
		return
	}
	writeProto(w, http.StatusOK, resp)
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	limit, offset, err := page(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidArgument, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	defer cancel()
	resp, err := s.opts.Client.ListSessions(ctx, &pb.ListSessionsRequest{Limit: limit, Offset: offset})
	if err != nil {
		writeGRPCError(w, err)
		return
	}
	writeProto(w, http.StatusOK, resp)
}

// page reads the limit and offset query parameters.
func page(r *http.Request) (limit, offset int32, err error) {
	q := r.URL.Query()
	if limit, err = queryCount(q, "limit"); err != nil {
		return 0, 0, err
	}
	offset, err = queryCount(q, "offset")
	return limit, offset, err
}

func (s *Server) getHistory(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := pathID("session", id); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidArgument, err.Error())
		return
	}
	limit, offset, err := page(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidArgument, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	defer cancel()
	resp, err := s.opts.Client.GetHistory(ctx, &pb.GetHistoryRequest{SessionId: id, Limit: limit, Offset: offset})
	if err != nil {
		writeGRPCError(w, err)
		return
	}
	writeProto(w, http.StatusOK, resp)
}

// postMessage sends a message and streams the turn's events. The HTTP
// status waits for the engine's first event: a refusal (no agent, busy,
// unknown session, bad message) is an ERROR event without a message id
// and becomes a JSON error with its status; anything else starts the
// stream. The request's context is the turn's: a client that leaves
// cancels the turn, and with it any approval it is waiting for.
func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	newSession := id == "new"
	if newSession {
		id = ""
	} else if err := pathID("session", id); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidArgument, err.Error())
		return
	}
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	content, mode, err := parseMessage(body, newSession)
	if err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidArgument, err.Error())
		return
	}
	ctx, cancel := s.streamContext(r)
	defer cancel()
	stream, err := s.opts.Client.SendMessage(ctx, &pb.ClientMessageRequest{Content: content, SessionId: id, Mode: mode, Source: "web"})
	if err != nil {
		writeGRPCError(w, err)
		return
	}
	first, err := stream.Recv()
	switch {
	case errors.Is(err, io.EOF):
		writeError(w, http.StatusBadGateway, codeStreamFailed, "the engine ended the message stream without an event")
		return
	case err != nil:
		writeGRPCError(w, err)
		return
	}
	if first.GetEventType() == pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR && first.GetMessageId() == "" {
		pe := first.GetPipelineError()
		writeError(w, refusalHTTPStatus(pe.GetCode()), pe.GetCode(), pe.GetMessage())
		return
	}
	w.Header().Set(SessionIDHeader, first.GetSessionId())
	w.Header().Set(MessageIDHeader, first.GetMessageId())
	out := startSSE(w)
	if err := out.event(first); err != nil || isTerminal(first) {
		return
	}
	s.relay(ctx, out, stream.Recv, true)
}

func (s *Server) postApproval(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := pathID("approval", id); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidArgument, err.Error())
		return
	}
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	approved, sessionID, err := parseApproval(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidArgument, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	defer cancel()
	// The engine records who answered, for events and the audit chain.
	ctx = metadata.AppendToOutgoingContext(ctx, engine.FrontendMetadataKey, "http")
	ack, err := s.opts.Client.ResolveApproval(ctx, &pb.ApprovalResponse{ApprovalId: id, SessionId: sessionID, Approved: approved})
	if err != nil {
		writeGRPCError(w, err)
		return
	}
	writeProto(w, http.StatusOK, ack)
}

// getEvents streams every session's events until the client leaves.
func (s *Server) getEvents(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodHead {
		// The headers are the whole answer; a stream would never end.
		startSSE(w)
		return
	}
	ctx, cancel := s.streamContext(r)
	defer cancel()
	stream, err := s.opts.Client.WatchSession(ctx, &pb.WatchSessionRequest{})
	if err != nil {
		writeGRPCError(w, err)
		return
	}
	out := startSSE(w)
	// EventSource reconnects by itself; ask it to do so soon.
	if err := out.raw("retry: 2000\n\n"); err != nil {
		return
	}
	s.relay(ctx, out, stream.Recv, false)
}

func (s *Server) postRestart(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	defer cancel()
	resp, err := s.opts.Client.Shutdown(ctx, &pb.ShutdownRequest{Reason: "restart requested over the web API", Restart: true})
	if err != nil {
		writeGRPCError(w, err)
		return
	}
	writeProto(w, http.StatusAccepted, resp)
}
