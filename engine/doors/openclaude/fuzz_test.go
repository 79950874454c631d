package openclaude

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// FuzzWorkingDir: whatever a client sends as working_directory, an
// accepted one is inside the workspace, and the answer never panics.
func FuzzWorkingDir(f *testing.F) {
	ws := f.TempDir()
	outside := f.TempDir()
	for _, d := range []string{"sub", "sub/deeper"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(ws, "sub", "escape")); err != nil {
		f.Fatal(err)
	}
	s, err := New(Options{Engine: nilEngine{}, Workspace: ws})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{"", ".", "sub", "sub/deeper", "sub/escape", "../", "/", ws, outside, ws + "/../x", "sub/../..", "\x00", "sub//deeper/."} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, dir string) {
		rel, err := s.workingDir(dir)
		if err != nil {
			return
		}
		if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
			t.Fatalf("%q accepted as %q", dir, rel)
		}
		real, err := filepath.EvalSymlinks(filepath.Join(s.root, rel))
		if err != nil || !strings.HasPrefix(real+"/", s.root+"/") {
			t.Fatalf("%q accepted as %q, which is %q", dir, rel, real)
		}
	})
}

// FuzzTranslate: a tool call's arguments_json (the model's, untrusted)
// and ids reach the client unchanged in a message that marshals.
func FuzzTranslate(f *testing.F) {
	f.Add("execute_command", `{"command":"ls"}`, "msg_1.1")
	f.Add("", `{`, "")
	f.Add("read_file", "\"\\u0000\"", "x\ny")
	f.Fuzz(func(t *testing.T, tool, args, id string) {
		ev := &pb.PipelineEvent{EventType: pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTIONS_PLANNED,
			ActionsPlanned: &pb.ActionsPlanned{Actions: []*pb.ActionRequest{{RequestId: id, PayloadJson: args, Payload: map[string]string{"tool_name": tool}}}}}
		if _, err := proto.Marshal(ev); err != nil {
			return // not a string gRPC could have delivered (invalid UTF-8)
		}
		m := Translate(ev)
		st := m.GetToolStart()
		if st.GetArgumentsJson() != args || st.GetToolUseId() != id || st.GetToolName() != tool {
			t.Fatalf("tool_start %v from %q %q %q", st, tool, args, id)
		}
		if _, err := proto.Marshal(m); err != nil {
			t.Fatal(err)
		}
	})
}
