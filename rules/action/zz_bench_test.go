package action

import "testing"

func BenchmarkCanonSimple(b *testing.B) {
	req := Request{Type: "read_file", Payload: []byte(`{"path":"./web/package.json"}`), Caller: testCaller}
	b.ReportAllocs()
	for b.Loop() {
		Canonicalize(req, Limits{})
	}
}
