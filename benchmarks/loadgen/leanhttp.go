package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// The lean HTTP client is how HTTP mode sends its requests unless
// --full-client: each worker keeps one HTTP/1.1 keep-alive connection of
// its own, writes the request line, headers and body in one write, and
// reads the status line, Content-Length (or a chunked body) and the body
// into a buffer it reuses. net/http's client costs about as much CPU per
// request as a cached decision on the server; on a machine where the load
// tool shares the cores with the server it measures, that cost caps the
// faster of two servers more than the slower, so the comparison with OPA
// came out below the ratio of their CPU costs.

// leanHTTP holds the workers' connections to one server.
type leanHTTP struct {
	addr    string // host:port dialled
	host    string // Host header
	timeout time.Duration
	auth    string // Authorization header value, or ""
	conns   []*leanConn
}

// leanConn is one worker's connection; only that worker uses it.
type leanConn struct {
	c    net.Conn
	r    *bufio.Reader
	req  []byte // the request being written, reused
	body []byte // the last response body, reused
}

func newLeanHTTP(base string, workers int, timeout time.Duration, auth string) (*leanHTTP, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("the lean HTTP client speaks plain http, not %s (use --full-client)", u.Scheme)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	l := &leanHTTP{addr: addr, host: u.Host, timeout: timeout, auth: auth, conns: make([]*leanConn, workers)}
	for i := range l.conns {
		l.conns[i] = &leanConn{}
	}
	return l, nil
}

func (l *leanHTTP) close() {
	for _, c := range l.conns {
		if c.c != nil {
			c.c.Close()
		}
	}
}

// do sends one request on worker w's connection and returns the body of a
// 200 (valid until that worker's next call), or an error code for the
// tally as httpTarget.do does. A failed exchange closes the connection;
// the next call dials again.
func (l *leanHTTP) do(ctx context.Context, w int, method, path string, body []byte) ([]byte, string) {
	c := l.conns[w]
	if c.c == nil {
		d := net.Dialer{Timeout: l.timeout}
		conn, err := d.DialContext(ctx, "tcp", l.addr)
		if err != nil {
			return nil, "transport"
		}
		c.c, c.r = conn, bufio.NewReaderSize(conn, 16<<10)
	}
	deadline := time.Now().Add(l.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.c.SetDeadline(deadline)
	c.req = appendRequest(c.req[:0], method, l.host, path, l.auth, body)
	status, out, keep, err := c.exchange()
	if err != nil || !keep {
		c.c.Close()
		c.c, c.r = nil, nil
	}
	if err != nil {
		return nil, "transport"
	}
	if status != 200 {
		return nil, "HTTP " + strconv.Itoa(status)
	}
	return out, ""
}

func appendRequest(b []byte, method, host, path, auth string, body []byte) []byte {
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	if auth != "" {
		b = append(b, "Authorization: "...)
		b = append(b, auth...)
		b = append(b, "\r\n"...)
	}
	if body != nil {
		b = append(b, "Content-Type: application/json\r\nContent-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, body...)
}

// maxLeanBody bounds a response body: a verdict is about a kilobyte.
const maxLeanBody = 4 << 20

var errBadResponse = errors.New("malformed HTTP response")

// exchange writes c.req and reads one response: its status, its body and
// whether the connection may be used again.
func (c *leanConn) exchange() (status int, body []byte, keep bool, err error) {
	if _, err = c.c.Write(c.req); err != nil {
		return 0, nil, false, err
	}
	status, c.body, keep, err = readResponse(c.r, c.body)
	return status, c.body, keep, err
}

// readResponse reads one HTTP/1.x response from r into buf (reused when
// large enough): its status, its body and whether the connection may be
// used again.
func readResponse(r *bufio.Reader, buf []byte) (status int, body []byte, keep bool, err error) {
	line, err := readLine(r)
	if err != nil {
		return 0, buf, false, err
	}
	// HTTP/1.x NNN reason
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, buf, false, errBadResponse
	}
	if status, err = strconv.Atoi(string(line[9:12])); err != nil || status < 100 {
		return 0, buf, false, errBadResponse
	}
	keep = line[7] == '1'
	length, chunked := -1, false
	for {
		h, err := readLine(r)
		if err != nil {
			return 0, buf, false, err
		}
		if len(h) == 0 {
			break
		}
		name, value, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return 0, buf, false, errBadResponse
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, err := strconv.Atoi(string(value))
			if err != nil || n < 0 || n > maxLeanBody {
				return 0, buf, false, errBadResponse
			}
			length = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			if chunked = bytes.EqualFold(value, []byte("chunked")); !chunked {
				return 0, buf, false, errBadResponse
			}
		case bytes.EqualFold(name, []byte("Connection")):
			if bytes.EqualFold(value, []byte("close")) {
				keep = false
			}
		}
	}
	switch {
	case chunked:
		buf, err = readChunks(r, buf[:0])
	case length >= 0:
		buf = slices.Grow(buf[:0], length)[:length]
		_, err = io.ReadFull(r, buf)
	default: // no length: the body runs to the end of the connection
		buf, err = io.ReadAll(io.LimitReader(r, maxLeanBody))
		keep = false
	}
	if err != nil {
		return 0, buf, false, err
	}
	return status, buf, keep, nil
}

// readLine reads one LF-terminated line without its CR LF.
func readLine(r *bufio.Reader) ([]byte, error) {
	l, err := r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(l[:len(l)-1], []byte("\r")), nil
}

// readChunks appends a chunked body to buf.
func readChunks(r *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		l, err := readLine(r)
		if err != nil {
			return buf, err
		}
		size, _, _ := bytes.Cut(l, []byte(";"))
		n, err := strconv.ParseUint(string(bytes.TrimSpace(size)), 16, 32)
		if err != nil || uint64(len(buf))+n > maxLeanBody {
			return buf, errBadResponse
		}
		if n == 0 {
			for { // trailers, up to the empty line
				if t, err := readLine(r); err != nil || len(t) == 0 {
					return buf, err
				}
			}
		}
		start := len(buf)
		buf = slices.Grow(buf, int(n))[:start+int(n)]
		if _, err := io.ReadFull(r, buf[start:]); err != nil {
			return buf, err
		}
		if l, err := readLine(r); err != nil || len(l) != 0 {
			return buf, errBadResponse
		}
	}
}
