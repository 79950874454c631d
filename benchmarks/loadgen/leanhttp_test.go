package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestLeanHTTP drives a real net/http server through the lean client:
// fixed-length, chunked and closing responses come back whole, errors
// are reported by status, the connection is kept between calls unless
// the server closes it, and the request carries its headers and body.
func TestLeanHTTP(t *testing.T) {
	var dials atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo":
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(r.Header.Get("Authorization") + "|" + r.Header.Get("Content-Type") + "|" + string(body)))
		case "/chunked":
			for _, part := range []string{`{"verdict":`, `{"decision":`, `"VERDICT_DECISION_BLOCK"}}`} {
				w.Write([]byte(part))
				w.(http.Flusher).Flush()
			}
		case "/close":
			w.Header().Set("Connection", "close")
			w.Write([]byte("bye"))
		default:
			http.Error(w, "slow down", http.StatusTooManyRequests)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	l, err := newLeanHTTP(srv.URL, 1, 5*time.Second, "Bearer t0k")
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	ctx := t.Context()
	for range 3 {
		body, code := l.do(ctx, 0, http.MethodPost, "/echo", []byte(`{"a":1}`))
		if code != "" || string(body) != `Bearer t0k|application/json|{"a":1}` {
			t.Fatalf("echo: %q, %q", body, code)
		}
	}
	if body, code := l.do(ctx, 0, http.MethodGet, "/chunked", nil); code != "" || string(body) != `{"verdict":{"decision":"VERDICT_DECISION_BLOCK"}}` {
		t.Errorf("chunked: %q, %q", body, code)
	}
	if _, code := l.do(ctx, 0, http.MethodGet, "/other", nil); code != "HTTP 429" {
		t.Errorf("error status: code %q, want HTTP 429", code)
	}
	if got := dials.Load(); got != 1 {
		t.Errorf("%d connections for keep-alive calls, want 1", got)
	}
	if body, code := l.do(ctx, 0, http.MethodGet, "/close", nil); code != "" || string(body) != "bye" {
		t.Errorf("close: %q, %q", body, code)
	}
	if body, code := l.do(ctx, 0, http.MethodPost, "/echo", []byte("x")); code != "" || !strings.HasSuffix(string(body), "|x") {
		t.Errorf("after close: %q, %q", body, code)
	}
	if got := dials.Load(); got != 2 {
		t.Errorf("%d connections after the server closed one, want 2", got)
	}

	srv.Close()
	if _, code := l.do(ctx, 0, http.MethodGet, "/echo", nil); code != "transport" {
		t.Errorf("server gone: code %q, want transport", code)
	}
	if _, err := newLeanHTTP("https://127.0.0.1:1", 1, time.Second, ""); err == nil {
		t.Error("https: no error")
	}
}

// TestReadResponseRefusesMalformed: responses the client cannot frame
// are errors, not guesses.
func TestReadResponseRefusesMalformed(t *testing.T) {
	for _, raw := range []string{
		"",
		"HTTP/1.1 200 OK\r\n",               // headers never end
		"HTTP/2 200 OK\r\n\r\n",             // not HTTP/1.x
		"HTTP/1.1 2x0 OK\r\n\r\n",           // status not a number
		"HTTP/1.1 200 OK\r\nbroken\r\n\r\n", // header without a colon
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabc", // short body
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n",
	} {
		if _, _, _, err := readResponse(bufio.NewReader(strings.NewReader(raw)), nil); err == nil {
			t.Errorf("%q: no error", raw)
		}
	}
}

// FuzzReadResponse: any bytes are read without a panic, and where
// net/http's parser also accepts a response with a 200 status the two
// agree on the body.
func FuzzReadResponse(f *testing.F) {
	for _, seed := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nT: 1\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nto the end",
		"HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		status, body, _, err := readResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
		if err != nil {
			return
		}
		if len(body) > maxLeanBody {
			t.Fatalf("body of %d bytes", len(body))
		}
		resp, rerr := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), &http.Request{Method: http.MethodPost})
		if rerr != nil || resp.StatusCode != 200 || status != 200 {
			return
		}
		want, berr := io.ReadAll(resp.Body)
		if berr == nil && !bytes.Equal(body, want) {
			t.Fatalf("body %q, net/http read %q", body, want)
		}
	})
}
