package crawbl

import (
	"testing"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// FuzzUsage: the per-call usage the sandboxed agent reports is parsed
// strictly; whatever it sends, no event has a negative count or a
// sequence below 1, and nothing panics.
func FuzzUsage(f *testing.F) {
	f.Add(`{"sequence":1,"input_tokens":10,"output_tokens":3,"cache_read_tokens":0,"cache_write_tokens":0}`)
	f.Add(`{"sequence":-1,"input_tokens":10}`)
	f.Add(`{"sequence":1,"input_tokens":2147483647,"output_tokens":2147483647}`)
	f.Add(`{"sequence":1e3}`)
	f.Add(`[]`)
	f.Add(`{`)
	f.Fuzz(func(t *testing.T, detail string) {
		for _, u := range Usage([]*pb.Thought{{Stage: "llm_call", DetailJson: detail}}, "a", "m") {
			if u.GetCallSequence() < 1 || u.GetPromptTokens() < 0 || u.GetCompletionTokens() < 0 || u.GetTotalTokens() < 0 || u.GetCachedTokens() < 0 {
				t.Fatalf("%q gave %v", detail, u)
			}
		}
	})
}
