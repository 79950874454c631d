package auth

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/shieldd/auth/authtest"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

func bearer(tok string) Credentials { return Credentials{Authorization: "Bearer " + tok} }

func reason(err error) string {
	var ae *Error
	if errors.As(err, &ae) {
		return ae.Reason
	}
	return ""
}

func TestHMACMintVerifyRoundTrip(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	h, err := NewHMAC(testKey)
	if err != nil {
		t.Fatal(err)
	}
	h.Now = func() time.Time { return now }
	tok, err := Mint(testKey, "alice", "ws-1", now.Add(-4*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	// The crawbl HMAC bearer token format, built independently of the code under test.
	payload := base64.RawURLEncoding.EncodeToString([]byte("alice:ws-1:1799999760"))
	if !strings.HasPrefix(tok, payload+".") {
		t.Fatalf("token %s does not start with %s.", tok, payload)
	}
	id, err := h.Authenticate(bearer(tok))
	if err != nil {
		t.Fatal(err)
	}
	if id.User != "alice" || id.Workspace != "ws-1" || id.Tenant != "ws-1" || id.Principal() != "hmac:alice" {
		t.Fatalf("identity %+v", id)
	}

	sig := tok[strings.IndexByte(tok, '.')+1:]
	other, _ := Mint([]byte("another key, also long enough"), "alice", "ws-1", now)
	expired, _ := Mint(testKey, "alice", "ws-1", now.Add(-6*time.Minute))
	future, _ := Mint(testKey, "alice", "ws-1", now.Add(6*time.Minute))
	forged := base64.RawURLEncoding.EncodeToString([]byte("mallory:ws-1:1800000000")) + "." + sig
	flipped := tok[:len(tok)-1] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", tok[len(tok)-1])+1)%16])
	for name, tc := range map[string]struct {
		c      Credentials
		reason string
	}{
		"missing":         {Credentials{}, ReasonMissing},
		"not bearer":      {Credentials{Authorization: "Basic " + tok}, ReasonMalformed},
		"no dot":          {bearer(payload), ReasonMalformed},
		"short signature": {bearer(payload + ".abcd"), ReasonMalformed},
		"wrong key":       {bearer(other), ReasonBadSignature},
		"tampered user":   {bearer(forged), ReasonBadSignature},
		"flipped sig":     {bearer(flipped), ReasonBadSignature},
		"expired":         {bearer(expired), ReasonExpired},
		"from the future": {bearer(future), ReasonExpired},
		"two headers":     {Credentials{Authorization: "multiple"}, ReasonMalformed},
	} {
		if _, err := h.Authenticate(tc.c); reason(err) != tc.reason {
			t.Errorf("%s: got %v, want reason %s", name, err, tc.reason)
		}
	}
}

func TestHMACRejectsWeakKeysAndBadNames(t *testing.T) {
	if _, err := NewHMAC([]byte("short")); err == nil {
		t.Fatal("a 5-byte key was accepted")
	}
	if _, err := Mint(testKey, "a:b", "w", time.Now()); err == nil {
		t.Fatal("a user with ':' was minted")
	}
	// A validly signed payload that is not user:workspace:time is refused.
	h, _ := NewHMAC(testKey)
	for _, p := range []string{"alice:ws", "alice:ws:x", ":ws:1", "alice:ws:-1", "alice:ws:+1", "a:b:c:1"} {
		payload := base64.RawURLEncoding.EncodeToString([]byte(p))
		tok := payload + "." + hex.EncodeToString(h.mac(payload))
		if _, _, err := h.Verify(tok); reason(err) != ReasonMalformed {
			t.Errorf("payload %q: %v", p, err)
		}
	}
}

func FuzzHMACToken(f *testing.F) {
	h, _ := NewHMAC(testKey)
	now := time.Unix(1_800_000_000, 0)
	h.Now = func() time.Time { return now }
	good, _ := Mint(testKey, "alice", "ws", now)
	f.Add(good)
	f.Add("")
	f.Add(".")
	f.Add(strings.Repeat("a", 64) + "." + strings.Repeat("0", 64))
	f.Fuzz(func(t *testing.T, tok string) {
		user, ws, err := h.Verify(tok)
		if err != nil {
			if reason(err) == "" {
				t.Fatalf("error without a reason: %v", err)
			}
			return
		}
		// Whatever verifies must be exactly what we would mint (the
		// signature's hex case aside).
		payload, sig, _ := strings.Cut(tok, ".")
		raw, _ := base64.RawURLEncoding.DecodeString(payload)
		parts := strings.Split(string(raw), ":")
		if parts[0] != user || parts[1] != ws || !strings.EqualFold(sig, hex.EncodeToString(h.mac(payload))) {
			t.Fatalf("verified %q as %s/%s", tok, user, ws)
		}
	})
}

func writeTokens(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStaticTokens(t *testing.T) {
	sum := sha256.Sum256([]byte("hashed-token-0123456789"))
	path := writeTokens(t, `tokens:
  - name: engine-a
    tenant: acme
    token: plain-token-0123456789
  - name: engine-b
    sha256: `+hex.EncodeToString(sum[:])+`
    workspace: w-b
`)
	s, err := LoadStaticTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := s.Authenticate(bearer("plain-token-0123456789")); err != nil || id.Tenant != "acme" || id.Principal() != "static:engine-a" {
		t.Fatalf("%+v %v", id, err)
	}
	if id, err := s.Authenticate(bearer("hashed-token-0123456789")); err != nil || id.Tenant != "engine-b" || id.Workspace != "w-b" {
		t.Fatalf("%+v %v", id, err)
	}
	for _, c := range []Credentials{bearer("plain-token-012345678"), bearer(""), {}} {
		if _, err := s.Authenticate(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}

	// Reload swaps the tokens; a broken file keeps the old ones.
	os.WriteFile(path, []byte("tokens:\n  - name: engine-c\n    token: new-token-0123456789\n"), 0o600)
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(bearer("plain-token-0123456789")); err == nil {
		t.Fatal("a removed token still works after reload")
	}
	os.WriteFile(path, []byte("tokens:\n  - name: x\n    tokn: typo-0123456789abcdef\n"), 0o600)
	if err := s.Reload(); err == nil || !strings.Contains(err.Error(), "tokn") {
		t.Fatalf("broken reload: %v", err)
	}
	if _, err := s.Authenticate(bearer("new-token-0123456789")); err != nil {
		t.Fatalf("the old tokens were dropped by a failed reload: %v", err)
	}
}

func TestStaticTokensFileErrors(t *testing.T) {
	for body, want := range map[string]string{
		"tokens: []\n": "no tokens",
		"tokens:\n  - name: a\n    token: short\n":                                                              "at least 16",
		"tokens:\n  - token: long-enough-token-123\n":                                                           "name is required",
		"tokens:\n  - name: a\n    token: long-enough-token-123\n  - name: a\n    token: other-token-1234567\n": "twice",
		"tokens:\n  - name: a\n    sha256: abc\n":                                                               "64 hex",
	} {
		if _, err := LoadStaticTokens(writeTokens(t, body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", body, err, want)
		}
	}
}

func TestMTLSIdentity(t *testing.T) {
	ca := authtest.NewCA(t, "clients")
	other := authtest.NewCA(t, "someone else")
	dir := t.TempDir()
	m, err := NewMTLS(ca.WriteCA(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	chain := func(c interface {
		Issue(testing.TB, authtest.Leaf)
	}) {
	}
	_ = chain
	certs := func(l authtest.Leaf, by *authtest.CA) Credentials {
		c := by.Issue(t, l)
		return Credentials{PeerCertificates: []*x509.Certificate{c.Leaf}}
	}
	id, err := m.Authenticate(certs(authtest.Leaf{CN: "engine-1", Organization: "acme"}, ca))
	if err != nil || id.Subject != "engine-1" || id.Tenant != "acme" {
		t.Fatalf("%+v %v", id, err)
	}
	id, err = m.Authenticate(certs(authtest.Leaf{CN: "x", URI: "spiffe://example.org/engine/2"}, ca))
	if err != nil || id.Subject != "spiffe://example.org/engine/2" || id.Tenant != id.Subject {
		t.Fatalf("%+v %v", id, err)
	}
	for name, c := range map[string]Credentials{
		"none":       {},
		"other CA":   certs(authtest.Leaf{CN: "engine-1"}, other),
		"expired":    certs(authtest.Leaf{CN: "engine-1", Expired: true}, ca),
		"server EKU": certs(authtest.Leaf{CN: "engine-1", Server: true}, ca),
	} {
		if _, err := m.Authenticate(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
