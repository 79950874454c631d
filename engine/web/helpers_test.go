package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/parapet-dev/parapet/agentctl/agent"
	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/engine/tools"
	"github.com/parapet-dev/parapet/engine/web"
	"github.com/parapet-dev/parapet/llm"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/shield"
)

// guard bounds every wait in these tests. It is a deadlock guard, not a
// timing assertion: nothing here takes more than a fraction of it when
// the code is right.
const guard = 60 * time.Second

const sandboxedJSON = `{"status":"sandboxed","landlock_abi":6}`

// stack is a real engine (shield pipeline, tool registry) served over
// gRPC on 127.0.0.1:0, the web server on another loopback port talking to
// it over gRPC as agentctl wires it, and optionally the real agent loop
// in-process with a scripted model.
type stack struct {
	eng    *engine.Engine
	ws     string
	client pb.ClientServiceClient
	web    *web.Server
	base   string // http://127.0.0.1:port
}

type stackOptions struct {
	// replies script the model; nil starts no agent.
	replies []llm.Response
	engine  func(*engine.Config)
	web     func(*web.Options)
}

func newStack(t testing.TB, o stackOptions) *stack {
	t.Helper()
	ws := t.TempDir()
	reg, err := tools.New(tools.Options{Workspace: ws, AllowUnconfined: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	p, err := pipeline.New(pipeline.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := engine.Config{Workspace: ws, Home: t.TempDir(), AgentName: "atlas", Shield: shield.NewLocal(&shield.Shield{Pipeline: p}),
		Tools: reg, ShieldMode: "embedded", Version: "test"}
	if o.engine != nil {
		o.engine(&cfg)
	}
	eng, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	eng.Register(srv)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(engine.ClientCredentials(eng.ClientToken())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	s := &stack{eng: eng, ws: ws, client: pb.NewClientServiceClient(conn)}

	if o.replies != nil {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- agent.Run(ctx, conn, agent.Config{Name: "atlas", Token: eng.NewAgentToken(),
				Provider: llm.NewScripted("scripted-test", o.replies), SandboxReport: []byte(sandboxedJSON)})
		}()
		t.Cleanup(func() {
			cancel()
			<-done
		})
		wctx, wcancel := context.WithTimeout(context.Background(), guard)
		defer wcancel()
		if _, err := eng.WaitAgent(wctx); err != nil {
			t.Fatalf("agent did not connect: %v", err)
		}
	}

	opts := web.Options{Client: s.client, Token: eng.ClientToken()}
	if o.web != nil {
		o.web(&opts)
	}
	s.web, err = web.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.web.Serve(wl) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		if err := s.web.Shutdown(ctx); err != nil {
			t.Errorf("web shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("web serve: %v", err)
		}
	})
	s.base = "http://" + wl.Addr().String()
	eng.SetAddresses(lis.Addr().String(), s.base)
	return s
}

// request is one HTTP request to the stack; by default it carries the
// token header and a JSON content type when it has a body.
type request struct {
	method, path, body string
	header             map[string]string
	noToken            bool
	// ctx, if set, is the request's context (to drop the client mid-stream).
	ctx context.Context
}

func (s *stack) do(t testing.TB, r request) *http.Response {
	t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, s.base+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if !r.noToken {
		req.Header.Set(web.TokenHeader, s.web.Token())
	}
	for k, v := range r.header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	ctx := r.ctx
	if ctx == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), guard)
		t.Cleanup(cancel)
	}
	if host := r.header["Host"]; host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// wantError checks an error answer's status and code.
func wantError(t testing.TB, resp *http.Response, status int, code string) string {
	t.Helper()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("%s %s: status %d, want %d; body %s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, status, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error Content-Type %q", ct)
	}
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(b, &e); err != nil || e.Error.Code != code || e.Error.Message == "" {
		t.Fatalf("%s %s: error body %s, want code %s and a message", resp.Request.Method, resp.Request.URL.Path, b, code)
	}
	return e.Error.Message
}

// readProto decodes a successful answer into m.
func readProto(t testing.TB, resp *http.Response, wantStatus int, m proto.Message) {
	t.Helper()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantStatus {
		t.Fatalf("%s %s: status %d, want %d; body %s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, wantStatus, b)
	}
	if err := protojson.Unmarshal(b, m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}

// sseStream reads server-sent events from a response.
type sseStream struct {
	t    testing.TB
	r    *bufio.Reader
	resp *http.Response
	// heartbeats counts the comment lines seen so far.
	heartbeats int
}

func openSSE(t testing.TB, resp *http.Response) *sseStream {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: status %d; body %s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q", ct)
	}
	return &sseStream{t: t, r: bufio.NewReader(resp.Body), resp: resp}
}

// next returns the next event, its SSE name checked against its type; a
// heartbeat returns (nil, nil) when wantHeartbeats, and is skipped
// otherwise. At the end of the stream it returns io.EOF.
func (s *sseStream) next(wantHeartbeats bool) (*pb.PipelineEvent, error) {
	s.t.Helper()
	var name string
	var data []string
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if err == io.EOF && name == "" && len(data) == 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("stream broke mid-event (%q): %w", line, err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if len(data) == 0 {
				continue
			}
			ev := &pb.PipelineEvent{}
			if err := protojson.Unmarshal([]byte(strings.Join(data, "\n")), ev); err != nil {
				s.t.Fatalf("event data %q: %v", data, err)
			}
			if want := strings.TrimPrefix(ev.GetEventType().String(), "PIPELINE_EVENT_TYPE_"); name != want {
				s.t.Fatalf("SSE event name %q for an event of type %s", name, want)
			}
			return ev, nil
		case strings.HasPrefix(line, ":"):
			s.heartbeats++
			if wantHeartbeats {
				return nil, nil
			}
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		case strings.HasPrefix(line, "retry: "):
		default:
			s.t.Fatalf("unexpected SSE line %q", line)
		}
	}
}

// event returns the next event and fails at the end of the stream.
func (s *sseStream) event() *pb.PipelineEvent {
	s.t.Helper()
	ev, err := s.next(false)
	if err != nil {
		s.t.Fatalf("reading events: %v", err)
	}
	return ev
}

// until reads events up to and including the first of type typ.
func (s *sseStream) until(typ pb.PipelineEventType) (*pb.PipelineEvent, []*pb.PipelineEvent) {
	s.t.Helper()
	var seen []*pb.PipelineEvent
	for {
		ev := s.event()
		seen = append(seen, ev)
		if ev.GetEventType() == typ {
			return ev, seen
		}
	}
}

// rest reads to the end of the stream and checks that it ended right
// after a terminal event.
func (s *sseStream) rest() []*pb.PipelineEvent {
	s.t.Helper()
	var evs []*pb.PipelineEvent
	for {
		ev, err := s.next(false)
		if err == io.EOF {
			if n := len(evs); n == 0 || (evs[n-1].GetEventType() != evComplete && evs[n-1].GetEventType() != evError) {
				s.t.Fatalf("stream ended without RESPONSE_COMPLETE or ERROR: %v", typeNames(evs))
			}
			return evs
		}
		if err != nil {
			s.t.Fatal(err)
		}
		if n := len(evs); n > 0 && (evs[n-1].GetEventType() == evComplete || evs[n-1].GetEventType() == evError) {
			s.t.Fatalf("event %v after the terminal event", ev.GetEventType())
		}
		evs = append(evs, ev)
	}
}

const (
	evVerdict   = pb.PipelineEventType_PIPELINE_EVENT_TYPE_SHIELD_VERDICT
	evStarted   = pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_STARTED
	evCompleted = pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_COMPLETED
	evNeeded    = pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_NEEDED
	evResolved  = pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_RESOLVED
	evToken     = pb.PipelineEventType_PIPELINE_EVENT_TYPE_LLM_TOKEN
	evComplete  = pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE
	evError     = pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR
)

func typeNames(evs []*pb.PipelineEvent) string {
	s := make([]string, len(evs))
	for i, ev := range evs {
		s[i] = strings.TrimPrefix(ev.GetEventType().String(), "PIPELINE_EVENT_TYPE_")
	}
	return strings.Join(s, " ")
}

func find(evs []*pb.PipelineEvent, typ pb.PipelineEventType) *pb.PipelineEvent {
	for _, ev := range evs {
		if ev.GetEventType() == typ {
			return ev
		}
	}
	return nil
}

func exists(t testing.TB, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

func (s *stack) file(name string) string { return filepath.Join(s.ws, name) }

// Scripted model replies.
func text(s string) llm.Response { return llm.Response{Text: s} }

func calls(say string, cs ...llm.ToolCall) llm.Response {
	return llm.Response{Text: say, ToolCalls: cs}
}

func call(name, args string) llm.ToolCall { return llm.ToolCall{Name: name, Arguments: args} }

var loadTools = calls("Loading tools.", call("load_tools", `{"groups":["files","shell"]}`))

// escalated is a command the default policy escalates (a force push);
// the touch before it shows on disk whether it ran.
func escalated(file string) llm.Response {
	return calls("This needs a push.", call("execute_command", fmt.Sprintf(`{"command":"touch %s && git push --force origin main"}`, file)))
}

// timeout is the guard for a select.
func timeout() <-chan time.Time { return time.After(guard) }
