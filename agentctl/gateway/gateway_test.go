package gateway_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/parapet-dev/parapet/agentctl/gateway"
	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/engine/doors/doorstest"
	"github.com/parapet-dev/parapet/llm"
	gwpb "github.com/parapet-dev/parapet/proto/parallax/gateway"
)

// controlPlane is a control plane for tests: it accepts agents'
// streams, records what they send, and lets the test send and drop.
type controlPlane struct {
	gwpb.UnimplementedAgentGatewayServer
	mu      sync.Mutex
	streams []*cpStream
	newConn chan *cpStream
}

type cpStream struct {
	in   chan *gwpb.AgentToControlPlane
	out  chan *gwpb.ControlPlaneToAgent
	drop chan struct{}
}

func (cp *controlPlane) Connect(stream gwpb.AgentGateway_ConnectServer) error {
	s := &cpStream{in: make(chan *gwpb.AgentToControlPlane, 1024), out: make(chan *gwpb.ControlPlaneToAgent, 16), drop: make(chan struct{})}
	cp.mu.Lock()
	cp.streams = append(cp.streams, s)
	cp.mu.Unlock()
	cp.newConn <- s
	go func() {
		for {
			m, err := stream.Recv()
			if err != nil {
				close(s.in)
				return
			}
			s.in <- m
		}
	}()
	for {
		select {
		case m := <-s.out:
			if err := stream.Send(m); err != nil {
				return err
			}
		case <-s.drop:
			return nil
		case <-stream.Context().Done():
			return nil
		}
	}
}

// next returns the next message ok accepts, skipping the others.
func (s *cpStream) next(t *testing.T, ok func(*gwpb.AgentToControlPlane) bool) *gwpb.AgentToControlPlane {
	t.Helper()
	deadline := time.After(doorstest.Guard)
	for {
		select {
		case m, open := <-s.in:
			if !open {
				t.Fatal("the agent's stream ended")
			}
			if ok(m) {
				return m
			}
		case <-deadline:
			t.Fatal("no such message from the agent")
		}
	}
}

// serveControlPlane serves cp on loopback and returns a connection to it.
func serveControlPlane(t *testing.T, cp gwpb.AgentGatewayServer) *grpc.ClientConn {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	gwpb.RegisterAgentGatewayServer(srv, cp)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func start(t *testing.T, replies ...llm.Response) (*controlPlane, *doorstest.Engine) {
	t.Helper()
	eng := doorstest.Start(t, replies, nil)
	cp := &controlPlane{newConn: make(chan *cpStream, 8)}
	conn := serveControlPlane(t, cp)
	g, err := gateway.New(gateway.Config{Conn: conn, AgentID: "parapet-1", AgentName: "parapet", Capabilities: []string{"code"},
		Heartbeat: 50 * time.Millisecond, MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Engine: eng.Engine})
	runUntilCleanup(t, g, err)
	return cp, eng
}

// runUntilCleanup runs the gateway New made until the test ends.
func runUntilCleanup(t *testing.T, g *gateway.Gateway, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = g.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

func (cp *controlPlane) accept(t *testing.T) *cpStream {
	t.Helper()
	select {
	case s := <-cp.newConn:
		return s
	case <-time.After(doorstest.Guard):
		t.Fatal("the agent did not connect")
		return nil
	}
}

func isHeartbeat(m *gwpb.AgentToControlPlane) bool { return m.GetHeartbeat() != nil }

func TestGatewayHelloHeartbeatPingReconnect(t *testing.T) {
	cp, _ := start(t)
	s := cp.accept(t)
	hello := s.next(t, func(*gwpb.AgentToControlPlane) bool { return true })
	if h := hello.GetHello(); h.GetAgentId() != "parapet-1" || h.GetHeartbeatIntervalMs() != 50 || h.GetCapabilities()[0] != "code" {
		t.Fatalf("first message is not the hello: %v", hello)
	}
	for range 3 {
		if hb := s.next(t, isHeartbeat).GetHeartbeat(); hb.GetStatus() != gateway.StatusHealthy || hb.GetAgentId() != "parapet-1" {
			t.Fatalf("heartbeat %v", hb)
		}
	}
	s.out <- &gwpb.ControlPlaneToAgent{RequestId: "p1", Payload: &gwpb.ControlPlaneToAgent_Ping{Ping: &gwpb.Ping{ServerTime: timestamppb.Now()}}}
	s.next(t, isHeartbeat)
	// Drop the stream: the agent comes back and says hello again.
	close(s.drop)
	s2 := cp.accept(t)
	if s2.next(t, func(*gwpb.AgentToControlPlane) bool { return true }).GetHello() == nil {
		t.Fatal("no hello after the reconnect")
	}
	s2.next(t, isHeartbeat)
}

func TestGatewayTasks(t *testing.T) {
	cp, eng := start(t,
		doorstest.LoadTools(),
		doorstest.Tools("", doorstest.Call("execute_command", `{"command":"echo hi > ran.txt"}`),
			doorstest.Call("execute_command", `{"command":"touch pushed.txt && git push --force origin main"}`)),
		doorstest.Text("Task done."),
	)
	s := cp.accept(t)
	data, _ := structpb.NewStruct(map[string]any{"ticket": "T-1"})
	s.out <- &gwpb.ControlPlaneToAgent{RequestId: "r1", Payload: &gwpb.ControlPlaneToAgent_TaskRequest{TaskRequest: &gwpb.TaskRequest{
		TaskId: "t1", TaskDescription: "tidy up", Data: data, Context: map[string]string{"repo": "x"}}}}
	res := s.next(t, func(m *gwpb.AgentToControlPlane) bool { return m.GetTaskResult() != nil || m.GetTaskError() != nil })
	var text string
	if res.GetRequestId() != "r1" || json.Unmarshal([]byte(res.GetTaskResult().GetValueJson()), &text) != nil || text != "Task done." {
		t.Fatalf("task result %v", res)
	}
	if _, err := os.Stat(filepath.Join(eng.Workspace, "ran.txt")); err != nil {
		hist, _, _ := eng.History(context.Background(), res.GetTaskResult().GetMetadata()["session_id"], 0, 0)
		t.Fatalf("the allowed command did not run: %v", hist)
	}
	if _, err := os.Stat(filepath.Join(eng.Workspace, "pushed.txt")); err == nil {
		t.Fatal("an escalated command ran with nobody to approve it")
	}
	hist, _, err := eng.History(context.Background(), res.GetTaskResult().GetMetadata()["session_id"], 0, 0)
	if err != nil || len(hist) != 2 || !strings.Contains(hist[0].GetContent(), `"ticket":"T-1"`) {
		t.Fatalf("history %v %v", hist, err)
	}
	// The script is used up: the next task fails, as a TaskError.
	s.out <- &gwpb.ControlPlaneToAgent{RequestId: "r2", Payload: &gwpb.ControlPlaneToAgent_TaskRequest{TaskRequest: &gwpb.TaskRequest{TaskId: "t2", TaskDescription: "more"}}}
	if e := s.next(t, func(m *gwpb.AgentToControlPlane) bool { return m.GetTaskError() != nil }).GetTaskError(); e.GetTaskId() != "t2" || e.GetErrorCode() != "LLM_CALL_FAILED" {
		t.Fatalf("task error %v", e)
	}
	s.out <- &gwpb.ControlPlaneToAgent{RequestId: "r3", Payload: &gwpb.ControlPlaneToAgent_TaskRequest{TaskRequest: &gwpb.TaskRequest{TaskId: "t3"}}}
	if e := s.next(t, func(m *gwpb.AgentToControlPlane) bool { return m.GetTaskError() != nil }).GetTaskError(); e.GetErrorCode() != "INVALID_ARGUMENT" {
		t.Fatalf("task without a description: %v", e)
	}
	// Threads are not served: the spawn's request_id is echoed with the reason.
	s.out <- &gwpb.ControlPlaneToAgent{RequestId: "spawn-1", Payload: &gwpb.ControlPlaneToAgent_ThreadSpawn{ThreadSpawn: &gwpb.ThreadSpawnRequest{ThreadId: "th1", AdapterType: "claude-code"}}}
	r := s.next(t, func(m *gwpb.AgentToControlPlane) bool { return m.GetThreadSpawnResult() != nil })
	if r.GetRequestId() != "spawn-1" || r.GetThreadSpawnResult().GetSuccess() || !strings.Contains(r.GetThreadSpawnResult().GetErrorMessage(), "adapters available") {
		t.Fatalf("spawn result %v", r)
	}
}

// A task cancelled while its turn waits is a TaskError CANCELLED; a
// result produced while the stream is down arrives after the reconnect.
func TestGatewayCancelAndReconnect(t *testing.T) {
	cp, eng := start(t,
		doorstest.LoadTools(),
		doorstest.Tools("", doorstest.Call("execute_command", `{"command":"sleep 2"}`)),
		doorstest.Text("never"),
		doorstest.LoadTools(),
		doorstest.Tools("", doorstest.Call("execute_command", `{"command":"sleep 1"}`)),
		doorstest.Text("Slept."),
	)
	s := cp.accept(t)
	sub := eng.Subscribe("")
	defer sub.Close()
	s.out <- &gwpb.ControlPlaneToAgent{RequestId: "r1", Payload: &gwpb.ControlPlaneToAgent_TaskRequest{TaskRequest: &gwpb.TaskRequest{TaskId: "t1", TaskDescription: "sleep"}}}
	waitStarted(t, sub, `{"command":"sleep 2"}`)
	s.out <- &gwpb.ControlPlaneToAgent{Payload: &gwpb.ControlPlaneToAgent_CancelTask{CancelTask: &gwpb.CancelTask{TaskId: "t1"}}}
	if e := s.next(t, func(m *gwpb.AgentToControlPlane) bool { return m.GetTaskError() != nil || m.GetTaskResult() != nil }).GetTaskError(); e.GetErrorCode() != "CANCELLED" {
		t.Fatalf("cancelled task: %v", e)
	}
	// Drop the stream once t2's command runs (it takes a second): its
	// result is produced while the stream is down.
	s.out <- &gwpb.ControlPlaneToAgent{RequestId: "r2", Payload: &gwpb.ControlPlaneToAgent_TaskRequest{TaskRequest: &gwpb.TaskRequest{TaskId: "t2", TaskDescription: "sleep a little"}}}
	waitStarted(t, sub, `{"command":"sleep 1"}`)
	close(s.drop)
	s2 := cp.accept(t)
	res := s2.next(t, func(m *gwpb.AgentToControlPlane) bool { return m.GetTaskResult() != nil || m.GetTaskError() != nil })
	if res.GetTaskResult().GetTaskId() != "t2" || res.GetRequestId() != "r2" {
		t.Fatalf("after the reconnect: %v", res)
	}
}

// waitStarted waits until the engine starts running a command.
func waitStarted(t *testing.T, sub *engine.Subscription, args string) {
	t.Helper()
	deadline := time.After(doorstest.Guard)
	for {
		select {
		case ev := <-sub.Events:
			if ev.GetActionStarted().GetArgumentsJson() == args {
				return
			}
		case <-deadline:
			t.Fatalf("%s never started", args)
		}
	}
}
