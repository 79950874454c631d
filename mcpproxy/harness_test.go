package mcpproxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/internal/proctest"
	"github.com/parapet-dev/parapet/mcpproxy"
	"github.com/parapet-dev/parapet/rules/policy"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/shield"
)

const testPolicy = `version: 1
name: mcp-test
defaults:
  no_match: escalate
  unknown_action: escalate
deny:
  - id: no-prod-deploy
    reason: "Deploying to production is not allowed from an agent."
    match:
      action: ["custom:mcp:fake/deploy"]
      when: 'args.env == "production"'
allow:
  - id: fake-tools
    match:
      action: ["custom:mcp:fake/echo", "custom:mcp:fake/leak", "custom:mcp:fake/inject", "custom:mcp:fake/slow",
               "custom:mcp:fake/crash", "custom:mcp:fake/roots", "custom:mcp:fake/add", "custom:mcp:fake/run_command"]
  - id: git-status
    match:
      action: [execute_command]
      command: { program: [git], subcommand: [status] }
`

func TestMain(m *testing.M) {
	switch os.Getenv("MCPP_ROLE") {
	case "server":
		runStdioServer()
		os.Exit(0)
	case "http-server":
		runHTTPServer()
		os.Exit(0)
	case "proxy":
		os.Exit(runProxyProcess())
	}
	os.Exit(m.Run())
}

// proxyConfig builds the proxy's configuration from the environment the
// test gave the proxy process.
func proxyConfig() (mcpproxy.Config, error) {
	pol, err := policy.LoadFile(os.Getenv("MCPP_POLICY"))
	if err != nil {
		return mcpproxy.Config{}, err
	}
	pl, err := pipeline.New(pipeline.Config{Policy: pol})
	if err != nil {
		return mcpproxy.Config{}, err
	}
	pins, err := mcpproxy.OpenPins(os.Getenv("MCPP_PINS"), "fake")
	if err != nil {
		return mcpproxy.Config{}, err
	}
	cfg := mcpproxy.Config{
		Server: "fake", Shield: shield.NewLocal(&shield.Shield{Pipeline: pl}), Pins: pins,
		Workspace: os.Getenv("MCPP_WORKSPACE"), Home: "/home/dev",
		AllowChanged: os.Getenv("MCPP_ALLOW_CHANGED") == "1", ResultSecrets: os.Getenv("MCPP_SECRETS"),
		ResultInjection: os.Getenv("MCPP_INJECTION"),
		Log:             slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}
	if t := os.Getenv("MCPP_TRUST"); t != "" {
		cfg.TrustedTools = strings.Split(t, ",")
	}
	if h := os.Getenv("MCPP_UPSTREAM_AUTH"); h != "" {
		cfg.UpstreamHeaders = http.Header{"Authorization": {h}}
	}
	if d := os.Getenv("MCPP_SESSION_IDLE"); d != "" {
		cfg.SessionIdle, _ = time.ParseDuration(d)
	}
	if d := os.Getenv("MCPP_ASK_TIMEOUT"); d != "" {
		cfg.AskTimeout, _ = time.ParseDuration(d)
	}
	return cfg, nil
}

func runProxyProcess() int {
	cfg, err := proxyConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, "proxy:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if addr := os.Getenv("MCPP_LISTEN"); addr != "" {
		err = mcpproxy.ServeHTTP(ctx, cfg, addr, os.Getenv("MCPP_UPSTREAM"), func(a string) { fmt.Println(a) })
	} else {
		argv := os.Args[len(os.Args)-1:]
		os.Setenv("MCPP_ROLE", "server") // for the child
		err = mcpproxy.RunStdio(ctx, cfg, argv, os.Stdin, os.Stdout, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "proxy:", err)
		return 1
	}
	return 0
}

// env is one test's directories and settings for the processes.
type env struct {
	t         testing.TB
	dir       string
	serverLog string
	vars      []string
}

func newEnv(t testing.TB, vars ...string) *env {
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte(testPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dir: dir, serverLog: filepath.Join(dir, "server.log")}
	e.vars = append([]string{"MCPP_POLICY=" + pol, "MCPP_PINS=" + filepath.Join(dir, "state"), "MCPP_WORKSPACE=" + ws,
		"MCPP_SERVER_LOG=" + e.serverLog}, vars...)
	return e
}

// serverSaw returns the methods the server logged.
func (e *env) serverSaw() string {
	b, _ := os.ReadFile(e.serverLog)
	return string(b)
}

// client drives a proxy process as an MCP client would.
type client struct {
	t       testing.TB
	cmd     *exec.Cmd
	in      io.WriteCloser
	msgs    chan map[string]any
	stderr  *proctest.Buffer
	nextID  int
	seen    []map[string]any // messages other than the awaited response
	onAsk   func(req map[string]any) any
	waitErr chan error
}

// startStdioProxy runs `proxy -- server` as two real processes.
func (e *env) startStdioProxy(vars ...string) *client {
	self, err := os.Executable()
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$", "--", self)
	// The server inherits the proxy's environment; MCPP_ROLE is reset
	// for it by the wrapper below.
	cmd.Env = append(append(os.Environ(), e.vars...), vars...)
	cmd.Env = append(cmd.Env, "MCPP_ROLE=proxy")
	return e.startClient(cmd)
}

func (e *env) startClient(cmd *exec.Cmd) *client {
	c := &client{t: e.t, cmd: cmd, msgs: make(chan map[string]any, 64), stderr: &proctest.Buffer{}, waitErr: make(chan error, 1)}
	var err error
	if c.in, err = cmd.StdinPipe(); err != nil {
		e.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				c.msgs <- map[string]any{"unparseable": sc.Text()}
				continue
			}
			c.msgs <- m
		}
		close(c.msgs)
	}()
	go func() { c.waitErr <- cmd.Wait() }()
	e.t.Cleanup(func() {
		c.in.Close()
		select {
		case <-c.waitErr:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		if e.t.Failed() {
			e.t.Logf("proxy stderr:\n%s", c.stderr.String())
		}
	})
	return c
}

// waitStderr waits for the proxy to report want on stderr (the pipe copy
// runs behind the messages).
func (c *client) waitStderr(want string) {
	c.t.Helper()
	proctest.Eventually(c.t, "proxy stderr to say "+want, 30*time.Second, func() (bool, string) {
		out := c.stderr.String()
		return strings.Contains(out, want), out
	})
}

func (c *client) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("write to proxy: %v", err)
	}
}

// next returns the next message from the proxy (a generous guard against
// a hang, not a timing assertion).
func (c *client) next() map[string]any {
	c.t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			c.t.Fatalf("proxy closed its output; stderr:\n%s", c.stderr.String())
		}
		return m
	case <-time.After(30 * time.Second):
		c.t.Fatalf("no message from the proxy; stderr:\n%s", c.stderr.String())
	}
	return nil
}

// startRequest sends a request and returns its id.
func (c *client) startRequest(method string, params any) float64 {
	c.nextID++
	c.send(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	return float64(c.nextID)
}

// await reads until the response to id, answering requests from the
// proxy with onAsk and keeping everything else in seen.
func (c *client) await(id float64) map[string]any {
	c.t.Helper()
	for {
		m := c.next()
		if m["id"] == id && m["method"] == nil {
			return m
		}
		if m["method"] != nil && m["id"] != nil && c.onAsk != nil {
			c.send(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": c.onAsk(m)})
		}
		c.seen = append(c.seen, m)
	}
}

func (c *client) request(method string, params any) map[string]any {
	c.t.Helper()
	return c.await(c.startRequest(method, params))
}

// initialize runs the MCP handshake, declaring elicitation if asked.
func (c *client) initialize(elicitation bool) map[string]any {
	c.t.Helper()
	caps := map[string]any{"roots": map[string]any{}}
	if elicitation {
		caps["elicitation"] = map[string]any{}
	}
	r := c.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": caps,
		"clientInfo": map[string]any{"name": "test-client", "version": "1"}})
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return r
}

func (c *client) call(tool string, args any) map[string]any {
	c.t.Helper()
	return c.request("tools/call", map[string]any{"name": tool, "arguments": args})
}

// resultText joins a tools/call result's text content; isError says
// whether the result is an error.
func resultText(t *testing.T, r map[string]any) (text string, isError bool) {
	t.Helper()
	res, ok := r["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result in %v", r)
	}
	var parts []string
	for _, c := range res["content"].([]any) {
		parts = append(parts, c.(map[string]any)["text"].(string))
	}
	isErr, _ := res["isError"].(bool)
	return strings.Join(parts, "\n"), isErr
}

func toolNames(t *testing.T, r map[string]any) []string {
	t.Helper()
	res, ok := r["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result in %v", r)
	}
	var names []string
	for _, tl := range res["tools"].([]any) {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	return names
}
