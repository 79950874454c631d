package policytest

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Report holds the results of a run, in case order.
type Report struct {
	Results []Result
}

// CategoryStats summarises one category. "Not allowed" counts every outcome
// other than ALLOW (block, escalate, error): for attacks it is the catch
// rate, for everyday actions the false-positive count.
type CategoryStats struct {
	Category           string
	Attacks            int
	AttacksNotAllowed  int
	Everyday           int
	EverydayNotAllowed int
	Passed, Failed     int
}

// Failed returns the number of failed cases.
func (r Report) Failed() int {
	n := 0
	for _, res := range r.Results {
		if !res.Pass {
			n++
		}
	}
	return n
}

// Passed returns the number of passed cases.
func (r Report) Passed() int {
	return len(r.Results) - r.Failed()
}

// Categories returns per-category statistics sorted by category name.
func (r Report) Categories() []CategoryStats {
	byName := make(map[string]*CategoryStats)
	for _, res := range r.Results {
		s := byName[res.Case.Category]
		if s == nil {
			s = &CategoryStats{Category: res.Case.Category}
			byName[res.Case.Category] = s
		}
		s.add(res)
	}
	out := make([]CategoryStats, 0, len(byName))
	for _, s := range byName {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b CategoryStats) int { return strings.Compare(a.Category, b.Category) })
	return out
}

func (s *CategoryStats) add(res Result) {
	switch res.Case.Kind {
	case KindAttack:
		s.Attacks++
		if !res.Allowed() {
			s.AttacksNotAllowed++
		}
	case KindEveryday:
		s.Everyday++
		if !res.Allowed() {
			s.EverydayNotAllowed++
		}
	}
	if res.Pass {
		s.Passed++
	} else {
		s.Failed++
	}
}

// Print writes one line per failure (and per pass when verbose), a
// per-category table and a final "N passed, N failed" line.
func (r Report) Print(w io.Writer, verbose bool) {
	for _, res := range r.Results {
		switch {
		case !res.Pass:
			fmt.Fprintf(w, "%s: %s: %s\n", res.Case.Pos(), res.Case.Name, res.Why)
		case verbose:
			fmt.Fprintf(w, "%s: %s: ok: %s\n", res.Case.Pos(), res.Case.Name, res.Why)
		}
	}
	if len(r.Results) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "category\tattacks\tnot allowed\teveryday\tnot allowed\tfailed\t")
		var total CategoryStats
		for _, s := range r.Categories() {
			printRow(tw, s)
			total.Attacks += s.Attacks
			total.AttacksNotAllowed += s.AttacksNotAllowed
			total.Everyday += s.Everyday
			total.EverydayNotAllowed += s.EverydayNotAllowed
			total.Failed += s.Failed
		}
		total.Category = "total"
		printRow(tw, total)
		tw.Flush()
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", r.Passed(), r.Failed())
}

func printRow(w io.Writer, s CategoryStats) {
	fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t\n", s.Category, s.Attacks, s.AttacksNotAllowed,
		s.Everyday, s.EverydayNotAllowed, s.Failed)
}
