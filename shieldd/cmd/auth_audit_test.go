package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/parapet-dev/parapet/internal/proctest"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/shieldd/audit"
	"github.com/parapet-dev/parapet/shieldd/auth"
)

func TestTokenMintVerifyRoundTrip(t *testing.T) {
	dir := t.TempDir()
	keyFile := writeFile(t, dir, "key", "a shared key of enough bytes\n")
	code, out, errOut := run(t, "token", "mint", "--key-file", keyFile, "--user", "alice", "--workspace", "ws-1")
	if code != 0 {
		t.Fatalf("mint: exit %d %s", code, errOut)
	}
	tok := strings.TrimSpace(out)
	h, err := auth.NewHMAC([]byte("a shared key of enough bytes")) // the newline is not part of the key
	if err != nil {
		t.Fatal(err)
	}
	if user, ws, err := h.Verify(tok); err != nil || user != "alice" || ws != "ws-1" {
		t.Fatalf("minted token: %s %s %v", user, ws, err)
	}
	if code, out, _ := run(t, "token", "verify", "--key-file", keyFile, tok); code != 0 || !strings.Contains(out, "user alice, workspace ws-1") {
		t.Fatalf("verify: exit %d %q", code, out)
	}
	old := time.Now().Add(-time.Hour).Unix()
	_, out, _ = run(t, "token", "mint", "--key-file", keyFile, "--user", "alice", "--workspace", "ws-1", "--time", strconv.FormatInt(old, 10))
	if code, _, errOut := run(t, "token", "verify", "--key-file", keyFile, strings.TrimSpace(out)); code != 1 || !strings.Contains(errOut, "expired") {
		t.Fatalf("verify of an hour-old token: exit %d %q", code, errOut)
	}
	if code, _, errOut := run(t, "token", "mint", "--user", "a", "--workspace", "w"); code != 2 || !strings.Contains(errOut, hmacKeyEnv) {
		t.Fatalf("mint without a key: exit %d %q", code, errOut)
	}
}

func TestAuditVerifyCommand(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l, err := audit.Open(audit.Config{Path: path, MaxBytes: 1500})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := l.Append(&audit.Entry{Kind: audit.KindEvaluation, Tenant: "acme", Decision: "allow", RequestID: strconv.Itoa(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	head, _ := l.Head()
	l.Close()
	rotated, _ := audit.RotatedFiles(path)
	files := append(rotated, path)
	if len(rotated) == 0 {
		t.Fatal("no rotation happened")
	}
	code, out, _ := run(t, append([]string{"audit", "verify"}, files...)...)
	if code != 0 || out != "OK: 10 entries, head "+head+"\n" {
		t.Fatalf("exit %d %q", code, out)
	}
	// Out of order: the active file before the rotated ones.
	code, out, _ = run(t, append([]string{"audit", "verify", path}, rotated...)...)
	if code != 1 || !strings.HasPrefix(out, path+":1: ") {
		t.Fatalf("files out of order: exit %d %q", code, out)
	}
	// A changed field in the middle of the second file.
	b, _ := os.ReadFile(rotated[len(rotated)-1])
	os.WriteFile(rotated[len(rotated)-1], bytes.Replace(b, []byte(`"tenant":"acme"`), []byte(`"tenant":"evil"`), 1), 0o600)
	code, out, _ = run(t, append([]string{"audit", "verify"}, files...)...)
	if code != 1 || !regexp.MustCompile(regexp.QuoteMeta(rotated[len(rotated)-1])+`:1: entry_hash does not match`).MatchString(out) {
		t.Fatalf("tampered: exit %d %q", code, out)
	}
	if code, _, _ := run(t, "audit", "verify"); code != 2 {
		t.Fatalf("no files: exit %d", code)
	}
}

func TestServeRefusesAuthNoneOffLoopback(t *testing.T) {
	code, _, errOut := run(t, "serve", "--grpc-addr", "0.0.0.0:0", "--http-addr", "off")
	if code != 2 || !strings.Contains(errOut, "--auth none is only allowed") {
		t.Fatalf("exit %d %q", code, errOut)
	}
	code, _, errOut = run(t, "serve", "--auth", "static", "--grpc-addr", "127.0.0.1:0", "--http-addr", "off")
	if code != 2 || !strings.Contains(errOut, "tokens file") {
		t.Fatalf("static without a file: exit %d %q", code, errOut)
	}
}

// TestServeWithHMACTenantsAndAudit runs the real serve command with
// authentication, a tenant policy and the audit log, then verifies the
// log it wrote.
func TestServeWithHMACTenantsAndAudit(t *testing.T) {
	dir := t.TempDir()
	keyFile := writeFile(t, dir, "key", "a shared key of enough bytes")
	polDir := filepath.Join(dir, "tenants")
	os.Mkdir(polDir, 0o700)
	writeFile(t, polDir, "ws-strict.yaml", "version: 1\nname: ws-strict\ndeny:\n  - id: strict.no-reads\n    match:\n      action: [read_file]\n")
	auditFile := filepath.Join(dir, "audit", "audit.jsonl")

	var stderr proctest.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- RunContext(ctx, []string{"shieldd", "serve", "--grpc-addr", "127.0.0.1:0", "--http-addr", "off",
			"--auth", "hmac", "--auth-hmac-key-file", keyFile, "--tenant-policy-dir", polDir,
			"--audit-file", auditFile, "--audit-mode", "batch", "--audit-batch-window", "1ms"}, &bytes.Buffer{}, &stderr)
	}()
	re := regexp.MustCompile(`grpc=(127\.0\.0\.1:\d+)`)
	var addr string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && addr == ""; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		cancel()
		t.Fatalf("serve did not report its address:\n%s", stderr.String())
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pb.NewShieldServiceClient(conn)
	req := &pb.EvaluateRequest{ActionType: "read_file", PayloadJson: `{"path":"README.md"}`, Caller: &pb.CallerContext{WorkspaceRoot: "/w"}}
	key := []byte("a shared key of enough bytes")
	verdict := func(ws string) pb.VerdictDecision {
		tok, _ := auth.Mint(key, "alice", ws, time.Now())
		resp, err := client.Evaluate(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok), req)
		if err != nil {
			t.Fatalf("%s: %v", ws, err)
		}
		return resp.Verdict.Decision
	}
	if d := verdict("ws-strict"); d != pb.VerdictDecision_VERDICT_DECISION_BLOCK {
		t.Errorf("tenant ws-strict: %s", d)
	}
	if d := verdict("ws-other"); d != pb.VerdictDecision_VERDICT_DECISION_ALLOW {
		t.Errorf("tenant ws-other: %s", d)
	}
	if _, err := client.Evaluate(ctx, req); status.Code(err) != codes.Unauthenticated {
		t.Errorf("no token: %v", err)
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
	// Closing flushed the batch: both verdicts are in the chain.
	code, out, _ := run(t, "audit", "verify", auditFile)
	if code != 0 || !strings.HasPrefix(out, "OK: 2 entries") {
		t.Fatalf("audit verify: exit %d %q", code, out)
	}
	if !strings.Contains(stderr.String(), "authentication failed") {
		t.Errorf("the failed authentication was not logged:\n%s", stderr.String())
	}
}
