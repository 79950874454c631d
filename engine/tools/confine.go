package tools

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parapet-dev/parapet/sandbox"
)

// Grant is what a verdict allows one call beyond the default confinement
// of a command: the workspace and a private temp dir writable, the
// system's read-only locations readable, no network. The zero Grant is
// that default.
type Grant struct {
	// ReadOnlyWorkspace narrows the write scope to the call's temp dir.
	ReadOnlyWorkspace bool
	// ConnectTCP are the TCP ports the command may connect to (any
	// address); none means no network. With ports, UDP (DNS) is allowed too.
	ConnectTCP []uint16
	// ReadPaths are extra read-only paths: absolute, "~/…" (the engine
	// user's home, Options.UserHome) or "$WORKSPACE/…".
	ReadPaths []string
}

type grantKey struct{}

func withGrant(ctx context.Context, g Grant) context.Context {
	return context.WithValue(ctx, grantKey{}, g)
}

func grantFrom(ctx context.Context) Grant {
	g, _ := ctx.Value(grantKey{}).(Grant)
	return g
}

// errUnconfined is why no command runs without an executor, unless the
// operator allowed it.
var errUnconfined = errors.New("commands run only in the confined executor, which is not available on this host (Landlock and seccomp are needed); the operator can pass --allow-unconfined to run them with the engine's full rights")

// ExecuteWith is Execute applying g to the commands the call runs
// (execute_command and the git tools; the file tools are confined to the
// workspace whatever the grant says, and http_request dials only public
// addresses).
func (r *Registry) ExecuteWith(ctx context.Context, name string, argsJSON []byte, g Grant) Result {
	if err := r.checkGrantPaths(g); err != nil {
		return errResult(fmt.Errorf("%s: not run: %w", name, err))
	}
	return r.Execute(withGrant(ctx, g), name, argsJSON)
}

// RunWith is Run applying g, the grant of the verdict that judged c.
func (r *Registry) RunWith(ctx context.Context, c *Call, g Grant) Result {
	if err := r.checkGrantPaths(g); err != nil {
		return errResult(fmt.Errorf("%s: not run: %w", c.Name, err))
	}
	return r.Run(withGrant(ctx, g), c)
}

// Confined reports whether commands run in the confined executor.
func (r *Registry) Confined() bool { return r.opts.Executor != nil }

// execSpec is the confinement of one command: argv with env in the
// workspace, the system's read-only locations, the private HOME read-only,
// the workspace (unless the grant narrows it) and tmp writable, the
// hidden paths masked, and the granted ports.
func (r *Registry) execSpec(argv, env []string, tmp string, g Grant) sandbox.ExecSpec {
	write := []string{tmp}
	read := []string{r.home}
	if g.ReadOnlyWorkspace {
		read = append(read, r.wsReal)
	} else {
		write = append(write, r.wsReal)
	}
	for _, p := range g.ReadPaths {
		if abs, ok := r.expandGrantPath(p); ok {
			read = append(read, abs)
		}
	}
	args := slices.Clone(argv)
	args[0] = filepath.Base(argv[0])
	return sandbox.ExecSpec{
		Path: argv[0], Args: args, Env: env, Dir: r.wsReal,
		ReadExec: r.systemPaths(), Read: read, Write: write, Mask: r.masks(),
		ConnectTCP: slices.Clone(g.ConnectTCP), Network: len(g.ConnectTCP) > 0,
	}
}

func (r *Registry) systemPaths() []string {
	if r.opts.SystemPaths != nil {
		return r.opts.SystemPaths
	}
	return sandbox.DefaultSystemPaths()
}

// masks are the paths no command may read even below a granted path: the
// workspace's .parapet and Options.Hidden (the session database and the
// engine's state directory).
func (r *Registry) masks() []string {
	m := []string{filepath.Join(r.wsReal, StateDirName)}
	for _, h := range r.opts.Hidden {
		if abs, err := filepath.Abs(h); err == nil {
			m = append(m, abs)
		}
	}
	return m
}

// expandGrantPath resolves a granted read path; anything else (relative,
// ~user, other variables) is dropped: a grant never widens by accident.
func (r *Registry) expandGrantPath(p string) (string, bool) {
	switch {
	case p == "$WORKSPACE" || strings.HasPrefix(p, "$WORKSPACE/"):
		return filepath.Join(r.wsReal, strings.TrimPrefix(p, "$WORKSPACE")), true
	case p == "~" || strings.HasPrefix(p, "~/"):
		if r.opts.UserHome == "" {
			return "", false
		}
		return filepath.Join(r.opts.UserHome, strings.TrimPrefix(p, "~")), true
	case filepath.IsAbs(p):
		return filepath.Clean(p), true
	}
	return "", false
}

// checkGrantPaths reports the first read path a grant could not use.
func (r *Registry) checkGrantPaths(g Grant) error {
	for _, p := range g.ReadPaths {
		if _, ok := r.expandGrantPath(p); !ok {
			return fmt.Errorf("granted read path %q is not absolute, ~/… or $WORKSPACE/…", p)
		}
	}
	return nil
}
