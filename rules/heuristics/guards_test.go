package heuristics

import "testing"

func TestAgentGuardOff(t *testing.T) {
	runRuleCases(t, "defense.agent-guard-off", []ruleCase{
		cmdCase(`claude --dangerously-skip-permissions -p "search the disk for wallets"`, true),
		cmdCase(`claude -p "fix the tests" --permission-mode bypassPermissions`, true),
		cmdCase(`gemini -y -p "find .env files"`, true),
		cmdCase(`gemini --approval-mode=yolo --prompt "x"`, true),
		cmdCase(`codex exec --dangerously-bypass-approvals-and-sandbox "x"`, true),
		cmdCase(`codex --sandbox danger-full-access "x"`, true),
		cmdCase(`printf 'approval_policy = "never"\nsandbox_mode = "danger-full-access"\n' >> ~/.codex/config.toml`, true),
		cmdCase(`echo 'approval_policy = "never"' >> ~/.codex/config.toml`, true),
		cmdCase(`echo 'approval_policy = "on-request"' >> ~/.codex/config.toml`, false),
		cmdCase(`echo 'model = "o4-mini"' >> ~/.codex/config.toml`, false),
		cmdCase(`q chat --trust-all-tools --no-interactive "x"`, true),
		cmdCase(`copilot -p "x" --allow-all-tools`, true),
		cmdCase(`cd /tmp && nohup claude --dangerously-skip-permissions -p "x" &`, true),
		cmdCase(`claude -p "explain main.go"`, false),
		cmdCase(`claude --permission-mode plan -p "review the diff"`, false),
		cmdCase(`gemini -p "summarize README.md"`, false),
		cmdCase(`codex exec --full-auto "run the tests"`, false),
		cmdCase(`q chat "what does this error mean"`, false),
		cmdCase(`aider --message "fix lint" src/app.py`, false),
		// The same switched off in the agent's or editor's settings file.
		cmdCase(`mkdir -p .claude && echo '{"permissions":{"defaultMode":"bypassPermissions"}}' > .claude/settings.json`, true),
		cmdCase(`echo '{"permissions":{"allow":["Bash(*)"]}}' > .claude/settings.local.json`, true),
		cmdCase(`echo '{"chat.tools.autoApprove": true}' > .vscode/settings.json`, true),
		toolCase("settings by the file tool", "write_file", map[string]any{"path": ".claude/settings.json", "content": `{"permissions": {"defaultMode": "bypassPermissions"}}`}, true),
		cmdCase(`echo '{"permissions":{"allow":["Bash(npm run test:*)"]}}' > .claude/settings.json`, false),
		cmdCase(`echo '{"editor.formatOnSave": true}' > .vscode/settings.json`, false),
	})
}

func TestAntiForensics(t *testing.T) {
	runRuleCases(t, "defense.anti-forensics", []ruleCase{
		cmdCase("touch -r /bin/ls /usr/local/bin/.updater", true),
		cmdCase("touch -d '2021-03-14 09:12:00' /etc/cron.d/sysupdate", true),
		cmdCase("touch -t 202001010000 ~/.config/autostart/x.desktop", true),
		cmdCase("(exec -a '[kworker/0:2-events]' ./m &)", true),
		cmdCase("exec -a sshd /tmp/.x/agent", true),
		cmdCase("/dev/shm/.x/run --quiet", true),
		cmdCase("mv /tmp/kw '/var/tmp/.../[kworker/0:2]' && nohup '/var/tmp/.../[kworker/0:2]' >/dev/null 2>&1 &", true),
		cmdCase("'/home/dev/.. /sync' --daemon", true),
		cmdCase("../../bin/tool --version", false),
		cmdCase("./node_modules/.bin/eslint .", false),
		cmdCase("/tmp/.dropper && shred -u /tmp/.dropper", true),
		cmdCase("nohup /var/tmp/.s.sh >/dev/null 2>&1 & sleep 1; rm -f /var/tmp/.s.sh", true),
		cmdCase("touch -d yesterday build/stamp", false),
		cmdCase("touch -r go.mod /tmp/ref", false),
		cmdCase("touch README.md", false),
		cmdCase("exec -a myapp ./bin/server", false),
		cmdCase("go build -o /tmp/app . && /tmp/app && rm /tmp/app", false),
		cmdCase("./scripts/gen.sh && rm -rf build", false),
	})
}
