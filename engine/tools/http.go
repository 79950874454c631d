package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// blockedAddrError is returned by the dialer for a refused address.
type blockedAddrError struct{ addr netip.Addr }

func (e *blockedAddrError) Error() string {
	return fmt.Sprintf("connections to %s are not allowed: it is a loopback, private, link-local or otherwise non-public address", e.addr)
}

// nonPublic lists prefixes outside the public internet that the netip
// predicates do not cover.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),     // "this network"
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT; some clouds' metadata
	netip.MustParsePrefix("192.0.0.0/24"),  // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),   // reserved, broadcast
	netip.MustParsePrefix("64:ff9b::/96"),  // NAT64: may embed a private IPv4 address
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2001:db8::/32"), // documentation
}

func isNonPublic(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() ||
		slices.ContainsFunc(nonPublic, func(p netip.Prefix) bool { return p.Contains(a) })
}

// newHTTPClient builds the client of http_request: no proxy from the
// engine's environment, no cookie jar, no credentials of any kind, and a
// dialer that checks the address actually connected to (so DNS answers and
// redirects can't lead into the engine's own network).
func (r *Registry) newHTTPClient() *http.Client {
	dialer := &net.Dialer{
		Timeout: 10 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			if r.opts.HTTPAllowPrivateNetworks {
				return nil
			}
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("unexpected dial address %q", address)
			}
			if isNonPublic(ap.Addr()) {
				return &blockedAddrError{ap.Addr().Unmap()}
			}
			return nil
		},
	}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil,
			DialContext:            dialer.DialContext,
			TLSHandshakeTimeout:    10 * time.Second,
			ResponseHeaderTimeout:  r.opts.HTTPTimeout,
			MaxResponseHeaderBytes: 64 << 10,
			ForceAttemptHTTP2:      true,
			MaxIdleConns:           16,
			IdleConnTimeout:        30 * time.Second,
		},
		// Redirects are handled per request in httpRequest.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// refusedHeaders are set by the transport or would redirect the request
// somewhere the shield did not see (Host).
var refusedHeaders = []string{"Host", "Content-Length", "Transfer-Encoding", "Connection", "Upgrade", "Te", "Trailer", "Keep-Alive", "Proxy-Connection", "Proxy-Authorization"}

// origin is scheme://host:port with the default port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("url %q does not parse: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("url %q: only http and https are supported", raw)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("url %q has no host", raw)
	}
	return u, nil
}

func (r *Registry) httpRequest(ctx context.Context, a args) Result {
	method, body := a.str("method"), a.str("body")
	u, err := checkURL(a.str("url"))
	if err != nil {
		return errResult(fmt.Errorf("http_request: %w", err))
	}
	// The verdict's network grant binds http_request as it binds a confined
	// command: only the granted ports (redirects never leave the origin,
	// so the first URL's port is the only one).
	if port, granted := grantsPort(grantFrom(ctx), u); !granted {
		return errResult(fmt.Errorf("http_request: not run: port %d is not granted to this call (the policy rule's confine: network names the ports it may use; granted: %s)", port, grantedPorts(grantFrom(ctx))))
	}
	if int64(len(body)) > r.opts.HTTPMaxRequestBytes {
		return errResult(fmt.Errorf("http_request: body is %d bytes, more than the %d allowed", len(body), r.opts.HTTPMaxRequestBytes))
	}
	header := http.Header{}
	for k, v := range a.strMap("headers") {
		canon := http.CanonicalHeaderKey(k)
		if slices.Contains(refusedHeaders, canon) {
			return errResult(fmt.Errorf("http_request: header %q cannot be set; the URL decides the host and the client sets framing headers", k))
		}
		header.Set(canon, v)
	}
	if header.Get("User-Agent") == "" {
		header.Set("User-Agent", "parapet-http-request/1")
	}

	ctx, cancel := context.WithTimeout(ctx, r.opts.HTTPTimeout)
	defer cancel()

	var resp *http.Response
	var note string
	hop := 0
	for ; ; hop++ {
		req, err := http.NewRequestWithContext(ctx, method, u.String(), strings.NewReader(body))
		if err != nil {
			return errResult(fmt.Errorf("http_request: %v", err))
		}
		if body == "" {
			req.Body, req.GetBody, req.ContentLength = nil, nil, 0
		}
		req.Header = header.Clone()
		resp, err = r.http.Do(req)
		if err != nil {
			return errResult(fmt.Errorf("http_request: %s %s: %s", method, u, httpErrText(err, r.opts.HTTPTimeout)))
		}
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" || resp.StatusCode == http.StatusNotModified {
			break
		}
		next, err := u.Parse(loc)
		switch {
		case err != nil:
			note = fmt.Sprintf("[redirect to %q not followed: the Location does not parse]", loc)
		case origin(next) != origin(u):
			note = fmt.Sprintf("[redirect to %s not followed: it leaves %s; send a new http_request to it if you need it]", next, origin(u))
		case hop == r.opts.HTTPMaxRedirects:
			note = fmt.Sprintf("[redirect to %s not followed: %d redirects already followed]", next, hop)
		}
		if note != "" {
			break
		}
		drainClose(resp.Body)
		u = next
		// 301/302/303 turn into a GET without body, as browsers and net/http do.
		if resp.StatusCode != http.StatusTemporaryRedirect && resp.StatusCode != http.StatusPermanentRedirect && method != http.MethodHead {
			method, body = http.MethodGet, ""
		}
	}
	defer resp.Body.Close()

	var out strings.Builder
	fmt.Fprintf(&out, "%s %s\n", resp.Proto, resp.Status)
	if hop > 0 {
		fmt.Fprintf(&out, "[final URL after redirects: %s]\n", u)
	}
	keys := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range resp.Header[k] {
			fmt.Fprintf(&out, "%s: %s\n", k, v)
		}
	}
	out.WriteString("\n")

	limit := r.opts.HTTPMaxBytes
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return errResult(fmt.Errorf("http_request: reading the response body: %s", httpErrText(err, r.opts.HTTPTimeout)))
	}
	overLimit := int64(len(data)) > limit
	if overLimit {
		data = data[:limit]
	}
	truncated := overLimit
	switch {
	case len(data) == 0:
		out.WriteString("[empty body]")
	case isBinary(data[:min(len(data), binarySniffBytes)]) || !utf8.Valid(trimPartialRune(data)):
		fmt.Fprintf(&out, "[binary body of %d bytes (%s) not shown]", len(data), orUnknown(resp.Header.Get("Content-Type")))
	default:
		shown, cut := capString(string(data), max(r.opts.OutputLimit-out.Len(), 256))
		out.WriteString(shown)
		truncated = truncated || cut
	}
	if overLimit {
		fmt.Fprintf(&out, "\n[... truncated: the body is larger than %d bytes; the rest was not read]", limit)
	}
	if note != "" {
		out.WriteString("\n" + note)
	}
	return okResult(out.String(), truncated)
}

// trimPartialRune drops an incomplete UTF-8 sequence cut off at the end.
func trimPartialRune(b []byte) []byte {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

func orUnknown(s string) string {
	if s == "" {
		return "no content type"
	}
	return s
}

// drainClose reads a little of a body before closing it, so the connection
// can be reused, without reading an unbounded one.
func drainClose(b io.ReadCloser) {
	io.Copy(io.Discard, io.LimitReader(b, 64<<10))
	b.Close()
}

// httpErrText explains a transport error without the nesting net/http adds.
func httpErrText(err error, timeout time.Duration) string {
	var blocked *blockedAddrError
	switch {
	case errors.As(err, &blocked):
		return blocked.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("timed out after %v", timeout)
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err.Error()
	}
	return err.Error()
}

// grantsPort reports whether g lets a request to u connect: u's port, or
// its scheme's (80 for http, 443 for https), must be a granted one.
func grantsPort(g Grant, u *url.URL) (uint16, bool) {
	port := uint16(443)
	if u.Scheme == "http" {
		port = 80
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return 0, false
		}
		port = uint16(n)
	}
	return port, slices.Contains(g.ConnectTCP, port)
}

// grantedPorts renders g's ports for a refusal message.
func grantedPorts(g Grant) string {
	if len(g.ConnectTCP) == 0 {
		return "none"
	}
	parts := make([]string, len(g.ConnectTCP))
	for i, p := range g.ConnectTCP {
		parts[i] = strconv.Itoa(int(p))
	}
	return strings.Join(parts, ", ")
}
