package cmd

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/parapet-dev/parapet/internal/proctest"
	"github.com/parapet-dev/parapet/llm/llmtest"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/shieldd/evaluator"
)

func TestServeEvaluatorFlagErrors(t *testing.T) {
	srv := llmtest.Start(t)
	base := []string{"serve", "--grpc-addr", "127.0.0.1:0", "--http-addr", "off", "--evaluator-base-url", srv.OpenAIBaseURL(), "--evaluator-model", "m"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--evaluator-provider", "openai"}, "state file"},
		{[]string{"--evaluator-provider", "scripted", "--evaluator-daily-budget", "0"}, "want openai or anthropic"},
		{[]string{"--evaluator-provider", "openai", "--evaluator-daily-budget", "0", "--evaluator-on-unavailable", "maybe"}, "want escalate, block or allow"},
	} {
		code, _, errOut := run(t, append(base, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d %q, want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

// TestServeWithEvaluator runs the real serve command with a Tier 2
// evaluator on the test model server.
func TestServeWithEvaluator(t *testing.T) {
	srv := llmtest.Start(t)
	canary := regexp.MustCompile(`"canary":"([A-Z2-7]+)"`)
	srv.Handle(func(r llmtest.Recorded) llmtest.Reply {
		return llmtest.Reply{Text: fmt.Sprintf(`{"decision":"BLOCK","confidence":0.7,"reason":"not needed","canary":%q}`, canary.FindStringSubmatch(r.System)[1])}
	})
	t.Setenv("PARAPET_TEST_EVALUATOR_KEY", "test-key")
	var stderr proctest.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- RunContext(ctx, []string{"shieldd", "serve", "--grpc-addr", "127.0.0.1:0", "--http-addr", "off",
			"--evaluator-provider", "anthropic", "--evaluator-base-url", srv.AnthropicBaseURL(), "--evaluator-model", "judge-1",
			"--evaluator-api-key-env", "PARAPET_TEST_EVALUATOR_KEY",
			"--evaluator-state-file", filepath.Join(t.TempDir(), "budget.json")}, &bytes.Buffer{}, &stderr)
	}()
	re := regexp.MustCompile(`grpc=(127\.0\.0\.1:\d+)`)
	var addr string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && addr == ""; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatalf("serve did not report its address:\n%s", stderr.String())
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pb.NewShieldServiceClient(conn)

	resp, err := client.Evaluate(ctx, &pb.EvaluateRequest{ActionType: "read_file", PayloadJson: `{"path":"README.md"}`,
		Caller: &pb.CallerContext{WorkspaceRoot: "/w"}, MinTier: 2})
	if err != nil {
		t.Fatal(err)
	}
	if v := resp.Verdict; v.Decision != pb.VerdictDecision_VERDICT_DECISION_BLOCK || v.Tier != 2 || v.RuleIds[0] != evaluator.RuleLLM {
		t.Fatalf("verdict %v", v)
	}
	if r := srv.Requests(); len(r) != 1 || r[0].Model != "judge-1" || r[0].Header.Get("x-api-key") != "test-key" {
		t.Fatalf("model requests %+v", r)
	}
	st, err := client.GetShieldStatus(ctx, &pb.ShieldStatusRequest{})
	if err != nil || !st.LlmConnected || st.LlmProvider != "anthropic" || st.LlmModel != "judge-1" {
		t.Fatalf("status %v, %v", st, err)
	}
	if h, err := client.Health(ctx, &pb.HealthRequest{}); err != nil || h.MaxTier != 2 {
		t.Fatalf("health %v, %v", h, err)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exit %d\n%s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
	}
}
