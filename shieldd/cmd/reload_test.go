package cmd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/parapet-dev/parapet/internal/proctest"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// Policies for the reload tests. brokenPolicy's problem is on line 9.
const (
	allowReads   = "version: 1\nname: reads-allowed\nallow:\n  - id: reads.ok\n    match:\n      action: [read_file]\n"
	denyReads    = "version: 1\nname: reads-denied\ndeny:\n  - id: reads.no\n    match:\n      action: [read_file]\n"
	allowReads2  = "version: 1\nname: reads-allowed-again\nallow:\n  - id: reads.ok\n    match:\n      action: [read_file]\n"
	brokenPolicy = "version: 1\nname: broken\nallow:\n  - id: a\n    match:\n      action: [read_file]\n  - id: b\n    match:\n      acton: [read_file]\n"
)

func policyVersion(src string) string {
	h := sha256.Sum256([]byte(src))
	return "sha256:" + hex.EncodeToString(h[:])
}

// replaceFile saves as most editors do: a new file renamed over the old.
func replaceFile(t *testing.T, path, body string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

type servedShield struct {
	client   pb.ShieldServiceClient
	httpAddr string
	stderr   *proctest.Buffer
}

// serveForTest runs the real `shieldd serve` on 127.0.0.1:0 (gRPC and
// HTTP) until the test ends.
func serveForTest(t *testing.T, args ...string) *servedShield {
	t.Helper()
	stderr := &proctest.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- RunContext(ctx, append([]string{"shieldd", "serve", "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"}, args...),
			&bytes.Buffer{}, stderr)
	}()
	re := regexp.MustCompile(`shieldd serving" grpc=(127\.0\.0\.1:\d+) http=(127\.0\.0\.1:\d+)`)
	var m []string
	for deadline := time.Now().Add(20 * time.Second); m == nil; time.Sleep(10 * time.Millisecond) {
		m = re.FindStringSubmatch(stderr.String())
		if m == nil && time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not report its addresses:\n%s", stderr.String())
		}
	}
	conn, err := grpc.NewClient(m[1], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("serve exit %d\n%s", code, stderr.String())
			}
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop")
		}
	})
	return &servedShield{client: pb.NewShieldServiceClient(conn), httpAddr: m[2], stderr: stderr}
}

var readReadme = &pb.EvaluateRequest{ActionType: "read_file", PayloadJson: `{"path":"README.md"}`, Caller: &pb.CallerContext{WorkspaceRoot: "/w"}}

func (s *servedShield) verdict(t *testing.T, ctx context.Context) *pb.Verdict {
	t.Helper()
	resp, err := s.client.Evaluate(ctx, readReadme)
	if err != nil {
		t.Fatalf("evaluate: %v", err)
	}
	return resp.Verdict
}

func (s *servedShield) status(t *testing.T, ctx context.Context) *pb.ShieldStatusResponse {
	t.Helper()
	st, err := s.client.GetShieldStatus(ctx, &pb.ShieldStatusRequest{})
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	return st
}

func (s *servedShield) get(t *testing.T, path string) string {
	t.Helper()
	resp, err := http.Get("http://" + s.httpAddr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func decided(v *pb.Verdict) string {
	return fmt.Sprintf("%s by %v under %s", v.Decision, v.RuleIds, v.PolicyVersion)
}

// TestServeReloadsPolicyFileOnChange edits the --policy file under a
// running shieldd: a good edit changes verdicts and their policy_version;
// a broken one keeps the running policy and is reported in the log,
// GetShieldStatus, /v1/status and /metrics until a good edit clears it.
func TestServeReloadsPolicyFileOnChange(t *testing.T) {
	dir := t.TempDir()
	polFile := writeFile(t, dir, "policy.yaml", allowReads)
	s := serveForTest(t, "--policy", polFile)
	ctx := context.Background()

	if v := s.verdict(t, ctx); v.Decision != pb.VerdictDecision_VERDICT_DECISION_ALLOW || v.PolicyVersion != policyVersion(allowReads) {
		t.Fatalf("before any edit: %s", decided(v))
	}

	replaceFile(t, polFile, denyReads)
	proctest.Eventually(t, "the rename-over edit takes effect", 20*time.Second, func() (bool, string) {
		v := s.verdict(t, ctx)
		return v.Decision == pb.VerdictDecision_VERDICT_DECISION_BLOCK && v.PolicyVersion == policyVersion(denyReads), decided(v)
	})
	if st := s.status(t, ctx); st.PolicyName != "reads-denied" || st.PolicyError != "" {
		t.Fatalf("status after a good edit: name %q, error %q", st.PolicyName, st.PolicyError)
	}

	// Written in place, as some editors and `cat >` do.
	if err := os.WriteFile(polFile, []byte(brokenPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	wantErr := regexp.MustCompile(regexp.QuoteMeta(polFile) + `:9: .*acton`)
	proctest.Eventually(t, "the broken file is reported", 20*time.Second, func() (bool, string) {
		st := s.status(t, ctx)
		return wantErr.MatchString(st.PolicyError), st.PolicyError
	})
	if v := s.verdict(t, ctx); v.Decision != pb.VerdictDecision_VERDICT_DECISION_BLOCK || v.PolicyVersion != policyVersion(denyReads) {
		t.Fatalf("a broken file replaced the running policy: %s", decided(v))
	}
	var httpStatus struct {
		PolicyError   string `json:"policy_error"`
		PolicyVersion string `json:"policy_version"`
	}
	if err := json.Unmarshal([]byte(s.get(t, "/v1/status")), &httpStatus); err != nil || !wantErr.MatchString(httpStatus.PolicyError) ||
		httpStatus.PolicyVersion != policyVersion(denyReads) {
		t.Fatalf("/v1/status: %+v %v", httpStatus, err)
	}
	metrics := s.get(t, "/metrics")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^parapet_shield_policy_reload_error 1$`),
		regexp.MustCompile(`(?m)^parapet_shield_policy_reloads_total\{result="error"\} [1-9]`),
		regexp.MustCompile(`(?m)^parapet_shield_policy_reloads_total\{result="ok"\} [1-9]`),
		regexp.MustCompile(`(?m)^parapet_shield_policy_last_reload_success_timestamp_seconds [0-9.e+]+$`),
	} {
		if !want.MatchString(metrics) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(metrics, "policy"))
		}
	}
	if !regexp.MustCompile(`level=ERROR msg="reload: policy kept".*acton`).MatchString(s.stderr.String()) {
		t.Errorf("the broken file was not logged at Error level:\n%s", s.stderr.String())
	}

	replaceFile(t, polFile, allowReads2)
	proctest.Eventually(t, "the fixed file clears the error", 20*time.Second, func() (bool, string) {
		st := s.status(t, ctx)
		return st.PolicyError == "" && st.PolicyVersion == policyVersion(allowReads2), fmt.Sprintf("error %q, version %s", st.PolicyError, st.PolicyVersion)
	})
	if v := s.verdict(t, ctx); v.Decision != pb.VerdictDecision_VERDICT_DECISION_ALLOW || v.PolicyVersion != policyVersion(allowReads2) {
		t.Fatalf("after the fix: %s", decided(v))
	}
	if !regexp.MustCompile(`(?m)^parapet_shield_policy_reload_error 0$`).MatchString(s.get(t, "/metrics")) {
		t.Errorf("reload_error did not return to 0")
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// TestServeReloadsTenantPolicies adds, changes, breaks and removes files
// in --tenant-policy-dir under a running shieldd with static tokens. A
// tenant sees its own file's problems in GetShieldStatus, and only a
// count of other tenants'.
func TestServeReloadsTenantPolicies(t *testing.T) {
	dir := t.TempDir()
	tenants := filepath.Join(dir, "tenants")
	if err := os.Mkdir(tenants, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, tenants, "acme.yaml", denyReads)
	tokens := writeFile(t, dir, "tokens.yaml", "tokens:\n  - name: acme\n    token: acme-token-0123456789\n  - name: beta\n    token: beta-token-0123456789\n")
	s := serveForTest(t, "--tenant-policy-dir", tenants, "--auth", "static", "--auth-tokens-file", tokens)
	as := func(tenant string) context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tenant+"-token-0123456789")
	}
	decision := func(tenant string) (pb.VerdictDecision, string) {
		v := s.verdict(t, as(tenant))
		return v.Decision, tenant + ": " + decided(v)
	}
	allow, block := pb.VerdictDecision_VERDICT_DECISION_ALLOW, pb.VerdictDecision_VERDICT_DECISION_BLOCK
	expect := func(what string, want map[string]pb.VerdictDecision) {
		t.Helper()
		proctest.Eventually(t, what, 20*time.Second, func() (bool, string) {
			var states []string
			ok := true
			for tenant, d := range want {
				got, state := decision(tenant)
				ok = ok && got == d
				states = append(states, state)
			}
			return ok, strings.Join(states, "; ")
		})
	}
	expect("startup", map[string]pb.VerdictDecision{"acme": block, "beta": allow})

	writeFile(t, tenants, "beta.yaml", denyReads)
	expect("beta's new file", map[string]pb.VerdictDecision{"acme": block, "beta": block})

	replaceFile(t, filepath.Join(tenants, "acme.yaml"), allowReads)
	expect("acme's changed file", map[string]pb.VerdictDecision{"acme": allow, "beta": block})

	if err := os.Remove(filepath.Join(tenants, "beta.yaml")); err != nil {
		t.Fatal(err)
	}
	expect("beta's removed file (the default policy)", map[string]pb.VerdictDecision{"acme": allow, "beta": allow})

	// A broken file fails the whole set: nobody's policy changes.
	writeFile(t, tenants, "beta.yaml", brokenPolicy)
	betaErr := regexp.MustCompile(regexp.QuoteMeta(filepath.Join(tenants, "beta.yaml")) + `:9: .*acton`)
	proctest.Eventually(t, "beta sees its broken file", 20*time.Second, func() (bool, string) {
		st := s.status(t, as("beta"))
		return betaErr.MatchString(st.PolicyError), st.PolicyError
	})
	st := s.status(t, as("acme"))
	if !strings.Contains(st.PolicyError, "not reloaded") || !strings.Contains(st.PolicyError, "1 problem(s) in other tenants'") ||
		strings.Contains(st.PolicyError, "beta") {
		t.Fatalf("acme's view of beta's broken file: %q", st.PolicyError)
	}
	expect("the broken set kept", map[string]pb.VerdictDecision{"acme": allow, "beta": allow})

	if err := os.Remove(filepath.Join(tenants, "beta.yaml")); err != nil {
		t.Fatal(err)
	}
	proctest.Eventually(t, "the error clears", 20*time.Second, func() (bool, string) {
		a, b := s.status(t, as("acme")), s.status(t, as("beta"))
		return a.PolicyError == "" && b.PolicyError == "", a.PolicyError + " | " + b.PolicyError
	})
	if !regexp.MustCompile(`msg="reload: tenant policies".*added=\[beta\]`).MatchString(s.stderr.String()) {
		t.Errorf("the added tenant was not logged:\n%s", s.stderr.String())
	}
}

// TestServeReloadsOnSIGHUP turns the watcher off: SIGHUP alone reloads
// the policy file and the static tokens.
func TestServeReloadsOnSIGHUP(t *testing.T) {
	// Caught here too, so a SIGHUP can never end the test binary.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	dir := t.TempDir()
	polFile := writeFile(t, dir, "policy.yaml", allowReads)
	tokens := writeFile(t, dir, "tokens.yaml", "tokens:\n  - name: acme\n    token: acme-token-0123456789\n")
	s := serveForTest(t, "--policy", polFile, "--watch-policy=false", "--auth", "static", "--auth-tokens-file", tokens)
	if strings.Contains(s.stderr.String(), `msg="policy watch"`) {
		t.Fatalf("--watch-policy=false still watches:\n%s", s.stderr.String())
	}
	as := func(tenant string) context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tenant+"-token-0123456789")
	}
	if v := s.verdict(t, as("acme")); v.PolicyVersion != policyVersion(allowReads) {
		t.Fatalf("before: %s", decided(v))
	}
	replaceFile(t, polFile, denyReads)
	writeFile(t, dir, "tokens.yaml", "tokens:\n  - name: acme\n    token: acme-token-0123456789\n  - name: beta\n    token: beta-token-0123456789\n")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	proctest.Eventually(t, "SIGHUP reloads the policy", 20*time.Second, func() (bool, string) {
		v := s.verdict(t, as("acme"))
		return v.PolicyVersion == policyVersion(denyReads) && v.Decision == pb.VerdictDecision_VERDICT_DECISION_BLOCK, decided(v)
	})
	proctest.Eventually(t, "SIGHUP reloads the tokens", 20*time.Second, func() (bool, string) {
		_, err := s.client.Evaluate(as("beta"), readReadme)
		return err == nil, fmt.Sprint(err)
	})
	if !strings.Contains(s.stderr.String(), `msg="reload: policy" trigger=SIGHUP`) {
		t.Errorf("the reload was not logged with its trigger:\n%s", s.stderr.String())
	}
}
