package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// DefaultHMACSkew is how far a token's time may be from the server's.
const DefaultHMACSkew = 5 * time.Minute

// MinHMACKeyBytes is the shortest shared key accepted.
const MinHMACKeyBytes = 16

// maxTokenBytes bounds what is hashed for one call.
const maxTokenBytes = 4096

var b64 = base64.RawURLEncoding.Strict()

// HMAC authenticates the crawbl bearer token:
//
//	base64url_nopad("<user>:<workspace>:<unix seconds>") "." hex(HMAC-SHA256(key, first part))
//
// The token is valid within Skew of its time. The identity's user and
// workspace come from the token; the tenant is the workspace.
type HMAC struct {
	key  []byte
	Skew time.Duration
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// NewHMAC returns an authenticator for tokens signed with key.
func NewHMAC(key []byte) (*HMAC, error) {
	if len(key) < MinHMACKeyBytes {
		return nil, fmt.Errorf("the HMAC key is %d bytes; at least %d are needed", len(key), MinHMACKeyBytes)
	}
	return &HMAC{key: append([]byte(nil), key...), Skew: DefaultHMACSkew, Now: time.Now}, nil
}

// LoadHMACKey reads the shared key from file, or else from the environment
// variable env. A trailing newline in the file is not part of the key.
func LoadHMACKey(file, env string) ([]byte, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("HMAC key: %w", err)
		}
		return []byte(strings.TrimRight(string(b), "\r\n")), nil
	}
	if v := os.Getenv(env); v != "" {
		return []byte(v), nil
	}
	return nil, fmt.Errorf("HMAC key: give a key file, or set %s", env)
}

// Mode implements Authenticator.
func (h *HMAC) Mode() string { return ModeHMAC }

// Authenticate implements Authenticator.
func (h *HMAC) Authenticate(c Credentials) (Identity, error) {
	tok, err := c.bearer()
	if err != nil {
		return Identity{}, err
	}
	user, ws, err := h.Verify(tok)
	if err != nil {
		return Identity{}, err
	}
	return Identity{Method: ModeHMAC, Subject: user, Tenant: ws, User: user, Workspace: ws}, nil
}

// Verify checks a token and returns its user and workspace. The signature
// is checked, in constant time, before anything in the token is parsed.
func (h *HMAC) Verify(token string) (user, workspace string, err error) {
	if len(token) > maxTokenBytes {
		return "", "", fail(ReasonMalformed, "token longer than %d bytes", maxTokenBytes)
	}
	payload, sigHex, ok := strings.Cut(token, ".")
	if !ok || payload == "" || len(sigHex) != 2*sha256.Size {
		return "", "", fail(ReasonMalformed, "token is not <payload>.<64 hex digits>")
	}
	sig, err := hex.DecodeString(sigHex)
	if err != nil {
		return "", "", fail(ReasonMalformed, "signature is not hex")
	}
	if !hmac.Equal(sig, h.mac(payload)) {
		return "", "", fail(ReasonBadSignature, "signature does not match")
	}
	user, workspace, issued, err := parsePayload(payload)
	if err != nil {
		return "", "", fail(ReasonMalformed, "%v", err)
	}
	now := h.Now()
	skew := h.Skew
	if skew <= 0 {
		skew = DefaultHMACSkew
	}
	if d := now.Sub(issued); d > skew || d < -skew {
		return "", "", fail(ReasonExpired, "token time %s is %s from the server's clock (limit ±%s)",
			issued.UTC().Format(time.RFC3339), d.Round(time.Second), skew)
	}
	return user, workspace, nil
}

func (h *HMAC) mac(payload string) []byte {
	m := hmac.New(sha256.New, h.key)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// parsePayload decodes "<user>:<workspace>:<unix seconds>".
func parsePayload(payload string) (user, workspace string, issued time.Time, err error) {
	raw, err := b64.DecodeString(payload)
	if err != nil {
		return "", "", time.Time{}, errors.New("payload is not unpadded base64url")
	}
	parts := strings.Split(string(raw), ":")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		return "", "", time.Time{}, errors.New("payload is not <user>:<workspace>:<unix seconds>")
	}
	secs, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || parts[2][0] == '+' || secs < 0 {
		return "", "", time.Time{}, errors.New("token time is not unix seconds")
	}
	return parts[0], parts[1], time.Unix(secs, 0), nil
}

// Mint makes a token for user and workspace at time t.
func Mint(key []byte, user, workspace string, t time.Time) (string, error) {
	if user == "" || workspace == "" {
		return "", errors.New("user and workspace are required")
	}
	if strings.Contains(user, ":") || strings.Contains(workspace, ":") {
		return "", errors.New("user and workspace may not contain ':'")
	}
	if len(key) < MinHMACKeyBytes {
		return "", fmt.Errorf("the HMAC key is %d bytes; at least %d are needed", len(key), MinHMACKeyBytes)
	}
	payload := b64.EncodeToString([]byte(user + ":" + workspace + ":" + strconv.FormatInt(t.Unix(), 10)))
	h := &HMAC{key: key}
	return payload + "." + hex.EncodeToString(h.mac(payload)), nil
}
