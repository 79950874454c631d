package cmd

// The client commands against a real engine: `agentctl start` runs as a
// process (this test binary re-executed), the agent really sandboxes
// itself, and the model is llmtest's HTTP server.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/agentctl/procman"
	"github.com/parapet-dev/parapet/engine/tools"
	"github.com/parapet-dev/parapet/internal/proctest"
	"github.com/parapet-dev/parapet/llm"
	"github.com/parapet-dev/parapet/llm/llmtest"
)

// escalateWritesPolicy sends every write_file to a human and allows the rest.
const escalateWritesPolicy = `version: 1
name: test-escalate-writes
description: every file write needs a human
defaults:
  no_match: allow
  unknown_action: escalate
  unknown_action_tier: 3
verify:
  - id: test.write-needs-human
    tier: 3
    description: file writes need a person
    reason: A person must confirm every file write in this test.
    match:
      action: [write_file]
`

var writeRequest = regexp.MustCompile(`write (\S+\.txt)`)

// testModel answers like a small agent: a message "write NAME.txt" loads
// the file tools, writes NAME.txt and reports what the tool said; any other
// message is echoed as "echo: MESSAGE".
func testModel(t *testing.T) *llmtest.Server {
	srv := llmtest.Start(t)
	srv.Handle(func(r llmtest.Recorded) llmtest.Reply {
		msgs := r.Messages
		var user string
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role == llm.RoleUser {
				user = msgs[i].Content
				break
			}
		}
		last := msgs[len(msgs)-1]
		if last.Role == llm.RoleTool {
			answered := ""
			for _, m := range msgs {
				for _, tc := range m.ToolCalls {
					if tc.ID == last.ToolCallID {
						answered = tc.Name
					}
				}
			}
			if m := writeRequest.FindStringSubmatch(user); m != nil && answered == "load_tools" {
				return llmtest.Reply{ToolCalls: []llm.ToolCall{call("write_file", fmt.Sprintf(`{"path":%q,"content":"written"}`, m[1]))}}
			}
			return llmtest.Reply{Text: "tool said: " + last.Content}
		}
		if writeRequest.MatchString(user) {
			return llmtest.Reply{ToolCalls: []llm.ToolCall{call("load_tools", `{"groups":["files"]}`)}}
		}
		return llmtest.Reply{Text: "echo: " + user}
	})
	return srv
}

// startEngine runs `agentctl start` for a new workspace with the test
// model and the escalate-writes policy, and waits for its agent.
func startEngine(t *testing.T, srv *llmtest.Server) (ws string) {
	t.Helper()
	ws = t.TempDir()
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte(escalateWritesPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	startAgentctl(t, "engine", "start", "--workspace", ws, "--provider", "openai", "--base-url", srv.OpenAIBaseURL(),
		"--model", "test-model", "--policy", pol, "--log-level", "warn")
	stateDir := filepath.Join(ws, tools.StateDirName)
	proctest.Until(t, "engine and agent", 60*time.Second, func() bool {
		st, ok := procman.Running(stateDir)
		if !ok || st.GRPCAddress == "" {
			return false
		}
		s, err := engineStatus(t, st.GRPCAddress, st.ClientToken)
		return err == nil && s.GetAgentConnected()
	})
	return ws
}

func runAgentctlInput(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := agentctlCmd(args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(interface{ ExitCode() int }); ok && err != nil {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("agentctl %v: %v", args, err)
	}
	return code, out.String(), errb.String()
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

var sessionID = regexp.MustCompile(`sess_[0-9a-f]+`)

// Without a running engine every client command says how to start one;
// bad arguments are usage errors before any engine is needed.
func TestClientCommandsWithoutEngine(t *testing.T) {
	ws := t.TempDir()
	for _, args := range [][]string{
		{"send", "-w", ws, "hello"},
		{"chat", "-w", ws},
		{"sessions", "-w", ws},
		{"history", "-w", ws, "sess_0"},
		{"approve", "-w", ws, "appr_0"},
		{"deny", "-w", ws, "appr_0"},
	} {
		code, _, stderr := runAgentctl(t, args...)
		if code != exitcode.Failed || !strings.Contains(stderr, "agentctl start") {
			t.Errorf("%v: exit %d, stderr %q; want %d and how to start an engine", args, code, stderr, exitcode.Failed)
		}
	}
	for _, args := range [][]string{
		{"send", "-w", ws},
		{"send", "-w", ws, "--output", "yaml", "x"},
		{"sessions", "-w", ws, "--limit", "-1"},
		{"history", "-w", ws},
		{"history", "-w", ws, "--offset", "-3", "sess_0"},
		{"approve", "-w", ws},
		{"deny", "-w", ws, "a", "b"},
		{"send", "-w", ws, "hello", "--session", "sess_1"}, // a flag after the message
		{"history", "sess_1", "--output=json"},
		{"approve", "appr_1", "-s", "sess_1"},
	} {
		if code, _, stderr := runAgentctl(t, args...); code != exitcode.Usage || stderr == "" {
			t.Errorf("%v: exit %d (stderr %q), want %d with a message", args, code, stderr, exitcode.Usage)
		}
	}
}

func TestClientSendSessionsHistory(t *testing.T) {
	srv := testModel(t)
	ws := startEngine(t, srv)

	// Text: progress and the session id on stderr, the answer on stdout.
	code, out, errOut := runAgentctl(t, "send", "-w", ws, "hello there")
	if code != 0 || strings.TrimSpace(out) != "echo: hello there" {
		t.Fatalf("send: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	sess := sessionID.FindString(errOut)
	if sess == "" || !strings.Contains(errOut, "--session "+sess) {
		t.Fatalf("send did not name its session: %q", errOut)
	}

	// JSON, continuing the session: the same schema as agentctl run.
	code, out, errOut = runAgentctl(t, "send", "-w", ws, "--session", sess, "--output", "json", "and again")
	if code != 0 {
		t.Fatalf("send json: exit %d %q %q", code, out, errOut)
	}
	lines := jsonLines(t, out)
	if s := ofType(lines, "session"); len(s) != 1 || s[0]["session_id"] != sess || s[0]["message_id"] == "" {
		t.Errorf("session lines %v", s)
	}
	if len(ofType(lines, "token")) == 0 {
		t.Error("no token lines")
	}
	if done := ofType(lines, "complete"); len(done) != 1 || done[0]["text"] != "echo: and again" {
		t.Errorf("complete lines %v", done)
	}
	// The model saw the first message in the second turn's history.
	var carried bool
	for _, r := range srv.Requests() {
		if p := r.Prompt(); strings.Contains(p, "hello there") && strings.Contains(p, "and again") {
			carried = true
		}
	}
	if !carried {
		t.Error("the session's first message did not reach the model with the second")
	}

	// sessions: a table and JSON.
	code, out, errOut = runAgentctl(t, "sessions", "-w", ws)
	if code != 0 || !strings.Contains(out, sess) || !strings.Contains(out, "hello there") || !strings.Contains(out, "normal") {
		t.Errorf("sessions: exit %d %q %q", code, out, errOut)
	}
	code, out, _ = runAgentctl(t, "sessions", "-w", ws, "--output", "json")
	var list struct {
		Total    int
		Sessions []struct {
			ID           string
			Title        string
			Mode         string
			MessageCount int `json:"message_count"`
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || list.Total != 1 || len(list.Sessions) != 1 ||
		list.Sessions[0].ID != sess || list.Sessions[0].MessageCount != 4 || list.Sessions[0].Mode != "normal" {
		t.Errorf("sessions json: exit %d %s", code, out)
	}

	// history: both turns, in order; limit and offset are passed through.
	code, out, errOut = runAgentctl(t, "history", "-w", ws, sess)
	if code != 0 || !inOrder(out, "user", "hello there", "assistant", "echo: hello there", "and again", "echo: and again") {
		t.Errorf("history: exit %d %q %q", code, out, errOut)
	}
	code, out, _ = runAgentctl(t, "history", "-w", ws, "--output", "json", "--limit", "1", "--offset", "2", sess)
	var hist struct {
		SessionID string `json:"session_id"`
		Total     int
		Messages  []struct{ Role, Content string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &hist) != nil || hist.SessionID != sess || hist.Total != 4 ||
		len(hist.Messages) != 1 || hist.Messages[0].Role != "user" || hist.Messages[0].Content != "and again" {
		t.Errorf("history json page: exit %d %s", code, out)
	}

	// Unknown ids: exit 5 with a message.
	if code, _, errOut := runAgentctl(t, "history", "-w", ws, "sess_nope"); code != exitcode.NotFound ||
		!strings.Contains(errOut, `no session "sess_nope" (agentctl sessions lists them)`) {
		t.Errorf("history of an unknown session: exit %d %q", code, errOut)
	}
	if code, _, errOut := runAgentctl(t, "send", "-w", ws, "--session", "sess_nope", "hi"); code != exitcode.NotFound || !strings.Contains(errOut, "SESSION_NOT_FOUND") {
		t.Errorf("send to an unknown session: exit %d %q", code, errOut)
	}

	// Off the record: the write tool is refused before the shield is asked.
	code, out, errOut = runAgentctl(t, "send", "-w", ws, "--otr", "--output", "json", "--fail-on-block", "write otr.txt")
	v := ofType(jsonLines(t, out), "verdict")
	if code != exitcode.Blocked || len(v) != 1 || v[0]["decision"] != "BLOCK" || v[0]["rule_ids"].([]any)[0] != "engine.otr" {
		t.Errorf("otr send: exit %d, verdicts %v, stderr %q", code, v, errOut)
	}
	if exists(filepath.Join(ws, "otr.txt")) {
		t.Error("an off-the-record session wrote a file")
	}

	// status names the gRPC address (the one in the state file) and the web URL.
	st, _ := procman.Running(filepath.Join(ws, tools.StateDirName))
	code, out, _ = runAgentctl(t, "status", "-w", ws, "--output", "json")
	var status map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &status) != nil || status["grpc_address"] != st.GRPCAddress {
		t.Fatalf("status: exit %d %s (state %+v)", code, out, st)
	}
	if u, ok := status["web_url"].(string); !ok || !strings.HasPrefix(u, "http://") || u != st.WebURL {
		t.Errorf("status web_url %v", status["web_url"])
	}

	// restart: a new engine process, which the client commands find again.
	if code, out, errOut := runAgentctl(t, "restart", "-w", ws); code != 0 {
		t.Fatalf("restart: exit %d %q %q", code, out, errOut)
	}
	oldPID := status["engine_pid"].(float64)
	proctest.Until(t, "the restarted engine", 60*time.Second, func() bool {
		code, out, _ := runAgentctl(t, "status", "-w", ws, "--output", "json")
		var s map[string]any
		return code == 0 && json.Unmarshal([]byte(out), &s) == nil && s["engine_pid"] != oldPID && s["agent_connected"] == true
	})
	if code, out, errOut := runAgentctl(t, "send", "-w", ws, "after the restart"); code != 0 || !strings.Contains(out, "echo: after the restart") {
		t.Errorf("send after restart: exit %d %q %q", code, out, errOut)
	}
}

func inOrder(s string, parts ...string) bool {
	for _, p := range parts {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return true
}

// chat driven through a pipe: two messages, one session.
func TestClientChatPipe(t *testing.T) {
	srv := testModel(t)
	ws := startEngine(t, srv)
	code, out, errOut := runAgentctlInput(t, "first line\n\nsecond line\n/quit\nnever sent\n", "chat", "-w", ws)
	if code != 0 || !inOrder(out, "session sess_", "echo: first line", "echo: second line") || strings.Contains(out, "never sent") {
		t.Fatalf("chat: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	sess := sessionID.FindString(out)
	if strings.Count(out, "session sess_") != 1 {
		t.Errorf("the session was announced more than once:\n%s", out)
	}
	code, out, _ = runAgentctl(t, "history", "-w", ws, "--output", "json", sess)
	var hist struct{ Total int }
	if code != 0 || json.Unmarshal([]byte(out), &hist) != nil || hist.Total != 4 {
		t.Errorf("history after chat: exit %d %s", code, out)
	}
	// Continuing the session from a new chat.
	code, out, errOut = runAgentctlInput(t, "third line", "chat", "-w", ws, "--session", sess)
	if code != 0 || !strings.Contains(out, "echo: third line") || strings.Contains(out, "session sess_") {
		t.Errorf("chat --session: exit %d %q %q", code, out, errOut)
	}
	if code, _, errOut := runAgentctlInput(t, "hi\n", "chat", "-w", ws, "--session", "sess_nope"); code != exitcode.NotFound {
		t.Errorf("chat with an unknown session: exit %d %q", code, errOut)
	}
}

var approvalID = regexp.MustCompile(`appr_[0-9a-f]+`)

// Escalated writes: answered y or n at chat's prompt, by agentctl approve
// or deny from a second process while send waits, and unknown ids.
func TestClientApprovals(t *testing.T) {
	srv := testModel(t)
	ws := startEngine(t, srv)

	t.Run("chat y runs", func(t *testing.T) {
		code, out, errOut := runAgentctlInput(t, "write chat-yes.txt\ny\n", "chat", "-w", ws)
		if code != 0 || !exists(filepath.Join(ws, "chat-yes.txt")) {
			t.Fatalf("exit %d, file written %v\nstdout:\n%s\nstderr:\n%s", code, exists(filepath.Join(ws, "chat-yes.txt")), out, errOut)
		}
		if !inOrder(out, "approval needed: write_file", "chat-yes.txt", "A person must confirm", "answer by", "approve? [y/N]", "approved by cli", "result (ok)") {
			t.Errorf("chat output:\n%s", out)
		}
	})
	t.Run("chat n and end of input deny", func(t *testing.T) {
		for _, in := range []string{"write chat-no.txt\nn\n", "write chat-no.txt\n\n", "write chat-no.txt\n"} {
			code, out, errOut := runAgentctlInput(t, in, "chat", "-w", ws)
			if code != 0 || exists(filepath.Join(ws, "chat-no.txt")) || !strings.Contains(out, "denied by cli") {
				t.Errorf("input %q: exit %d, file written %v\nstdout:\n%s\nstderr:\n%s", in, code, exists(filepath.Join(ws, "chat-no.txt")), out, errOut)
			}
		}
	})
	t.Run("send waits, approve from another process", func(t *testing.T) {
		send := agentctlCmd("send", "-w", ws, "--output", "json", "write send-yes.txt")
		var out, errb proctest.Buffer
		send.Stdout, send.Stderr = &out, &errb
		if err := send.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- send.Wait() }()
		var id string
		proctest.Until(t, "the approval request", 60*time.Second, func() bool {
			if strings.Contains(out.String(), `"state":"pending"`) {
				id = approvalID.FindString(out.String())
			}
			return id != ""
		})
		if exists(filepath.Join(ws, "send-yes.txt")) {
			t.Fatal("the write ran before it was approved")
		}
		if code, o, e := runAgentctl(t, "approve", "-w", ws, id); code != 0 || !strings.Contains(o, "approved "+id) {
			t.Fatalf("approve: exit %d %q %q", code, o, e)
		}
		if err := waitErr(t, done); err != nil {
			t.Fatalf("send: %v\n%s\n%s", err, out.String(), errb.String())
		}
		resolved := ofType(jsonLines(t, out.String()), "approval")
		if len(resolved) != 2 || resolved[1]["approved"] != true || resolved[1]["by"] != "cli" {
			t.Errorf("approval lines %v", resolved)
		}
		if !exists(filepath.Join(ws, "send-yes.txt")) {
			t.Error("the approved write did not run")
		}
		// Already answered: not found.
		if code, _, e := runAgentctl(t, "deny", "-w", ws, id); code != exitcode.NotFound || !strings.Contains(e, "already answered") {
			t.Errorf("second answer: exit %d %q", code, e)
		}
	})
	t.Run("send waits, deny from another process", func(t *testing.T) {
		send := agentctlCmd("send", "-w", ws, "--fail-on-block", "write send-no.txt")
		var out, errb proctest.Buffer
		send.Stdout, send.Stderr = &out, &errb
		if err := send.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- send.Wait() }()
		var id string
		proctest.Until(t, "the approval request", 60*time.Second, func() bool {
			if strings.Contains(errb.String(), "agentctl deny") {
				id = approvalID.FindString(errb.String())
			}
			return id != ""
		})
		if !strings.Contains(errb.String(), "agentctl approve --workspace "+ws+" "+id) {
			t.Errorf("send did not print the command to answer: %q", errb.String())
		}
		if code, o, e := runAgentctl(t, "deny", "-w", ws, "--session", sessionID.FindString(errb.String()), id); code != 0 {
			t.Fatalf("deny: exit %d %q %q", code, o, e)
		}
		err := waitErr(t, done)
		if ee, ok := err.(interface{ ExitCode() int }); !ok || ee.ExitCode() != exitcode.Blocked {
			t.Errorf("send after a denial: %v, want exit %d\n%s", err, exitcode.Blocked, errb.String())
		}
		if exists(filepath.Join(ws, "send-no.txt")) {
			t.Error("the denied write ran")
		}
	})
	t.Run("unknown ids", func(t *testing.T) {
		for _, cmd := range []string{"approve", "deny"} {
			code, _, e := runAgentctl(t, cmd, "-w", ws, "appr_0000000000000000")
			if code != exitcode.NotFound || !strings.Contains(e, "no pending approval") {
				t.Errorf("%s unknown: exit %d %q", cmd, code, e)
			}
		}
	})
}

// Ctrl-C while chat's prompt waits cancels the turn: the action does not
// run and the chat goes on with the next message.
func TestClientChatInterrupt(t *testing.T) {
	srv := testModel(t)
	ws := startEngine(t, srv)
	chat := agentctlCmd("chat", "-w", ws)
	stdin, err := chat.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb proctest.Buffer
	chat.Stdout, chat.Stderr = &out, &errb
	if err := chat.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- chat.Wait() }()
	t.Cleanup(func() { _ = chat.Process.Kill() })

	io.WriteString(stdin, "write interrupted.txt\n")
	proctest.Until(t, "the approval prompt", 60*time.Second, func() bool { return strings.Contains(out.String(), "approve? [y/N]") })
	if err := chat.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	proctest.Until(t, "the cancelled turn", 60*time.Second, func() bool { return strings.Contains(out.String(), "(turn cancelled)") })
	io.WriteString(stdin, "still here\n")
	stdin.Close()
	if err := waitErr(t, done); err != nil {
		t.Fatalf("chat: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "echo: still here") {
		t.Errorf("the chat did not go on after the cancelled turn:\n%s", out.String())
	}
	if exists(filepath.Join(ws, "interrupted.txt")) {
		t.Error("the write of a cancelled turn ran")
	}
}

func waitErr(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(90 * time.Second):
		t.Fatal("the command did not exit")
		return nil
	}
}
