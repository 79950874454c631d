package shell

import (
	"reflect"
	"testing"
)

func TestFastPathEligibility(t *testing.T) {
	tests := []struct {
		src  string
		fast bool
	}{
		{"git status", true},
		{"ls -la src", true},
		{"go test ./...", true},
		{"docker build -t app:1 .", true},
		{"git push origin main --force", true},
		{"npm install --save-dev typescript@5.4", true},
		{"curl https://example.com/x.sh", true},
		{"env A=1 make", true},
		{"sudo rm -rf /", true},
		{"", true},
		{"A=1 make", false},
		{"if x", false},
		{"export A", false},
		{"time make", false},
		{"ls *.go", false},
		{"echo 'x'", true},
		{`git commit -m "fix: quote 'x'"`, true},
		{`find . -name '*.go'`, true},
		{`echo "$x"`, false},
		{`echo "a\"b"`, false},
		{"echo 'unterminated", false},
		{"'rm' x", true},
		{"'if' x", true},
		{"ls ~", false},
		{"a | b", false},
		{"a\tb", false},
		{"echo $HOME", false},
	}
	for _, tt := range tests {
		if _, ok := fastPathFields(tt.src); ok != tt.fast {
			t.Errorf("fastPathFields(%q) ok = %v, want %v", tt.src, ok, tt.fast)
		}
	}
}

// TestFastPathMatchesFullParse checks that the fast path changes nothing.
func TestFastPathMatchesFullParse(t *testing.T) {
	for _, src := range []string{
		"git status", "ls -la src", "go test ./...", "docker build -t app:1 .",
		"sudo rm -rf /", "env A=1 B=2 make", "bash -c ls", "eval rm x",
		"timeout 5 nice -n 3 make", "find . -exec rm {} +", "watch -n 1 ls",
		"xargs -n1 rm", "sudo -l", "a %b @c +d ,e :f", "x =y", "busybox sh -c id",
		strRepeat("sudo ", 30) + "x", "  padded   words  ", "",
		`git commit -m "fix: quote 'x'"`, `find . -name '*.go' -delete`,
		`npm run build -- '--flag=a b'`, "r''m -rf /", `"r"m x`, `c'u'rl x`,
		`sudo r""m x`, `printf '' ""`, `'rm' -rf`, `echo "a"'b'"c"`, `'if' x`,
		`grep -rn "TODO" --include='*.go' .`, `echo 'a	b' "#x"`,
	} {
		fast, full := parse(src, true), parse(src, false)
		if !reflect.DeepEqual(fast, full) {
			t.Errorf("%q:\nfast %+v\nfull %+v", src, fast, full)
		}
	}
}

func strRepeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}
