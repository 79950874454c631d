package shell

import (
	"reflect"
	"testing"
)

func cmdOf(t *testing.T, src string) Command {
	t.Helper()
	s := Parse(src)
	if len(s.Commands) == 0 {
		t.Fatalf("%q: no commands", src)
	}
	return s.Commands[0]
}

func TestHasFlag(t *testing.T) {
	tests := []struct {
		src   string
		short byte
		long  string
		want  bool
	}{
		{"rm -rf /", 'r', "recursive", true},
		{"rm -rf /", 'f', "force", true},
		{"rm -fr /", 'r', "", true},
		{"rm -R x", 'r', "recursive", false},
		{"rm --recursive x", 'r', "recursive", true},
		{"rm --recursive=yes x", 0, "recursive", true},
		{"rm --recursively x", 'r', "recursive", false},
		{"rm x -r", 'r', "", true},
		{"rm -- -r", 'r', "recursive", false},
		{"rm x", 'r', "recursive", false},
		{"rm - x", 'r', "", false},
		{"git push --force", 'f', "force", true},
		{"git push --force-with-lease", 'f', "force", false},
		{"curl -fsSL x", 's', "silent", true},
		{"curl -fsSL x", 'o', "output", false},
	}
	for _, tt := range tests {
		c := cmdOf(t, tt.src)
		if got := c.HasFlag(tt.short, tt.long); got != tt.want {
			t.Errorf("%q HasFlag(%q, %q) = %v, want %v", tt.src, tt.short, tt.long, got, tt.want)
		}
	}
}

func TestOperands(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{"rm -rf a b", []string{"a", "b"}},
		{"rm -- -a b", []string{"-a", "b"}},
		{"cat - f", []string{"-", "f"}},
		{"ls", nil},
		{"ls -la", nil},
		{"cp --force src dst", []string{"src", "dst"}},
	}
	for _, tt := range tests {
		c := cmdOf(t, tt.src)
		if got := c.Operands(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q Operands() = %q, want %q", tt.src, got, tt.want)
		}
	}
}

func TestFlagValue(t *testing.T) {
	tests := []struct {
		src, short, long string
		want             string
		ok               bool
	}{
		{"curl -o out x", "o", "output", "out", true},
		{"curl -oout x", "o", "output", "out", true},
		{"curl --output out x", "o", "output", "out", true},
		{"curl --output=out x", "o", "output", "out", true},
		{"tar -xzf a.tgz", "f", "file", "a.tgz", true},
		{"curl -d @/etc/passwd x", "d", "data", "@/etc/passwd", true},
		{"curl x", "o", "output", "", false},
		{"curl -o", "o", "", "", false},
		{"curl -- -o x", "o", "output", "", false},
		{"git commit -m msg", "m", "message", "msg", true},
	}
	for _, tt := range tests {
		c := cmdOf(t, tt.src)
		got, ok := c.FlagValue(tt.short, tt.long)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%q FlagValue(%q, %q) = %q, %v; want %q, %v", tt.src, tt.short, tt.long, got, ok, tt.want, tt.ok)
		}
	}
}
