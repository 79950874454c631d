package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parapet-dev/parapet/engine/tools"
	"github.com/parapet-dev/parapet/internal/textcut"
	"github.com/parapet-dev/parapet/rules/policy"
)

// Bounds of the JSON fields a ThreadSpawnRequest carries.
const (
	maxPreparationBytes = 4 << 20
	maxPolicyBytes      = 64 << 10
	maxBootstrapFiles   = 256
	maxEnvVars          = 256
	maxThreadTurns      = 10000
)

// Preparation is a spawn's preparation_json: where the thread's
// workspace comes from and what it starts with.
type Preparation struct {
	// Repo and Branch are cloned into the thread's fresh workspace
	// (Repo empty: the workspace starts empty). The control plane's
	// workspacePath is not used: a thread always gets a new directory.
	Repo, Branch string
	// Environment is given to the thread's commands when the policy
	// grants the "environment" permission.
	Environment map[string]string
	// BootstrapFiles are written through the gate (each judged by the
	// shield as a write_file) before the thread's first turn.
	BootstrapFiles map[string]string
}

// ThreadPolicy is a spawn's policy_json.
type ThreadPolicy struct {
	// ApprovalPreset is PresetSupervised (the default), PresetAutonomous or PresetStrict.
	ApprovalPreset string
	// Timeout bounds the thread's run time (0: none).
	Timeout time.Duration
	// Permissions are those granted; every other one is a BLOCK rule.
	Permissions []string
	// MaxTurns bounds the thread's conversation turns (0: no bound).
	MaxTurns int
}

// Approval presets.
const (
	// PresetSupervised: an escalation waits for an approval input.
	PresetSupervised = "supervised"
	// PresetAutonomous: nobody is expected to answer; escalations are denied at once.
	PresetAutonomous = "autonomous"
	// PresetStrict: like supervised, and every granted change (a write,
	// a command, a push, network) escalates even when the shield allows it.
	PresetStrict = "strict"
)

// permission is one name of policy_json.permissions and what it covers.
type permission struct {
	name, covers string
	actions      []string
	commands     string // a policy `command:` matcher, YAML flow style
}

// permissions are the names policy_json may grant, in the order their
// rules are written.
var permissions = []permission{
	{name: "file_write", covers: "writing, editing, moving and deleting files, git add and commit",
		actions: []string{"write_file", "edit_file", "delete_file", "move_file", "copy_file", "create_directory", "git_add", "git_commit", "git_checkout", "git_branch"}},
	{name: "shell_exec", covers: "running commands", actions: []string{"execute_command"}},
	{name: "git_push", covers: "git push", actions: []string{"git_push"}, commands: "{ program: [git], subcommand: [push] }"},
	{name: "network", covers: "HTTP requests, web fetches and searches, browsing, email and messages",
		actions: []string{"http_request", "web_fetch", "web_search", "browser_navigate", "send_email", "send_message"}},
	{name: "spawn_agent", covers: "starting sub-agents", actions: []string{"spawn_agent"}},
	{name: "memory_write", covers: "writing to memory", actions: []string{"memory_write"}},
	{name: "environment", covers: "preparation_json.environment given to the thread's commands"},
}

// PermissionNames lists the permissions policy_json may grant.
func PermissionNames() []string {
	out := make([]string, len(permissions))
	for i, p := range permissions {
		out[i] = p.name
	}
	return out
}

// checkJSON is what both fields need before decoding: present within
// bounds, UTF-8, one JSON object.
func checkJSON(field, s string, limit int) error {
	switch {
	case len(s) > limit:
		return fmt.Errorf("%s is %d bytes, limit %d", field, len(s), limit)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s is not valid UTF-8", field)
	}
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "{") {
		return fmt.Errorf("%s: want a JSON object", field)
	}
	return nil
}

// decodeJSON decodes one JSON object, naming the field of a type error.
func decodeJSON(field, s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("%s: %s: want %s, got %s", field, te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return fmt.Errorf("%s: %v", field, err)
	}
	if dec.More() {
		return fmt.Errorf("%s: more than one JSON value", field)
	}
	return nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "map", "struct":
		return "an object"
	case "slice":
		return "an array"
	case "int", "int64", "int32", "float64":
		return "a number"
	}
	return goKind
}

// ParsePreparation parses preparation_json ("" is an empty preparation).
// Errors name the field.
func ParsePreparation(s string) (Preparation, error) {
	var p Preparation
	if strings.TrimSpace(s) == "" {
		return p, nil
	}
	if err := checkJSON("preparation_json", s, maxPreparationBytes); err != nil {
		return p, err
	}
	var raw struct {
		Workspace *struct {
			Repo   string `json:"repo"`
			Branch string `json:"branch"`
			// workspacePath is accepted and not used.
			WorkspacePath string `json:"workspacePath"`
		} `json:"workspace"`
		Environment    map[string]string `json:"environment"`
		BootstrapFiles map[string]string `json:"bootstrapFiles"`
	}
	if err := decodeJSON("preparation_json", s, &raw); err != nil {
		return p, err
	}
	if raw.Workspace != nil {
		p.Repo, p.Branch = strings.TrimSpace(raw.Workspace.Repo), strings.TrimSpace(raw.Workspace.Branch)
	}
	if p.Branch != "" && p.Repo == "" {
		return p, errors.New("preparation_json: workspace.branch is given without workspace.repo")
	}
	if err := tools.CheckBranchName(p.Branch); err != nil {
		return p, fmt.Errorf("preparation_json: workspace.branch: %v", err)
	}
	if len(raw.Environment) > maxEnvVars {
		return p, fmt.Errorf("preparation_json: environment has %d variables, limit %d", len(raw.Environment), maxEnvVars)
	}
	for _, k := range sortedKeys(raw.Environment) {
		if !envName(k) {
			return p, fmt.Errorf("preparation_json: environment: %q is not a variable name (letters, digits and _, not starting with a digit)", k)
		}
		if strings.ContainsRune(raw.Environment[k], 0) {
			return p, fmt.Errorf("preparation_json: environment.%s contains a NUL byte", k)
		}
	}
	if len(raw.BootstrapFiles) > maxBootstrapFiles {
		return p, fmt.Errorf("preparation_json: bootstrapFiles has %d files, limit %d", len(raw.BootstrapFiles), maxBootstrapFiles)
	}
	for _, name := range sortedKeys(raw.BootstrapFiles) {
		if err := checkBootstrapPath(name); err != nil {
			return p, fmt.Errorf("preparation_json: bootstrapFiles: %v", err)
		}
	}
	p.Environment, p.BootstrapFiles = raw.Environment, raw.BootstrapFiles
	return p, nil
}

// checkBootstrapPath accepts a plain relative path inside the workspace.
func checkBootstrapPath(name string) error {
	switch {
	case name == "" || len(name) > 1024:
		return fmt.Errorf("path %q: want 1 to 1024 bytes", name)
	case strings.ContainsRune(name, 0) || strings.Contains(name, "\\"):
		return fmt.Errorf("path %q contains a NUL byte or a backslash", name)
	case path.IsAbs(name):
		return fmt.Errorf("path %q is absolute; want one relative to the workspace", name)
	case path.Clean(name) != name || name == "." || name == ".." || strings.HasPrefix(name, "../"):
		return fmt.Errorf("path %q is not a clean path inside the workspace", name)
	}
	return nil
}

func envName(k string) bool {
	if k == "" || len(k) > 256 || k[0] >= '0' && k[0] <= '9' {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ParsePolicy parses policy_json ("" is the default: supervised, no
// permission granted, no timeout, no turn limit). Errors name the field.
func ParsePolicy(s string) (ThreadPolicy, error) {
	p := ThreadPolicy{ApprovalPreset: PresetSupervised}
	if strings.TrimSpace(s) == "" {
		return p, nil
	}
	if err := checkJSON("policy_json", s, maxPolicyBytes); err != nil {
		return p, err
	}
	var raw struct {
		ApprovalPreset *string         `json:"approvalPreset"`
		Timeout        json.RawMessage `json:"timeout"`
		Permissions    []string        `json:"permissions"`
		MaxTurns       json.RawMessage `json:"maxTurns"`
	}
	if err := decodeJSON("policy_json", s, &raw); err != nil {
		return p, err
	}
	if raw.ApprovalPreset != nil {
		switch v := strings.ToLower(strings.TrimSpace(*raw.ApprovalPreset)); v {
		case PresetSupervised, PresetAutonomous, PresetStrict:
			p.ApprovalPreset = v
		case "":
		default:
			return p, fmt.Errorf("policy_json: approvalPreset %q: want %s, %s or %s", *raw.ApprovalPreset, PresetSupervised, PresetAutonomous, PresetStrict)
		}
	}
	if raw.Timeout != nil {
		ms, ok := wholeNumber(raw.Timeout)
		if !ok || ms < 0 || ms > int64(30*24*time.Hour/time.Millisecond) {
			return p, fmt.Errorf("policy_json: timeout %s: want milliseconds, a whole number from 0 to 30 days", textcut.Truncate(string(raw.Timeout), 40))
		}
		p.Timeout = time.Duration(ms) * time.Millisecond
	}
	if raw.MaxTurns != nil {
		n, ok := wholeNumber(raw.MaxTurns)
		if !ok || n < 0 || n > maxThreadTurns {
			return p, fmt.Errorf("policy_json: maxTurns %s: want a whole number from 0 to %d", textcut.Truncate(string(raw.MaxTurns), 40), maxThreadTurns)
		}
		p.MaxTurns = int(n)
	}
	known := PermissionNames()
	for i, name := range raw.Permissions {
		if !slices.Contains(known, name) {
			return p, fmt.Errorf("policy_json: permissions[%d] %q is not a permission; known: %s", i, name, strings.Join(known, ", "))
		}
		if !slices.Contains(p.Permissions, name) {
			p.Permissions = append(p.Permissions, name)
		}
	}
	return p, nil
}

// wholeNumber reads a JSON integer (null is 0).
func wholeNumber(raw json.RawMessage) (int64, bool) {
	if string(raw) == "null" {
		return 0, true
	}
	var n json.Number
	if len(raw) == 0 || raw[0] == '"' || json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	v, err := n.Int64()
	return v, err == nil
}

// Grants reports whether the policy grants a permission.
func (p ThreadPolicy) Grants(name string) bool { return slices.Contains(p.Permissions, name) }

// Rules are the thread's own Tier 0 rules, judged after the shield: a
// deny rule for every permission not granted and, under PresetStrict, a
// verify rule (a human) for every granted one. Everything else is left
// to the shield (no_match: allow).
func (p ThreadPolicy) Rules(name string) (*policy.Policy, error) {
	var deny, verify bytes.Buffer
	for _, perm := range permissions {
		if len(perm.actions) == 0 {
			continue
		}
		granted := p.Grants(perm.name)
		if granted && p.ApprovalPreset != PresetStrict {
			continue
		}
		w := &deny
		id, reason := "thread."+perm.name, fmt.Sprintf("This thread's policy (policy_json.permissions) does not grant %s: %s.", perm.name, perm.covers)
		if granted {
			w = &verify
			id, reason = "thread.strict."+perm.name, fmt.Sprintf("This thread's approval preset is strict: %s needs a human's approval.", perm.covers)
		}
		fmt.Fprintf(w, "  - id: %s\n", id)
		if granted {
			w.WriteString("    tier: 3\n")
		}
		fmt.Fprintf(w, "    reason: %q\n    match:\n      action: [%s]\n", reason, strings.Join(perm.actions, ", "))
		if perm.commands != "" {
			// The same permission through a command: its own rule.
			fmt.Fprintf(w, "  - id: %s.command\n", id)
			if granted {
				w.WriteString("    tier: 3\n")
			}
			fmt.Fprintf(w, "    reason: %q\n    match:\n      action: [execute_command]\n      command: %s\n", reason, perm.commands)
		}
	}
	src := fmt.Sprintf("version: 1\nname: %q\ndefaults:\n  no_match: allow\n  unknown_action: allow\n", name)
	if deny.Len() > 0 {
		src += "deny:\n" + deny.String()
	}
	if verify.Len() > 0 {
		src += "verify:\n" + verify.String()
	}
	return policy.Parse("thread policy", []byte(src))
}
