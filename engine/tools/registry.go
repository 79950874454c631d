// Package tools holds the Engine's tool executors: file, shell, git and
// HTTP tools that the sandboxed agent proposes and the engine runs once the
// shield allows them.
//
// The engine is unsandboxed, so this package is the last line: it validates
// arguments against each tool's schema before anything runs, confines every
// path to the workspace through os.Root, bounds time and output, scrubs
// secrets from child environments and refuses, rather than guesses, whenever
// something is unclear. It does not depend on the shield having judged well.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parapet-dev/parapet/sandbox"
)

// Def is a tool definition as sent to the agent (openparallax.v1 ToolDef).
type Def struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Group       string          `json:"group"`
	Schema      json.RawMessage `json:"parameters"`
}

// Options configures a Registry. Zero values take the documented defaults.
type Options struct {
	// Workspace is the directory every tool is confined to. Required.
	Workspace string

	// Memory, when set, enables the memory tools; MemoryWorkspace names
	// the memory workspace they use (default "local").
	Memory          Memory
	MemoryWorkspace string

	// CommandTimeout is the default timeout of execute_command and of each
	// git tool (default 2m, or MaxCommandTimeout if lower); MaxCommandTimeout
	// caps timeout_seconds (default 10m).
	CommandTimeout    time.Duration
	MaxCommandTimeout time.Duration

	// OutputLimit caps every tool's output in bytes (default 64 KiB).
	OutputLimit int

	// MaxFileBytes caps write_file contents and the size of files edited or
	// searched (default 10 MiB).
	MaxFileBytes int64

	// MaxEntries caps list_directory and glob_files results (default 1000);
	// MaxMatches is search_files' default and largest max_results (default 200).
	MaxEntries int
	MaxMatches int

	// HTTPTimeout bounds a whole http_request, body included (default 30s).
	// HTTPMaxBytes caps the response body read (default 1 MiB);
	// HTTPMaxRequestBytes caps the request body (default 1 MiB);
	// HTTPMaxRedirects bounds same-host redirects followed (default 5).
	HTTPTimeout         time.Duration
	HTTPMaxBytes        int64
	HTTPMaxRequestBytes int64
	HTTPMaxRedirects    int
	// HTTPAllowPrivateNetworks lets http_request reach loopback, private,
	// link-local and other non-public addresses. Off by default: those are
	// the engine's own network (its API, shieldd, cloud metadata).
	HTTPAllowPrivateNetworks bool

	// Executor runs execute_command and the git tools confined (Landlock,
	// seccomp, own PID and mount namespaces; sandbox.Executor). Without
	// one they are refused unless AllowUnconfined is set.
	Executor        *sandbox.Executor
	AllowUnconfined bool
	// Hidden are paths no confined command may read even when a grant
	// covers them: the session database, the engine's state directory.
	// WORKSPACE/.parapet is always hidden.
	Hidden []string
	// SystemPaths are the read-only, executable locations of confined
	// commands (default sandbox.DefaultSystemPaths(): /usr, /bin, /lib*,
	// /etc…); a policy may narrow them by setting fewer.
	SystemPaths []string
	// UserHome is the engine user's real home, for "~/…" in granted read
	// paths (commands never see it otherwise).
	UserHome string

	// Env is the base environment of commands and git (default: none, so
	// commands get only the fixed variables below).
	// Variables matching DefaultScrubEnv or ScrubEnv are dropped; ScrubEnv
	// adds patterns and cannot remove defaults.
	Env      []string
	ScrubEnv []string

	// Path, Home and Lang are the fixed PATH, HOME and LANG of commands and
	// git. Path defaults to the usual system directories, Lang to C.UTF-8.
	// Home defaults to a private directory created by New and removed by
	// Close, so tools don't pick up the engine user's credentials
	// (~/.aws, ~/.netrc, ~/.gitconfig helpers). Home must lie outside the
	// workspace: the agent can write there, and git reads $HOME/.gitconfig.
	Path string
	Home string
	Lang string

	// GitName and GitEmail are the commit identity written to the default
	// Home's .gitconfig (defaults "Parapet Agent", "agent@parapet.invalid").
	// A repository's own user.name / user.email still take precedence.
	GitName  string
	GitEmail string
}

// Result is the outcome of one tool call. Output is always valid UTF-8 and
// within OutputLimit (plus a short marker).
type Result struct {
	Output    string
	IsError   bool
	Truncated bool
	ExitCode  int // execute_command and git tools; -1 when killed on timeout
	Duration  time.Duration
}

// Registry executes tools within one workspace. It is safe for concurrent
// use; Close releases it.
type Registry struct {
	opts     Options
	ws       string   // absolute workspace path as given, cleaned
	wsReal   string   // the same with symbolic links resolved
	root     *os.Root // every file access goes through it
	home     string
	ownsHome bool
	cmdEnv   []string // execute_command
	gitEnv   []string // git tools, before per-call config overrides
	gitPath  string   // "" when git is not installed
	bashPath string   // "" when bash is not installed
	scrub    []string
	tools    map[string]*tool
	order    []string // tool names in definition order
	http     *http.Client
}

// tool ties a definition to its validator and executor.
type tool struct {
	def   Def
	props []prop
	write bool
	run   func(ctx context.Context, a args) Result
}

// LoadToolsName is the meta-tool the engine answers itself.
const LoadToolsName = "load_tools"

// SpawnAgentName is the tool that starts a sandboxed sub-agent. The engine
// runs it itself (it is not an executor here), but like every other call
// it is a shield action: the payload is the validated name, task and tools.
const SpawnAgentName = "spawn_agent"

// groupOrder lists the tool groups in the order they are presented.
var groupOrder = []string{"files", "shell", "git", "http", "agents", "memory"}

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// New validates opts, opens the workspace and builds the tools.
func New(opts Options) (*Registry, error) {
	if opts.Workspace == "" {
		return nil, errors.New("tools: Options.Workspace is required")
	}
	setDefaults(&opts)
	if opts.CommandTimeout > opts.MaxCommandTimeout {
		return nil, fmt.Errorf("tools: CommandTimeout %v exceeds MaxCommandTimeout %v", opts.CommandTimeout, opts.MaxCommandTimeout)
	}
	if opts.OutputLimit < 1024 {
		return nil, fmt.Errorf("tools: OutputLimit %d is below the 1024-byte minimum", opts.OutputLimit)
	}
	ws, err := filepath.Abs(opts.Workspace)
	if err != nil {
		return nil, fmt.Errorf("tools: workspace %q: %w", opts.Workspace, err)
	}
	wsReal, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return nil, fmt.Errorf("tools: workspace %q: %w", ws, err)
	}
	if fi, err := os.Stat(wsReal); err != nil {
		return nil, fmt.Errorf("tools: workspace %q: %w", ws, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("tools: workspace %q is not a directory", ws)
	}
	if wsReal == "/" {
		return nil, errors.New("tools: the workspace cannot be the filesystem root")
	}
	scrub := append(DefaultScrubEnv(), opts.ScrubEnv...)
	for _, p := range scrub {
		if _, err := path.Match(strings.ToUpper(p), "X"); err != nil {
			return nil, fmt.Errorf("tools: ScrubEnv pattern %q: %w", p, err)
		}
	}

	r := &Registry{opts: opts, ws: ws, wsReal: wsReal, scrub: scrub}
	if err := r.setupHome(); err != nil {
		return nil, err
	}
	r.root, err = os.OpenRoot(wsReal)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("tools: workspace %q: %w", ws, err)
	}
	r.cmdEnv = r.buildEnv(false)
	r.gitEnv = r.buildEnv(true)
	r.gitPath = lookPath("git", opts.Path)
	r.bashPath = lookPath("bash", opts.Path)
	r.http = r.newHTTPClient()
	r.register()
	return r, nil
}

func setDefaults(o *Options) {
	if o.MemoryWorkspace == "" {
		o.MemoryWorkspace = "local"
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = 2 * time.Minute
		if o.MaxCommandTimeout > 0 {
			o.CommandTimeout = min(o.CommandTimeout, o.MaxCommandTimeout)
		}
	}
	if o.MaxCommandTimeout <= 0 {
		o.MaxCommandTimeout = max(10*time.Minute, o.CommandTimeout)
	}
	if o.OutputLimit <= 0 {
		o.OutputLimit = 64 << 10
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 10 << 20
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = 1000
	}
	if o.MaxMatches <= 0 {
		o.MaxMatches = 200
	}
	if o.HTTPTimeout <= 0 {
		o.HTTPTimeout = 30 * time.Second
	}
	if o.HTTPMaxBytes <= 0 {
		o.HTTPMaxBytes = 1 << 20
	}
	if o.HTTPMaxRequestBytes <= 0 {
		o.HTTPMaxRequestBytes = 1 << 20
	}
	if o.HTTPMaxRedirects <= 0 {
		o.HTTPMaxRedirects = 5
	}
	if o.Path == "" {
		o.Path = defaultPath
	}
	if o.Lang == "" {
		o.Lang = "C.UTF-8"
	}
	if o.GitName == "" {
		o.GitName = "Parapet Agent"
	}
	if o.GitEmail == "" {
		o.GitEmail = "agent@parapet.invalid"
	}
}

// setupHome creates the private HOME, or checks the configured one.
func (r *Registry) setupHome() error {
	if r.opts.Home != "" {
		home, err := filepath.Abs(r.opts.Home)
		if err != nil {
			return fmt.Errorf("tools: Home %q: %w", r.opts.Home, err)
		}
		real, err := filepath.EvalSymlinks(home)
		if err != nil {
			return fmt.Errorf("tools: Home %q: %w", home, err)
		}
		if _, inside := within(r.wsReal, real); inside {
			return fmt.Errorf("tools: Home %q lies inside the workspace; the agent could plant configuration there", home)
		}
		r.home = home
		return nil
	}
	home, err := os.MkdirTemp("", "parapet-home-")
	if err != nil {
		return fmt.Errorf("tools: creating a private HOME: %w", err)
	}
	r.home, r.ownsHome = home, true
	gitconfig := fmt.Sprintf("[user]\n\tname = %s\n\temail = %s\n", gitConfigQuote(r.opts.GitName), gitConfigQuote(r.opts.GitEmail))
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(gitconfig), 0o600); err != nil {
		os.RemoveAll(home)
		return fmt.Errorf("tools: writing the private HOME's .gitconfig: %w", err)
	}
	return nil
}

// gitConfigQuote quotes a value for a git config file.
func gitConfigQuote(s string) string {
	s = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", " ").Replace(s)
	return `"` + s + `"`
}

// Close releases the workspace handle and removes the private HOME.
func (r *Registry) Close() error {
	var errs []error
	if r.root != nil {
		errs = append(errs, r.root.Close())
	}
	if r.http != nil {
		r.http.CloseIdleConnections()
	}
	if r.ownsHome {
		errs = append(errs, os.RemoveAll(r.home))
	}
	return errors.Join(errs...)
}

// Workspace returns the workspace directory with symbolic links resolved.
func (r *Registry) Workspace() string { return r.wsReal }

// Groups lists the tool groups load_tools accepts.
func (r *Registry) Groups() []string {
	var out []string
	for _, g := range groupOrder {
		for _, t := range r.tools {
			if t.def.Group == g {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// Defs returns the definitions of the given groups, all tools when none is
// given. An unknown group is an error.
func (r *Registry) Defs(groups ...string) ([]Def, error) {
	for _, g := range groups {
		if !slices.Contains(groupOrder, g) {
			return nil, fmt.Errorf("unknown tool group %q (known: %s)", g, strings.Join(groupOrder, ", "))
		}
	}
	var out []Def
	for _, name := range r.order {
		t := r.tools[name]
		if name == LoadToolsName {
			continue
		}
		if len(groups) == 0 || slices.Contains(groups, t.def.Group) {
			out = append(out, t.def)
		}
	}
	return out, nil
}

// LoadToolsDef is the meta-tool's definition, sent to the agent first.
func (r *Registry) LoadToolsDef() Def { return r.tools[LoadToolsName].def }

// LoadToolsGroups validates load_tools arguments and returns the groups.
func (r *Registry) LoadToolsGroups(argsJSON []byte) ([]string, error) {
	a, err := parseArgs(r.tools[LoadToolsName].props, argsJSON)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", LoadToolsName, err)
	}
	return a.strs("groups"), nil
}

// Lookup returns a tool's definition.
func (r *Registry) Lookup(name string) (Def, bool) {
	t, ok := r.tools[name]
	if !ok {
		return Def{}, false
	}
	return t.def, true
}

// ErrUnknownTool is the error Prepare wraps for a name the registry lacks.
var ErrUnknownTool = errors.New("unknown tool")

// Call is one tool call parsed once, so that what the shield judges and
// what runs are the same parse: Payload is the arguments re-encoded
// canonically (sorted members, defaults as given, no duplicates), and Run
// executes the arguments Payload encodes.
type Call struct {
	// Name is the tool, which is also the shield's action type.
	Name string
	// Write reports whether the tool can change state: files, the
	// repository, anything a command does, or a remote service
	// (http_request can POST). Off-the-record sessions refuse these.
	Write bool
	// Payload is what the shield judges and the action hash covers.
	Payload []byte

	tool *tool
	args args
}

// Prepare looks name up and parses its arguments against the tool's
// schema, once. Unknown tools (ErrUnknownTool) and load_tools (answered by
// the engine, not an action) are errors, as are arguments the schema
// refuses.
func (r *Registry) Prepare(name string, argsJSON []byte) (*Call, error) {
	t, ok := r.tools[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownTool, name, strings.Join(r.order, ", "))
	}
	if name == LoadToolsName {
		return nil, errors.New("load_tools is answered by the engine and is not a shield action")
	}
	a, err := parseArgs(t.props, argsJSON)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	payload, err := canonicalJSON(a)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding the payload: %w", name, err)
	}
	return &Call{Name: name, Write: t.write, Payload: payload, tool: t, args: a}, nil
}

// Execute prepares and runs one call: Prepare then Run.
func (r *Registry) Execute(ctx context.Context, name string, argsJSON []byte) Result {
	c, err := r.Prepare(name, argsJSON)
	if err != nil {
		return errResult(err)
	}
	return r.Run(ctx, c)
}

// Run executes a prepared call, bounding its output and its time, and
// reports how long it took. spawn_agent is answered by the engine and
// refused here.
func (r *Registry) Run(ctx context.Context, c *Call) Result {
	start := time.Now()
	res := r.run(ctx, c)
	res.Duration = time.Since(start)
	if !utf8.ValidString(res.Output) {
		res.Output = strings.ToValidUTF8(res.Output, "\uFFFD") // proto strings must be UTF-8
	}
	if out, cut := capString(res.Output, r.opts.OutputLimit+512); cut {
		res.Output, res.Truncated = out, true
	}
	return res
}

func (r *Registry) run(ctx context.Context, c *Call) Result {
	if c.Name == SpawnAgentName {
		return errResult(fmt.Errorf("%s is answered by the engine, not executed as a tool", c.Name))
	}
	if err := ctx.Err(); err != nil {
		return errResult(fmt.Errorf("%s: not run: %w", c.Name, err))
	}
	return c.tool.run(ctx, c.args)
}

func errResult(err error) Result { return Result{Output: err.Error(), IsError: true} }

func okResult(out string, truncated bool) Result { return Result{Output: out, Truncated: truncated} }
