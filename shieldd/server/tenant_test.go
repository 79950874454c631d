package server

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parapet-dev/parapet/observability"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/shieldd/audit"
	"github.com/parapet-dev/parapet/shieldd/auth"
	"github.com/parapet-dev/parapet/shieldd/tenant"
)

const tenantTokens = `tokens:
  - name: engine-acme
    tenant: acme
    token: token-acme-0123456789
  - name: engine-beta
    tenant: beta
    token: token-beta-0123456789
`

// tenantSetup: two tenants by static token, acme with its own policy
// (no writes), beta on the default policy.
func tenantSetup(t *testing.T, extra func(*ShieldService, *observability.Metrics)) func(*ShieldService, *DaemonConfig, *observability.Metrics) {
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "tokens.yaml")
	os.WriteFile(tokFile, []byte(tenantTokens), 0o600)
	polDir := filepath.Join(dir, "policies")
	os.Mkdir(polDir, 0o700)
	os.WriteFile(filepath.Join(polDir, "acme.yaml"), []byte("version: 1\nname: acme\ndeny:\n  - id: acme.no-writes\n    reason: acme allows no file writes.\n    match:\n      action: [write_file]\n"), 0o600)
	tokens, err := auth.LoadStaticTokens(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	pols, err := tenant.LoadPolicyDir(polDir)
	if err != nil {
		t.Fatal(err)
	}
	return func(svc *ShieldService, cfg *DaemonConfig, m *observability.Metrics) {
		cfg.Guard = &auth.Guard{Auth: tokens}
		if err := svc.Shield.Pipeline.SetTenantPolicies(pols); err != nil {
			t.Fatal(err)
		}
		tm, err := tenant.NewMetrics(m.Registry, tenant.NewLabels(10, tokens.Tenants()))
		if err != nil {
			t.Fatal(err)
		}
		svc.Shield.TenantMetrics = tm
		if extra != nil {
			extra(svc, m)
		}
	}
}

func TestTenantPolicyFollowsTheAuthenticatedIdentity(t *testing.T) {
	ts := startServerWith(t, tenantSetup(t, nil))
	// Both requests claim tenant beta; the token decides.
	req := evalReq("write_file", `{"path":"notes.txt","content":"x"}`)
	req.Caller.Tenant = "beta"
	acme, err := ts.client.Evaluate(withBearer("token-acme-0123456789"), req)
	if err != nil {
		t.Fatal(err)
	}
	beta, err := ts.client.Evaluate(withBearer("token-beta-0123456789"), req)
	if err != nil {
		t.Fatal(err)
	}
	if acme.Verdict.Decision != pb.VerdictDecision_VERDICT_DECISION_BLOCK || acme.Verdict.RuleIds[0] != "acme.no-writes" {
		t.Fatalf("acme's token: %v", acme.Verdict)
	}
	if beta.Verdict.Decision != pb.VerdictDecision_VERDICT_DECISION_ALLOW {
		t.Fatalf("beta's token (default policy): %v", beta.Verdict)
	}
	st, err := ts.client.GetShieldStatus(withBearer("token-acme-0123456789"), &pb.ShieldStatusRequest{})
	if err != nil || st.PolicyName != "acme" {
		t.Fatalf("acme's status names policy %q (%v)", st.GetPolicyName(), err)
	}
	_, metrics := httpDo(t, http.DefaultClient, "GET", "http://"+ts.httpAddr+"/metrics", "", "")
	for _, want := range []string{
		`parapet_shield_tenant_decisions_total{decision="block",tenant="acme"} 1`,
		`parapet_shield_tenant_decisions_total{decision="allow",tenant="beta"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(metrics, "tenant_"))
		}
	}
}

func TestTenantRateLimit(t *testing.T) {
	ts := startServerWith(t, tenantSetup(t, func(svc *ShieldService, _ *observability.Metrics) {
		svc.Shield.Limits = tenant.NewLimiter(0.001, 2) // two calls, then nothing refills during the test
	}))
	req := evalReq("read_file", `{"path":"README.md"}`)
	for range 2 {
		if _, err := ts.client.Evaluate(withBearer("token-acme-0123456789"), req); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := ts.client.Evaluate(withBearer("token-acme-0123456789"), req)
	if status.Code(err) != codes.ResourceExhausted || resp != nil ||
		!strings.Contains(err.Error(), `tenant "acme" is over its rate limit of 0.001 requests/s (burst 2)`) {
		t.Fatalf("over the limit: %v %v", resp, err)
	}
	// The other tenant has its own bucket.
	if _, err := ts.client.Evaluate(withBearer("token-beta-0123456789"), req); err != nil {
		t.Fatalf("beta: %v", err)
	}
	code, body := httpDo(t, http.DefaultClient, "POST", "http://"+ts.httpAddr+"/v1/evaluate", "Bearer token-acme-0123456789", readmeReq)
	if code != http.StatusTooManyRequests || !strings.Contains(body, "rate limit") {
		t.Fatalf("HTTP over the limit: %d %s", code, body)
	}
	_, metrics := httpDo(t, http.DefaultClient, "GET", "http://"+ts.httpAddr+"/metrics", "", "")
	if !strings.Contains(metrics, `parapet_shield_tenant_rate_limited_total{tenant="acme"} 2`) {
		t.Errorf("rate limiting not counted:\n%s", grepLines(metrics, "rate_limited"))
	}
}

func TestAuditRecordsEvaluationsAndOutcomes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var log *audit.Log
	ts := startServerWith(t, tenantSetup(t, func(svc *ShieldService, _ *observability.Metrics) {
		var err error
		if log, err = audit.Open(audit.Config{Path: path, Mode: audit.ModeAlways}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { log.Close() })
		svc.Shield.Audit = log
	}))
	ctx := withBearer("token-acme-0123456789")
	req := evalReq("send_email", `{"to":["a@example.com"],"body":"hi"}`)
	req.MinTier, req.SessionId, req.RequestId = 3, "sess-1", "req-1"
	req.Caller.Tenant, req.Caller.EngineId, req.Caller.UserId = "someone-else", "engine-x", "u1"
	resp, err := ts.client.Evaluate(ctx, req)
	if err != nil || resp.Verdict.Decision != pb.VerdictDecision_VERDICT_DECISION_ESCALATE {
		t.Fatalf("%v %v", resp, err)
	}
	hash := resp.Verdict.ActionHash
	if _, err := ts.client.Evaluate(ctx, evalReq("read_file", `{"path":`)); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("bad JSON: %v", err)
	}
	out, err := ts.client.ReportOutcome(ctx, &pb.ReportOutcomeRequest{ActionHash: hash, SessionId: "sess-1", RequestId: "req-1",
		Outcome: "approved", DecidedBy: "bob", ApprovalId: "ap-1", ActionType: "send_email"})
	if err != nil || !out.Recorded || len(out.EntryHash) != 64 {
		t.Fatalf("ReportOutcome: %v %v", out, err)
	}
	for name, bad := range map[string]*pb.ReportOutcomeRequest{
		"unknown outcome": {ActionHash: hash, Outcome: "maybe"},
		"no hash":         {Outcome: "denied"},
	} {
		if _, err := ts.client.ReportOutcome(ctx, bad); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v", name, err)
		}
	}
	_, err = ts.client.ReportOutcome(context.Background(), &pb.ReportOutcomeRequest{ActionHash: hash, Outcome: "denied"})
	wantUnauthenticated(t, "outcome without a token", err)
	code, body := httpDo(t, http.DefaultClient, "POST", "http://"+ts.httpAddr+"/v1/outcome", "Bearer token-acme-0123456789",
		`{"action_hash":"`+hash+`","outcome":"timed_out","decided_by":"http"}`)
	if code != 200 || !strings.Contains(body, `"recorded":true`) {
		t.Fatalf("HTTP outcome: %d %s", code, body)
	}

	head, _ := log.Head()
	res, err := audit.Verify([]string{path}, "")
	if err != nil || res.Entries != 4 || res.Head != head {
		t.Fatalf("verify: %+v %v (head %s)", res, err, head)
	}
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var entries []*audit.Entry
	for _, l := range lines {
		e, err := audit.ParseLine([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	ev, bad, oc, httpOC := entries[0], entries[1], entries[2], entries[3]
	if ev.Kind != audit.KindEvaluation || ev.Tenant != "acme" || ev.Principal != "static:engine-acme" || ev.Decision != "escalate" ||
		ev.ActionHash != hash || ev.Session != "sess-1" || ev.RequestID != "req-1" || ev.Caller.Engine != "engine-x" ||
		ev.Caller.User != "u1" || ev.ActionType != "send_email" || len(ev.RuleIDs) == 0 {
		t.Errorf("evaluation entry %+v", ev)
	}
	if bad.Decision != "error" || !strings.HasPrefix(bad.Error, "InvalidArgument:") {
		t.Errorf("rejected evaluation entry %+v", bad)
	}
	if oc.Kind != audit.KindOutcome || oc.Outcome != "approved" || oc.DecidedBy != "bob" || oc.ActionHash != hash ||
		oc.Hash != out.EntryHash || oc.PrevHash != bad.Hash || oc.Tenant != "acme" {
		t.Errorf("outcome entry %+v", oc)
	}
	if httpOC.Outcome != "timeout" {
		t.Errorf("HTTP outcome entry %+v", httpOC)
	}
}

func TestAuditFailureWithholdsVerdicts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	ts := startServerWith(t, func(svc *ShieldService, _ *DaemonConfig, _ *observability.Metrics) {
		log, err := audit.Open(audit.Config{Path: path, Mode: audit.ModeAlways, MaxBytes: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { log.Close() })
		svc.Shield.Audit = log
	})
	req := evalReq("read_file", `{"path":"README.md"}`)
	if _, err := ts.client.Evaluate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	// The next line must rotate into audit-000001.jsonl; history already
	// there is never overwritten, so the write fails.
	os.WriteFile(filepath.Join(dir, "audit-000001.jsonl"), []byte("history\n"), 0o600)
	resp, err := ts.client.Evaluate(context.Background(), req)
	if status.Code(err) != codes.Unavailable || resp != nil || !strings.Contains(err.Error(), "audit log") {
		t.Fatalf("verdict answered without its audit record: %v %v", resp, err)
	}
	if _, err := ts.client.Evaluate(context.Background(), req); status.Code(err) != codes.Unavailable {
		t.Fatalf("later call after an audit failure: %v", err)
	}
	if h, _ := ts.client.Health(context.Background(), &pb.HealthRequest{}); h.Healthy {
		t.Fatal("healthy with a failed audit log")
	}
	if code, _ := httpDo(t, http.DefaultClient, "GET", "http://"+ts.httpAddr+"/healthz", "", ""); code != http.StatusServiceUnavailable {
		t.Fatalf("/healthz %d with a failed audit log", code)
	}
}
