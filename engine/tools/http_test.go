package tools

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// newHTTPServers starts the test server and a second one on another port
// (another origin for redirects).
func newHTTPServers(t *testing.T) (main, other *httptest.Server) {
	t.Helper()
	other = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "OTHER ORIGIN")
	}))
	t.Cleanup(other.Close)
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		w.Header().Set("X-Seen-Method", req.Method)
		fmt.Fprintf(w, "method=%s auth=%q cookie=%q proxy=%q ua=%q custom=%q body=%q",
			req.Method, req.Header.Get("Authorization"), req.Header.Get("Cookie"),
			req.Header.Get("Proxy-Authorization"), req.Header.Get("User-Agent"), req.Header.Get("X-Custom"), body)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, strings.Repeat("b", 5000))
	})
	mux.HandleFunc("/binary", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00"))
	})
	mux.HandleFunc("/to-echo", func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, "/echo", http.StatusFound)
	})
	mux.HandleFunc("/to-echo-307", func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, "/echo", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/to-other", func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, other.URL+"/x", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, req *http.Request) {
		<-req.Context().Done() // until the client gives up
	})
	main = httptest.NewServer(mux)
	t.Cleanup(main.Close)
	return main, other
}

func TestHTTPRequest(t *testing.T) {
	t.Parallel()
	srv, _ := newHTTPServers(t)
	r, _ := newTestRegistry(t, func(o *Options) {
		o.HTTPAllowPrivateNetworks = true
		o.HTTPMaxBytes = 1000
		o.HTTPMaxRequestBytes = 100
		o.HTTPMaxRedirects = 3
		o.HTTPTimeout = 500 * time.Millisecond
	})
	// The verdict's grant: the test servers' ports.
	grant := Grant{ConnectTCP: []uint16{serverPort(srv)}}
	call := func(t *testing.T, r *Registry, name string, a any) Result {
		t.Helper()
		return callWith(t, r, grant, name, a)
	}

	res := wantOK(t, call(t, r, "http_request", map[string]any{"method": "post", "url": srv.URL + "/echo", "headers": map[string]string{"X-Custom": "yes"}, "body": "hello"}))
	if !strings.HasPrefix(res.Output, "HTTP/1.1 200 OK\n") || !strings.Contains(res.Output, "X-Seen-Method: POST") ||
		!strings.Contains(res.Output, `method=POST auth="" cookie="" proxy="" ua="parapet-http-request/1" custom="yes" body="hello"`) {
		t.Fatalf("echo: %q", res.Output)
	}
	// Headers the agent sets itself are sent.
	res = wantOK(t, call(t, r, "http_request", map[string]any{"method": "GET", "url": srv.URL + "/echo", "headers": map[string]string{"authorization": "Bearer mine"}}))
	if !strings.Contains(res.Output, `auth="Bearer mine"`) {
		t.Fatalf("own header: %q", res.Output)
	}

	res = wantOK(t, call(t, r, "http_request", map[string]any{"method": "GET", "url": srv.URL + "/big"}))
	if !res.Truncated || !strings.Contains(res.Output, strings.Repeat("b", 1000)+"\n[... truncated: the body is larger than 1000 bytes") || strings.Contains(res.Output, strings.Repeat("b", 1001)) {
		t.Fatalf("big: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "http_request", map[string]any{"method": "GET", "url": srv.URL + "/binary"}))
	if !strings.Contains(res.Output, "[binary body of 11 bytes (image/png) not shown]") {
		t.Fatalf("binary: %q", res.Output)
	}

	// Same-origin redirect: followed; a 302 turns POST into GET, a 307 keeps it.
	res = wantOK(t, call(t, r, "http_request", map[string]any{"method": "POST", "url": srv.URL + "/to-echo", "body": "x"}))
	if !strings.Contains(res.Output, "method=GET") || !strings.Contains(res.Output, "final URL after redirects: "+srv.URL+"/echo") {
		t.Fatalf("302: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "http_request", map[string]any{"method": "PUT", "url": srv.URL + "/to-echo-307", "body": "kept"}))
	if !strings.Contains(res.Output, `method=PUT`) || !strings.Contains(res.Output, `body="kept"`) {
		t.Fatalf("307: %q", res.Output)
	}
	// Another origin: returned, not followed.
	res = wantOK(t, call(t, r, "http_request", map[string]any{"method": "GET", "url": srv.URL + "/to-other"}))
	if !strings.Contains(res.Output, "302 Found") || strings.Contains(res.Output, "OTHER ORIGIN") || !strings.Contains(res.Output, "not followed: it leaves") {
		t.Fatalf("cross-origin redirect: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "http_request", map[string]any{"method": "GET", "url": srv.URL + "/loop"}))
	if !strings.Contains(res.Output, "not followed: 3 redirects already followed") {
		t.Fatalf("loop: %q", res.Output)
	}

	wantErr(t, call(t, r, "http_request", map[string]any{"method": "GET", "url": srv.URL + "/hang"}), "timed out after 500ms")
	wantErr(t, call(t, r, "http_request", map[string]any{"method": "POST", "url": srv.URL + "/echo", "body": strings.Repeat("x", 101)}), "101 bytes", "100 allowed")
	wantErr(t, call(t, r, "http_request", map[string]any{"method": "GET", "url": srv.URL + "/echo", "headers": map[string]string{"host": "internal.example"}}), `header "host" cannot be set`)
	wantErr(t, call(t, r, "http_request", map[string]any{"method": "GET", "url": "file:///etc/passwd"}), "only http and https")
	wantErr(t, call(t, r, "http_request", map[string]any{"method": "GET", "url": "ftp://example.com/x"}), "only http and https")
	wantErr(t, call(t, r, "http_request", map[string]any{"method": "GET", "url": "http:///nohost"}), "no host")
	wantErr(t, call(t, r, "http_request", map[string]any{"method": "TRACE", "url": srv.URL}), `"TRACE" is not one of`)
}

// TestHTTPRefusesPrivateNetworks: by default nothing on the engine's own
// network is reachable, whatever name leads there.
func TestHTTPRefusesPrivateNetworks(t *testing.T) {
	t.Parallel()
	srv, _ := newHTTPServers(t)
	r, _ := newTestRegistry(t, nil)
	port := serverPort(srv)
	// Granted every port these URLs use: only the address check stands in the way.
	grant := Grant{ConnectTCP: []uint16{port, 80, 1}}
	for _, u := range []string{
		srv.URL + "/echo",
		fmt.Sprintf("http://localhost:%d/echo", port),
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/echo", port),
		"http://169.254.169.254/latest/meta-data/",
		"http://10.1.2.3/",
		"http://0.0.0.0:1/",
	} {
		wantErr(t, callWith(t, r, grant, "http_request", map[string]any{"method": "GET", "url": u}), "are not allowed", "non-public")
	}
}

func TestIsNonPublic(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "::1": true, "10.0.0.1": true, "172.16.0.1": true, "192.168.1.1": true,
		"169.254.169.254": true, "100.100.100.200": true, "fd00::1": true, "fe80::1": true,
		"::ffff:10.0.0.1": true, "64:ff9b::a00:1": true, "0.0.0.0": true, "224.0.0.1": true,
		"8.8.8.8": false, "1.1.1.1": false, "2606:4700:4700::1111": false,
	} {
		if got := isNonPublic(netip.MustParseAddr(addr)); got != want {
			t.Errorf("isNonPublic(%s) = %v, want %v", addr, got, want)
		}
	}
}

func serverPort(srv *httptest.Server) uint16 {
	return srv.Listener.Addr().(interface{ AddrPort() netip.AddrPort }).AddrPort().Port()
}

// TestHTTPNeedsAPortGrant: http_request connects only to the ports the
// verdict granted, as a confined command does: none granted, nothing
// sent; another port than the granted one, nothing sent.
func TestHTTPNeedsAPortGrant(t *testing.T) {
	t.Parallel()
	srv, other := newHTTPServers(t)
	r, _ := newTestRegistry(t, func(o *Options) { o.HTTPAllowPrivateNetworks = true })
	get := map[string]any{"method": "GET", "url": srv.URL + "/echo"}
	wantErr(t, call(t, r, "http_request", get), "port "+strconv.Itoa(int(serverPort(srv)))+" is not granted", "granted: none")
	wantErr(t, callWith(t, r, Grant{ConnectTCP: []uint16{serverPort(other)}}, "http_request", get), "is not granted")
	wantOK(t, callWith(t, r, Grant{ConnectTCP: []uint16{serverPort(srv)}}, "http_request", get))
	// The scheme's port counts when the URL names none.
	if p, ok := grantsPort(Grant{ConnectTCP: []uint16{443}}, mustURL(t, "https://example.com/x")); !ok || p != 443 {
		t.Errorf("https default port: %d %v", p, ok)
	}
	if p, ok := grantsPort(Grant{ConnectTCP: []uint16{443}}, mustURL(t, "http://example.com/x")); ok || p != 80 {
		t.Errorf("http default port with only 443 granted: %d %v", p, ok)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
