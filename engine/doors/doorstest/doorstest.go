// Package doorstest runs a real engine for the doors' tests: the embedded
// shield pipeline, the real tool registry, a session database, and the
// real agent loop (agentctl/agent) driven by a scripted model over the
// engine's gRPC AgentService on 127.0.0.1:0. Only the sandbox is left
// out: the agent runs in the test process.
package doorstest

import (
	"context"
	"net"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/parapet-dev/parapet/agentctl/agent"
	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/engine/store"
	"github.com/parapet-dev/parapet/engine/tools"
	"github.com/parapet-dev/parapet/llm"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/shield"
)

// Guard bounds every wait in the doors' tests: a deadlock guard, not a
// timing assertion.
const Guard = 30 * time.Second

// Engine is a running engine with its agent connected.
type Engine struct {
	*engine.Engine
	Workspace string
	Store     *store.Store
	// Conn reaches the engine's ClientService with its client token (for
	// comparisons and approvals from "another front-end").
	Conn *grpc.ClientConn
}

// Start runs an engine whose agent answers with replies, in order, across
// all the messages it gets. mod may adjust the configuration.
func Start(t testing.TB, replies []llm.Response, mod func(*engine.Config)) *Engine {
	t.Helper()
	ws := t.TempDir()
	p, err := pipeline.New(pipeline.Config{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// Door tests judge the doors, not confinement (sandbox and agentctl test
	// that): commands run unconfined here.
	reg, err := tools.New(tools.Options{Workspace: ws, Memory: st, AllowUnconfined: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	cfg := engine.Config{Workspace: ws, Home: t.TempDir(), AgentName: "atlas", Shield: shield.NewLocal(&shield.Shield{Pipeline: p}),
		Tools: reg, ShieldMode: "embedded", Version: "test", Store: st, Provider: "scripted", Model: "scripted"}
	if mod != nil {
		mod(&cfg)
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
	agentConn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agentConn.Close() })
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(engine.ClientCredentials(eng.ClientToken())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })

	ctx, cancel := context.WithCancel(context.Background())
	agentDone := make(chan struct{})
	t.Cleanup(func() { cancel(); <-agentDone })
	go func() {
		defer close(agentDone)
		_ = agent.Run(ctx, agentConn, agent.Config{Name: "atlas", Token: eng.NewAgentToken(), Provider: llm.NewScripted("scripted", replies),
			SandboxReport: []byte(`{"status":"sandboxed","landlock_abi":6}`)})
	}()
	wctx, wcancel := context.WithTimeout(context.Background(), Guard)
	defer wcancel()
	if _, err := eng.WaitAgent(wctx); err != nil {
		t.Fatalf("agent did not connect: %v", err)
	}
	return &Engine{Engine: eng, Workspace: ws, Store: st, Conn: conn}
}

// Serve serves register's services on a fresh 127.0.0.1:0 gRPC server
// and returns a client connection to it.
func Serve(t testing.TB, register func(*grpc.Server), opts ...grpc.ServerOption) *grpc.ClientConn {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(opts...)
	register(srv)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// Call is a scripted tool call.
func Call(name, args string) llm.ToolCall { return llm.ToolCall{Name: name, Arguments: args} }

// LoadTools is the reply that loads the files and shell tool groups.
func LoadTools() llm.Response {
	return llm.Response{ToolCalls: []llm.ToolCall{Call("load_tools", `{"groups":["files","shell","git"]}`)}}
}

// Tools is a reply proposing calls.
func Tools(text string, calls ...llm.ToolCall) llm.Response {
	return llm.Response{Text: text, ToolCalls: calls}
}

// Text is a final reply.
func Text(text string) llm.Response { return llm.Response{Text: text} }

// CompareTurns is the doors' benchmark: b.N turns through viaDoor and as
// many through the engine's ClientService (one new session each, like a
// door turn that starts one), alternating so that the machine's drift
// slows both alike. It reports door_p50-ns, clientservice_p50-ns and
// door_overhead_p50-ns, what the door adds to a turn.
func (e *Engine) CompareTurns(b *testing.B, viaDoor func()) {
	cs := pb.NewClientServiceClient(e.Conn)
	viaClientService := func() {
		st, err := cs.SendMessage(context.Background(), &pb.ClientMessageRequest{Content: "check"})
		if err != nil {
			b.Fatal(err)
		}
		for {
			ev, err := st.Recv()
			if err != nil || ev.GetEventType() == pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR {
				b.Fatal(err, ev)
			}
			if ev.GetEventType() == pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE {
				return
			}
		}
	}
	door, direct := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	timed := func(f func(), into *[]time.Duration) {
		start := time.Now()
		f()
		*into = append(*into, time.Since(start))
	}
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			timed(viaDoor, &door)
			timed(viaClientService, &direct)
		} else {
			timed(viaClientService, &direct)
			timed(viaDoor, &door)
		}
	}
	b.StopTimer()
	slices.Sort(door)
	slices.Sort(direct)
	p50 := func(s []time.Duration) time.Duration { return s[len(s)/2] }
	b.ReportMetric(float64(p50(door).Nanoseconds()), "door_p50-ns")
	b.ReportMetric(float64(p50(direct).Nanoseconds()), "clientservice_p50-ns")
	b.ReportMetric(float64((p50(door) - p50(direct)).Nanoseconds()), "door_overhead_p50-ns")
}
