package engine

import (
	"context"
	"testing"

	"google.golang.org/grpc/metadata"
)

// FuzzClientTokenOK: ClientService lets a call in only when its metadata
// holds exactly one authorization value, "Bearer " and the token.
func FuzzClientTokenOK(f *testing.F) {
	const tok = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
	for _, s := range []string{"Bearer " + tok, tok, "Bearer " + tok[:63], "Bearer  " + tok, "bearer " + tok, "Bearer " + tok + "\x00", ""} {
		f.Add(s, "")
		f.Add(s, "Bearer "+tok)
	}
	e := &Engine{cfg: Config{ClientToken: tok}}
	f.Fuzz(func(t *testing.T, first, second string) {
		md := metadata.MD{}
		if first != "" {
			md.Append(ClientAuthKey, first)
		}
		if second != "" {
			md.Append(ClientAuthKey, second)
		}
		ok := e.clientTokenOK(metadata.NewIncomingContext(context.Background(), md))
		want := len(md.Get(ClientAuthKey)) == 1 && md.Get(ClientAuthKey)[0] == "Bearer "+tok
		if ok != want {
			t.Fatalf("clientTokenOK = %v for %q", ok, md.Get(ClientAuthKey))
		}
	})
	if (&Engine{}).clientTokenOK(metadata.NewIncomingContext(context.Background(), metadata.Pairs(ClientAuthKey, "Bearer "))) {
		f.Fatal("an engine without a token let a call in")
	}
}
