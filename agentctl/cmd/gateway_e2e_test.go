package cmd

// agentctl gateway as a process (engine and sandboxed agent included)
// against a control plane served by the test.

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
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
