package shell

import "testing"

func TestStartIn(t *testing.T) {
	cases := []struct {
		line, start string
		want        []string // each command's Dir
	}{
		{"cat id_rsa", "~/.ssh", []string{"~/.ssh"}},
		{"cd sub && ls", "/srv/app", []string{"/srv/app", "/srv/app/sub"}}, // cd runs where the line starts
		{"cd .. && cat .aws/credentials", "/home/dev/project", []string{"/home/dev/project", "/home/dev"}},
		{"cd /etc && cat passwd", "/home/dev", []string{"/home/dev", "/etc"}},
		{"ls", "", []string{""}},
		{"ls", ".", []string{""}},
	}
	for _, c := range cases {
		s := Parse(c.line)
		s.StartIn(c.start)
		if len(s.Commands) != len(c.want) {
			t.Fatalf("%q: %d commands, want %d", c.line, len(s.Commands), len(c.want))
		}
		for i, cmd := range s.Commands {
			if cmd.Dir != c.want[i] {
				t.Errorf("%q in %q: command %d (%s) runs in %q, want %q", c.line, c.start, i, cmd.Program, cmd.Dir, c.want[i])
			}
		}
	}
	// A directory the line cannot know stays unknown.
	s := Parse(`cd "$(mktemp -d)" && rm -rf x`)
	s.StartIn("/home/dev")
	if d := s.Commands[len(s.Commands)-1].Dir; d != UnknownDir {
		t.Errorf("computed cd in a start directory: %q, want UnknownDir", d)
	}
}
