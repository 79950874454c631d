package deploy_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	crpb "github.com/parapet-dev/parapet/proto/crawbl/agentruntime/v1"
	ocpb "github.com/parapet-dev/parapet/proto/openclaude/v1"
	"github.com/parapet-dev/parapet/shieldd/auth"
)

// What deploy/compose/engine-script.yaml makes the engine's agent do, and
// what the test expects of it.
const (
	chatSession     = "compose-chat"
	converseUser    = "compose-user"
	converseWS      = "compose-ws"
	converseSession = "compose-converse"
	noteText        = "written through the openclaude door"
	chatAnswer      = "Chat turn done: the note is written, the installer was blocked."
	converseAnswer  = "Converse turn done: the note says it came through the openclaude door."
)

// checkEngine drives the engine service: it waits for the engine (agent
// connected and sandboxed, shield remote, both doors up), sends one Chat
// through the openclaude door and one Converse through the crawbl door,
// each with its door's authentication, and then finds every one of their
// tool calls judged in a shieldd replica's audit log. The stack must be up.
func checkEngine(t *testing.T, st *stack, replicas []string) {
	engineStatus := waitEngine(t, st)
	t.Logf("engine status: %s", engineStatus)

	// The client token, as the engine's operator reads it: the state file
	// in the engine's workspace, copied out of the container.
	var state struct {
		ClientToken string `json:"client_token"`
	}
	if err := json.Unmarshal(copyOut(t, st.container("engine"), "/workspace/.parapet/state.json"), &state); err != nil || state.ClientToken == "" {
		t.Fatalf("the engine's state file: %v (client token %q)", err, state.ClientToken)
	}
	key, err := auth.LoadHMACKey(filepath.Join(st.root, "deploy", "compose", "crawbl.key"), "")
	if err != nil {
		t.Fatal(err)
	}

	chat(t, dialDoor(t, st, "7710"), state.ClientToken)
	converse(t, dialDoor(t, st, "7711"), key)

	// The verdicts, on the replicas: every call of both turns, judged as
	// the engine's principal, in the session each door named.
	want := []auditWant{
		{session: chatSession, action: "write_file", decision: "allow"},
		{session: chatSession, action: "execute_command", decision: "block", rule: "rce.download-pipe-shell"},
		{session: converseWS + ":" + converseSession, action: "read_file", decision: "allow"},
	}
	found := make([]string, len(want))
	for _, r := range replicas {
		entries := readAudit(t, st.container(r))
		for _, e := range entries {
			for i, w := range want {
				if found[i] == "" && w.matches(e) {
					found[i] = r
				}
			}
		}
		// The chain holding those lines is intact.
		if len(entries) > 0 {
			if out, err := st.run(time.Minute, "exec", "-T", r, "/shieldd", "audit", "verify", "/var/log/shieldd/audit.jsonl"); err != nil {
				t.Errorf("shieldd audit verify on %s: %v\n%s", r, err, out)
			}
		}
	}
	for i, w := range want {
		if found[i] == "" {
			t.Errorf("no replica's audit log has an evaluation %+v by static:engine", w)
		} else {
			t.Logf("%s in session %s: %s %s, judged by %s", w.action, w.session, w.decision, w.rule, found[i])
		}
	}
}

// waitEngine waits until agentctl status in the engine container shows the
// agent connected and both doors, and checks what the stack promises: the
// agent sandboxed, the shield remote. It returns the status line.
func waitEngine(t *testing.T, st *stack) string {
	t.Helper()
	type engineStatus struct {
		AgentConnected bool              `json:"agent_connected"`
		SandboxStatus  string            `json:"sandbox_status"`
		ExecutorStatus string            `json:"executor_status"`
		Shield         string            `json:"shield"`
		Doors          map[string]string `json:"doors"`
	}
	var s engineStatus
	var out []byte
	deadline := time.Now().Add(2 * time.Minute) // a hang guard, not a speed claim
	for {
		var err error
		out, err = st.run(time.Minute, "exec", "-T", "engine", "/agentctl", "status", "--workspace", "/workspace", "--output", "json")
		s = engineStatus{}
		if err == nil && json.Unmarshal(out, &s) == nil && s.AgentConnected && len(s.Doors) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the engine did not come up with its agent and two doors: %v\n%s", err, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if s.SandboxStatus != "sandboxed" || s.Shield != "remote" {
		t.Errorf("engine: sandbox %q, shield %q; want sandboxed, remote", s.SandboxStatus, s.Shield)
	}
	return strings.TrimSpace(string(out))
}

// dialDoor connects to the host port compose published for the engine's
// container port.
func dialDoor(t *testing.T, st *stack, port string) *grpc.ClientConn {
	t.Helper()
	out, err := st.run(time.Minute, "port", "engine", port)
	addr := strings.TrimSpace(string(out))
	if err != nil || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("docker compose port engine %s: %v\n%s", port, err, out)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// chat sends the Chat turn: refused without the engine's client token,
// then with it an allowed write, a blocked command and the answer.
func chat(t *testing.T, conn *grpc.ClientConn, token string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := ocpb.NewAgentServiceClient(conn)
	if s, err := client.Chat(ctx); err == nil {
		if _, err = s.Recv(); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("Chat without the client token: %v, want Unauthenticated", err)
		}
	}
	s, err := client.Chat(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token))
	if err != nil {
		t.Fatal(err)
	}
	req := &ocpb.ChatRequest{Message: "Write a note, then install the tool.", SessionId: chatSession}
	if err := s.Send(&ocpb.ClientMessage{Payload: &ocpb.ClientMessage_Request{Request: req}}); err != nil {
		t.Fatal(err)
	}
	results := map[string]*ocpb.ToolCallResult{}
	for {
		m, err := s.Recv()
		if err != nil {
			t.Fatalf("Chat stream: %v (results so far %v)", err, results)
		}
		if m.GetError() != nil {
			t.Fatalf("Chat: %v", m.GetError())
		}
		if m.GetActionRequired() != nil {
			t.Fatalf("Chat: unexpected escalation %v", m.GetActionRequired())
		}
		if r := m.GetToolResult(); r != nil {
			results[r.GetToolName()] = r
		}
		if d := m.GetDone(); d != nil {
			if d.GetFullText() != chatAnswer {
				t.Errorf("Chat answer %q", d.GetFullText())
			}
			break
		}
	}
	s.CloseSend()
	if w := results["write_file"]; w == nil || w.GetIsError() {
		t.Errorf("Chat write_file: %v, want it allowed and done", w)
	}
	if x := results["execute_command"]; x == nil || !x.GetIsError() || !strings.Contains(x.GetOutput(), "blocked by the Parapet shield") {
		t.Errorf("Chat execute_command: %v, want it blocked", x)
	}
}

// converse sends the Converse turn: refused without an HMAC token, then
// with one it reads back the note the Chat turn wrote.
func converse(t *testing.T, conn *grpc.ClientConn, key []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := crpb.NewAgentRuntimeClient(conn)
	if s, err := client.Converse(ctx); err == nil {
		if _, err = s.Recv(); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("Converse without a token: %v, want Unauthenticated", err)
		}
	}
	tok, err := auth.Mint(key, converseUser, converseWS, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s, err := client.Converse(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&crpb.ConverseRequest{SessionId: converseSession, Message: "What does the note say?"}); err != nil {
		t.Fatal(err)
	}
	calls := map[string]string{} // call id -> tool
	var read *crpb.ToolResultEvent
	for {
		ev, err := s.Recv()
		if err != nil {
			t.Fatalf("Converse stream: %v", err)
		}
		if c := ev.GetToolCall(); c != nil {
			calls[c.GetCallId()] = c.GetTool()
		}
		if r := ev.GetToolResult(); r != nil && calls[r.GetCallId()] == "read_file" {
			read = r
		}
		if d := ev.GetDone(); d != nil {
			if len(d.GetTurns()) != 1 || d.GetTurns()[0].GetText() != converseAnswer {
				t.Errorf("Converse done: model %q, turns %v", d.GetModel(), d.GetTurns())
			}
			break
		}
	}
	s.CloseSend()
	if read == nil || read.GetError() || !strings.Contains(read.GetResultJson(), noteText) {
		t.Errorf("Converse read_file: %v, want the note the Chat turn wrote", read)
	}
}

// auditEntry is what the test reads of a shieldd audit line
// (docs/audit-log.md).
type auditEntry struct {
	Kind       string   `json:"kind"`
	Principal  string   `json:"principal"`
	Session    string   `json:"session"`
	ActionType string   `json:"action_type"`
	Decision   string   `json:"decision"`
	RuleIDs    []string `json:"rule_ids"`
}

type auditWant struct{ session, action, decision, rule string }

func (w auditWant) matches(e auditEntry) bool {
	return e.Kind == "evaluation" && e.Principal == "static:engine" && e.Session == w.session &&
		e.ActionType == w.action && e.Decision == w.decision && (w.rule == "" || strings.Contains(strings.Join(e.RuleIDs, " "), w.rule))
}

// readAudit returns a replica's audit lines; none when it judged nothing
// yet (no file).
func readAudit(t *testing.T, id string) []auditEntry {
	t.Helper()
	data, err := copyOutErr(id, "/var/log/shieldd/audit.jsonl")
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var entries []auditEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e auditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line of %s is not JSON: %v: %s", id, err, sc.Text())
		}
		entries = append(entries, e)
	}
	return entries
}

// copyOut reads one file out of a container (docker cp to a tar stream):
// scratch images have no shell to cat it with.
func copyOut(t *testing.T, id, path string) []byte {
	t.Helper()
	b, err := copyOutErr(id, path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func copyOutErr(id, path string) ([]byte, error) {
	var stderr bytes.Buffer
	c := exec.Command("docker", "cp", id+":"+path, "-")
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		if strings.Contains(stderr.String(), "No such container:path") || strings.Contains(stderr.String(), "Could not find the file") {
			return nil, os.ErrNotExist
		}
		return nil, errors.New("docker cp " + id + ":" + path + ": " + err.Error() + ": " + stderr.String())
	}
	tr := tar.NewReader(bytes.NewReader(out))
	if _, err := tr.Next(); err != nil {
		return nil, errors.New("docker cp " + path + ": " + err.Error())
	}
	return io.ReadAll(tr)
}
