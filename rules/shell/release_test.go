package shell

import "testing"

func TestReleaseReusesOnlyWhatParseMade(t *testing.T) {
	s := Parse("ls -la src && echo done")
	arg := s.Commands[0].Args[0]
	s.Release()
	// A later parse may reuse the Script; strings taken from the released
	// one keep their value.
	next := Parse("rm -rf build")
	if arg != "-la" {
		t.Errorf("a string of the released Script changed to %q", arg)
	}
	if len(next.Commands) != 1 || next.Commands[0].Program != "rm" || len(next.Commands[0].Args) != 2 {
		t.Fatalf("parse after a release: %+v", next.Commands)
	}
	if next.Pipelines != nil || next.Evasions != nil || next.ParseError != "" || next.TooDeep {
		t.Errorf("the reused Script kept state from before: %+v", next)
	}

	// A copy, or a Script made by hand, is not Parse's to reuse.
	cp := *next
	cp.Release()
	(&Script{}).Release()
	if next.Commands[0].Program != "rm" || next.Commands[0].Args[1] != "build" {
		t.Errorf("releasing a copy changed the original: %+v", next.Commands)
	}
}
