package tools

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Git runs in the confined executor with the workspace writable, and
// repository configuration can name programs for git to run (hooks,
// fsmonitor, filter and diff drivers, pagers, signing).
// The git tools therefore run the git binary with an argv (never a shell)
// and pin every such setting through command-line configuration, which
// outranks all configuration files:
//
//   - hooks are not run (core.hooksPath=/dev/null), commits are not signed;
//   - fsmonitor, pagers, editors and colour are off;
//   - filter drivers (clean/smudge/process) and diff drivers (textconv,
//     command) configured anywhere are blanked; git_add refuses to run in a
//     repository that configures a clean filter (such as Git LFS), since
//     skipping the filter would stage raw contents;
//   - discovery stops at the workspace (GIT_CEILING_DIRECTORIES), implicit
//     bare repositories are refused (safe.bareRepository=explicit), the work
//     tree is the workspace whatever core.worktree says, and pathspecs are
//     literal;
//   - system configuration is ignored and $HOME is the tools' private home.
//
// The file tools never write inside .git, so the agent can change none of
// this without a shield-judged execute_command.

// gitFixedConfig is the configuration every git tool call runs with.
var gitFixedConfig = [][2]string{
	{"core.hooksPath", "/dev/null"},
	{"core.fsmonitor", "false"},
	{"core.pager", "cat"},
	{"color.ui", "false"},
	{"commit.gpgSign", "false"},
	{"tag.gpgSign", "false"},
	{"log.showSignature", "false"},
	{"safe.bareRepository", "explicit"},
	{"status.submoduleSummary", "false"},
	{"submodule.recurse", "false"},
}

// driverOverride is the neutral value for a configured filter or diff
// driver key, or "" and false when the key is not one that runs a program.
func driverOverride(key string) (string, bool) {
	i := strings.LastIndexByte(key, '.')
	if i < 0 || strings.Count(key, ".") < 2 { // needs section.subsection.name
		return "", false
	}
	switch strings.ToLower(key[i+1:]) {
	case "clean", "smudge", "process", "textconv", "command":
		return "", true
	case "required":
		return "false", true
	}
	return "", false
}

// gitCall prepares the environment of one git call: the fixed settings,
// plus a blank for every filter or diff driver the repository configures.
// It reports whether a clean filter is configured.
func (r *Registry) gitCall(ctx context.Context) (env []string, cleanFilter bool, err error) {
	env = append(append([]string{}, r.gitEnv...),
		"GIT_TERMINAL_PROMPT=0",
		"GIT_PAGER=cat",
		"PAGER=cat",
		"GIT_EDITOR=false",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_CEILING_DIRECTORIES="+filepath.Dir(r.wsReal),
	)
	// Reading configuration runs nothing; it lists the driver keys to blank.
	pres, perr := r.runProcess(ctx, []string{r.gitPath, "config", "-z", "--name-only", "--get-regexp", `^(filter|diff)\.`}, env, r.opts.CommandTimeout)
	switch {
	case perr != nil:
		return nil, false, fmt.Errorf("could not run git: %v", perr)
	case pres.truncated || pres.timedOut || pres.canceled:
		return nil, false, errors.New("could not read the repository's git configuration completely; refused")
	case pres.exitCode == 1: // no such keys
	case pres.exitCode != 0:
		return nil, false, fmt.Errorf("git could not read its configuration: %s", strings.TrimSpace(pres.output))
	}
	cfg := append([][2]string{}, gitFixedConfig...)
	if pres.exitCode == 0 {
		for key := range strings.SplitSeq(pres.output, "\x00") {
			if v, ok := driverOverride(key); ok {
				cfg = append(cfg, [2]string{key, v})
				last := strings.ToLower(key[strings.LastIndexByte(key, '.')+1:])
				if strings.HasPrefix(strings.ToLower(key), "filter.") && (last == "clean" || last == "process") {
					cleanFilter = true
				}
			}
		}
	}
	env = append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(len(cfg)))
	for i, kv := range cfg {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	return env, cleanFilter, nil
}

// runGit runs one git subcommand in the workspace.
func (r *Registry) runGit(ctx context.Context, tool string, refuseCleanFilter bool, gitArgs ...string) Result {
	if r.gitPath == "" {
		return errResult(fmt.Errorf("%s: %w", tool, errNoGit))
	}
	env, cleanFilter, err := r.gitCall(ctx)
	if err != nil {
		return errResult(fmt.Errorf("%s: %w", tool, err))
	}
	if refuseCleanFilter && cleanFilter {
		return errResult(fmt.Errorf("%s: this repository configures a git clean filter (for example Git LFS); the git tools never run filter programs, and staging without it would store raw contents; use execute_command instead", tool))
	}
	argv := append([]string{r.gitPath, "--no-pager", "--literal-pathspecs", "--work-tree=" + r.wsReal}, gitArgs...)
	pres, err := r.runProcess(ctx, argv, env, r.opts.CommandTimeout)
	if err != nil {
		return errResult(fmt.Errorf("%s: could not run git: %v", tool, err))
	}
	return processResult(pres, r.opts.CommandTimeout, false)
}

// gitPaths confines path arguments to the workspace, relative to it.
func (r *Registry) gitPaths(tool string, paths ...string) ([]string, error) {
	out := make([]string, len(paths))
	for i, p := range paths {
		rel, err := r.resolve(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
		out[i] = rel
	}
	return out, nil
}

func (r *Registry) gitStatus(ctx context.Context, _ args) Result {
	return r.runGit(ctx, "git_status", false, "status", "--short", "--branch")
}

func (r *Registry) gitDiff(ctx context.Context, a args) Result {
	argv := []string{"diff", "--no-ext-diff", "--no-textconv", "--no-color"}
	what := "unstaged"
	if a.boolean("staged") {
		argv = append(argv, "--cached")
		what = "staged"
	}
	if p := a.str("path"); p != "" {
		rel, err := r.gitPaths("git_diff", p)
		if err != nil {
			return errResult(err)
		}
		argv = append(argv, "--", rel[0])
	}
	res := r.runGit(ctx, "git_diff", false, argv...)
	if !res.IsError && res.Output == "[no output]" {
		res.Output = "no " + what + " changes"
	}
	return res
}

func (r *Registry) gitLog(ctx context.Context, a args) Result {
	n := a.integer("max_count", 20)
	return r.runGit(ctx, "git_log", false, "log", "--no-color", "--max-count="+strconv.FormatInt(n, 10), "--date=short", "--format=%h %ad %an: %s")
}

func (r *Registry) gitAdd(ctx context.Context, a args) Result {
	paths, err := r.gitPaths("git_add", a.strs("paths")...)
	if err != nil {
		return errResult(err)
	}
	res := r.runGit(ctx, "git_add", true, append([]string{"add", "--"}, paths...)...)
	if !res.IsError && res.Output == "[no output]" {
		res.Output = "staged " + strings.Join(paths, ", ")
	}
	return res
}

func (r *Registry) gitCommit(ctx context.Context, a args) Result {
	msg := a.str("message")
	if strings.TrimSpace(msg) == "" {
		return errResult(errors.New("git_commit: the commit message is empty; write one that says what changed"))
	}
	return r.runGit(ctx, "git_commit", false, "commit", "--no-verify", "--no-gpg-sign", "--message="+msg)
}
