package procman

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The startup report is the openparallax.v1 process model's line protocol:
// after it spawns, the
// engine writes PORT:<grpc_port>, then exactly one of WEB:<port>,
// WEB_FAILED:<port>:<error> or WEB_DISABLED, each on its own line.

// maxLineLen bounds one report line, so a child writing garbage without
// newlines cannot make the manager buffer without limit.
const maxLineLen = 4096

// errStdoutClosed: the child closed stdout (usually by exiting) mid-report.
var errStdoutClosed = errors.New("stdout closed")

// WebState says what became of the engine's web server at startup.
type WebState string

const (
	WebEnabled  WebState = "enabled"  // WEB:<port>
	WebFailed   WebState = "failed"   // WEB_FAILED:<port>:<error>
	WebDisabled WebState = "disabled" // WEB_DISABLED
)

// WebStatus is the web half of a startup report.
type WebStatus struct {
	State WebState
	Port  int    // the listening port (enabled) or the one that failed to bind (failed)
	Error string // why binding failed (failed only)
}

// StartInfo is one complete startup report.
type StartInfo struct {
	GRPCPort int
	Web      WebStatus
}

// ParseStartup reads one startup report from r: a PORT: line, then one WEB
// line. It is strict: any other line is an error that quotes it. Bytes after
// the report stay in r.
func ParseStartup(r *bufio.Reader) (StartInfo, error) {
	var info StartInfo
	line, err := readLine(r)
	if err != nil {
		return info, fmt.Errorf("before the PORT: line: %w", err)
	}
	rest, ok := strings.CutPrefix(line, "PORT:")
	if !ok {
		return info, fmt.Errorf("unexpected line before PORT: %s", quote(line))
	}
	if info.GRPCPort, err = parsePort(rest, 1); err != nil {
		return info, fmt.Errorf("bad PORT line %s: %w", quote(line), err)
	}

	line, err = readLine(r)
	if err != nil {
		return info, fmt.Errorf("after PORT:%d, before a WEB line: %w", info.GRPCPort, err)
	}
	switch {
	case line == "WEB_DISABLED":
		info.Web = WebStatus{State: WebDisabled}
	case strings.HasPrefix(line, "WEB:"):
		port, err := parsePort(strings.TrimPrefix(line, "WEB:"), 1)
		if err != nil {
			return info, fmt.Errorf("bad WEB line %s: %w", quote(line), err)
		}
		info.Web = WebStatus{State: WebEnabled, Port: port}
	case strings.HasPrefix(line, "WEB_FAILED:"):
		portText, msg, ok := strings.Cut(strings.TrimPrefix(line, "WEB_FAILED:"), ":")
		if !ok || msg == "" {
			return info, fmt.Errorf("bad WEB_FAILED line %s: want WEB_FAILED:<port>:<error>", quote(line))
		}
		// 0 is allowed: it is what was asked for when any free port would do.
		port, err := parsePort(portText, 0)
		if err != nil {
			return info, fmt.Errorf("bad WEB_FAILED line %s: %w", quote(line), err)
		}
		info.Web = WebStatus{State: WebFailed, Port: port, Error: msg}
	default:
		return info, fmt.Errorf("expected WEB:, WEB_FAILED: or WEB_DISABLED after PORT:%d, got %s", info.GRPCPort, quote(line))
	}
	return info, nil
}

// readLine returns the next newline-terminated line without its line ending.
func readLine(r *bufio.Reader) (string, error) {
	b, err := r.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return "", fmt.Errorf("line longer than %d bytes starting %s", r.Size(), quote(string(b)))
	case errors.Is(err, io.EOF) && len(b) > 0:
		return "", fmt.Errorf("%w in the middle of line %s", errStdoutClosed, quote(string(b)))
	case errors.Is(err, io.EOF):
		return "", errStdoutClosed
	case err != nil:
		return "", fmt.Errorf("reading stdout: %w", err)
	}
	b = b[:len(b)-1]
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return string(b), nil
}

// parsePort accepts only plain decimal digits (no sign, no spaces) in [min, 65535].
func parsePort(s string, min int) (int, error) {
	if s == "" || len(s) > 5 {
		return 0, fmt.Errorf("port %s is not a number from %d to 65535", quote(s), min)
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("port %s is not a number from %d to 65535", quote(s), min)
		}
		n = n*10 + int(c-'0')
	}
	if n < min || n > 65535 {
		return 0, fmt.Errorf("port %d out of range %d-65535", n, min)
	}
	return n, nil
}

// quote renders untrusted child output for an error message, shortened.
func quote(s string) string {
	const max = 120
	if len(s) > max {
		return fmt.Sprintf("%q...", s[:max])
	}
	return fmt.Sprintf("%q", s)
}

// WritePort writes the PORT: line; the engine calls it once its gRPC server listens.
func WritePort(w io.Writer, port int) error {
	_, err := fmt.Fprintf(w, "PORT:%d\n", port)
	return err
}

// WriteWeb writes the WEB line that completes the report.
func WriteWeb(w io.Writer, st WebStatus) error {
	var err error
	switch st.State {
	case WebEnabled:
		_, err = fmt.Fprintf(w, "WEB:%d\n", st.Port)
	case WebFailed:
		msg := strings.Join(strings.Fields(st.Error), " ") // one line, never empty
		if msg == "" {
			msg = "unknown error"
		}
		_, err = fmt.Fprintf(w, "WEB_FAILED:%d:%s\n", st.Port, msg)
	case WebDisabled:
		_, err = io.WriteString(w, "WEB_DISABLED\n")
	default:
		err = fmt.Errorf("procman: unknown web state %q", st.State)
	}
	return err
}
