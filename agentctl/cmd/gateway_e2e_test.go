package cmd

// agentctl gateway as a process (engine and sandboxed agent included)
// against a control plane served by the test.

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/parapet-dev/parapet/internal/proctest"
	gwpb "github.com/parapet-dev/parapet/proto/parallax/gateway"
)

type testControlPlane struct {
	gwpb.UnimplementedAgentGatewayServer
	in chan *gwpb.AgentToControlPlane
}

func (cp *testControlPlane) Connect(stream gwpb.AgentGateway_ConnectServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	cp.in <- first
	if err := stream.Send(&gwpb.ControlPlaneToAgent{RequestId: "task-1", Payload: &gwpb.ControlPlaneToAgent_TaskRequest{
		TaskRequest: &gwpb.TaskRequest{TaskId: "t1", TaskDescription: "say done"}}}); err != nil {
		return err
	}
	for {
		m, err := stream.Recv()
		if err != nil {
			return nil
		}
		select {
		case cp.in <- m:
		default: // the test has what it needs
		}
	}
}

func TestGatewayCommand(t *testing.T) {
	cp := &testControlPlane{in: make(chan *gwpb.AgentToControlPlane, 64)}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	gwpb.RegisterAgentGatewayServer(srv, cp)
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	script := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(script, []byte("- text: Done.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := agentctlCmd("gateway", "--workspace", t.TempDir(), "--provider", "scripted", "--script", script,
		"--control-plane", lis.Addr().String(), "--agent-id", "e2e-agent", "--capabilities", "code,review", "--heartbeat", "100ms")
	stderr := &proctest.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("gateway stderr:\n%s", stderr.String())
		}
	}()
	deadline := time.After(60 * time.Second)
	var sawHello, sawHeartbeat, sawResult bool
	for !sawHeartbeat || !sawResult {
		select {
		case m := <-cp.in:
			switch {
			case m.GetHello() != nil:
				if h := m.GetHello(); h.GetAgentId() != "e2e-agent" || len(h.GetCapabilities()) != 2 {
					t.Fatalf("hello %v", h)
				}
				sawHello = true
			case m.GetHeartbeat() != nil:
				sawHeartbeat = true
			case m.GetTaskResult() != nil:
				var text string
				if m.GetRequestId() != "task-1" || json.Unmarshal([]byte(m.GetTaskResult().GetValueJson()), &text) != nil || text != "Done." {
					t.Fatalf("task result %v", m)
				}
				if !sawHello {
					t.Fatal("result before the hello")
				}
				sawResult = true
			case m.GetTaskError() != nil:
				t.Fatalf("task error %v", m)
			}
		case <-deadline:
			t.Fatal("no task result from the gateway")
		}
	}
}

// threadPlane spawns one thread, then stops it once its turn is complete.
type threadPlane struct {
	gwpb.UnimplementedAgentGatewayServer
	in chan *gwpb.AgentToControlPlane
}

func (cp *threadPlane) Connect(stream gwpb.AgentGateway_ConnectServer) error {
	if _, err := stream.Recv(); err != nil { // the hello
		return err
	}
	spawn := &gwpb.ThreadSpawnRequest{ThreadId: "th-1", AdapterType: "parapet", Task: "copy the readme",
		PreparationJson: `{"bootstrapFiles":{"README.md":"from the control plane\n"}}`,
		PolicyJson:      `{"permissions":["file_write","shell_exec"]}`}
	if err := stream.Send(&gwpb.ControlPlaneToAgent{RequestId: "spawn-1", Payload: &gwpb.ControlPlaneToAgent_ThreadSpawn{ThreadSpawn: spawn}}); err != nil {
		return err
	}
	for {
		m, err := stream.Recv()
		if err != nil {
			return nil
		}
		if m.GetThreadEvent().GetEventType() == "turn_complete" {
			stop := &gwpb.ThreadStopRequest{ThreadId: "th-1"}
			if err := stream.Send(&gwpb.ControlPlaneToAgent{Payload: &gwpb.ControlPlaneToAgent_ThreadStop{ThreadStop: stop}}); err != nil {
				return err
			}
		}
		select {
		case cp.in <- m:
		default:
		}
	}
}

// A thread through the real process: its workspace is a fresh directory
// with the bootstrap file, and the agent's command runs there, through
// the sandboxed agent, the gate and the confined executor.
func TestGatewayThreadCommand(t *testing.T) {
	cp := &threadPlane{in: make(chan *gwpb.AgentToControlPlane, 256)}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	gwpb.RegisterAgentGatewayServer(srv, cp)
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	script := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(script, []byte(`
- tool_calls:
    - name: load_tools
      arguments: {groups: [shell]}
- tool_calls:
    - name: execute_command
      arguments: {command: "cp README.md copy.txt"}
- text: Copied.
`), 0o644); err != nil {
		t.Fatal(err)
	}
	engineWS, threadsDir := t.TempDir(), t.TempDir()
	cmd := agentctlCmd("gateway", "--workspace", engineWS, "--provider", "scripted", "--script", script,
		"--control-plane", lis.Addr().String(), "--agent-id", "e2e-agent", "--threads-dir", threadsDir, "--heartbeat", "100ms")
	stderr := &proctest.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("gateway stderr:\n%s", stderr.String())
		}
	}()
	deadline := time.After(60 * time.Second)
	var workspace string
	var seq int32
	for {
		var m *gwpb.AgentToControlPlane
		select {
		case m = <-cp.in:
		case <-deadline:
			t.Fatal("the thread did not complete")
		}
		if r := m.GetThreadSpawnResult(); r != nil {
			if !r.GetSuccess() || m.GetRequestId() != "spawn-1" || r.GetWorkspaceDir() == "" {
				t.Fatalf("spawn result %v (request id %q)", r, m.GetRequestId())
			}
			workspace = r.GetWorkspaceDir()
		}
		if ev := m.GetThreadEvent(); ev != nil {
			if ev.GetSequence() != seq+1 {
				t.Fatalf("event %s has sequence %d after %d", ev.GetEventType(), ev.GetSequence(), seq)
			}
			seq = ev.GetSequence()
			if ev.GetEventType() == "failed" {
				t.Fatalf("thread failed: %s", ev.GetDataJson())
			}
		}
		if st := m.GetThreadStatusUpdate(); st != nil && st.GetStatus() == "completed" {
			if st.GetProgress() != 1 {
				t.Fatalf("completed with progress %v", st.GetProgress())
			}
			break
		}
	}
	if rel, err := filepath.Rel(threadsDir, workspace); err != nil || strings.HasPrefix(rel, "..") {
		t.Fatalf("thread workspace %s is not under --threads-dir %s", workspace, threadsDir)
	}
	got, err := os.ReadFile(filepath.Join(workspace, "copy.txt"))
	if err != nil || string(got) != "from the control plane\n" {
		t.Fatalf("copy.txt in the thread's workspace: %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(engineWS, "copy.txt")); err == nil {
		t.Fatal("the thread's command ran in the engine's workspace")
	}
}
