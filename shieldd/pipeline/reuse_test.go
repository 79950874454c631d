package pipeline

import (
	"context"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/corpus"
	"github.com/parapet-dev/parapet/rules/policytest"
)

// Uncached decisions reuse their Actions (action.Release). Decided from
// several goroutines at once, in a different order each, every corpus
// action must get exactly the verdict it gets alone, read once all the
// decisions are done: long after its action was reused, so that a
// verdict sharing memory with its action would show it.
func TestReusedActionsDoNotLeakBetweenDecisions(t *testing.T) {
	cases, err := policytest.LoadFS(corpus.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	var inputs []Input
	for _, c := range cases {
		inputs = append(inputs, Input{Request: c.Request, MinTier: c.MinTier})
	}
	p, err := New(Config{CacheSize: -1}) // the embedded default policy, no cache
	if err != nil {
		t.Fatal(err)
	}
	want := make([]*pb.Verdict, len(inputs))
	wantErr := make([]string, len(inputs))
	for i, in := range inputs {
		v, err := p.Evaluate(context.Background(), in)
		if err != nil {
			wantErr[i] = err.Error()
			continue
		}
		want[i] = withoutTimes(v)
	}

	const workers = 6
	var wg sync.WaitGroup
	got := make([][]*pb.Verdict, workers)
	for w := range workers {
		got[w] = make([]*pb.Verdict, len(inputs))
		wg.Go(func() {
			for k := range inputs {
				i := (k*(w+1) + w) % len(inputs) // a different order per worker
				v, err := p.Evaluate(context.Background(), inputs[i])
				if (err != nil) != (wantErr[i] != "") {
					t.Errorf("%s %s: error %v, alone %q", inputs[i].Request.Type, inputs[i].Request.Payload, err, wantErr[i])
					continue
				}
				if v != nil {
					got[w][i] = v // compared after every worker is done
				}
			}
		})
	}
	wg.Wait()
	for w := range workers {
		for i, v := range got[w] {
			if v == nil || want[i] == nil {
				continue
			}
			if v := withoutTimes(v); !proto.Equal(v, want[i]) {
				t.Errorf("worker %d, %s %s:\n got %v\nwant %v", w, inputs[i].Request.Type, inputs[i].Request.Payload, v, want[i])
			}
		}
	}
}

// withoutTimes is a copy of v without the fields that depend on when it
// was made.
func withoutTimes(v *pb.Verdict) *pb.Verdict {
	c := proto.Clone(v).(*pb.Verdict)
	c.EvaluatedAt, c.ExpiresAt = 0, 0
	return c
}
