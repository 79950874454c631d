package server

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/parapet-dev/parapet/observability"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/shieldd/auth"
	"github.com/parapet-dev/parapet/shieldd/auth/authtest"
	"github.com/parapet-dev/parapet/shieldd/shield"
)

const unauthenticatedMsg = "authentication required: missing or invalid credentials"

func withGuard(a auth.Authenticator, tlsCfg *tls.Config) func(*ShieldService, *DaemonConfig, *observability.Metrics) {
	return func(_ *ShieldService, cfg *DaemonConfig, m *observability.Metrics) {
		fails, err := auth.NewFailureCounter(m.Registry)
		if err != nil {
			panic(err)
		}
		cfg.Guard = &auth.Guard{Auth: a, Failures: fails}
		cfg.TLS = tlsCfg
	}
}

func dial(t *testing.T, addr string, creds credentials.TransportCredentials) *grpc.ClientConn {
	t.Helper()
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func withBearer(tok string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
}

// wantUnauthenticated checks the one fixed answer to every failure.
func wantUnauthenticated(t *testing.T, what string, err error) {
	t.Helper()
	if status.Code(err) != codes.Unauthenticated || status.Convert(err).Message() != unauthenticatedMsg {
		t.Errorf("%s: got %v; want Unauthenticated %q", what, err, unauthenticatedMsg)
	}
}

// checkOpenServices: health, ShieldService.Health and reflection answer
// without credentials.
func checkOpenServices(t *testing.T, conn *grpc.ClientConn) {
	t.Helper()
	ctx := context.Background()
	if hc, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || hc.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("grpc.health without credentials: %v %v", hc, err)
	}
	if h, err := pb.NewShieldServiceClient(conn).Health(ctx, &pb.HealthRequest{}); err != nil || !h.Healthy {
		t.Fatalf("ShieldService.Health without credentials: %v %v", h, err)
	}
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err == nil {
		err = stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}})
	}
	if err == nil {
		_, err = stream.Recv()
	}
	if err != nil {
		t.Fatalf("reflection without credentials: %v", err)
	}
}

func httpDo(t *testing.T, client *http.Client, method, url, authz, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const readmeReq = `{"action_type":"read_file","payload_json":"{\"path\":\"README.md\"}","caller":{"workspace_root":"/w"}}`

func TestAuthNoneOnlyOnLoopback(t *testing.T) {
	p := startServer(t).svc.Shield.Pipeline
	for _, cfg := range []DaemonConfig{
		{GRPCAddr: "0.0.0.0:0"},
		{GRPCAddr: "127.0.0.1:0", HTTPAddr: "0.0.0.0:0"},
	} {
		d, err := Listen(NewService(&shield.Shield{Pipeline: p}), cfg)
		if err == nil || !strings.Contains(err.Error(), "--auth none is only allowed") || !strings.Contains(err.Error(), "loopback") {
			if d != nil {
				d.closeListeners()
			}
			t.Fatalf("%+v: got %v; want a refusal naming loopback", cfg, err)
		}
	}
}

func TestAuthStaticTokens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.yaml")
	os.WriteFile(path, []byte("tokens:\n  - name: engine-a\n    tenant: acme\n    token: token-a-0123456789abcdef\n"), 0o600)
	tokens, err := auth.LoadStaticTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	ts := startServerWith(t, withGuard(tokens, nil))
	client := pb.NewShieldServiceClient(ts.conn)
	req := evalReq("read_file", `{"path":"README.md"}`)
	if _, err := client.Evaluate(withBearer("token-a-0123456789abcdef"), req); err != nil {
		t.Fatalf("good token: %v", err)
	}
	_, err = client.Evaluate(context.Background(), req)
	wantUnauthenticated(t, "no token", err)
	_, err = client.Evaluate(withBearer("token-b-0123456789abcdef"), req)
	wantUnauthenticated(t, "unknown token", err)
	_, err = client.GetShieldStatus(context.Background(), &pb.ShieldStatusRequest{})
	wantUnauthenticated(t, "status without token", err)
	// Streams are checked when they open.
	stream, err := client.EvaluateStream(context.Background())
	if err == nil {
		_, err = stream.Recv()
	}
	wantUnauthenticated(t, "stream without token", err)
	checkOpenServices(t, ts.conn)

	// HTTP mirror: the same check, 401.
	base := "http://" + ts.httpAddr
	if code, body := httpDo(t, http.DefaultClient, "POST", base+"/v1/evaluate", "", readmeReq); code != 401 || !strings.Contains(body, unauthenticatedMsg) {
		t.Fatalf("HTTP without token: %d %s", code, body)
	}
	if code, body := httpDo(t, http.DefaultClient, "POST", base+"/v1/evaluate", "Bearer token-a-0123456789abcdef", readmeReq); code != 200 {
		t.Fatalf("HTTP with token: %d %s", code, body)
	}
	for _, open := range []string{"/healthz", "/readyz", "/metrics"} {
		if code, _ := httpDo(t, http.DefaultClient, "GET", base+open, "", ""); code != 200 {
			t.Errorf("%s: %d without credentials", open, code)
		}
	}
	_, metrics := httpDo(t, http.DefaultClient, "GET", base+"/metrics", "", "")
	if !strings.Contains(metrics, `parapet_shield_auth_failures_total{reason="unknown_token"} 1`) {
		t.Errorf("auth failures not counted:\n%s", grepLines(metrics, "auth_failures"))
	}

	// Reload: a new token works, the removed one no longer does.
	os.WriteFile(path, []byte("tokens:\n  - name: engine-a\n    tenant: acme\n    token: token-c-0123456789abcdef\n"), 0o600)
	if err := tokens.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Evaluate(withBearer("token-c-0123456789abcdef"), req); err != nil {
		t.Fatalf("reloaded token: %v", err)
	}
	_, err = client.Evaluate(withBearer("token-a-0123456789abcdef"), req)
	wantUnauthenticated(t, "removed token", err)
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

var hmacKey = []byte("a shared key of enough bytes")

func TestAuthHMAC(t *testing.T) {
	h, err := auth.NewHMAC(hmacKey)
	if err != nil {
		t.Fatal(err)
	}
	ts := startServerWith(t, withGuard(h, nil))
	client := pb.NewShieldServiceClient(ts.conn)
	req := evalReq("read_file", `{"path":"README.md"}`)
	good, _ := auth.Mint(hmacKey, "alice", "ws-1", time.Now())
	if _, err := client.Evaluate(withBearer(good), req); err != nil {
		t.Fatalf("good token: %v", err)
	}
	expired, _ := auth.Mint(hmacKey, "alice", "ws-1", time.Now().Add(-10*time.Minute))
	otherKey, _ := auth.Mint([]byte("some other key, long enough"), "alice", "ws-1", time.Now())
	payload, sig, _ := strings.Cut(good, ".")
	mallory, _ := auth.Mint(hmacKey, "mallory", "ws-1", time.Now())
	malloryPayload, _, _ := strings.Cut(mallory, ".")
	for name, tok := range map[string]string{
		"expired":            expired,
		"wrong key":          otherKey,
		"tampered payload":   malloryPayload + "." + sig,
		"tampered signature": payload + "." + strings.Repeat("0", 64),
		"garbage":            "not-a-token",
	} {
		_, err := client.Evaluate(withBearer(tok), req)
		wantUnauthenticated(t, name, err)
	}
	_, err = client.Evaluate(context.Background(), req)
	wantUnauthenticated(t, "missing", err)
	// A streaming call with a good token gets past authentication.
	stream, err := client.EvaluateStream(withBearer(good))
	if err == nil {
		req.RequestId = "streamed"
		err = stream.Send(req)
	}
	var answer *pb.EvaluateStreamResponse
	if err == nil {
		answer, err = stream.Recv()
	}
	if err != nil || answer.GetVerdict() == nil {
		t.Fatalf("authenticated stream: %v %v", answer, err)
	}
	checkOpenServices(t, ts.conn)
}

func TestAuthMTLS(t *testing.T) {
	dir := t.TempDir()
	ca := authtest.NewCA(t, "shieldd clients")
	serverCA := authtest.NewCA(t, "shieldd server")
	certFile, keyFile := authtest.WriteFiles(t, dir, "server", serverCA.Issue(t, authtest.Leaf{CN: "shieldd", Server: true}))
	a, tlsCfg, err := auth.New(auth.Config{Mode: auth.ModeMTLS, ClientCAFile: ca.WriteCA(t, dir), TLSCertFile: certFile, TLSKeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	ts := startServerWith(t, withGuard(a, tlsCfg))

	clientTLS := func(certs ...tls.Certificate) *tls.Config {
		return &tls.Config{RootCAs: serverCA.Pool(), Certificates: certs, ServerName: "127.0.0.1"}
	}
	req := evalReq("read_file", `{"path":"README.md"}`)
	good := ca.Issue(t, authtest.Leaf{CN: "engine-1", Organization: "acme"})
	conn := dial(t, ts.grpcAddr, credentials.NewTLS(clientTLS(good)))
	if _, err := pb.NewShieldServiceClient(conn).Evaluate(context.Background(), req); err != nil {
		t.Fatalf("good client certificate: %v", err)
	}
	// A certificate whose signature was altered (the client still holds
	// the key, so the TLS handshake itself succeeds).
	tampered := ca.Issue(t, authtest.Leaf{CN: "engine-1", Organization: "acme"})
	der := append([]byte(nil), tampered.Certificate[0]...)
	der[len(der)-1] ^= 0x01
	tampered.Certificate, tampered.Leaf = [][]byte{der}, nil
	for name, certs := range map[string][]tls.Certificate{
		"tampered":        {tampered},
		"no certificate":  nil,
		"other CA":        {authtest.NewCA(t, "mallory").Issue(t, authtest.Leaf{CN: "engine-1", Organization: "acme"})},
		"expired":         {ca.Issue(t, authtest.Leaf{CN: "engine-1", Expired: true})},
		"server-only EKU": {ca.Issue(t, authtest.Leaf{CN: "engine-1", Server: true})},
	} {
		c := dial(t, ts.grpcAddr, credentials.NewTLS(clientTLS(certs...)))
		_, err := pb.NewShieldServiceClient(c).Evaluate(context.Background(), req)
		wantUnauthenticated(t, name, err)
	}
	// Health needs TLS but no client certificate.
	checkOpenServices(t, dial(t, ts.grpcAddr, credentials.NewTLS(clientTLS())))

	// HTTPS mirror.
	httpsClient := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS(certs...)}}
	}
	base := "https://" + ts.httpAddr
	if code, body := httpDo(t, httpsClient(good), "POST", base+"/v1/evaluate", "", readmeReq); code != 200 {
		t.Fatalf("HTTPS with a client certificate: %d %s", code, body)
	}
	if code, body := httpDo(t, httpsClient(), "POST", base+"/v1/evaluate", "", readmeReq); code != 401 {
		t.Fatalf("HTTPS without a client certificate: %d %s", code, body)
	}
	if code, _ := httpDo(t, httpsClient(), "GET", base+"/healthz", "", ""); code != 200 {
		t.Fatalf("HTTPS health without a client certificate: %d", code)
	}
}
