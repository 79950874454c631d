package action

import (
	"strings"
	"testing"
)

func TestIsHexHash(t *testing.T) {
	a, err := Canonicalize(Request{Type: "read_file", Payload: []byte(`{"path":"a.txt"}`)}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !IsHexHash(a.HashHex()) {
		t.Fatalf("HashHex %q is not accepted", a.HashHex())
	}
	for _, bad := range []string{"", strings.Repeat("a", 63), strings.Repeat("a", 65), strings.Repeat("A", 64), strings.Repeat("g", 64), strings.Repeat("a", 63) + " "} {
		if IsHexHash(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}
