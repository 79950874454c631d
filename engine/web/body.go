package web

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// maxIDBytes bounds a session or approval id taken from a URL path; real
// ids are a few dozen bytes.
const maxIDBytes = 256

// messageBody is POST /api/sessions/{id}/messages.
type messageBody struct {
	Content string `json:"content"`
	// Mode is "", "normal" or "otr"; it only applies to a new session.
	Mode string `json:"mode"`
}

// approvalBody is POST /api/approvals/{id}. Approved is a pointer so a
// body that forgets it is an error rather than a silent deny.
type approvalBody struct {
	Approved  *bool  `json:"approved"`
	SessionID string `json:"session_id"`
}

// parseMessage validates a message body. newSession says whether the
// path asked for a new session, the only case where a mode is accepted.
func parseMessage(body []byte, newSession bool) (content string, mode pb.SessionMode, err error) {
	var m messageBody
	if err := decodeObject(body, &m); err != nil {
		return "", 0, err
	}
	if m.Content == "" {
		return "", 0, errors.New(`"content" is missing or empty`)
	}
	switch m.Mode {
	case "":
		return m.Content, pb.SessionMode_SESSION_MODE_NORMAL, nil
	case "normal", "otr":
		if !newSession {
			return "", 0, fmt.Errorf(`"mode" only applies to a new session (POST /api/sessions/new/messages); an existing session keeps its mode`)
		}
		if m.Mode == "otr" {
			return m.Content, pb.SessionMode_SESSION_MODE_OTR, nil
		}
		return m.Content, pb.SessionMode_SESSION_MODE_NORMAL, nil
	}
	return "", 0, fmt.Errorf(`"mode" must be "normal" or "otr", got %q`, m.Mode)
}

// parseApproval validates an approval answer.
func parseApproval(body []byte) (approved bool, sessionID string, err error) {
	var a approvalBody
	if err := decodeObject(body, &a); err != nil {
		return false, "", err
	}
	if a.Approved == nil {
		return false, "", errors.New(`"approved" is missing; send true to approve or false to deny`)
	}
	if len(a.SessionID) > maxIDBytes {
		return false, "", fmt.Errorf(`"session_id" is %d bytes, longer than any session id (%d)`, len(a.SessionID), maxIDBytes)
	}
	return *a.Approved, a.SessionID, nil
}

// decodeObject decodes exactly one JSON object into v. It refuses invalid
// UTF-8, duplicate member names (which could hide a second "approved"),
// members v does not have, and anything after the object.
func decodeObject(body []byte, v any) error {
	if !utf8.Valid(body) {
		return errors.New("request body is not valid UTF-8")
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		return errors.New("request body is empty; want a JSON object")
	}
	if trimmed[0] != '{' {
		return errors.New("request body must be a JSON object")
	}
	if err := jsonv2.Unmarshal(body, v, jsonv2.RejectUnknownMembers(true)); err != nil {
		return fmt.Errorf("request body: %s", jsonMessage(err))
	}
	return nil
}

// jsonMessage words a decoding error without Go type names.
func jsonMessage(err error) string {
	var se *jsonv2.SemanticError
	if errors.As(err, &se) && se.JSONPointer != "" {
		// Both bodies are flat objects: the pointer is "/<member>".
		member := strings.TrimPrefix(string(se.JSONPointer), "/")
		switch {
		case errors.Is(se.Err, jsonv2.ErrUnknownName):
			return fmt.Sprintf("unknown member %q", member)
		case se.JSONKind != 0:
			return fmt.Sprintf("%q has the wrong type (JSON %s)", member, se.JSONKind)
		}
	}
	return strings.TrimPrefix(err.Error(), "jsontext: ")
}

// pathID validates an id taken from the URL path.
func pathID(what, id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%s id is empty", what)
	case len(id) > maxIDBytes:
		return fmt.Errorf("%s id is %d bytes, longer than any %s id (%d)", what, len(id), what, maxIDBytes)
	case !utf8.ValidString(id):
		return fmt.Errorf("%s id is not valid UTF-8", what)
	}
	return nil
}

// queryCount reads an optional non-negative whole number (limit, offset)
// from the query string; absent or empty is 0 (the engine's "all" for a
// limit).
func queryCount(q url.Values, name string) (int32, error) {
	vals, ok := q[name]
	if !ok {
		return 0, nil
	}
	if len(vals) != 1 {
		return 0, fmt.Errorf("%s is given %d times", name, len(vals))
	}
	if vals[0] == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(vals[0], 10, 31)
	if err != nil || n > math.MaxInt32 {
		return 0, fmt.Errorf("%s must be a whole number from 0 to %d, got %q", name, math.MaxInt32, vals[0])
	}
	return int32(n), nil
}
