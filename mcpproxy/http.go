package mcpproxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// The Streamable HTTP transport (MCP 2025-06-18): the client POSTs each
// message to one endpoint; a request is answered with JSON or an SSE
// stream that may carry the server's own requests and notifications
// before the response; GET opens a stream for messages unrelated to a
// request; Mcp-Session-Id names the session. The proxy is a Streamable
// HTTP server to its client and a Streamable HTTP client of the upstream
// server, with its own session ids on each side.

const (
	headerSession  = "Mcp-Session-Id"
	headerProtocol = "Mcp-Protocol-Version"
)

// ServeHTTP serves the proxy on listen (a loopback address: the proxy
// does not authenticate its clients) for the upstream MCP endpoint. It
// calls ready with the address it listens on and returns when ctx ends.
func ServeHTTP(ctx context.Context, cfg Config, listen, upstream string, ready func(addr string)) error {
	if err := cfg.prepare(); err != nil {
		return err
	}
	u, err := url.Parse(upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &ConfigError{fmt.Errorf("--upstream %q: want an http:// or https:// URL of the MCP endpoint", upstream)}
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return &ConfigError{fmt.Errorf("--listen %q: %v", listen, err)}
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return &ConfigError{fmt.Errorf("--listen %q: only loopback addresses (127.0.0.1, [::1], localhost): the proxy does not authenticate its clients", listen)}
	}
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	h := &httpProxy{cfg: &cfg, upstream: u.String(), sessions: map[string]*httpSession{},
		http: &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16}}}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	cfg.Log.Info("mcp-proxy: serving Streamable HTTP", "server", cfg.Server, "listen", lis.Addr().String(), "upstream", h.upstream, "pins", cfg.Pins.Path())
	if ready != nil {
		ready(lis.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lis) }()
	go h.expireIdle(ctx)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	h.closeAll()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}

type httpProxy struct {
	cfg      *Config
	upstream string
	http     *http.Client
	mu       sync.Mutex
	sessions map[string]*httpSession
}

// httpSession is one client session and its upstream session.
type httpSession struct {
	p      *httpProxy
	id     string
	core   *session
	ctx    context.Context
	cancel context.CancelFunc

	mu              sync.Mutex
	lastUsed        time.Time
	open            int // requests and GET streams being served
	upstreamSession string
	protocol        string
	streams         map[string]*reqStream // client request id → its response stream
	general         chan *Message         // messages for the GET stream
}

// expireIdle ends sessions nobody has used for cfg.SessionIdle, so a
// client that never sends DELETE does not keep its state forever.
func (p *httpProxy) expireIdle(ctx context.Context) {
	every := min(p.cfg.SessionIdle/4, time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			p.mu.Lock()
			for id, s := range p.sessions {
				s.mu.Lock()
				idle := s.open == 0 && now.Sub(s.lastUsed) > p.cfg.SessionIdle
				s.mu.Unlock()
				if idle {
					delete(p.sessions, id)
					s.cancel()
					p.cfg.Log.Info("mcp-proxy: idle session ended", "server", p.cfg.Server, "idle", p.cfg.SessionIdle)
				}
			}
			p.mu.Unlock()
		}
	}
}

// use marks the session busy until the returned func is called.
func (s *httpSession) use() func() {
	s.mu.Lock()
	s.open++
	s.lastUsed = time.Now()
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.open--
		s.lastUsed = time.Now()
		s.mu.Unlock()
	}
}

func (p *httpProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, s := range p.sessions {
		s.cancel()
		delete(p.sessions, id)
	}
}

func (p *httpProxy) newSession() *httpSession {
	var b [16]byte
	_, _ = rand.Read(b[:])
	ctx, cancel := context.WithCancel(context.Background())
	s := &httpSession{p: p, id: hex.EncodeToString(b[:]), ctx: ctx, cancel: cancel, lastUsed: time.Now(),
		streams: map[string]*reqStream{}, general: make(chan *Message, 256)}
	s.core = newSession(ctx, p.cfg, httpClientSide{s}, httpServerSide{s})
	p.mu.Lock()
	p.sessions[s.id] = s
	p.mu.Unlock()
	return s
}

func (p *httpProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// DNS rebinding: a browser page must not reach a local MCP server.
	if o := r.Header.Get("Origin"); o != "" && !loopbackOrigin(o) {
		http.Error(w, "origin not allowed", http.StatusForbidden)
		return
	}
	switch r.Method {
	case http.MethodPost:
		p.post(w, r)
	case http.MethodGet:
		p.get(w, r)
	case http.MethodDelete:
		p.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func loopbackOrigin(o string) bool {
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	h := u.Hostname()
	ip := net.ParseIP(h)
	return h == "localhost" || (ip != nil && ip.IsLoopback())
}

// session finds the request's session: 400 without an id, 404 for an
// unknown one (the client must initialize again).
func (p *httpProxy) session(w http.ResponseWriter, r *http.Request) *httpSession {
	id := r.Header.Get(headerSession)
	if id == "" {
		writeJSONError(w, http.StatusBadRequest, nil, codeInvalidRequest, "missing "+headerSession+" header (initialize first)")
		return nil
	}
	p.mu.Lock()
	s := p.sessions[id]
	p.mu.Unlock()
	if s == nil {
		writeJSONError(w, http.StatusNotFound, nil, codeInvalidRequest, "unknown or ended session")
		return nil
	}
	return s
}

func writeJSONError(w http.ResponseWriter, status int, id []byte, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorResponse(id, code, "Parapet MCP proxy: "+msg).Raw)
}

func (p *httpProxy) post(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(p.cfg.MaxMessageBytes)+1))
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, nil, codeParseError, "reading the request: "+err.Error())
		return
	}
	if len(body) > p.cfg.MaxMessageBytes {
		writeJSONError(w, http.StatusRequestEntityTooLarge, nil, codeInvalidRequest, fmt.Sprintf("message larger than %d bytes", p.cfg.MaxMessageBytes))
		return
	}
	m, err := ParseMessage(body)
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, idOf(body), codeParseError, err.Error())
		return
	}
	var s *httpSession
	if m.Method == "initialize" && r.Header.Get(headerSession) == "" {
		s = p.newSession()
	} else if s = p.session(w, r); s == nil {
		return
	}
	defer s.use()()
	if !m.IsRequest() {
		// Notifications and responses: accepted, answered by nothing.
		s.core.fromClient(m.Raw)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	key := idKey(m.ID)
	stream := &reqStream{ch: make(chan *Message, 64), abandoned: make(chan struct{}), done: make(chan struct{})}
	s.mu.Lock()
	if _, dup := s.streams[key]; dup {
		s.mu.Unlock()
		writeJSONError(w, http.StatusBadRequest, m.ID, codeInvalidRequest, "a request with this id is already in progress")
		return
	}
	s.streams[key] = stream
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.streams[key] == stream {
			delete(s.streams, key)
		}
		s.mu.Unlock()
		close(stream.done)
	}()
	go s.core.fromClient(m.Raw)

	sse := acceptsSSE(r)
	w.Header().Set(headerSession, s.id)
	if sse {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
	}
	flusher, _ := w.(http.Flusher)
	for {
		select {
		case <-stream.abandoned: // cancelled: no response will come
			if !sse {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			// What was queued before the abandonment (the withdrawal of a
			// question put to the client) still goes out, in order: select
			// may have picked this case while those messages waited.
			for {
				select {
				case msg := <-stream.ch:
					if writeSSE(w, msg) != nil {
						return
					}
				default:
					if flusher != nil {
						flusher.Flush()
					}
					return
				}
			}
		case msg := <-stream.ch:
			final := msg.IsResponse() && idKey(msg.ID) == key
			if !sse {
				if !final {
					s.toGeneral(msg) // JSON mode carries only the response
					continue
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(msg.Raw)
				return
			}
			if writeSSE(w, msg) != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
			if final {
				return
			}
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		}
	}
}

func acceptsSSE(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err == nil && mt == "text/event-stream" {
			return true
		}
	}
	return false
}

// get serves the stream of messages that belong to no request: the
// upstream's own GET stream, and what the proxy could not deliver on a
// request's stream.
func (p *httpProxy) get(w http.ResponseWriter, r *http.Request) {
	s := p.session(w, r)
	if s == nil {
		return
	}
	if !acceptsSSE(r) {
		http.Error(w, "GET needs Accept: text/event-stream", http.StatusNotAcceptable)
		return
	}
	defer s.use()()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go s.listenUpstream(ctx)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	for {
		select {
		case msg := <-s.general:
			if writeSSE(w, msg) != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		case <-ctx.Done():
			return
		case <-s.ctx.Done():
			return
		}
	}
}

func (p *httpProxy) delete(w http.ResponseWriter, r *http.Request) {
	s := p.session(w, r)
	if s == nil {
		return
	}
	p.mu.Lock()
	delete(p.sessions, s.id)
	p.mu.Unlock()
	s.mu.Lock()
	up := s.upstreamSession
	s.mu.Unlock()
	if up != "" {
		req, err := http.NewRequestWithContext(r.Context(), http.MethodDelete, p.upstream, nil)
		if err == nil {
			s.setUpstreamHeaders(req)
			if resp, err := p.http.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	}
	s.cancel()
	w.WriteHeader(http.StatusOK)
}

// toGeneral queues a message for the GET stream; with no one reading
// and the queue full it is dropped and reported.
func (s *httpSession) toGeneral(m *Message) {
	select {
	case s.general <- m:
	default:
		s.p.cfg.Log.Warn("mcp-proxy: message for the client dropped: no GET stream is reading", "server", s.p.cfg.Server, "method", m.Method)
	}
}

// reqStream carries the messages for one client request's POST.
type reqStream struct {
	ch        chan *Message
	abandoned chan struct{} // closed: no response will come
	done      chan struct{} // closed: the POST handler has returned
	once      sync.Once
}

type httpClientSide struct{ s *httpSession }

func (c httpClientSide) send(m *Message, rel string) {
	c.s.mu.Lock()
	stream := c.s.streams[rel]
	c.s.mu.Unlock()
	if stream == nil {
		c.s.toGeneral(m)
		return
	}
	select {
	case stream.ch <- m:
	case <-stream.done:
		// The client went away before its answer: nothing to deliver to.
	case <-c.s.ctx.Done():
	}
}

func (c httpClientSide) abandon(rel string) {
	c.s.mu.Lock()
	stream := c.s.streams[rel]
	delete(c.s.streams, rel)
	c.s.mu.Unlock()
	if stream != nil {
		stream.once.Do(func() { close(stream.abandoned) })
	}
}

type httpServerSide struct{ s *httpSession }

// send POSTs one message upstream and feeds what comes back (one JSON
// message or an SSE stream of them) to the session.
func (u httpServerSide) send(m *Message, rel string) error {
	s := u.s
	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, s.p.upstream, bytes.NewReader(m.Raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	s.setUpstreamHeaders(req)
	resp, err := s.p.http.Do(req)
	if err != nil {
		return fmt.Errorf("upstream: %w", err)
	}
	defer resp.Body.Close()
	if m.Method == "initialize" {
		s.mu.Lock()
		s.upstreamSession = resp.Header.Get(headerSession)
		s.mu.Unlock()
	}
	switch {
	case resp.StatusCode == http.StatusAccepted:
		return nil
	case resp.StatusCode == http.StatusNotFound && req.Header.Get(headerSession) != "":
		return errors.New("upstream: the server ended the session (404); the client must initialize again")
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return fmt.Errorf("upstream: HTTP %d: %s", resp.StatusCode, clip(string(snippet), 200))
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		body, err := io.ReadAll(io.LimitReader(resp.Body, int64(s.p.cfg.MaxMessageBytes)+1))
		if err != nil {
			return fmt.Errorf("upstream: %w", err)
		}
		if len(body) > s.p.cfg.MaxMessageBytes {
			return fmt.Errorf("upstream: answer larger than %d bytes", s.p.cfg.MaxMessageBytes)
		}
		if m.Method == "initialize" {
			s.noteProtocol(body)
		}
		s.core.fromServer(body, rel)
		return nil
	case "text/event-stream":
		err := readSSE(resp.Body, s.p.cfg.MaxMessageBytes, func(ev sseEvent) error {
			if m.Method == "initialize" {
				s.noteProtocol(ev.Data)
			}
			s.core.fromServer(ev.Data, rel)
			return nil
		})
		if err != nil {
			return fmt.Errorf("upstream stream: %w", err)
		}
		return nil
	case "":
		return nil // 200 with no body
	}
	return fmt.Errorf("upstream: unexpected Content-Type %q", ct)
}

func (s *httpSession) setUpstreamHeaders(req *http.Request) {
	for name, values := range s.p.cfg.UpstreamHeaders {
		for _, v := range values {
			req.Header.Add(name, v)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.upstreamSession != "" {
		req.Header.Set(headerSession, s.upstreamSession)
	}
	if s.protocol != "" {
		req.Header.Set(headerProtocol, s.protocol)
	}
}

// noteProtocol remembers the negotiated version for the
// MCP-Protocol-Version header of later upstream requests.
func (s *httpSession) noteProtocol(b []byte) {
	m, err := ParseMessage(b)
	if err != nil || m.Result == nil {
		return
	}
	res, err := decodeObject(m.Result)
	if err != nil {
		return
	}
	if v, ok := res["protocolVersion"].(string); ok && v != "" && len(v) < 64 {
		s.mu.Lock()
		s.protocol = v
		s.mu.Unlock()
	}
}

// listenUpstream relays the upstream's GET stream while the client's GET
// stream is open. A server without one (405) is fine.
func (s *httpSession) listenUpstream(ctx context.Context) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.p.upstream, nil)
	if err != nil {
		return
	}
	req.Header.Set("Accept", "text/event-stream")
	s.setUpstreamHeaders(req)
	resp, err := s.p.http.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return
	}
	_ = readSSE(resp.Body, s.p.cfg.MaxMessageBytes, func(ev sseEvent) error {
		s.core.fromServer(ev.Data, "")
		return nil
	})
}
