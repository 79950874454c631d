package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// resolve turns a path argument into a clean workspace-relative path for
// os.Root. It refuses lexically what can be refused early, with a message
// the model can act on; os.Root then refuses symbolic-link escapes at use.
func (r *Registry) resolve(p string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("path is empty")
	case strings.ContainsRune(p, 0):
		return "", fmt.Errorf("path %q contains a NUL character", p)
	case strings.HasPrefix(p, "~"):
		return "", fmt.Errorf("path %q: '~' (a home directory) is not supported; paths are relative to the workspace root", p)
	}
	if filepath.IsAbs(p) {
		c := filepath.Clean(p)
		for _, base := range []string{r.ws, r.wsReal} {
			if rel, ok := within(base, c); ok {
				return rel, nil
			}
		}
		return "", fmt.Errorf("path %q is outside the workspace %s; use a path inside it, preferably relative to it", p, r.ws)
	}
	c := filepath.Clean(p)
	if !filepath.IsLocal(c) {
		return "", fmt.Errorf("path %q leaves the workspace through '..'; paths must stay inside the workspace", p)
	}
	return c, nil
}

// resolveDir is resolve for optional directory arguments: empty means the
// workspace root.
func (r *Registry) resolveDir(p string) (string, error) {
	if p == "" {
		return ".", nil
	}
	return r.resolve(p)
}

// within reports whether target lies in or at base (both clean and
// absolute) and returns it relative to base.
func within(base, target string) (string, bool) {
	if target == base {
		return ".", true
	}
	if strings.HasPrefix(target, base+string(filepath.Separator)) {
		return target[len(base)+1:], true
	}
	return "", false
}

// hasGitComponent reports whether a relative path enters a .git directory
// (or names a .git file). Case-insensitive for case-insensitive filesystems.
func hasGitComponent(rel string) bool {
	for c := range strings.SplitSeq(filepath.ToSlash(rel), "/") {
		if strings.EqualFold(c, ".git") {
			return true
		}
	}
	return false
}

// StateDirName is the workspace's top-level directory where the process
// manager keeps its own state: state.json with ports and process ids, the
// instance lock, manager.log, the session database. The file tools refuse
// every access to it (and walks skip it), so a prompt-injected agent can
// neither read nor forge nor corrupt that state through them. Only the top
// level is Parapet's: sub/.parapet is an ordinary directory.
const StateDirName = ".parapet"

// isStateRel reports whether a clean workspace-relative path is the state
// directory or lies below it. Case-insensitive for case-insensitive
// filesystems.
func isStateRel(rel string) bool {
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return strings.EqualFold(first, StateDirName)
}

// inState reports whether the walk path wp below a directory whose real
// workspace-relative path is base lies in the state directory. Walks don't
// follow symbolic links, so base joined with wp is the entry's real path.
func inState(base, wp string) bool {
	return isStateRel(path.Join(filepath.ToSlash(base), wp))
}

// errInState says why the state directory is refused; every refusal wraps it.
var errInState = errors.New("Parapet's own state (ports, process ids, locks, logs); it is not accessible to tools")

func errStatePath(p string) error {
	return fmt.Errorf("path %q is in %s, which is %w", p, StateDirName, errInState)
}

// checkStatePath refuses, before anything is opened or created, a path that
// names the state directory or passes through it by way of symbolic links:
// every existing directory on the path is opened and its real path checked.
// What does not exist yet is created by mkdirParents, which follows no
// link; the final component is checked again on the descriptor that is
// actually read or written (openRegular, checkWriteTarget, openDir).
func (r *Registry) checkStatePath(p, rel string) error {
	if isStateRel(rel) {
		return errStatePath(p)
	}
	cur := ""
	for c := range strings.SplitSeq(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, c)
		d, err := r.root.OpenFile(cur, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if errors.Is(err, syscall.ENOTDIR) && cur == rel {
			return r.checkStateFile(p, rel)
		}
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil // the rest does not exist, or a file is in the way: the opener fails
		}
		if err != nil {
			return fsError(p, err)
		}
		real, err := r.realRel(p, cur, d)
		d.Close()
		if err != nil {
			return err
		}
		if isStateRel(real) {
			return errStatePath(p)
		}
	}
	return nil
}

// checkStateFile refuses a path to a regular file that really lies in the
// state directory (a link to .parapet/state.json, say), so that even the
// directory tools refuse it as such instead of describing it. Only regular
// files are opened: opening them has no side effects.
func (r *Registry) checkStateFile(p, rel string) error {
	fi, err := r.root.Stat(rel)
	if err != nil || !fi.Mode().IsRegular() {
		return nil // the opener reports it
	}
	f, err := r.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	real, err := r.realRel(p, rel, f)
	if err != nil {
		return err
	}
	if isStateRel(real) {
		return errStatePath(p)
	}
	return nil
}

// realRel returns the workspace-relative real path of f, which was opened
// through the root as rel.
func (r *Registry) realRel(p, rel string, f *os.File) (string, error) {
	real, err := fdPath(f)
	if err != nil {
		// Without /proc the descriptor's path is unknown. A path without
		// symbolic links is its own real path; any other is refused, since
		// where its links lead can't be verified.
		return r.relWithoutLinks(p, rel)
	}
	relReal, ok := within(r.wsReal, real)
	if !ok {
		return "", fmt.Errorf("%q resolves to %s, outside the workspace; refused", p, real)
	}
	return relReal, nil
}

// relWithoutLinks returns rel if none of its components is a symbolic link.
func (r *Registry) relWithoutLinks(p, rel string) (string, error) {
	if rel == "." {
		return rel, nil
	}
	cur := ""
	for c := range strings.SplitSeq(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, c)
		fi, err := r.root.Lstat(cur)
		if err != nil {
			return "", fsError(p, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("%q: going through the symbolic link %q is not supported on this system (without /proc its target can't be verified)", p, cur)
		}
	}
	return rel, nil
}

// mkdirParents creates the missing directories of dir one at a time. Unlike
// MkdirAll it never follows a dangling symbolic link, which would create
// directories wherever the link points (into the state directory, say).
func (r *Registry) mkdirParents(p, dir string) error {
	cur := ""
	for c := range strings.SplitSeq(dir, string(filepath.Separator)) {
		cur = filepath.Join(cur, c)
		fi, err := r.root.Stat(cur)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%q: a component of the path is a file, not a directory", p)
			}
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("creating the parent directories: %w", fsError(cur, err))
		}
		if err := r.root.Mkdir(cur, 0o755); errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%q: %q is a symbolic link to nothing; directories are not created through it", p, cur)
		} else if err != nil {
			return fmt.Errorf("creating the parent directories: %w", fsError(cur, err))
		}
	}
	return nil
}

// errGitWrite explains why the file tools never write into .git: git's
// configuration and hooks can run programs, and the git tools run unsandboxed.
func errGitWrite(p string) error {
	return fmt.Errorf("path %q is inside .git: the file tools do not write git's internals (its config and hooks can run programs); use the git tools", p)
}

// fsError turns a filesystem error into a message naming the path as the
// model gave it and saying what to do.
func fsError(p string, err error) error {
	var errno syscall.Errno
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%q does not exist in the workspace", p)
	case strings.Contains(err.Error(), "path escapes from parent"):
		return fmt.Errorf("%q resolves outside the workspace: a symbolic link on the way points outside it or is absolute; only files inside the workspace are accessible", p)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%q: permission denied", p)
	case errors.As(err, &errno) && errno == syscall.ENOTDIR:
		return fmt.Errorf("%q: a component of the path is a file, not a directory", p)
	case errors.As(err, &errno) && errno == syscall.EISDIR:
		return fmt.Errorf("%q is a directory", p)
	case errors.As(err, &errno) && errno == syscall.ELOOP:
		return fmt.Errorf("%q: too many levels of symbolic links", p)
	case errors.As(err, &errno) && errno == syscall.ENXIO:
		return fmt.Errorf("%q is not a regular file (a named pipe or device); refused", p)
	}
	return fmt.Errorf("%q: %v", p, err)
}

// fileType names a non-regular file type for refusals.
func fileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}

// openRegular opens a regular file through the root. O_NONBLOCK keeps a
// named pipe swapped in under the name from blocking the open; the type is
// then checked on the open descriptor, so no later swap can change it.
func (r *Registry) openRegular(p, rel string, flag int) (*os.File, fs.FileInfo, error) {
	f, err := r.root.OpenFile(rel, flag|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fsError(p, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fsError(p, err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, nil, fmt.Errorf("%q is a directory; use list_directory to see its contents", p)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%q is %s, not a regular file; refused", p, fileType(fi.Mode()))
	}
	// The descriptor is what gets read or written: check where it really is.
	real, err := r.realRel(p, rel, f)
	if err == nil && isStateRel(real) {
		err = errStatePath(p)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// checkWriteTarget verifies, on the open descriptor, that a file about to
// be written lies in the workspace, outside .git and outside the state
// directory. os.Root already keeps it inside; this catches a symbolic link
// inside the workspace that leads into .git or the state directory.
func (r *Registry) checkWriteTarget(p, rel string, f *os.File) error {
	real, err := r.realRel(p, rel, f)
	switch {
	case err != nil:
		return err
	case hasGitComponent(real):
		return errGitWrite(p)
	case isStateRel(real):
		return errStatePath(p)
	}
	return nil
}

// checkHardLinks refuses to write a file that has other names: a hard link
// can tie a workspace name to a file outside the workspace, which os.Root
// can't see, and writing would change every name.
func checkHardLinks(p string, fi fs.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return fmt.Errorf("%q has %d hard links; writing it would change the file under its other names too, possibly outside the workspace; refused", p, st.Nlink)
	}
	return nil
}

// fdPath returns the path the kernel records for an open file (Linux).
func fdPath(f *os.File) (string, error) {
	conn, err := f.SyscallConn()
	if err != nil {
		return "", err
	}
	var path string
	var rerr error
	if err := conn.Control(func(fd uintptr) {
		path, rerr = os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10))
	}); err != nil {
		return "", err
	}
	if rerr != nil {
		return "", rerr
	}
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("descriptor path %q is not absolute", path)
	}
	return path, nil
}
