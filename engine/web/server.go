// Package web serves the engine's HTTP API and its web page. It is a thin
// translation layer over the engine's own ClientService: every request
// becomes one gRPC call over a loopback connection to the engine's
// listener, so the page, scripts, agentctl and any other front-end share
// one path through validation, the approval broker and the sessions.
//
// Endpoints (docs/web-api.md has the details): GET /api/status,
// GET /api/sessions, GET /api/sessions/{id}/history,
// POST /api/sessions/{id}/messages (a server-sent event stream of the
// turn's PipelineEvents), POST /api/approvals/{id}, GET /api/events (every
// session's events as server-sent events, with heartbeats) and
// POST /api/restart; GET / is the page, with /app.js and /app.css.
//
// # Why the server is guarded the way it is
//
// The server can approve actions the shield escalated, so neither a web
// page the user happens to visit nor a local process without the
// engine's client token (kept in the 0600 state file) may drive it or
// read what it shows. Three checks, each cheap:
//
//   - Host must be a loopback address or "localhost" (every request). A
//     DNS-rebinding page reaches 127.0.0.1 under its own name and would
//     otherwise be same-origin with us; the listener itself is loopback
//     only (agentctl refuses any other --web-addr), as the API has no
//     user authentication.
//   - Every request but the static script and style must carry the
//     engine's client token: signing in (GET /?token=T) sets it as an
//     HttpOnly, SameSite=Strict cookie (named per port), and nothing
//     else hands it out; scripts send it as X-Parapet-Token or
//     "Authorization: Bearer". A cross-site request carries no
//     SameSite=Strict cookie.
//   - A POST from a browser must be same-origin: Sec-Fetch-Site, when
//     sent, must be "same-origin", and Origin, when sent, must be this
//     server. SameSite treats every port of 127.0.0.1 as one site, so the
//     cookie alone would trust a page from another local server; the
//     origin includes the port. JSON bodies must also be sent as
//     application/json, which an HTML form cannot do.
//
// Other origins cannot read the answers either (no CORS headers are ever
// sent, and Cross-Origin-Resource-Policy forbids embedding them). Every answer
// carries a strict Content-Security-Policy (the page's own script and
// style only, no inline code, no framing: a page with Approve buttons
// must not be clickjacked), nosniff and no-store; the page renders
// untrusted text (model output, tool arguments) with textContent only.
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// Defaults of Options.
const (
	DefaultMaxBodyBytes = 1 << 20
	DefaultHeartbeat    = 15 * time.Second
	// callTimeout bounds each unary ClientService call.
	callTimeout = 10 * time.Second
	// bodyReadTimeout bounds reading a request body, so a client that
	// trickles one cannot hold a handler.
	bodyReadTimeout = 30 * time.Second
	// writeTimeout bounds each write to a stream: a client that stops
	// reading is dropped rather than holding its handler forever.
	writeTimeout = 30 * time.Second
)

// Options configure a Server.
type Options struct {
	// Client reaches the engine's ClientService (required); its
	// connection carries the engine's client token.
	Client pb.ClientServiceClient
	// Token is what every API request and the page must carry (required):
	// the engine's client token, so that one credential, kept in the
	// state file, opens both doors.
	Token string
	// MaxBodyBytes bounds a request body (default 1 MiB); more is 413.
	MaxBodyBytes int64
	// Heartbeat is the interval of the comment lines that keep event
	// streams open through proxies (default 15 s).
	Heartbeat time.Duration
	Logger    *slog.Logger
}

// Server is the HTTP API and web page. It is an http.Handler; Serve and
// Shutdown run it on a listener.
type Server struct {
	opts  Options
	log   *slog.Logger
	token string
	mux   *http.ServeMux
	// allowed lists each path pattern's methods, for 405 answers.
	allowed map[string][]string

	http *http.Server
	// closing ends with Shutdown; so do the event streams, which would
	// otherwise keep Shutdown waiting. Other requests finish normally.
	closing      context.Context
	startClosing context.CancelFunc
}

//go:embed static
var static embed.FS

// marshal renders protobuf messages as JSON with the proto's field names;
// default values are written (false, 0, []), unset messages left out.
var marshal = protojson.MarshalOptions{UseProtoNames: true, EmitDefaultValues: true}

// New builds a Server.
func New(opts Options) (*Server, error) {
	if opts.Client == nil {
		return nil, errors.New("web: no ClientService client")
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Token == "" {
		return nil, errors.New("web: no token: the API is never served without one")
	}
	s := &Server{opts: opts, log: opts.Logger, token: opts.Token, mux: http.NewServeMux(), allowed: map[string][]string{}}
	s.closing, s.startClosing = context.WithCancel(context.Background())
	s.http = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	if err := s.routes(); err != nil {
		return nil, err
	}
	return s, nil
}

// Token is the token every API request must carry.
func (s *Server) Token() string { return s.token }

// Serve serves on lis until Shutdown; it returns nil after Shutdown.
func (s *Server) Serve(lis net.Listener) error {
	if err := s.http.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown ends the open event streams (a message stream's turn is
// cancelled with it) and waits for the other requests until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.startClosing()
	return s.http.Shutdown(ctx)
}

// streamContext is the context of a streaming request: it ends when the
// client leaves or the server shuts down.
func (s *Server) streamContext(r *http.Request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(s.closing, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

// ServeHTTP applies the checks every request gets, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header(), false)
	if !hostAllowed(r.Host) {
		writeError(w, http.StatusForbidden, codeHostNotAllowed,
			fmt.Sprintf("host %q is not a loopback address; open the page as http://127.0.0.1:<port>/", r.Host))
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) routes() error {
	page, err := static.ReadFile("static/index.html")
	if err != nil {
		return err
	}
	s.handle("GET", "/{$}", func(w http.ResponseWriter, r *http.Request) {
		// Signing in: the address agentctl status prints carries the token
		// once; it becomes the cookie, and the address loses it.
		if q := r.URL.Query(); q.Has("token") {
			if !s.tokenEqual(q.Get("token")) {
				writeError(w, http.StatusUnauthorized, codeTokenRequired, "the token in this address is not this engine's: "+signInHint)
				return
			}
			s.setTokenCookie(w, r)
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		if !s.tokenOK(r) {
			writeError(w, http.StatusUnauthorized, codeTokenRequired, "sign in first: "+signInHint)
			return
		}
		securityHeaders(w.Header(), true)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page)
	})
	for name, ctype := range map[string]string{"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"} {
		body, err := static.ReadFile("static/" + name)
		if err != nil {
			return err
		}
		s.handle("GET", "/"+name, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ctype)
			_, _ = w.Write(body)
		})
	}
	s.handle("GET", "/api/status", s.reading(s.getStatus))
	s.handle("GET", "/api/sessions", s.reading(s.listSessions))
	s.handle("GET", "/api/sessions/{id}/history", s.reading(s.getHistory))
	s.handle("POST", "/api/sessions/{id}/messages", s.stateChanging(s.postMessage))
	s.handle("POST", "/api/approvals/{id}", s.stateChanging(s.postApproval))
	s.handle("GET", "/api/events", s.reading(s.getEvents))
	s.handle("POST", "/api/restart", s.stateChanging(s.postRestart))
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("no such endpoint: %s %s", r.Method, r.URL.Path))
	})
	return nil
}

// handle registers method+path and, once per path, a method-less
// pattern that answers the other methods with a JSON 405 (the mux's own
// 405 is plain text).
func (s *Server) handle(method, path string, h http.HandlerFunc) {
	s.mux.HandleFunc(method+" "+path, h)
	if _, seen := s.allowed[path]; !seen {
		s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			allow := strings.Join(s.allowed[path], ", ")
			w.Header().Set("Allow", allow)
			writeError(w, http.StatusMethodNotAllowed, codeMethodNotAllowed, fmt.Sprintf("%s is not allowed here; use %s", r.Method, allow))
		})
	}
	s.allowed[path] = append(s.allowed[path], method)
	if method == "GET" {
		s.allowed[path] = append(s.allowed[path], "HEAD")
	}
}

// stateChanging refuses a request from another origin or without the
// token before h sees it.
func (s *Server) stateChanging(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if why := crossOriginReason(r); why != "" {
			writeError(w, http.StatusForbidden, codeCrossOrigin, why)
			return
		}
		s.reading(h)(w, r)
	}
}

// signInHint says where the token comes from.
const signInHint = "open the web address that agentctl status prints (it carries the token), or send the client token from WORKSPACE/.parapet/state.json as " + TokenHeader

// reading refuses a request without the token before h sees it: what
// the engine shows (sessions, tool calls, pending approvals and their
// ids) is for the person who started it, not for every local process.
func (s *Server) reading(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.tokenOK(r) {
			writeError(w, http.StatusUnauthorized, codeTokenRequired, "this request needs the engine's token: "+signInHint)
			return
		}
		h(w, r)
	}
}

// readJSONBody reads a bounded application/json body; on failure it has
// answered and returns false.
func (s *Server) readJSONBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, codeMediaType,
			fmt.Sprintf("send the body as Content-Type: application/json (got %q)", r.Header.Get("Content-Type")))
		return nil, false
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyReadTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, codeTooLarge, fmt.Sprintf("request body exceeds %d bytes", s.opts.MaxBodyBytes))
		} else {
			writeError(w, http.StatusBadRequest, codeInvalidArgument, "reading request body: "+err.Error())
		}
		return nil, false
	}
	return body, true
}

func writeProto(w http.ResponseWriter, httpStatus int, m proto.Message) {
	b, err := marshal.Marshal(m)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "INTERNAL", "encoding the answer: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus)
	_, _ = w.Write(append(b, '\n'))
}
