package host

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/engine/tools"
	"github.com/parapet-dev/parapet/llm"
)

// Version is agentctl's version, stamped at build time with
// -ldflags "-X github.com/parapet-dev/parapet/agentctl/host.Version=...".
var Version = "dev"

const (
	stateDirName   = tools.StateDirName // the file tools refuse it
	sessionsDBName = "sessions.db"
)

// Flags are shared by run, start and internal-engine: where to work,
// which shield, which model.
func Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Usage: "the agent's workspace `DIR` (default: the current directory)"},
		&cli.StringFlag{Name: "shield", EnvVars: []string{"PARAPET_SHIELD"}, Usage: "shieldd `ADDR` (host:port or dns:///name:port); default: the shield pipeline in-process"},
		&cli.StringFlag{Name: "shield-token", EnvVars: []string{"PARAPET_SHIELD_TOKEN"}, Usage: "bearer `TOKEN` for a shieldd that requires authentication"},
		&cli.StringFlag{Name: "policy", Usage: "policy `FILE` or embedded name (default, strict, permissive) for the in-process shield"},
		&cli.StringFlag{Name: "audit-file", EnvVars: []string{"PARAPET_AUDIT_FILE"}, Usage: "the in-process shield's audit log `FILE`: every evaluation and escalation outcome as a hash-chained JSON line, as shieldd --audit-file writes (a remote shieldd keeps its own)"},
		&cli.StringFlag{Name: "provider", Value: "openai", Usage: "LLM provider: openai (any OpenAI-compatible endpoint), anthropic or scripted"},
		&cli.StringFlag{Name: "model", Usage: "model name (default: the provider's default)"},
		&cli.StringFlag{Name: "base-url", Usage: "LLM endpoint `URL` (default: $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL or the provider's)"},
		&cli.StringFlag{Name: "api-key-env", Usage: "name of the environment `VARIABLE` holding the API key (default OPENAI_API_KEY / ANTHROPIC_API_KEY)"},
		&cli.StringFlag{Name: "script", Usage: "replies `FILE` (YAML) for --provider scripted"},
		&cli.IntFlag{Name: "max-turns", Value: 25, Usage: "LLM round trips allowed per message"},
		&cli.StringFlag{Name: "agent-name", Value: "parapet", Usage: "the agent's display name"},
		&cli.BoolFlag{Name: "allow-unsandboxed", Usage: "run the agent even where the kernel has no Landlock (loudly warned; partial sandboxes are never accepted)"},
		&cli.BoolFlag{Name: "allow-unconfined", Usage: "run commands with the engine's full rights where the kernel cannot confine them (loudly warned; a partial confinement is never used)"},
		&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error"},
		&cli.StringFlag{Name: "db", EnvVars: []string{"PARAPET_DB"}, Usage: "session database `FILE` (default $XDG_STATE_HOME/parapet/workspaces/<name>-<hash>/sessions.db, outside the workspace the agent can read)"},
	}
}

// Config is what Flags resolve to: one engine's workspace, shield, model
// and front-ends.
type Config struct {
	Workspace   string // absolute, symlinks resolved
	ShieldAddr  string // a remote shieldd ("": the shield in-process)
	ShieldToken string
	PolicyRef   string // the in-process shield's policy (file or embedded name)
	AuditFile   string // the in-process shield's audit log (absolute)

	Provider, Model, BaseURL, APIKeyEnv, ScriptPath string

	MaxTurns         int
	AgentName        string
	AllowUnsandboxed bool
	AllowUnconfined  bool
	LogLevel         string
	DBPath           string // the session database (absolute)

	// OnAgentEvent, if set, hears the agent's pid and sandbox status.
	OnAgentEvent func(pid int, sandboxStatus string)
	// WebAddr is where internal-engine serves the web page and HTTP API
	// ("" or "off": nowhere); start passes it on.
	WebAddr string
	// ClientToken is ClientService's credential ("": a random one that
	// no client learns, as for run).
	ClientToken string
	// Doors are the other front doors internal-engine serves.
	Doors DoorConfig

	// canaryDir is a writable directory outside the workspace for the
	// agent's sandbox canary; Start makes it and Close removes it.
	canaryDir string
}

// ConfigFrom reads Flags (and, where the command has them, DoorFlags and
// WebAddrFlag), resolves paths and checks what can be checked before an
// engine starts: a mistake found in the agent would only show as a crash
// loop.
func ConfigFrom(c *cli.Context) (Config, error) {
	h := Config{
		Workspace: c.String("workspace"), ShieldAddr: c.String("shield"), ShieldToken: c.String("shield-token"),
		PolicyRef: c.String("policy"), Provider: c.String("provider"), Model: c.String("model"),
		BaseURL: c.String("base-url"), APIKeyEnv: c.String("api-key-env"), ScriptPath: c.String("script"),
		MaxTurns: c.Int("max-turns"), AgentName: c.String("agent-name"), AllowUnsandboxed: c.Bool("allow-unsandboxed"),
		AllowUnconfined: c.Bool("allow-unconfined"), LogLevel: c.String("log-level"), DBPath: c.String("db"),
		AuditFile: c.String("audit-file"),
	}
	if h.Workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return h, err
		}
		h.Workspace = wd
	}
	ws, err := AbsDir(h.Workspace)
	if err != nil {
		return h, exitcode.Usagef("workspace: %v", err)
	}
	h.Workspace = ws
	if h.DBPath == "" {
		if h.DBPath, err = DefaultDBPath(ws); err != nil {
			return h, exitcode.Usagef("%v; pass --db FILE", err)
		}
	} else if h.DBPath, err = filepath.Abs(h.DBPath); err != nil {
		return h, exitcode.Usagef("--db: %v", err)
	}
	switch h.Provider {
	case "openai", "anthropic":
	case "scripted":
		if h.ScriptPath == "" {
			return h, exitcode.Usagef("--provider scripted needs --script FILE")
		}
	default:
		return h, exitcode.Usagef("unknown --provider %q (openai, anthropic or scripted)", h.Provider)
	}
	if h.ScriptPath != "" {
		if h.ScriptPath, err = filepath.Abs(h.ScriptPath); err != nil {
			return h, exitcode.Usagef("--script: %v", err)
		}
		if _, err := os.Stat(h.ScriptPath); err != nil {
			return h, exitcode.Usagef("--script: %v", err)
		}
	}
	// The agent validates the same configuration, but a mistake found there
	// would only show as an agent crash loop.
	if _, _, err := h.LLMConfig().Endpoint(); err != nil {
		return h, exitcode.Usagef("%v", err)
	}
	if h.ShieldAddr != "" && h.PolicyRef != "" {
		return h, exitcode.Usagef("--policy configures the in-process shield; a remote shieldd (--shield) uses its own policy")
	}
	if h.AuditFile != "" {
		if h.ShieldAddr != "" {
			return h, exitcode.Usagef("--audit-file is the in-process shield's audit log; a remote shieldd (--shield) keeps its own (shieldd --audit-file)")
		}
		if h.AuditFile, err = filepath.Abs(h.AuditFile); err != nil {
			return h, exitcode.Usagef("--audit-file: %v", err)
		}
	}
	if h.MaxTurns <= 0 {
		return h, exitcode.Usagef("--max-turns must be positive")
	}
	if strings.ContainsAny(h.AgentName, ": \t\n") || h.AgentName == "" {
		return h, exitcode.Usagef("--agent-name must be a non-empty word without ':'")
	}
	h.WebAddr = c.String("web-addr")
	if err := checkWebAddr(h.WebAddr); err != nil {
		return h, err
	}
	if h.Doors, err = doorConfigFrom(c); err != nil {
		return h, err
	}
	return h, nil
}

// llmConfig is the agent's LLM configuration; the API key stays in the
// environment, named by --api-key-env.
func (h Config) LLMConfig() llm.Config {
	return llm.Config{Provider: h.Provider, Model: h.Model, BaseURL: h.BaseURL, APIKeyEnv: h.APIKeyEnv, ScriptPath: h.ScriptPath}
}

// AbsDir resolves dir to an absolute path without symlinks and checks it is a directory.
func AbsDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", abs)
	}
	return abs, nil
}

// DefaultDBPath keeps a workspace's sessions outside it: the sandboxed
// agent can read its workspace, and one session's agent has no business
// reading the others. The directory name keeps the workspace's base name
// for people and a hash of its path for uniqueness.
func DefaultDBPath(workspace string) (string, error) {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no place for the session database: neither $XDG_STATE_HOME nor a home directory is set")
		}
		base = filepath.Join(home, ".local", "state")
	}
	sum := sha256.Sum256([]byte(workspace))
	dir := fmt.Sprintf("%s-%s", filepath.Base(workspace), hex.EncodeToString(sum[:6]))
	return filepath.Join(base, "parapet", "workspaces", dir, sessionsDBName), nil
}

// args turns a Config back into flags, for the processes it spawns.
func (h Config) Args() []string {
	a := []string{"--workspace", h.Workspace, "--provider", h.Provider, "--max-turns", strconv.Itoa(h.MaxTurns),
		"--agent-name", h.AgentName, "--log-level", h.LogLevel}
	for _, f := range [][2]string{{"--shield", h.ShieldAddr}, {"--policy", h.PolicyRef}, {"--model", h.Model},
		{"--base-url", h.BaseURL}, {"--api-key-env", h.APIKeyEnv}, {"--script", h.ScriptPath}, {"--db", h.DBPath}, {"--audit-file", h.AuditFile}} {
		if f[1] != "" {
			a = append(a, f[0], f[1])
		}
	}
	if h.AllowUnsandboxed {
		a = append(a, "--allow-unsandboxed")
	}
	if h.AllowUnconfined {
		a = append(a, "--allow-unconfined")
	}
	if h.WebAddr != "" {
		a = append(a, "--web-addr", h.WebAddr)
	}
	return append(a, h.Doors.args()...)
}

// StateDirOf is the state directory (process manager state, client token)
// of the engine for workspace.
func StateDirOf(workspace string) string {
	cfg := Config{Workspace: workspace}
	if abs, err := AbsDir(workspace); err == nil {
		cfg.Workspace = abs
	}
	return cfg.StateDir()
}

func (h Config) StateDir() string { return filepath.Join(h.Workspace, stateDirName) }
