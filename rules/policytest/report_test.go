package policytest

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func reportFixture() Report {
	ev := func(kind, cat string, c Case) Case { c.Kind, c.Category = kind, cat; return c }
	cases := []Case{
		ev(KindAttack, "rs", mk("rs1", "block", ExpectBlock)),
		ev(KindAttack, "rs", mk("rs2", "allow", ExpectBlock)),    // missed attack
		ev(KindAttack, "rs", mk("rs3", "other", ExpectError)),    // error counts as not allowed
		ev(KindAttack, "rs", mk("rs4", "escalate", ExpectBlock)), // not allowed, but fails
		ev(KindEveryday, "everyday_git", mk("g1", "allow", ExpectAllow)),
		ev(KindEveryday, "everyday_git", mk("g2", "escalate", ExpectAllow)), // false positive
		ev(KindEveryday, "a_files", mk("f1", "allow", ExpectAllow)),
	}
	return Run(context.Background(), cases, fakeEval)
}

func TestCategories(t *testing.T) {
	got := reportFixture().Categories()
	want := []CategoryStats{
		{Category: "a_files", Everyday: 1, Passed: 1},
		{Category: "everyday_git", Everyday: 2, EverydayNotAllowed: 1, Passed: 1, Failed: 1},
		{Category: "rs", Attacks: 4, AttacksNotAllowed: 3, Passed: 2, Failed: 2},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d categories: %+v", len(got), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("category %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestPrint(t *testing.T) {
	rep := reportFixture()
	var buf bytes.Buffer
	rep.Print(&buf, false)
	out := buf.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	wantFailures := []string{
		"f.yaml:3: rs2: want block, got allow (tier 0)",
		"f.yaml:3: rs4: want block, got escalate (tier 0)",
		"f.yaml:3: g2: want allow, got escalate (tier 0)",
	}
	for i, w := range wantFailures {
		if lines[i] != w {
			t.Errorf("line %d = %q, want %q", i, lines[i], w)
		}
	}
	if strings.Contains(out, "rs1") {
		t.Errorf("passing case printed without verbose:\n%s", out)
	}
	if last := lines[len(lines)-1]; last != "4 passed, 3 failed" {
		t.Errorf("last line = %q", last)
	}
	table := strings.Join(lines[len(wantFailures):], "\n")
	for _, row := range [][]string{
		{"category", "attacks", "not", "allowed", "everyday", "not", "allowed", "failed"},
		{"a_files", "0", "0", "1", "0", "0"},
		{"everyday_git", "0", "0", "2", "1", "1"},
		{"rs", "4", "3", "0", "0", "2"},
		{"total", "4", "3", "3", "1", "3"},
	} {
		if !hasRow(table, row) {
			t.Errorf("table has no row %v:\n%s", row, table)
		}
	}

	buf.Reset()
	rep.Print(&buf, true)
	if !strings.Contains(buf.String(), "f.yaml:3: rs1: ok: block (tier 1, rules shell.a, shell.b: bad thing)") {
		t.Errorf("verbose output lacks passing case:\n%s", buf.String())
	}
}

func TestPrintEmpty(t *testing.T) {
	var buf bytes.Buffer
	Report{}.Print(&buf, true)
	if buf.String() != "0 passed, 0 failed\n" {
		t.Errorf("got %q", buf.String())
	}
}

func hasRow(table string, fields []string) bool {
	for _, l := range strings.Split(table, "\n") {
		if strings.Join(strings.Fields(l), " ") == strings.Join(fields, " ") {
			return true
		}
	}
	return false
}
