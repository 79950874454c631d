package mcpproxy_test

import (
	"os"
	"os/exec"
	"testing"
)

// BenchmarkStdioToolCall measures one allowed tools/call round trip
// through the proxy (judged by the in-process shield, result checked)
// against the same call made to the server directly: the proxy's cost per
// call. Run: go test -run '^$' -bench StdioToolCall -benchtime 2000x ./mcpproxy
func BenchmarkStdioToolCall(b *testing.B) {
	e := newEnv(b)
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, c *client) {
		c.initialize(false)
		args := map[string]any{"text": "hello"}
		b.ResetTimer()
		for range b.N {
			if r := c.call("echo", args); r["result"] == nil {
				b.Fatalf("echo = %v", r)
			}
		}
		b.StopTimer()
	}
	b.Run("proxy", func(b *testing.B) { run(b, e.startStdioProxy()) })
	b.Run("direct", func(b *testing.B) {
		cmd := exec.Command(self, "-test.run=^$")
		cmd.Env = append(append(os.Environ(), e.vars...), "MCPP_ROLE=server", "MCPP_SERVER_LOG=")
		run(b, e.startClient(cmd))
	})
}
