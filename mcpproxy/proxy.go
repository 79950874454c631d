// Package mcpproxy is an MCP gateway: it sits between an MCP client and one
// MCP server, judges every tools/call with the Parapet shield before the
// server sees it, withholds tools whose descriptions carry instructions to
// the model or changed since first seen, and checks tool results for
// secrets and prompt injection. Everything else passes through unchanged.
package mcpproxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/heuristics"
	"github.com/parapet-dev/parapet/rules/policy"
)

// Shield judges one action: shieldd/client.Client, or the shield
// in-process (shieldd/shield.Local).
type Shield interface {
	Evaluate(ctx context.Context, req *pb.EvaluateRequest) (*pb.Verdict, error)
}

// What to do with a tool result that carries secrets.
const (
	SecretsRedact = "redact" // replace each secret with [REDACTED rule] (default)
	SecretsBlock  = "block"  // replace the whole result with an error
	SecretsReport = "report" // log it and pass the result on
)

// What to do with a tool result that carries prompt-injection wording.
const (
	InjectionWarn   = "warn"   // prepend a warning the model reads (default)
	InjectionBlock  = "block"  // replace the result with an error
	InjectionReport = "report" // log it and pass the result on
)

// Config configures a proxy for one MCP server.
type Config struct {
	// Server names the MCP server in actions: mcp:SERVER/TOOL.
	Server string
	Shield Shield
	// Workspace and Home are the caller's, for resolving paths in
	// arguments.
	Workspace, Home string
	// Pins records each tool's definition hash when first seen. Required.
	Pins *Pins
	// AllowChanged accepts a tool whose definition changed since it was
	// pinned, and pins the new one. Off: such a tool is withheld.
	AllowChanged bool
	// TrustedTools are tool names whose suspicious descriptions are
	// reported but not withheld.
	TrustedTools []string
	// ResultSecrets: SecretsRedact (default), SecretsBlock, SecretsReport.
	ResultSecrets string
	// ResultInjection: InjectionWarn (default), InjectionBlock, InjectionReport.
	ResultInjection string
	// Broker, when set, puts escalated calls to the approval broker of the
	// engine that runs for the workspace, before the client is asked.
	Broker Broker
	// JudgeTimeout bounds one shield decision (default 30s); AskTimeout
	// bounds waiting for the user's answer to an escalation (default 5m).
	JudgeTimeout, AskTimeout time.Duration
	// MaxMessageBytes bounds one message (default 16 MiB).
	MaxMessageBytes int
	// UpstreamHeaders are added to every request to the upstream
	// (Streamable HTTP), e.g. the Authorization a remote server wants.
	// The client's own headers are not passed on.
	UpstreamHeaders http.Header
	// SessionIdle ends a Streamable HTTP session nothing has used for
	// this long (default 1h); its client must initialize again.
	SessionIdle time.Duration
	Log         *slog.Logger

	analyzer *heuristics.Analyzer
}

// Broker asks a person about an escalated call through the approval
// broker of the workspace's engine (agentctl start): the web page,
// agentctl approve/deny or the engine's terminal answer it, as they answer
// the agent's own escalations. outcome names what happened ("approved by
// http", "timeout by engine"). ErrNoEngine means no engine runs for the
// workspace; the client is then asked.
type Broker interface {
	RequestApproval(ctx context.Context, source, tool, argumentsJSON string, v *pb.Verdict) (approved bool, outcome string, err error)
}

// ErrNoEngine is a Broker's answer when no engine runs for the workspace.
var ErrNoEngine = errors.New("no engine runs for the workspace")

// ConfigError is a mistake in the configuration (a usage error), as
// opposed to a failure while running.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// prepare validates the configuration and fills defaults; its errors are
// *ConfigError.
func (c *Config) prepare() error {
	if err := c.fill(); err != nil {
		return &ConfigError{err}
	}
	return nil
}

func (c *Config) fill() error {
	if strings.TrimSpace(c.Server) == "" {
		return fmt.Errorf("the MCP server needs a name (--name)")
	}
	if !safeServerName(c.Server) {
		return fmt.Errorf("server name %q: use letters, digits, '.', '_' and '-'", c.Server)
	}
	if c.Shield == nil {
		return fmt.Errorf("no shield configured")
	}
	if c.Pins == nil {
		return fmt.Errorf("no pin store configured")
	}
	switch c.ResultSecrets {
	case "":
		c.ResultSecrets = SecretsRedact
	case SecretsRedact, SecretsBlock, SecretsReport:
	default:
		return fmt.Errorf("result secrets mode %q: redact, block or report", c.ResultSecrets)
	}
	switch c.ResultInjection {
	case "":
		c.ResultInjection = InjectionWarn
	case InjectionWarn, InjectionBlock, InjectionReport:
	default:
		return fmt.Errorf("result injection mode %q: warn, block or report", c.ResultInjection)
	}
	if c.JudgeTimeout <= 0 {
		c.JudgeTimeout = 30 * time.Second
	}
	if c.AskTimeout <= 0 {
		c.AskTimeout = 5 * time.Minute
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = 16 << 20
	}
	if c.SessionIdle <= 0 {
		c.SessionIdle = time.Hour
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	// Tier 1 as the default policy tunes it: descriptions that point the
	// model at credential files are judged with the same rules as a read.
	pol, err := policy.Embedded("default")
	if err != nil {
		return err
	}
	if c.analyzer, err = heuristics.New(pol.Heuristics); err != nil {
		return err
	}
	return nil
}

// clientSide is how a session reaches its client.
type clientSide interface {
	// send delivers m; rel is the id key of the client request it belongs
	// to ("" for none), so the HTTP transport can answer on that request's
	// stream.
	send(m *Message, rel string)
	// abandon says the request rel will get no response (it was cancelled).
	abandon(rel string)
}

// serverSide is how a session reaches its server. send returns an error
// when the message could not be delivered.
type serverSide interface {
	send(m *Message, rel string) error
}

// session is one MCP session between a client and the server.
type session struct {
	cfg    *Config
	client clientSide
	server serverSide
	ctx    context.Context

	mu          sync.Mutex
	elicitation bool                          // the client declared the capability
	pending     map[string]pendingRequest     // client requests forwarded to the server
	held        map[string]context.CancelFunc // tools/call being judged or asked about
	judging     int                           // judging goroutines still running
	asks        map[string]chan *Message      // the proxy's own requests to the client
	withheld    map[string]string             // tool name → why
	nonce       string
	seq         uint64
	serverGone  error
}

type pendingRequest struct {
	method, tool, uri string
}

func newSession(ctx context.Context, cfg *Config, c clientSide, s serverSide) *session {
	var n [6]byte
	_, _ = rand.Read(n[:])
	return &session{
		cfg: cfg, client: c, server: s, ctx: ctx,
		pending: map[string]pendingRequest{}, held: map[string]context.CancelFunc{},
		asks: map[string]chan *Message{}, withheld: map[string]string{},
		nonce: hex.EncodeToString(n[:]),
	}
}

// fromClient handles one message the client sent.
func (s *session) fromClient(raw []byte) {
	m, err := ParseMessage(raw)
	if err != nil {
		s.cfg.Log.Warn("mcp-proxy: unparseable message from the client", "server", s.cfg.Server, "err", err)
		if id := idOf(raw); id != nil {
			s.client.send(errorResponse(id, codeInvalidRequest, "Parapet MCP proxy: "+err.Error()), idKey(id))
			return
		}
		s.client.send(errorResponse(nil, codeParseError, "Parapet MCP proxy: "+err.Error()), "")
		return
	}
	switch {
	case m.IsResponse():
		s.mu.Lock()
		ch, mine := s.asks[idKey(m.ID)]
		delete(s.asks, idKey(m.ID))
		s.mu.Unlock()
		if mine {
			ch <- m
			return
		}
		if strings.HasPrefix(idKey(m.ID), `"parapet-`+s.nonce+"-") {
			// A late answer to a question the proxy already withdrew.
			return
		}
		s.forward(m, "")
	case m.IsNotification():
		if m.Method == "notifications/cancelled" {
			s.cancelled(m)
			return
		}
		s.forward(m, "")
	default:
		switch m.Method {
		case "initialize":
			s.noteCapabilities(m)
			s.forwardRequest(m, pendingRequest{method: m.Method})
		case "tools/list":
			s.forwardRequest(m, pendingRequest{method: m.Method})
		case "tools/call":
			s.judgeCall(m)
		case "resources/read":
			s.forwardRequest(m, pendingRequest{method: m.Method, uri: resourceURI(m.Params)})
		default:
			s.forwardRequest(m, pendingRequest{method: m.Method})
		}
	}
}

// noteCapabilities remembers whether the client can answer elicitation
// requests (initialize params.capabilities.elicitation present).
func (s *session) noteCapabilities(m *Message) {
	var p struct {
		Capabilities struct {
			Elicitation json.RawMessage `json:"elicitation"`
		} `json:"capabilities"`
	}
	_ = json.Unmarshal(m.Params, &p)
	e := p.Capabilities.Elicitation
	s.mu.Lock()
	s.elicitation = len(e) > 0 && string(e) != "null"
	s.mu.Unlock()
}

// forward sends a message that needs no answer tracking.
func (s *session) forward(m *Message, rel string) {
	if err := s.server.send(m, rel); err != nil {
		s.cfg.Log.Warn("mcp-proxy: could not deliver a message to the server", "server", s.cfg.Server, "method", m.Method, "err", err)
	}
}

// forwardRequest sends a client request on and remembers it until the
// server answers; a request that cannot be delivered is answered with an
// error at once.
func (s *session) forwardRequest(m *Message, p pendingRequest) {
	key := idKey(m.ID)
	s.mu.Lock()
	gone := s.serverGone
	if gone == nil {
		s.pending[key] = p
	}
	s.mu.Unlock()
	if gone != nil {
		s.client.send(errorResponse(m.ID, codeInternalError, "MCP server "+s.cfg.Server+" is not running: "+gone.Error()), key)
		return
	}
	if err := s.server.send(m, key); err != nil {
		s.mu.Lock()
		_, still := s.pending[key]
		delete(s.pending, key)
		s.mu.Unlock()
		if still {
			s.client.send(errorResponse(m.ID, codeInternalError, "MCP server "+s.cfg.Server+" unreachable: "+err.Error()), key)
		}
	}
}

// cancelled handles notifications/cancelled from the client: a call still
// being judged or asked about is dropped here (the server never saw it);
// otherwise the server is told.
func (s *session) cancelled(m *Message) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(m.Params, &p) != nil || len(p.RequestID) == 0 {
		s.cfg.Log.Warn("mcp-proxy: notifications/cancelled without a requestId", "server", s.cfg.Server)
		return
	}
	key := idKey(p.RequestID)
	s.mu.Lock()
	cancel, held := s.held[key]
	delete(s.held, key)
	_, forwarded := s.pending[key]
	delete(s.pending, key)
	s.mu.Unlock()
	if held {
		// The judging goroutine withdraws any question it put to the
		// client and then abandons the request.
		cancel()
		s.cfg.Log.Info("mcp-proxy: call cancelled by the client before it was forwarded", "server", s.cfg.Server, "id", key)
		return
	}
	s.forward(m, key)
	if forwarded {
		s.client.abandon(key)
	}
}

// fromServer handles one message the server sent; rel is the client
// request whose stream carried it (HTTP), or "".
func (s *session) fromServer(raw []byte, rel string) {
	m, err := ParseMessage(raw)
	if err != nil {
		s.cfg.Log.Warn("mcp-proxy: unparseable message from the server dropped", "server", s.cfg.Server, "err", err)
		return
	}
	if !m.IsResponse() {
		// Server requests (sampling, elicitation, roots) and
		// notifications go to the client as they are.
		s.client.send(m, rel)
		return
	}
	key := idKey(m.ID)
	s.mu.Lock()
	p, ok := s.pending[key]
	delete(s.pending, key)
	s.mu.Unlock()
	if !ok {
		s.cfg.Log.Warn("mcp-proxy: response from the server to no pending request dropped", "server", s.cfg.Server, "id", key)
		return
	}
	switch {
	case m.Error != nil:
	case p.method == "tools/list":
		m = s.inspectToolList(m)
	case p.method == "tools/call":
		m = s.inspectResult(m, p.tool)
	case p.method == "resources/read":
		m = s.inspectResource(m, p.uri)
	}
	s.client.send(m, key)
}

// drain waits, at most grace, until every request the client sent has
// been answered: a client that writes its requests and closes its input
// still gets its answers.
func (s *session) drain(grace time.Duration) {
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		busy := s.judging > 0 || (len(s.pending) > 0 && s.serverGone == nil)
		s.mu.Unlock()
		if !busy {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// serverExited answers every request the server had not answered; later
// requests are answered with the same error. The proxy keeps serving.
func (s *session) serverExited(err error) {
	s.mu.Lock()
	if s.serverGone == nil {
		s.serverGone = err
	}
	pending := s.pending
	s.pending = map[string]pendingRequest{}
	s.mu.Unlock()
	s.cfg.Log.Error("mcp-proxy: MCP server exited", "server", s.cfg.Server, "err", err, "unanswered", len(pending))
	for key := range pending {
		s.client.send(errorResponse(json.RawMessage(key), codeInternalError, "MCP server "+s.cfg.Server+" exited before answering: "+err.Error()), key)
	}
}
