package benchmarks

import (
	"context"
	"testing"

	"github.com/parapet-dev/parapet/internal/worstcase"
	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
)

// BenchmarkWorstCaseShapes times one uncached evaluation of each
// worst-case command shape (internal/worstcase) at the largest payload
// shieldd accepts (512 KiB): long argument lists, deep nesting, many
// substitutions, encoding layers, long pipelines, … The target is
// cpu-ns/op <= 50 ms for every shape; the figure is reported, not
// asserted (benchmarks/README.md has the measured values).
func BenchmarkWorstCaseShapes(b *testing.B) {
	p := newPipeline(b, cacheOff, false)
	caller := action.Caller{WorkspaceRoot: "/home/dev/project", Home: "/home/dev"}
	for _, s := range worstcase.All(worstcase.MaxPayload) {
		in := pipeline.Input{Request: action.Request{Type: "execute_command", Payload: s.Payload, Caller: caller}}
		b.Run(s.Name, func(b *testing.B) {
			b.SetBytes(int64(len(s.Payload)))
			cpu := processCPU(b)
			for b.Loop() {
				if _, err := p.Evaluate(context.Background(), in); err != nil {
					b.Fatalf("%s: %v", s.Name, err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}
