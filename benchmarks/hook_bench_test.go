package benchmarks

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/benchmarks/internal/testserver"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
)

// hookInput is a Claude Code PreToolUse input for a Bash call the default
// policy allows (the allow path runs every tier).
const hookInput = `{"session_id":"3f1c9a52-7d4e-4b8a-9c1e-0a2b3c4d5e6f","transcript_path":"/home/dev/.claude/projects/p/s.jsonl",` +
	`"cwd":"/home/dev/project","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash",` +
	`"tool_input":{"command":"go test ./...","description":"Run the tests"},"tool_use_id":"toolu_01ABC"}`

// BenchmarkHookProcess measures `agentctl hook claude-code` as Claude Code
// runs it before every tool call: from exec to the process's exit with the
// answer on stdout. Targets: p50 ≤ 15 ms with the embedded shield (policy
// compiled in the process), ≤ 10 ms against a running shieldd.
func BenchmarkHookProcess(b *testing.B) {
	bin := buildAgentctl(b)
	b.Run("embedded", func(b *testing.B) { benchHook(b, bin) })
	b.Run("shieldd", func(b *testing.B) {
		s := testserver.Start(b, pipeline.Config{})
		benchHook(b, bin, "--shield", s.GRPCAddr)
	})
}

func benchHook(b *testing.B, bin string, args ...string) {
	lat := make([]float64, 0, b.N)
	cpu := make([]float64, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin, append([]string{"hook", "claude-code"}, args...)...)
		cmd.Env = []string{"HOME=/home/dev"}
		cmd.Stdin = strings.NewReader(hookInput)
		var out bytes.Buffer
		cmd.Stdout = &out
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("agentctl hook: %v", err)
		}
		lat = append(lat, float64(time.Since(start).Nanoseconds()))
		// CPU time (user + system) of the hook process: what it costs
		// whatever else the machine is doing.
		cpu = append(cpu, float64((cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Nanoseconds()))
		if !bytes.Contains(out.Bytes(), []byte(`"permissionDecision":"allow"`)) {
			b.Fatalf("answer: %s", out.Bytes())
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	slices.Sort(cpu)
	b.ReportMetric(rank(lat, 0.50)/1e6, "p50-ms")
	b.ReportMetric(rank(lat, 0.90)/1e6, "p90-ms")
	b.ReportMetric(rank(cpu, 0.50)/1e6, "cpu-p50-ms")
}
