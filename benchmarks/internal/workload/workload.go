// Package workload turns labelled Shield cases into benchmark traffic: the
// embedded corpus (rules/corpus) by default, or a case directory.
package workload

import (
	"fmt"

	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/corpus"
	"github.com/parapet-dev/parapet/rules/policytest"
)

// Item is one action to send.
type Item struct {
	Name    string
	Request action.Request
	MinTier int32
}

// Workload is the actions a benchmark replays, in a fixed order.
type Workload struct {
	Items []Item
	// Source says where the items came from, for reports.
	Source string
	// Skipped counts cases left out because they expect an error: they
	// would turn every pass into error responses, which the load generator
	// reports as failures.
	Skipped int
}

// Load reads the cases in dir, or the embedded corpus when dir is "".
func Load(dir string) (*Workload, error) {
	if dir != "" {
		cases, err := policytest.LoadDir(dir)
		if err != nil {
			return nil, err
		}
		return build(cases, dir)
	}
	cases, err := policytest.LoadFS(corpus.FS, ".")
	if err != nil {
		return nil, fmt.Errorf("embedded corpus: %w", err)
	}
	return build(cases, "rules/corpus (embedded)")
}

func build(cases []policytest.Case, source string) (*Workload, error) {
	w := &Workload{Source: source}
	for _, c := range cases {
		if c.Expect == policytest.ExpectError {
			w.Skipped++
			continue
		}
		w.Items = append(w.Items, Item{Name: c.Name, Request: c.Request, MinTier: c.MinTier})
	}
	if len(w.Items) == 0 {
		return nil, fmt.Errorf("%s: no usable cases (%d expect an error)", source, w.Skipped)
	}
	return w, nil
}
