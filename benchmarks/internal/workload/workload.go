// Package workload turns labelled Shield cases into benchmark traffic: the
// embedded corpus (rules/corpus) by default, a case directory on request,
// and a small inline set while no corpus is available.
package workload

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"

	"github.com/parapet-dev/parapet/rules/action"
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

//go:embed inline/*.yaml
var inlineFS embed.FS

// Load reads the cases in dir, or the embedded corpus when dir is "".
// Without an embedded corpus it falls back to the inline set.
func Load(dir string) (*Workload, error) {
	if dir != "" {
		cases, err := policytest.LoadDir(dir)
		if err != nil {
			return nil, err
		}
		return build(cases, dir)
	}
	if fsys, ok := embeddedCorpus(); ok {
		cases, err := loadTree(fsys)
		if err != nil {
			return nil, fmt.Errorf("embedded corpus: %w", err)
		}
		if len(cases) > 0 {
			return build(cases, "rules/corpus (embedded)")
		}
	}
	return Inline()
}

// Inline is the built-in fallback workload.
func Inline() (*Workload, error) {
	cases, err := policytest.LoadFS(inlineFS, "inline")
	if err != nil {
		return nil, err
	}
	return build(cases, "inline fallback (benchmarks/internal/workload/inline)")
}

// loadTree loads every directory of fsys that holds case files, so the
// corpus may be split into subdirectories.
func loadTree(fsys fs.FS) ([]policytest.Case, error) {
	var dirs []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ext := path.Ext(p); !d.IsDir() && (ext == ".yaml" || ext == ".yml") {
			if dir := path.Dir(p); !slices.Contains(dirs, dir) {
				dirs = append(dirs, dir)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var all []policytest.Case
	for _, dir := range dirs {
		cases, err := policytest.LoadFS(fsys, dir)
		if err != nil {
			return nil, err
		}
		all = append(all, cases...)
	}
	return all, nil
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
