package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// SettingsPath is the agent's settings file: the project's
// (WORKSPACE/.claude/settings.json, WORKSPACE/.gemini/settings.json) or,
// with user, the user's (~/.claude/…, ~/.gemini/…).
func SettingsPath(agent Agent, user bool, workspace, home string) string {
	dir := ".claude"
	if agent == GeminiCLI {
		dir = ".gemini"
	}
	root := workspace
	if user {
		root = home
	}
	return filepath.Join(root, dir, "settings.json")
}

// InstallOptions say which hook to put into which settings file.
type InstallOptions struct {
	Agent Agent
	Path  string
	// Command is the hook's command line (see CommandLine).
	Command string
	// AgentTimeout is the agent's own limit on the hook; it must be longer
	// than the hook's --timeout, because both agents let the tool run when
	// their limit expires.
	AgentTimeout time.Duration
	// Now stamps the backup's name (tests); default time.Now.
	Now func() time.Time
}

// Result says what Install or Uninstall did.
type Result struct {
	// Changed is false when the file already said what was asked.
	Changed bool
	// Backup is the copy of the previous file ("" when there was none or
	// nothing changed).
	Backup string
	// Warnings are things the user should know (hooks disabled, …).
	Warnings []string
}

// CommandLine quotes a command and its arguments for the agent's shell.
func CommandLine(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// Install adds our hook to the settings file for every tool, keeping all
// else in it (members, order, the other hooks). Installing again with the
// same command changes nothing; with another, ours is replaced, never
// doubled. The previous file is kept as a backup beside it.
func Install(o InstallOptions) (Result, error) {
	entry := hookEntry(o.Agent, o.Command, o.AgentTimeout)
	return edit(o.Agent, o.Path, o.Now, func(groups []json.RawMessage) ([]json.RawMessage, bool, error) {
		if isInstalled(o.Agent, groups, entry) {
			return groups, false, nil
		}
		groups, _, err := removeOurs(o.Agent, groups)
		if err != nil {
			return nil, false, err
		}
		group := encodeObject([]member{{key: "matcher", value: json.RawMessage(`"*"`)}, {key: "hooks", value: encodeArray([]json.RawMessage{entry})}})
		return append(groups, group), true, nil
	})
}

// Uninstall removes our hook entries (and groups they leave empty) and
// nothing else.
func Uninstall(agent Agent, path string, now func() time.Time) (Result, error) {
	return edit(agent, path, now, func(groups []json.RawMessage) ([]json.RawMessage, bool, error) {
		return removeOurs(agent, groups)
	})
}

// hookEntry is our hook configuration in the agent's format: Claude Code
// counts the timeout in seconds, Gemini CLI in milliseconds and also
// takes a name.
func hookEntry(agent Agent, command string, timeout time.Duration) json.RawMessage {
	var v any
	if agent == GeminiCLI {
		v = struct {
			Name        string `json:"name"`
			Type        string `json:"type"`
			Command     string `json:"command"`
			Timeout     int64  `json:"timeout"`
			Description string `json:"description"`
		}{"parapet", "command", command, timeout.Milliseconds(), "Parapet judges every tool call before it runs"}
	} else {
		v = struct {
			Type    string `json:"type"`
			Command string `json:"command"`
			Timeout int64  `json:"timeout"`
		}{"command", command, int64(timeout / time.Second)}
	}
	return marshal(v)
}

// isOurs reports whether a hook entry runs `agentctl … hook AGENT`.
func isOurs(agent Agent, entry json.RawMessage) bool {
	var h struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(entry, &h) != nil {
		return false
	}
	f := shellFields(h.Command)
	if len(f) < 3 || !strings.HasPrefix(filepath.Base(f[0]), "agentctl") {
		return false
	}
	for i := 1; i+1 < len(f); i++ {
		if f[i] == "hook" && f[i+1] == string(agent) {
			return true
		}
	}
	return false
}

// isInstalled: exactly one entry of ours, equal to entry, in a group
// matching every tool.
func isInstalled(agent Agent, groups []json.RawMessage, entry json.RawMessage) bool {
	found := 0
	exact := false
	for _, g := range groups {
		var grp struct {
			Matcher string            `json:"matcher"`
			Hooks   []json.RawMessage `json:"hooks"`
		}
		if json.Unmarshal(g, &grp) != nil {
			continue
		}
		for _, h := range grp.Hooks {
			if isOurs(agent, h) {
				found++
				exact = (grp.Matcher == "*" || grp.Matcher == "") && sameJSON(h, entry)
			}
		}
	}
	return found == 1 && exact
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// removeOurs drops our entries from every group; a group left with no
// hooks goes too. Everything else is kept byte for byte.
func removeOurs(agent Agent, groups []json.RawMessage) ([]json.RawMessage, bool, error) {
	var out []json.RawMessage
	changed := false
	for _, g := range groups {
		members, err := objectMembers(g)
		if err != nil {
			out = append(out, g) // not ours to judge
			continue
		}
		idx := -1
		var hooks []json.RawMessage
		for i, m := range members {
			if m.key == "hooks" {
				idx = i
				if json.Unmarshal(m.value, &hooks) != nil {
					idx = -1
				}
			}
		}
		if idx < 0 {
			out = append(out, g)
			continue
		}
		kept := hooks[:0:0]
		for _, h := range hooks {
			if !isOurs(agent, h) {
				kept = append(kept, h)
			}
		}
		if len(kept) == len(hooks) {
			out = append(out, g)
			continue
		}
		changed = true
		if len(kept) == 0 {
			continue
		}
		members[idx].value = encodeArray(kept)
		out = append(out, encodeObject(members))
	}
	return out, changed, nil
}

// edit applies change to the agent's pre-tool hook groups
// (hooks.PreToolUse or hooks.BeforeTool) and writes the file back when
// something changed, after a backup.
func edit(agent Agent, path string, now func() time.Time, change func([]json.RawMessage) ([]json.RawMessage, bool, error)) (Result, error) {
	var res Result
	old, err := os.ReadFile(path)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, err
	}
	top := []member{}
	if existed && len(bytes.TrimSpace(old)) > 0 {
		if top, err = objectMembers(old); err != nil {
			return res, fmt.Errorf("%s: %v (it must be a JSON object without comments; edit it by hand)", path, err)
		}
	}
	hooksAt := findMember(top, "hooks")
	hooks := []member{}
	if hooksAt >= 0 {
		if hooks, err = objectMembers(top[hooksAt].value); err != nil {
			return res, fmt.Errorf("%s: hooks: %v", path, err)
		}
	}
	event := agent.event()
	eventAt := findMember(hooks, event)
	var groups []json.RawMessage
	if eventAt >= 0 {
		if err := json.Unmarshal(hooks[eventAt].value, &groups); err != nil {
			return res, fmt.Errorf("%s: hooks.%s is not a JSON array", path, event)
		}
	}
	groups, changed, err := change(groups)
	if err != nil {
		return res, err
	}
	res.Warnings = warnings(agent, hooks)
	if !changed {
		return res, nil
	}

	// Put the groups back where they were (or at the end), dropping what
	// is left empty.
	switch {
	case len(groups) > 0 && eventAt >= 0:
		hooks[eventAt].value = encodeArray(groups)
	case len(groups) > 0:
		hooks = append(hooks, member{key: event, value: encodeArray(groups)})
	case eventAt >= 0:
		hooks = append(hooks[:eventAt], hooks[eventAt+1:]...)
	}
	switch {
	case len(hooks) > 0 && hooksAt >= 0:
		top[hooksAt].value = encodeObject(hooks)
	case len(hooks) > 0:
		top = append(top, member{key: "hooks", value: encodeObject(hooks)})
	case hooksAt >= 0:
		top = append(top[:hooksAt], top[hooksAt+1:]...)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, encodeObject(top), "", "  "); err != nil {
		return res, fmt.Errorf("%s: %w", path, err)
	}
	out.WriteByte('\n')

	mode := fs.FileMode(0o644)
	if existed {
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
		if now == nil {
			now = time.Now
		}
		res.Backup = path + ".parapet-backup-" + now().UTC().Format("20060102T150405.000000000Z")
		if err := os.WriteFile(res.Backup, old, mode); err != nil {
			return res, fmt.Errorf("backup: %w", err)
		}
	}
	if err := writeAtomic(path, out.Bytes(), mode); err != nil {
		return res, err
	}
	res.Changed = true
	return res, nil
}

// warnings: Gemini CLI runs no hooks while hooks.enabled is false.
func warnings(agent Agent, hooks []member) []string {
	if agent != GeminiCLI {
		return nil
	}
	if i := findMember(hooks, "enabled"); i >= 0 && string(bytes.TrimSpace(hooks[i].value)) == "false" {
		return []string{`hooks.enabled is false in this file: Gemini CLI runs no hooks until it is true`}
	}
	return nil
}

func findMember(ms []member, key string) int {
	for i, m := range ms {
		if m.key == key {
			return i
		}
	}
	return -1
}

func encodeObject(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(marshal(m.key))
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// encodeArray joins values as they are (json.Marshal would rewrite
// "&&" in the user's own hook commands as "\u0026\u0026").
func encodeArray(vs []json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(v)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// marshal is json.Marshal without HTML escaping.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // plain structs of strings and numbers
	return bytes.TrimSpace(b.Bytes())
}

// writeAtomic replaces path by data: a temporary file beside it, synced,
// renamed over it, so the agent never reads half a settings file.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".settings-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// shellQuote quotes s for a POSIX shell unless it needs none.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,+%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellFields splits a command line into words the way a POSIX shell
// would for the quoting CommandLine produces (and plain double quotes
// and backslashes).
func shellFields(s string) []string {
	var out []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				cur.WriteString(s[i+1:])
				i = len(s)
			} else {
				cur.WriteString(s[i+1 : i+1+j])
				i += j + 1
			}
		case c == '"':
			inWord = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				cur.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			inWord = true
			i++
			cur.WriteByte(s[i])
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}
