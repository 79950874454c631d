package mcpproxy_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/internal/proctest"
)

// startHTTP runs the fake server and the proxy as two processes and
// returns a client of the proxy's endpoint.
func (e *env) startHTTP(vars ...string) *httpClient {
	self, err := os.Executable()
	if err != nil {
		e.t.Fatal(err)
	}
	srv := exec.Command(self, "-test.run=^$")
	srv.Env = append(append(append(os.Environ(), e.vars...), vars...), "MCPP_ROLE=http-server")
	srvAddr := e.startProcessReadingAddr(srv)
	proxy := exec.Command(self, "-test.run=^$")
	proxy.Env = append(append(append(os.Environ(), e.vars...), vars...), "MCPP_ROLE=proxy",
		"MCPP_LISTEN=127.0.0.1:0", "MCPP_UPSTREAM=http://"+srvAddr+"/mcp")
	stderr := &proctest.Buffer{}
	proxy.Stderr = stderr
	addr := e.startProcessReadingAddr(proxy)
	return &httpClient{t: e.t, url: "http://" + addr + "/mcp", stderr: stderr}
}

// startProcessReadingAddr starts cmd and returns the first line it
// prints (its listening address); the process is stopped at cleanup.
func (e *env) startProcessReadingAddr(cmd *exec.Cmd) string {
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		e.t.Fatalf("no address from %v: %v", cmd.Args, err)
	}
	return strings.TrimSpace(line)
}

type httpClient struct {
	t       testing.TB
	url     string
	session string
	nextID  int
	stderr  *proctest.Buffer
	onAsk   func(req map[string]any) any
	seen    []map[string]any
}

func (c *httpClient) post(msg map[string]any) *http.Response {
	c.t.Helper()
	b, _ := json.Marshal(msg)
	req, _ := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("POST: %v", err)
	}
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		c.session = s
	}
	return resp
}

// events reads an SSE response's messages.
func (c *httpClient) events(resp *http.Response, fn func(m map[string]any) bool) {
	c.t.Helper()
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		fn(m)
		return
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			c.t.Fatalf("bad event %q", data)
		}
		if !fn(m) {
			return
		}
	}
}

func (c *httpClient) request(method string, params any) map[string]any {
	c.t.Helper()
	c.nextID++
	id := float64(c.nextID)
	resp := c.post(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	var answer map[string]any
	c.events(resp, func(m map[string]any) bool {
		if m["id"] == id && m["method"] == nil {
			answer = m
			return false
		}
		if m["method"] != nil && m["id"] != nil && c.onAsk != nil {
			r := c.post(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": c.onAsk(m)})
			r.Body.Close()
			if r.StatusCode != http.StatusAccepted {
				c.t.Errorf("answer to %v: HTTP %d", m["method"], r.StatusCode)
			}
		}
		c.seen = append(c.seen, m)
		return true
	})
	if answer == nil {
		c.t.Fatalf("%s: the stream ended without an answer; proxy stderr:\n%s", method, c.stderr.String())
	}
	return answer
}

func (c *httpClient) initialize(elicitation bool) {
	c.t.Helper()
	caps := map[string]any{}
	if elicitation {
		caps["elicitation"] = map[string]any{}
	}
	r := c.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": caps,
		"clientInfo": map[string]any{"name": "test-client", "version": "1"}})
	if r["result"] == nil || c.session == "" {
		c.t.Fatalf("initialize = %v, session %q", r, c.session)
	}
	resp := c.post(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		c.t.Fatalf("notifications/initialized: HTTP %d", resp.StatusCode)
	}
}

func (c *httpClient) call(tool string, args any) map[string]any {
	c.t.Helper()
	return c.request("tools/call", map[string]any{"name": tool, "arguments": args})
}

func TestHTTPAllowedBlockedAndPassThrough(t *testing.T) {
	e := newEnv(t)
	c := e.startHTTP()
	c.initialize(false)
	if session := c.session; strings.Contains(session, "fake-session") {
		t.Errorf("the proxy handed out the upstream's session id %q", session)
	}
	text, isErr := resultText(t, c.call("echo", map[string]any{"text": "over http"}))
	if isErr || text != "echo: over http" {
		t.Fatalf("echo = %q (error %v)", text, isErr)
	}
	if len(c.seen) == 0 || c.seen[0]["method"] != "notifications/message" {
		t.Errorf("the server's notification did not come on the request's stream: %v", c.seen)
	}
	// A request from the server on the call's stream, answered by a POST.
	c.onAsk = func(req map[string]any) any {
		return map[string]any{"roots": []any{map[string]any{"uri": "file:///srv/app"}}}
	}
	if text, isErr := resultText(t, c.call("roots", map[string]any{})); isErr || !strings.Contains(text, "file:///srv/app") {
		t.Errorf("roots = %q (error %v)", text, isErr)
	}
	text, isErr = resultText(t, c.call("deploy", map[string]any{"env": "production"}))
	if !isErr || !strings.Contains(text, "Deploying to production is not allowed") {
		t.Errorf("deploy production = %q (error %v)", text, isErr)
	}
	if strings.Contains(e.serverSaw(), `"name":"deploy"`) {
		t.Errorf("the server saw a blocked call:\n%s", e.serverSaw())
	}
	// Ending the session ends it upstream too; the old id is refused.
	req, _ := http.NewRequest(http.MethodDelete, c.url, nil)
	req.Header.Set("Mcp-Session-Id", c.session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	resp.Body.Close()
	resp = c.post(map[string]any{"jsonrpc": "2.0", "id": 99, "method": "ping"})
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("request on an ended session: HTTP %d, want 404", resp.StatusCode)
	}
	if !strings.Contains(e.serverSaw(), "DELETE fake-session-42") {
		t.Errorf("the upstream session was not ended:\n%s", e.serverSaw())
	}
}

func TestHTTPEscalated(t *testing.T) {
	for _, tc := range []struct {
		name        string
		elicitation bool
		answer      any
		allowed     bool
	}{
		{"accepted", true, map[string]any{"action": "accept", "content": map[string]any{"approve": true}}, true},
		{"declined", true, map[string]any{"action": "decline"}, false},
		{"client without elicitation", false, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			c := e.startHTTP()
			c.initialize(tc.elicitation)
			asked := false
			c.onAsk = func(req map[string]any) any {
				asked = req["method"] == "elicitation/create"
				return tc.answer
			}
			text, isErr := resultText(t, c.call("deploy", map[string]any{"env": "staging"}))
			if asked != tc.elicitation {
				t.Errorf("asked = %v", asked)
			}
			if tc.allowed != !isErr || (tc.allowed && text != "deploy: staging") {
				t.Errorf("deploy = %q (error %v)", text, isErr)
			}
		})
	}
}

func TestHTTPCancelWhileAsking(t *testing.T) {
	e := newEnv(t)
	c := e.startHTTP()
	c.initialize(true)
	resp := c.post(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "tools/call",
		"params": map[string]any{"name": "deploy", "arguments": map[string]any{"env": "staging"}}})
	var got []map[string]any
	c.events(resp, func(m map[string]any) bool {
		got = append(got, m)
		if m["method"] == "elicitation/create" {
			r := c.post(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": 5}})
			r.Body.Close()
		}
		return true
	})
	// The question, then its withdrawal, then the stream ends unanswered.
	if len(got) != 2 || got[0]["method"] != "elicitation/create" || got[1]["method"] != "notifications/cancelled" {
		t.Errorf("stream carried %v", got)
	}
	if strings.Contains(e.serverSaw(), "tools/call") {
		t.Errorf("the server saw the cancelled call:\n%s", e.serverSaw())
	}
}

func TestHTTPPoisonedAndChangedTools(t *testing.T) {
	e := newEnv(t)
	c := e.startHTTP()
	c.initialize(false)
	if n := len(toolNames(t, c.request("tools/list", nil))); n != 8 {
		t.Fatalf("first listing: %d tools", n)
	}
	c2 := e.startHTTP("MCPP_VARIANT=poisoned")
	c2.initialize(false)
	names := strings.Join(toolNames(t, c2.request("tools/list", nil)), ",")
	if names != "echo,deploy,leak,inject,slow,crash,roots,run_command" {
		t.Errorf("poisoned listing offered %s", names)
	}
	c3 := e.startHTTP("MCPP_VARIANT=changed")
	c3.initialize(false)
	names = strings.Join(toolNames(t, c3.request("tools/list", nil)), ",")
	if strings.Contains(names, "echo") {
		t.Errorf("changed listing offered %s", names)
	}
}

func TestHTTPServerCrash(t *testing.T) {
	e := newEnv(t)
	c := e.startHTTP()
	c.initialize(false)
	r := c.call("crash", map[string]any{})
	if _, ok := r["error"].(map[string]any); !ok {
		t.Fatalf("crash call answered %v, want an error", r)
	}
	// The proxy keeps serving: the next request gets an error too, on the
	// same session.
	r = c.request("tools/list", nil)
	errObj, ok := r["error"].(map[string]any)
	if !ok || !strings.Contains(errObj["message"].(string), "unreachable") {
		t.Errorf("tools/list after the crash = %v", r)
	}
}

func TestHTTPGetStream(t *testing.T) {
	e := newEnv(t)
	c := e.startHTTP()
	c.initialize(false)
	req, _ := http.NewRequest(http.MethodGet, c.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %v %v", resp, err)
	}
	// The upstream's own notification arrives on the client's GET stream.
	c.events(resp, func(m map[string]any) bool {
		if m["method"] != "notifications/tools/list_changed" {
			t.Errorf("GET stream carried %v", m)
		}
		return false
	})
	// Without a session the GET is refused.
	req, _ = http.NewRequest(http.MethodGet, c.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("GET without a session: %v %v", resp, err)
	}
	// A page in a browser cannot reach the proxy.
	req, _ = http.NewRequest(http.MethodPost, c.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Mcp-Session-Id", c.session)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin POST: %v %v", resp, err)
	}
}

func TestHTTPIdleSessionEnds(t *testing.T) {
	e := newEnv(t)
	c := e.startHTTP("MCPP_SESSION_IDLE=300ms")
	c.initialize(false)
	// Not a timing assertion: the session must end at some point after
	// 300 ms of idleness; the guard only stops a hang.
	proctest.Until(t, "the idle session to end", 30*time.Second, func() bool {
		resp := c.post(map[string]any{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			time.Sleep(400 * time.Millisecond) // stay idle long enough
		}
		return resp.StatusCode == http.StatusNotFound
	})
}

func TestHTTPUpstreamHeaders(t *testing.T) {
	e := newEnv(t, "MCPP_REQUIRE_AUTH=Bearer up-token")
	// Without the header the upstream refuses, and the client hears why.
	c := e.startHTTP()
	r := c.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "t", "version": "1"}})
	if errObj, ok := r["error"].(map[string]any); !ok || !strings.Contains(errObj["message"].(string), "401") {
		t.Errorf("initialize without the upstream's credentials = %v", r)
	}
	c2 := e.startHTTP("MCPP_UPSTREAM_AUTH=Bearer up-token")
	c2.initialize(false)
	if text, isErr := resultText(t, c2.call("echo", map[string]any{"text": "authorised"})); isErr || text != "echo: authorised" {
		t.Errorf("echo = %q (error %v)", text, isErr)
	}
}
