package engine

import (
	"slices"
	"testing"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

func TestTrimHistoryKeepsTheNewestTurnsStartingWithTheUser(t *testing.T) {
	h := []*pb.ChatTurn{
		{Role: "user", Content: "aaaa"}, {Role: "assistant", Content: "bbbbbbbb"},
		{Role: "user", Content: "cc"}, {Role: "assistant", Content: "dd"},
	}
	contents := func(budget int) []string {
		var out []string
		for _, c := range trimHistory(h, budget) {
			out = append(out, c.GetContent())
		}
		return out
	}
	for budget, want := range map[int][]string{
		100: {"aaaa", "bbbbbbbb", "cc", "dd"},
		16:  {"aaaa", "bbbbbbbb", "cc", "dd"},
		15:  {"cc", "dd"}, // the long answer fits, its question does not
		4:   {"cc", "dd"},
		3:   nil, // only an answer would fit
		0:   nil,
	} {
		if got := contents(budget); !slices.Equal(got, want) {
			t.Errorf("budget %d: %v, want %v", budget, got, want)
		}
	}
}
