package tools

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// ForWorkspace is a registry with r's options in another workspace (an
// existing directory), its commands seeing env on top of r's base
// environment (scrubbed like it). It gets a private HOME of its own when
// r made one. The caller closes it.
func (r *Registry) ForWorkspace(dir string, env []string) (*Registry, error) {
	opts := r.opts
	opts.Workspace = dir
	opts.Env = append(slices.Clone(r.opts.Env), env...)
	if r.ownsHome {
		opts.Home = ""
	}
	return New(opts)
}

// Clone clones repo (only branch, when given) into the workspace, which
// must be empty: a gateway thread's checkout. It runs git like the git
// tools do (argv, hooks, drivers and system configuration off, in the
// confined executor) with a grant of its own: a URL's port for a network
// repository, read access for a local one. Transports that run programs
// (ext::, fd::) are refused.
func (r *Registry) Clone(ctx context.Context, repo, branch string) Result {
	g, err := cloneGrant(repo)
	if err != nil {
		return errResult(fmt.Errorf("git clone: %w", err))
	}
	if err := CheckBranchName(branch); err != nil {
		return errResult(fmt.Errorf("git clone: %w", err))
	}
	if r.gitPath == "" {
		return errResult(fmt.Errorf("git clone: %w", errNoGit))
	}
	entries, err := os.ReadDir(r.wsReal)
	if err != nil || len(entries) > 0 {
		return errResult(fmt.Errorf("git clone: the workspace %s is not an empty directory", r.wsReal))
	}
	ctx = withGrant(ctx, g)
	env, _, err := r.gitCall(ctx)
	if err != nil {
		return errResult(fmt.Errorf("git clone: %w", err))
	}
	env = append(env, "GIT_ALLOW_PROTOCOL=https:http:ssh:git:file")
	argv := []string{r.gitPath, "clone", "--no-hardlinks", "--template=", "--no-recurse-submodules"}
	if branch != "" {
		argv = append(argv, "--branch", branch, "--single-branch")
	}
	argv = append(argv, "--", repo, ".")
	pres, err := r.runProcess(ctx, argv, env, r.opts.MaxCommandTimeout)
	if err != nil {
		return errResult(fmt.Errorf("git clone: could not run git: %v", err))
	}
	return processResult(pres, r.opts.MaxCommandTimeout, false)
}

// cloneGrant is what a clone of repo needs beyond the default
// confinement, or why repo is refused.
func cloneGrant(repo string) (Grant, error) {
	switch {
	case repo == "":
		return Grant{}, errors.New("the repository is empty")
	case strings.HasPrefix(repo, "-"):
		return Grant{}, fmt.Errorf("repository %q starts with '-'", repo)
	case strings.IndexFunc(repo, unicode.IsControl) >= 0:
		return Grant{}, errors.New("the repository contains control characters")
	}
	if path, local, err := LocalRepository(repo); local {
		if err != nil {
			return Grant{}, err
		}
		return Grant{ReadPaths: []string{path}}, nil
	}
	if u, err := url.Parse(repo); err == nil && u.Scheme != "" && strings.Contains(repo, "://") {
		ports := map[string]uint16{"https": 443, "http": 80, "ssh": 22, "git": 9418}
		switch {
		case ports[u.Scheme] != 0:
			port := ports[u.Scheme]
			if p := u.Port(); p != "" {
				n, err := strconv.ParseUint(p, 10, 16)
				if err != nil || n == 0 {
					return Grant{}, fmt.Errorf("repository %q: bad port %q", repo, p)
				}
				port = uint16(n)
			}
			return Grant{ConnectTCP: []uint16{port}}, nil
		}
		return Grant{}, fmt.Errorf("repository %q: scheme %q is not one of https, http, ssh, git, file", repo, u.Scheme)
	}
	// scp-like user@host:path is ssh; anything else (ext::cmd, relative
	// paths) is refused.
	if host, _, ok := strings.Cut(repo, ":"); ok && strings.Contains(host, "@") && !strings.ContainsAny(host, "/ ") {
		return Grant{ConnectTCP: []uint16{22}}, nil
	}
	return Grant{}, fmt.Errorf("repository %q: want an https, http, ssh, git or file URL, user@host:path, or an absolute path", repo)
}

// LocalRepository reports whether repo names a repository on this
// machine (an absolute path or a file URL) and, if so, its clean path.
// A clone of one reads it with the engine's rights, outside what the
// shield judges, so callers decide which local repositories may be cloned.
func LocalRepository(repo string) (path string, local bool, err error) {
	if filepath.IsAbs(repo) {
		return filepath.Clean(repo), true, nil
	}
	u, perr := url.Parse(repo)
	if perr != nil || u.Scheme != "file" || !strings.Contains(repo, "://") {
		return "", false, nil
	}
	if !filepath.IsAbs(u.Path) {
		return "", true, fmt.Errorf("repository %q: a file URL needs an absolute path", repo)
	}
	return filepath.Clean(u.Path), true, nil
}

// CheckBranchName accepts "" (the default branch) or a plain branch name.
func CheckBranchName(b string) error {
	if b == "" {
		return nil
	}
	if len(b) > 255 || strings.HasPrefix(b, "-") || strings.HasPrefix(b, "/") || strings.HasSuffix(b, "/") ||
		strings.HasSuffix(b, ".lock") || strings.Contains(b, "..") || strings.Contains(b, "@{") || strings.Contains(b, "//") {
		return fmt.Errorf("branch %q is not a valid branch name", b)
	}
	for _, c := range b {
		if c <= ' ' || c == 0x7f || strings.ContainsRune("~^:?*[\\", c) {
			return fmt.Errorf("branch %q is not a valid branch name", b)
		}
	}
	return nil
}
