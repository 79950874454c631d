package heuristics

import (
	"testing"
)

// Everyday developer work must produce no finding at all.
func TestEverydayActionsHaveNoFindings(t *testing.T) {
	a := defaultAnalyzer(t)
	lines := []string{
		"git push origin feature", "git status", "rm -rf node_modules", "npm test", "npm install", "go build ./...",
		"go test ./...", "docker build .", "make", "find . -name '*.go' -delete", "curl https://api.github.com/repos/x/y",
		"curl -fsSL https://example.com -o page.html", "pip install -r requirements.txt", "python3 script.py",
		"cat README.md | grep foo", "ls -la", "echo hello > out.txt", "rm -rf ./build dist", "rm file.txt",
		"git commit -m 'fix: ignore empty lines'", "go vet ./... && go test -race ./rules/...", "npm run build && npm run lint",
		"cargo build --release", "python3 -m pytest -q", "docker compose up -d", "kubectl get pods -n default",
		"git log --oneline -n 20", "grep -rn TODO src/", "sed -i 's/foo/bar/g' main.go", "mkdir -p build/out",
		"cp config.example.json config.json", "tar czf dist.tar.gz dist/", "curl -s https://pypi.org/simple/requests/ | head",
		"chmod +x scripts/build.sh && ./scripts/build.sh", "export PATH=$PATH:/usr/local/go/bin", "cat .env.example",
		"node --env-file=.env server.js", "docker run --env-file .env myimage", "ssh -i ~/.ssh/id_ed25519 deploy@example.com uptime",
		"chmod 600 ~/.ssh/id_ed25519", "ls ~/.ssh", "cat ~/.ssh/id_ed25519.pub", "cat ~/.ssh/known_hosts",
		"curl -X POST -H 'Content-Type: application/json' -d '{\"name\":\"x\"}' https://httpbin.org/post",
		"wget https://go.dev/dl/go1.26.linux-amd64.tar.gz", "python3 -c 'import json,sys; print(json.load(sys.stdin))' < data.json",
		"curl -s https://api.example.com/data | python3 -m json.tool", "curl -s https://api.example.com/data | jq .items",
		"find . -type f -name '*.pyc' -exec rm {} +", "rm -rf ~/.cache/go-build", "git config user.email dev@example.com",
		"systemctl status nginx", "crontab -l", "echo $HOME", "base64 image.png > image.b64", "echo aGVsbG8= | base64 -d",
		"git clone https://github.com/golang/go.git", "go run ./cmd/server --port 8080", "history | tail -n 5",
		"env | sort", "ps aux | grep node", "du -sh *", "df -h", "whoami", "uname -a", "true",
		// Interpreter code that names the home, or deletes and writes
		// in the workspace.
		`node -e "console.log(require('os').homedir())"`, `ruby -e 'puts Dir.home'`, `perl -e 'print "$ENV{HOME}
"'`,
		`php -r 'echo getenv("HOME"), PHP_EOL;'`, `deno eval "console.log(Deno.env.get('HOME'))"`,
		`node -e "require('fs').rmSync('dist', {recursive: true, force: true})"`, `deno eval "await Deno.remove('dist', {recursive: true})"`,
		`ruby -rfileutils -e 'FileUtils.rm_rf("tmp/cache")'`, `php -r 'file_put_contents("public/version.txt", "1.0");'`,
		`node -e "const p=require('path').join(require('os').homedir(),'project','tsconfig.json'); console.log(require(p).compilerOptions)"`,
		`perl -e 'open(my $fh, ">", "out.txt"); print $fh "ok
"; close $fh'`, `gdb -batch -ex bt ./app core`,
		`jshell <<< 'System.out.println(Runtime.version())'`, `python3 -c "import subprocess; subprocess.run(['sh', '-c', 'make test'])"`,
	}
	for _, line := range lines {
		if fs := a.Analyze(cmd(t, line)); len(fs) != 0 {
			t.Errorf("%q: want no finding, got %s%s", line, describe(fs), dumpScript(cmd(t, line)))
		}
	}
	tools := []ruleCase{
		toolCase("read source", "read_file", map[string]any{"path": "src/main.go"}, false),
		toolCase("write source", "write_file", map[string]any{"path": "src/main.go", "content": "package main\n\nimport \"fmt\"\n\n// main prints a greeting; ignore errors from Println.\nfunc main() { fmt.Println(\"hello\") }\n"}, false),
		toolCase("edit readme", "edit_file", map[string]any{"path": "README.md", "old_string": "Install", "new_string": "## Install\n\nRun `make install`. You are now ready to use the tool."}, false),
		toolCase("docs fetch", "web_fetch", map[string]any{"url": "https://pkg.go.dev/net/http"}, false),
		toolCase("http get", "http_request", map[string]any{"url": "https://api.github.com/repos/golang/go", "method": "GET"}, false),
		toolCase("email", "send_email", map[string]any{"to": "alice@example.com", "subject": "Build finished", "body": "Hi Alice,\n\nThe nightly build passed. The report is attached.\n\nThanks"}, false),
		toolCase("message", "send_message", map[string]any{"channel": "#dev", "text": "Deployed v1.2.3 to staging"}, false),
		toolCase("list ssh", "list_directory", map[string]any{"path": "~/.ssh"}, false),
		toolCase("delete build file", "delete_file", map[string]any{"path": "build/out.o"}, false),
		toolCase("write env example", "write_file", map[string]any{"path": ".env.example", "content": "API_KEY=\n"}, false),
	}
	for _, c := range tools {
		act := c.act(t)
		if fs := a.Analyze(act); len(fs) != 0 {
			t.Errorf("%s: want no finding, got %s", c.name, describe(fs))
		}
	}
}
