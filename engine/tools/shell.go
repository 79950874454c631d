package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// DefaultScrubEnv returns the environment variable name patterns dropped
// from every command and git environment. Patterns are shell globs matched
// case-insensitively against the whole name. Most name credentials; the
// last few let a variable run code in every process (LD_PRELOAD) or reach
// the engine user's keys (SSH_AUTH_SOCK).
func DefaultScrubEnv() []string {
	return []string{
		"*_KEY", "*_KEY_*", "*APIKEY*", "*API_KEY*", "*ACCESS_KEY*", "*PRIVATE_KEY*",
		"*_TOKEN", "*_TOKEN_*", "TOKEN", "*SECRET*", "*PASSWORD*", "*PASSWD*", "*PASSPHRASE*",
		"*CREDENTIAL*", "*_PAT", "*_AUTH", "*COOKIE*", "*SESSION_ID*", "*DATABASE_URL*", "*_DSN",
		"AWS_*", "AZURE_*", "GITHUB_TOKEN", "GH_TOKEN", "OPENAI_*", "ANTHROPIC_*",
		"OPENPARALLAX_*", "PARAPET_*",
		"GODEBUG", "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "BASH_ENV", "ENV",
		"SSH_AUTH_SOCK", "SSH_ASKPASS", "GIT_ASKPASS",
	}
}

// scrubbed reports whether an environment variable name matches a pattern.
func (r *Registry) scrubbed(name string) bool {
	upper := strings.ToUpper(name)
	for _, p := range r.scrub {
		if ok, _ := path.Match(strings.ToUpper(p), upper); ok {
			return true
		}
	}
	return false
}

// buildEnv returns the scrubbed base environment plus the fixed PATH, HOME
// and LANG. For git, every GIT_* variable of the engine is dropped too:
// they could point git at another repository, index or program.
func (r *Registry) buildEnv(forGit bool) []string {
	fixed := map[string]string{"PATH": r.opts.Path, "HOME": r.home, "LANG": r.opts.Lang}
	seen := map[string]bool{}
	var env []string
	for _, kv := range r.opts.Env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || seen[name] || r.scrubbed(name) {
			continue
		}
		if _, isFixed := fixed[name]; isFixed {
			continue
		}
		if forGit && strings.HasPrefix(strings.ToUpper(name), "GIT_") {
			continue
		}
		seen[name] = true
		env = append(env, kv)
	}
	for _, k := range []string{"PATH", "HOME", "LANG"} {
		env = append(env, k+"="+fixed[k])
	}
	return env
}

// lookPath finds a program in a PATH list (not the engine's own PATH).
func lookPath(prog, pathList string) string {
	for _, dir := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// procResult is the outcome of one child process.
type procResult struct {
	output    string
	truncated bool
	exitCode  int
	signal    syscall.Signal // non-zero when the process died of a signal
	timedOut  bool
	canceled  bool
}

// pipeGrace bounds the wait for the output pipe after the process group is
// gone: only a process that left the group (setsid) can still hold it open.
const pipeGrace = 2 * time.Second

// runProcess runs argv in the workspace in its own process group with
// empty stdin and combined, capped output. On timeout or cancellation the
// whole group is killed; after a normal exit the group is killed as well,
// so no background process outlives the call.
func (r *Registry) runProcess(ctx context.Context, argv, env []string, timeout time.Duration) (procResult, error) {
	var cmd *exec.Cmd
	var pr *os.File
	switch {
	case r.opts.Executor != nil:
		tmp, err := os.MkdirTemp("", "parapet-call-")
		if err != nil {
			return procResult{}, fmt.Errorf("creating the call's temp dir: %w", err)
		}
		defer os.RemoveAll(tmp)
		cmd, pr, err = r.opts.Executor.Start(r.execSpec(argv, append(env, "TMPDIR="+tmp), tmp, grantFrom(ctx)))
		if err != nil {
			return procResult{}, err
		}
	case r.opts.AllowUnconfined:
		var pw *os.File
		var err error
		pr, pw, err = os.Pipe()
		if err != nil {
			return procResult{}, err
		}
		cmd = exec.Command(argv[0], argv[1:]...)
		cmd.Dir = r.wsReal
		cmd.Env = env
		cmd.Stdin = nil // /dev/null
		cmd.Stdout, cmd.Stderr = pw, pw
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		err = cmd.Start()
		pw.Close() // the children hold the write end now
		if err != nil {
			pr.Close()
			return procResult{}, err
		}
	default:
		return procResult{}, errUnconfined
	}
	pgid := cmd.Process.Pid

	buf := newHeadTail(r.opts.OutputLimit)
	copied := make(chan struct{})
	go func() {
		io.Copy(buf, pr)
		close(copied)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var res procResult
	select {
	case <-waited:
	case <-tctx.Done():
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-waited
		res.canceled = ctx.Err() != nil
		res.timedOut = !res.canceled
	}
	syscall.Kill(-pgid, syscall.SIGKILL) // sweep what the command left running

	grace := time.NewTimer(pipeGrace)
	select {
	case <-copied:
	case <-grace.C:
		pr.Close() // unblocks the copy
		<-copied
	}
	grace.Stop()
	pr.Close()

	res.output, res.truncated = buf.String()
	res.exitCode = cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.signal = ws.Signal()
		res.exitCode = 128 + int(res.signal)
	}
	if res.timedOut || res.canceled {
		res.exitCode = -1
	}
	return res, nil
}

// commandTimeout picks the timeout for a call: the requested one capped by
// the maximum, or the default.
func (r *Registry) commandTimeout(a args) (time.Duration, bool) {
	if !a.has("timeout_seconds") {
		return r.opts.CommandTimeout, false
	}
	secs := a.integer("timeout_seconds", 0)
	if secs > int64(r.opts.MaxCommandTimeout/time.Second) {
		return r.opts.MaxCommandTimeout, true
	}
	return time.Duration(secs) * time.Second, false
}

func (r *Registry) executeCommand(ctx context.Context, a args) Result {
	timeout, capped := r.commandTimeout(a)
	if r.bashPath == "" {
		return errResult(errors.New("execute_command: bash is not installed (not found in the tools' PATH)"))
	}
	pres, err := r.runProcess(ctx, []string{r.bashPath, "--noprofile", "--norc", "-c", a.str("command")}, r.cmdEnv, timeout)
	if err != nil {
		return errResult(fmt.Errorf("execute_command: not run: %v", err))
	}
	return processResult(pres, timeout, capped)
}

// processResult renders a child's outcome; the exit status is written into
// the output too, since the model may see only the text.
func processResult(p procResult, timeout time.Duration, capped bool) Result {
	var b strings.Builder
	b.WriteString(p.output)
	if p.output == "" {
		b.WriteString("[no output]")
	}
	switch {
	case p.timedOut:
		fmt.Fprintf(&b, "\n[timed out after %v; the command and its process group were killed]", timeout)
		if capped {
			b.WriteString("\n[the requested timeout was above the maximum and was capped]")
		}
	case p.canceled:
		b.WriteString("\n[cancelled; the command and its process group were killed]")
	case p.signal != 0:
		fmt.Fprintf(&b, "\n[killed by signal %v (exit code %d)]", p.signal, p.exitCode)
	case p.exitCode != 0:
		fmt.Fprintf(&b, "\n[exit code %d]", p.exitCode)
	}
	return Result{
		Output:    b.String(),
		IsError:   p.exitCode != 0,
		Truncated: p.truncated,
		ExitCode:  p.exitCode,
	}
}

// errNoGit is returned by the git tools when git is not installed.
var errNoGit = errors.New("git is not installed (not found in the tools' PATH)")
