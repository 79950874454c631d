package shell

import (
	"reflect"
	"sort"
	"testing"
)

func evasionKinds(s *Script) []string {
	var kinds []string
	seen := map[string]bool{}
	for _, e := range s.Evasions {
		if !seen[e.Kind] {
			seen[e.Kind] = true
			kinds = append(kinds, e.Kind)
		}
	}
	sort.Strings(kinds)
	return kinds
}

func TestEvasionsDetected(t *testing.T) {
	tests := []struct {
		src     string
		kinds   []string
		program string // Program of the first command
	}{
		{"r''m -rf /", []string{"quote-split"}, "rm"},
		{`r""m -rf /`, []string{"quote-split"}, "rm"},
		{`r"m" -rf /`, []string{"quote-split"}, "rm"},
		{`"r"m -rf /`, []string{"quote-split"}, "rm"},
		{`\r\m -rf /`, []string{"quote-split"}, "rm"},
		{`r\m -rf /`, []string{"quote-split"}, "rm"},
		{"c'u'rl x", []string{"quote-split"}, "curl"},
		{"sudo c'u'rl x", []string{"quote-split"}, "sudo"},
		{"cat${IFS}/etc/passwd", []string{"ifs"}, "cat"},
		{"cat$IFS/etc/passwd", []string{"ifs"}, "cat"},
		{`$'\x72\x6d' -rf /`, []string{"ansi-c-escape"}, "rm"},
		{`$'\162\155' -rf /`, []string{"ansi-c-escape"}, "rm"},
		{`echo $'\u0063at'`, []string{"ansi-c-escape"}, "echo"},
		{"$CMD -rf /", []string{"variable-program"}, ""},
		{"${SHELL} -c id", []string{"variable-program"}, ""},
		// A known value is still a hidden program name, and is judged as
		// the program it names.
		{"$(echo rm) -rf /", []string{"variable-program"}, "rm"},
		{"`echo rm` -rf /", []string{"variable-program"}, "rm"},
		{"X=rm; $X -rf /", []string{"variable-program"}, ""},
		{`"$X" y`, []string{"variable-program"}, ""},
		{"/???/r? -rf /", []string{"glob-program"}, ""},
		{"/bin/c*t /etc/passwd", []string{"glob-program"}, ""},
		{"{rm,-rf,/}", []string{"brace-expansion"}, "rm"},
		{"bash -c \"bash -c \\\"bash -c 'bash -c \\\\\\\"bash -c id\\\\\\\"'\\\"\"", []string{"too-deep"}, "bash"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			s := Parse(tt.src)
			if got := evasionKinds(s); !reflect.DeepEqual(got, tt.kinds) {
				t.Errorf("evasions %v (%+v), want %v", got, s.Evasions, tt.kinds)
			}
			if len(s.Commands) == 0 || s.Commands[0].Program != tt.program {
				t.Errorf("commands %q, want first Program %q", summaries(s), tt.program)
			}
		})
	}
}

func TestEvasionsNotDetectedOnOrdinaryCommands(t *testing.T) {
	ordinary := []string{
		`git commit -m "fix: quote 'x'"`,
		`npm run build -- --flag="a b"`,
		"rm -rf node_modules",
		"find . -name '*.go' -delete",
		"docker build -t app:1 .",
		"git status",
		"ls -la src",
		"go test ./...",
		`grep -rn "TODO" --include='*.go' .`,
		`echo "$HOME" '$PATH' "${USER}"`,
		`printf $'line1\nline2\t\x1b[31mred\x1b[0m\n'`,
		`\ls -la`,
		`"/opt/my tools/run" --x`,
		`./"my script.sh"`,
		`'/usr/bin/python3' -V`,
		`python3 -c 'print("hi")'`,
		`jq '.items[] | {name}' f.json`,
		`git log --format='%H %s' -n 5`,
		`[ -f go.mod ] && go build ./...`,
		`cat > "notes.txt" <<'EOF'
it's a $note
EOF`,
		`for f in *.go; do gofmt -l "$f"; done`,
		`kubectl get pods -o jsonpath='{.items[*].metadata.name}'`,
		`curl -H "Authorization: Bearer $TOKEN" https://api.github.com/user`,
		`FOO=bar make test`,
		`export PATH="$HOME/go/bin:$PATH"`,
	}
	for _, src := range ordinary {
		s := Parse(src)
		if s.ParseError != "" {
			t.Errorf("%q: ParseError %q", src, s.ParseError)
		}
		if len(s.Evasions) != 0 {
			t.Errorf("%q: unexpected evasions %+v", src, s.Evasions)
		}
	}
}

func TestDecodeANSIC(t *testing.T) {
	tests := []struct {
		in, out string
		hidden  bool
	}{
		{`plain`, "plain", false},
		{`a\tb\n`, "a\tb\n", false},
		{`\x72\x6d`, "rm", true},
		{`\162m`, "rm", true},
		{`\u0072m`, "rm", true},
		{`\U00000072m`, "rm", true},
		{`\x1b[0m`, "\x1b[0m", false},
		{`\033[0m`, "\x1b[0m", false},
		{`\'q\'`, "'q'", false},
		{`\cA`, "\x01", false},
		{`\q`, `\q`, false},
		{`\xZZ`, `\xZZ`, false},
		{`end\`, `end\`, false},
		{`\e\E\a\b\f\v\\\"\?`, "\x1b\x1b\a\b\f\v\\\"?", false},
	}
	for _, tt := range tests {
		out, hidden := decodeANSIC(tt.in)
		if out != tt.out || hidden != tt.hidden {
			t.Errorf("decodeANSIC(%q) = %q, %v; want %q, %v", tt.in, out, hidden, tt.out, tt.hidden)
		}
	}
}
