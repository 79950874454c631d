package engine_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parapet-dev/parapet/engine"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// FuzzSubAgentExecuteTool: whatever a sub-agent sends (token, call id,
// tool name, arguments), a sub-agent given only read-only tools changes
// nothing in the workspace, a tool outside its set is refused before the
// gate, and a wrong token is Unauthenticated. The engine stays up.
func FuzzSubAgentExecuteTool(f *testing.F) {
	for _, s := range []struct{ token, id, tool, args string }{
		{"", "c1", "read_file", `{"path":"a.txt"}`},
		{"", "c2", "list_directory", `{}`},
		{"", "c3", "execute_command", `{"command":"touch x"}`},
		{"", "c4", "write_file", `{"path":"x","content":"y"}`},
		{"", "c5", "spawn_agent", `{"name":"a","task":"b"}`},
		{"", "c6", "load_tools", `{"groups":["shell"]}`},
		{"", "\x00", "read_file", `{"path":"../../etc/passwd"}`},
		{"nope", "c7", "read_file", `{"path":"a.txt"}`},
		{"", strings.Repeat("x", 200), "read_file", `{"path":"a.txt"}`},
		{"", "c8", "read_file", `{"path":"a.txt","path":"b"}`},
	} {
		f.Add(s.token, s.id, s.tool, s.args)
	}
	// Escalations are denied at once: a call waiting for a human would
	// hold the fuzzer for the approval timeout.
	h := newSubHarness(f, func(c *engine.Config) { c.Approver = engine.FixedApprover{} })
	if err := os.WriteFile(h.ws+"/a.txt", []byte("hello\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	a, _, p := h.startTurn(f, context.Background(), engine.Message{Content: "delegate"})
	a.send(f, proposal(p.GetSessionId(), p.GetMessageId(), "m1", "spawn_agent", spawnArgs("reader", "read_file", "list_directory")))
	proc := h.nextProc(f)
	h.register(f, proc)
	before := dirNames(f, h.ws)
	allowed := []string{"read_file", "list_directory"}

	f.Fuzz(func(t *testing.T, token, id, tool, args string) {
		for _, s := range []string{token, id, tool, args} {
			if !utf8.ValidString(s) {
				t.Skip("proto strings are UTF-8: the client cannot send this")
			}
		}
		if token == "" {
			token = proc.spec.Token
		}
		r, err := proc.sub().SubAgentExecuteTool(context.Background(), &pb.SubAgentToolRequest{Token: token, CallId: id, ToolName: tool, ArgumentsJson: args})
		switch {
		case token != proc.spec.Token:
			if status.Code(err) != codes.Unauthenticated {
				t.Fatalf("wrong token %q: %v", token, err)
			}
		case err != nil:
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("call %q %q: %v", id, tool, err)
			}
		case !slices.Contains(allowed, tool):
			if !r.GetIsError() || !strings.Contains(r.GetContent(), "not one of this sub-agent's tools") {
				t.Fatalf("tool %q outside the set: %+v", tool, r)
			}
		}
		if after := dirNames(t, h.ws); !slices.Equal(after, before) {
			t.Fatalf("the workspace changed: %v → %v", before, after)
		}
	})
}

func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
