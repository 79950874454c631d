package action

import "fmt"

// ErrorKind classifies canonicalisation failures so servers can map them to
// status codes (InvalidArgument / HTTP 400, ResourceExhausted / HTTP 413).
type ErrorKind uint8

const (
	// Invalid: the request is malformed (empty type, bad JSON, bad UTF-8).
	Invalid ErrorKind = iota + 1
	// TooLarge: the request exceeds a size limit.
	TooLarge
)

// Error is a canonicalisation failure. Its message names what is wrong.
type Error struct {
	Kind ErrorKind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func invalidf(format string, args ...any) error {
	return &Error{Kind: Invalid, Msg: fmt.Sprintf(format, args...)}
}

func tooLargef(format string, args ...any) error {
	return &Error{Kind: TooLarge, Msg: fmt.Sprintf(format, args...)}
}
