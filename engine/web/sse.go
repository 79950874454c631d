package web

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// sseWriter writes a server-sent event stream: per PipelineEvent an
// "event:" line with its type (LLM_TOKEN, ...) and a "data:" line with the
// event as JSON, each flushed at once.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func startSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	// Proxies that buffer (nginx) would hold the stream back.
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, rc: http.NewResponseController(w)}
	_ = s.rc.Flush()
	return s
}

// raw writes and flushes text that is already in the stream's format.
func (s *sseWriter) raw(text string) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := io.WriteString(s.w, text); err != nil {
		return err
	}
	return s.rc.Flush()
}

func (s *sseWriter) event(ev *pb.PipelineEvent) error {
	data, err := marshal.Marshal(ev)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("event: ")
	b.WriteString(eventName(ev.GetEventType()))
	b.WriteByte('\n')
	// protojson writes one line, but the format must not depend on it: a
	// line break inside data would end the field early.
	for _, line := range bytes.Split(data, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return s.raw(b.String())
}

// eventName is the SSE event name of a type: its enum name without the
// PIPELINE_EVENT_TYPE_ prefix.
func eventName(t pb.PipelineEventType) string {
	return strings.TrimPrefix(t.String(), "PIPELINE_EVENT_TYPE_")
}

func isTerminal(ev *pb.PipelineEvent) bool {
	switch ev.GetEventType() {
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE, pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR:
		return true
	}
	return false
}

// relay copies events from recv to out, with a heartbeat comment in every
// quiet interval, until the client leaves (ctx ends), a write fails, or
// the stream ends. A message stream (untilTerminal) ends after its
// RESPONSE_COMPLETE or ERROR; if the engine's stream breaks first the
// client gets an ERROR event, so every stream ends with one. The caller
// cancels ctx after relay returns, which ends recv.
func (s *Server) relay(ctx context.Context, out *sseWriter, recv func() (*pb.PipelineEvent, error), untilTerminal bool) {
	type received struct {
		ev  *pb.PipelineEvent
		err error
	}
	events := make(chan received)
	go func() {
		for {
			ev, err := recv()
			select {
			case events <- received{ev, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	heartbeat := time.NewTicker(s.opts.Heartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-heartbeat.C:
			if out.raw(": heartbeat\n\n") != nil {
				return
			}
		case r := <-events:
			if r.err != nil {
				if ctx.Err() == nil {
					s.log.Info("engine event stream ended", "error", r.err)
					_ = out.event(streamFailed(r.err))
				}
				return
			}
			if out.event(r.ev) != nil {
				return
			}
			if untilTerminal && isTerminal(r.ev) {
				return
			}
		}
	}
}

// streamFailed is the ERROR event that ends a stream the engine broke off.
func streamFailed(err error) *pb.PipelineEvent {
	msg := "the engine's event stream failed: " + err.Error()
	if errors.Is(err, io.EOF) {
		msg = "the engine ended the event stream"
	}
	return &pb.PipelineEvent{
		EventType:     pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR,
		PipelineError: &pb.PipelineError{Code: codeStreamFailed, Message: msg, Recoverable: true},
		TimestampMs:   time.Now().UnixMilli(),
	}
}
