package cmd

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

func TestApprovalPrompt(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	a := &pb.ApprovalNeeded{
		ApprovalId: "appr_0123", ToolName: "execute_command", TimeoutAt: now.Add(5 * time.Minute).Unix(),
		Action: &pb.ActionRequest{PayloadJson: "{\"command\":\"git push --force\x1b]0;owned\x07\"}"},
		ShieldAssessment: &pb.Verdict{Decision: pb.VerdictDecision_VERDICT_DECISION_ESCALATE, Tier: 3,
			RuleIds: []string{"git-push-rewrite"}, Reasoning: "This push can overwrite\ncommits."},
	}
	got := approvalPrompt(a, now)
	for _, want := range []string{"execute_command", "git push --force", "ESCALATE (tier 3, git-push-rewrite)",
		"This push can overwrite commits.", "(5m0s left)", "id appr_0123"} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt lacks %q:\n%s", want, got)
		}
	}
	if strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("control characters reach the terminal: %q", got)
	}
}

func TestTermSafe(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext\nnext":       "plain\ttext\nnext",
		"\x1b[31mred\x1b[0m":      "[31mred[0m",
		"over\rwrite":             "overwrite",
		"c1 \u009b2J csi":         "c1 2J csi",
		"bell\x07 del\x7f é ü 日本": "bell del é ü 日本",
	} {
		if got := termSafe(in); got != want {
			t.Errorf("termSafe(%q) = %q, want %q", in, got, want)
		}
	}
	var b strings.Builder
	w := &termWriter{w: &b}
	if n, err := w.Write([]byte("a\x1bb")); n != 3 || err != nil || b.String() != "ab" {
		t.Errorf("termWriter: %d %v %q", n, err, b.String())
	}
}

func FuzzTermSafe(f *testing.F) {
	for _, s := range []string{"", "\x1b[2J", "a\r\nb", "\u009b\u0085", "\xff\xfe", "日本\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := termSafe(s)
		for _, r := range out {
			if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
				t.Fatalf("termSafe(%q) kept control %U", s, r)
			}
		}
		if termSafe(out) != out {
			t.Fatalf("termSafe is not idempotent on %q", s)
		}
		if l := oneLine(s, 50); strings.ContainsAny(l, "\n\r") || (utf8.ValidString(s) && !utf8.ValidString(l)) {
			t.Fatalf("oneLine(%q) = %q", s, l)
		}
	})
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/ws":      "/tmp/ws",
		"127.0.0.1:80": "127.0.0.1:80",
		"my dir":       "'my dir'",
		"it's":         `'it'\''s'`,
		"":             "''",
		"$(rm -rf ~)":  "'$(rm -rf ~)'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReadLines(t *testing.T) {
	var got []string
	for l := range readLines(strings.NewReader("one\r\ntwo\n\nlast without newline")) {
		got = append(got, l)
	}
	want := []string{"one", "two", "", "last without newline"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q, want %q", got, want)
	}
}
