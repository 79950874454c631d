package cmd

import (
	"context"
	"fmt"
	"regexp"
	"sync/atomic"
	"testing"

	"github.com/parapet-dev/parapet/llm/llmtest"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/heuristics"
	"github.com/parapet-dev/parapet/shieldd/evaluator"
)

// TestServeStatusReportsRealValues checks GetShieldStatus and Health
// against what the running shieldd actually has: the Tier 1 rules its
// policy leaves on, today's counts, and llm_connected following the
// model's last call (down after a 503, up after an answer).
func TestServeStatusReportsRealValues(t *testing.T) {
	srv := llmtest.Start(t)
	var down atomic.Bool
	canary := regexp.MustCompile(`"canary":"([A-Z2-7]+)"`)
	srv.Handle(func(r llmtest.Recorded) llmtest.Reply {
		if down.Load() {
			return llmtest.Reply{Status: 503, Text: "overloaded"}
		}
		return llmtest.Reply{Text: fmt.Sprintf(`{"decision":"BLOCK","confidence":0.9,"reason":"no","canary":%q}`, canary.FindStringSubmatch(r.System)[1])}
	})
	t.Setenv("PARAPET_TEST_EVALUATOR_KEY", "test-key")
	polFile := writeFile(t, t.TempDir(), "policy.yaml", allowReads+
		"heuristics:\n  disable: [rce.download-pipe-shell]\n  override:\n    credential.cli-token: allow\n")
	s := serveForTest(t, "--policy", polFile,
		"--evaluator-provider", "openai", "--evaluator-base-url", srv.OpenAIBaseURL(), "--evaluator-model", "judge-1",
		"--evaluator-api-key-env", "PARAPET_TEST_EVALUATOR_KEY", "--evaluator-daily-budget", "0")
	ctx := context.Background()

	st := s.status(t, ctx)
	if want := int32(len(heuristics.Catalogue()) - 2); st.HeuristicRules != want || st.PolicyRules != 1 || st.PolicyName != "reads-allowed" ||
		st.PolicyVersion != policyVersion(allowReads+"heuristics:\n  disable: [rce.download-pipe-shell]\n  override:\n    credential.cli-token: allow\n") {
		t.Fatalf("status: heuristic rules %d (want %d), policy %s %d rules %s", st.HeuristicRules, want, st.PolicyName, st.PolicyRules, st.PolicyVersion)
	}
	if !st.LlmConnected || st.LlmProvider != "openai" || st.LlmModel != "judge-1" || st.EvaluationsToday != 0 || st.PolicyError != "" {
		t.Fatalf("status before any call: %v", st)
	}
	if h, err := s.client.Health(ctx, &pb.HealthRequest{}); err != nil || !h.Healthy || h.MaxTier != 2 || h.Version != Version {
		t.Fatalf("health %v, %v", h, err)
	}

	tier2 := func(path string) *pb.Verdict {
		resp, err := s.client.Evaluate(ctx, &pb.EvaluateRequest{ActionType: "read_file", PayloadJson: fmt.Sprintf(`{"path":%q}`, path),
			Caller: &pb.CallerContext{WorkspaceRoot: "/w"}, MinTier: 2})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Verdict
	}
	down.Store(true)
	if v := tier2("a.txt"); v.RuleIds[0] != evaluator.RuleUnavailable || v.Decision != pb.VerdictDecision_VERDICT_DECISION_ESCALATE {
		t.Fatalf("with the model down: %s", decided(v))
	}
	if st := s.status(t, ctx); st.LlmConnected {
		t.Fatal("llm_connected after the model's 503")
	}
	down.Store(false)
	if v := tier2("b.txt"); v.RuleIds[0] != evaluator.RuleLLM || v.Decision != pb.VerdictDecision_VERDICT_DECISION_BLOCK {
		t.Fatalf("with the model back: %s", decided(v))
	}
	st = s.status(t, ctx)
	if !st.LlmConnected || st.EvaluationsToday != 2 || st.BlocksToday != 1 || st.EscalationsToday != 1 {
		t.Fatalf("status after two calls: connected %v, evaluations %d, blocks %d, escalations %d",
			st.LlmConnected, st.EvaluationsToday, st.BlocksToday, st.EscalationsToday)
	}
}
