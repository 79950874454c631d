package mcpproxy_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// runHTTPServer serves the fake MCP server over Streamable HTTP on
// 127.0.0.1:0 and prints its address. Requests are answered with an SSE
// stream carrying the server's notifications and requests before the
// response; it insists on the session id it gave out.
func runHTTPServer() {
	f := newFakeServer()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(lis.Addr().String())
	var mu sync.Mutex
	replies := map[string]chan rpc{}
	const sessionID = "fake-session-42"
	_ = http.Serve(lis, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			// The server's own stream: it announces a changed tool list
			// (as after a rug pull) and stays open.
			if r.Header.Get("Mcp-Session-Id") != sessionID {
				http.Error(w, "wrong or missing session id", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		case http.MethodDelete:
			if f.log != nil {
				fmt.Fprintln(f.log, "DELETE "+r.Header.Get("Mcp-Session-Id"))
			}
			w.WriteHeader(http.StatusOK)
			return
		}
		if want := os.Getenv("MCPP_REQUIRE_AUTH"); want != "" && r.Header.Get("Authorization") != want {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var m rpc
		if json.Unmarshal(body, &m) != nil {
			http.Error(w, "bad JSON", http.StatusBadRequest)
			return
		}
		if m.Method == "initialize" {
			w.Header().Set("Mcp-Session-Id", sessionID)
		} else if r.Header.Get("Mcp-Session-Id") != sessionID {
			http.Error(w, "wrong or missing session id", http.StatusBadRequest)
			return
		}
		if m.Method == "" {
			mu.Lock()
			ch := replies[string(m.ID)]
			mu.Unlock()
			if ch != nil {
				ch <- m
			}
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if m.ID == nil {
			f.handle(m, func(rpc) {}, nil)
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		var wmu sync.Mutex
		write := func(msg rpc) {
			b, _ := json.Marshal(msg)
			wmu.Lock()
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
			w.(http.Flusher).Flush()
			wmu.Unlock()
		}
		ask := func(req rpc) rpc {
			ch := make(chan rpc, 1)
			mu.Lock()
			replies[string(req.ID)] = ch
			mu.Unlock()
			write(req)
			select {
			case r := <-ch:
				return r
			case <-time.After(time.Minute):
				return rpc{}
			}
		}
		if reply, ok := f.handle(m, write, ask); ok {
			write(reply)
		}
	}))
}
