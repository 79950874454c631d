package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/shieldd/auth"
	"github.com/parapet-dev/parapet/shieldd/tenant"
)

// HTTPOptions configure the HTTP mirror.
type HTTPOptions struct {
	// Metrics serves GET /metrics; nil answers 404.
	Metrics         http.Handler
	MaxMessageBytes int
	// Ready reports readiness for /readyz; nil means always ready.
	Ready *atomic.Bool
	// Guard authenticates /v1/evaluate, /v1/outcome and /v1/status (401
	// on failure); /healthz, /readyz and /metrics stay open.
	Guard *auth.Guard
}

// NewHTTP returns the HTTP handler: POST /v1/evaluate (protojson
// EvaluateRequest in, EvaluateResponse out), POST /v1/outcome
// (ReportOutcomeRequest in, ReportOutcomeResponse out), GET /v1/status,
// GET /healthz, GET /readyz and GET /metrics.
func NewHTTP(svc *ShieldService, o HTTPOptions) http.Handler {
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	protect := func(h http.HandlerFunc) http.HandlerFunc {
		if o.Guard == nil || o.Guard.Auth == nil {
			return h
		}
		return func(w http.ResponseWriter, r *http.Request) {
			ctx, err := o.Guard.Check(r.Context(), auth.HTTPCredentials(r), r.URL.Path, r.RemoteAddr)
			if err != nil {
				if o.Guard.Auth.Mode() != auth.ModeMTLS {
					w.Header().Set("WWW-Authenticate", `Bearer realm="shieldd"`)
				}
				writeError(w, err)
				return
			}
			h(w, r.WithContext(ctx))
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/evaluate", protect(func(w http.ResponseWriter, r *http.Request) {
		req := &pb.EvaluateRequest{}
		if !readEvaluateRequest(w, r, o.MaxMessageBytes, req) {
			return
		}
		resp, err := svc.Evaluate(r.Context(), req)
		if err != nil {
			writeError(w, err)
			return
		}
		writeEvaluateResponse(w, resp)
	}))
	mux.HandleFunc("POST /v1/outcome", protect(func(w http.ResponseWriter, r *http.Request) {
		req := &pb.ReportOutcomeRequest{}
		if !readProto(w, r, o.MaxMessageBytes, req, "ReportOutcomeRequest") {
			return
		}
		resp, err := svc.ReportOutcome(r.Context(), req)
		if err != nil {
			writeError(w, err)
			return
		}
		writeProto(w, http.StatusOK, resp)
	}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		resp, _ := svc.Health(r.Context(), &pb.HealthRequest{})
		code := http.StatusOK
		if !resp.Healthy {
			code = http.StatusServiceUnavailable
		}
		writeProto(w, code, resp)
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if o.Ready != nil && !o.Ready.Load() {
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"ready": false})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"ready": true, "policy_version": svc.Shield.Pipeline.Status().PolicyVersion})
	})
	mux.HandleFunc("GET /v1/status", protect(func(w http.ResponseWriter, r *http.Request) {
		resp, _ := svc.GetShieldStatus(r.Context(), &pb.ShieldStatusRequest{})
		writeProto(w, http.StatusOK, resp)
	}))
	if o.Metrics != nil {
		mux.Handle("GET /metrics", o.Metrics)
	}
	return mux
}

// readProto reads a protojson body into m, answering the error itself
// when it cannot.
func readProto(w http.ResponseWriter, r *http.Request, limit int, m proto.Message, what string) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(limit)))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, status.Errorf(codes.ResourceExhausted, "request body exceeds %d bytes", limit))
			return false
		}
		writeError(w, status.Errorf(codes.InvalidArgument, "reading request body: %v", err))
		return false
	}
	if err := protojson.Unmarshal(body, m); err != nil {
		writeError(w, status.Errorf(codes.InvalidArgument, "request body is not a valid %s: %v", what, err))
		return false
	}
	return true
}

var marshaler = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

func writeProto(w http.ResponseWriter, code int, m proto.Message) {
	b, err := marshaler.Marshal(m)
	if err != nil {
		writeError(w, status.Errorf(codes.Internal, "encoding response: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// httpStatus maps gRPC codes to HTTP statuses for the JSON mirror.
func httpStatus(c codes.Code) int {
	switch c {
	case codes.InvalidArgument:
		return http.StatusBadRequest
	case codes.ResourceExhausted:
		return http.StatusRequestEntityTooLarge
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.NotFound:
		return http.StatusNotFound
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

func writeError(w http.ResponseWriter, err error) {
	s, _ := status.FromError(err)
	code := httpStatus(s.Code())
	var limited *tenant.LimitError
	if errors.As(err, &limited) {
		// ResourceExhausted is 413 for oversized input, 429 for a rate limit.
		code = http.StatusTooManyRequests
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, code, map[string]any{
		"error": map[string]string{"code": s.Code().String(), "message": s.Message()},
	})
}
