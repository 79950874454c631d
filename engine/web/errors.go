package web

import (
	"encoding/json"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// apiError is the body of every error answer:
// {"error": {"code": "...", "message": "..."}}.
type apiError struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Codes of errors the HTTP layer finds itself; errors from the engine
// keep the engine's code (AGENT_BUSY, ...) or the gRPC code's name.
const (
	codeInvalidArgument  = "INVALID_ARGUMENT"
	codeNotFound         = "NOT_FOUND"
	codeMethodNotAllowed = "METHOD_NOT_ALLOWED"
	codeTooLarge         = "PAYLOAD_TOO_LARGE"
	codeMediaType        = "UNSUPPORTED_MEDIA_TYPE"
	codeHostNotAllowed   = "HOST_NOT_ALLOWED"
	codeCrossOrigin      = "CROSS_ORIGIN_REFUSED"
	codeTokenRequired    = "TOKEN_REQUIRED"
	codeStreamFailed     = "STREAM_FAILED"
)

func writeError(w http.ResponseWriter, httpStatus int, code, msg string) {
	writeJSON(w, httpStatus, apiError{Error: errorDetail{Code: code, Message: msg}})
}

func writeJSON(w http.ResponseWriter, httpStatus int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		httpStatus = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"INTERNAL","message":"encoding the answer failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus)
	_, _ = w.Write(append(b, '\n'))
}

// writeGRPCError answers with the HTTP status of a ClientService error.
func writeGRPCError(w http.ResponseWriter, err error) {
	s := status.Convert(err)
	writeError(w, grpcHTTPStatus(s.Code()), grpcCodeName(s.Code()), s.Message())
}

func grpcHTTPStatus(c codes.Code) int {
	switch c {
	case codes.InvalidArgument, codes.OutOfRange:
		return http.StatusBadRequest
	case codes.NotFound:
		return http.StatusNotFound
	case codes.AlreadyExists, codes.FailedPrecondition, codes.Aborted:
		return http.StatusConflict
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.Unimplemented:
		return http.StatusNotImplemented
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

// grpcCodeNames are the codes' names as the proto spells them (NOT_FOUND).
var grpcCodeNames = map[codes.Code]string{
	codes.OK: "OK", codes.Canceled: "CANCELLED", codes.Unknown: "UNKNOWN", codes.InvalidArgument: "INVALID_ARGUMENT",
	codes.DeadlineExceeded: "DEADLINE_EXCEEDED", codes.NotFound: "NOT_FOUND", codes.AlreadyExists: "ALREADY_EXISTS",
	codes.PermissionDenied: "PERMISSION_DENIED", codes.ResourceExhausted: "RESOURCE_EXHAUSTED",
	codes.FailedPrecondition: "FAILED_PRECONDITION", codes.Aborted: "ABORTED", codes.OutOfRange: "OUT_OF_RANGE",
	codes.Unimplemented: "UNIMPLEMENTED", codes.Internal: "INTERNAL", codes.Unavailable: "UNAVAILABLE",
	codes.DataLoss: "DATA_LOSS", codes.Unauthenticated: "UNAUTHENTICATED",
}

func grpcCodeName(c codes.Code) string {
	if n, ok := grpcCodeNames[c]; ok {
		return n
	}
	return "UNKNOWN"
}

// refusalHTTPStatus maps the engine's refusal codes (an ERROR event that
// SendMessage sends instead of starting a turn) to HTTP statuses.
func refusalHTTPStatus(code string) int {
	switch code {
	case "AGENT_UNAVAILABLE":
		return http.StatusServiceUnavailable
	case "AGENT_BUSY":
		return http.StatusConflict
	case "SESSION_NOT_FOUND":
		return http.StatusNotFound
	case "MESSAGE_TOO_LARGE":
		return http.StatusRequestEntityTooLarge
	case "INVALID_MESSAGE":
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}
