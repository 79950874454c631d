package cmd

import (
	"bufio"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/engine"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

func TestTerminalApprover(t *testing.T) {
	req := engine.ApprovalRequest{ToolName: "execute_command", ArgumentsJSON: `{"command":"git push --force"}`,
		Verdict: &pb.Verdict{Reasoning: "force push"}}
	for _, tc := range []struct {
		answer   string
		approved bool
	}{{"y\n", true}, {"YES\n", true}, {"n\n", false}, {"\n", false}, {"maybe\n", false}} {
		var prompt strings.Builder
		a := &terminalApprover{in: bufio.NewReader(strings.NewReader(tc.answer)), out: &prompt}
		res := a.Approve(context.Background(), req)
		if res.Approved != tc.approved || res.By != "cli" {
			t.Errorf("answer %q: %+v", tc.answer, res)
		}
		if !strings.Contains(prompt.String(), "git push --force") || !strings.Contains(prompt.String(), "force push") {
			t.Errorf("prompt does not show the action and the reason: %q", prompt.String())
		}
	}
	// No answer before the deadline: denied as a timeout.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	a := &terminalApprover{in: bufio.NewReader(r), out: &strings.Builder{}}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if res := a.Approve(ctx, req); res.Approved || res.Outcome != pb.OutcomeTimeout {
		t.Errorf("unanswered: %+v", res)
	}
}

func TestEscalationApproverModes(t *testing.T) {
	f, err := os.Open(os.DevNull) // not a terminal
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if a, err := escalationApprover("", f, os.Stderr); err != nil || a != (engine.FixedApprover{}) {
		t.Errorf("headless default: %v %v, want deny", a, err)
	}
	if a, err := escalationApprover("allow", f, os.Stderr); err != nil || a != (engine.FixedApprover{Allow: true}) {
		t.Errorf("allow: %v %v", a, err)
	}
	if _, err := escalationApprover("ask", f, os.Stderr); err == nil {
		t.Error("ask without a terminal accepted")
	}
	if _, err := escalationApprover("sometimes", f, os.Stderr); err == nil {
		t.Error("unknown mode accepted")
	}
}
