// Command verdictsnap writes the shield's verdict on a fixed set of
// actions, one JSON line each, so that two builds can be compared: a
// change meant to make the judge faster must leave every line the same.
//
//	go run ./benchmarks/verdictsnap > after.jsonl   # on the change
//	git stash; go run ./benchmarks/verdictsnap > before.jsonl; git stash pop
//	diff before.jsonl after.jsonl
//
// The actions: every case of the corpus (rules/corpus, or -corpus DIR),
// each command case again in a few everyday wrappings (a cd before it, a
// pipe after it, inside bash -c, in a subshell), and the worst-case shapes
// at 4 KiB and 64 KiB. Verdicts are uncached, on the embedded default
// policy; times are left out.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/parapet-dev/parapet/benchmarks/internal/workload"
	"github.com/parapet-dev/parapet/internal/worstcase"
	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
)

func main() {
	dir := flag.String("corpus", "", "directory of case files (default: the embedded corpus)")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "verdictsnap:", err)
		os.Exit(1)
	}
}

// line is one action's verdict.
type line struct {
	Name    string `json:"name"`
	Verdict any    `json:"verdict,omitempty"`
	Error   string `json:"error,omitempty"`
}

func run(dir string) error {
	wl, err := workload.Load(dir)
	if err != nil {
		return err
	}
	p, err := pipeline.New(pipeline.Config{CacheSize: -1})
	if err != nil {
		return err
	}
	out := json.NewEncoder(os.Stdout)
	judge := func(name string, in pipeline.Input) error {
		l := line{Name: name}
		v, err := p.Evaluate(context.Background(), in)
		if err != nil {
			l.Error = err.Error()
		} else {
			v.EvaluatedAt, v.ExpiresAt, v.CacheHit = 0, 0, false
			l.Verdict = v
		}
		return out.Encode(l)
	}
	for _, it := range wl.Items {
		in := pipeline.Input{Request: it.Request, MinTier: it.MinTier}
		if err := judge(it.Name, in); err != nil {
			return err
		}
		if it.Request.Type != "execute_command" {
			continue
		}
		var args map[string]any
		if json.Unmarshal(it.Request.Payload, &args) != nil {
			continue
		}
		cmd, ok := args["command"].(string)
		if !ok {
			continue
		}
		for i, wrap := range []string{"cd src && %s", "%s | cat", "bash -c %s", "( %s )"} {
			c := fmt.Sprintf(wrap, cmd)
			if strings.HasPrefix(wrap, "bash -c") {
				c = fmt.Sprintf(wrap, "'"+strings.ReplaceAll(cmd, "'", `'\''`)+"'")
			}
			args["command"] = c
			payload, _ := json.Marshal(args)
			r := it.Request
			r.Payload = payload
			if err := judge(fmt.Sprintf("%s/wrap%d", it.Name, i), pipeline.Input{Request: r, MinTier: it.MinTier}); err != nil {
				return err
			}
		}
	}
	for _, size := range []int{4 << 10, 64 << 10} {
		for _, s := range worstcase.All(size) {
			r := action.Request{Type: "execute_command", Payload: s.Payload}
			if err := judge(fmt.Sprintf("worstcase/%s/%d", s.Name, size), pipeline.Input{Request: r}); err != nil {
				return err
			}
		}
	}
	return nil
}
