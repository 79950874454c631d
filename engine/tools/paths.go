package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
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
	return f, fi, nil
}

// checkWriteTarget verifies, on the open descriptor, that a file about to
// be written lies in the workspace and outside .git. os.Root already keeps
// it inside; this catches a symbolic link inside the workspace that leads
// into .git.
func (r *Registry) checkWriteTarget(p, rel string, f *os.File) error {
	real, err := fdPath(f)
	if err == nil {
		relReal, ok := within(r.wsReal, real)
		if !ok {
			return fmt.Errorf("%q resolves to %s, outside the workspace; refused", p, real)
		}
		if hasGitComponent(relReal) {
			return errGitWrite(p)
		}
		return nil
	}
	// Without /proc the descriptor's path is unknown: refuse writing through
	// symbolic links instead, which is what the check above would police.
	cur := ""
	for c := range strings.SplitSeq(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, c)
		fi, err := r.root.Lstat(cur)
		if err != nil {
			return fsError(p, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%q: writing through the symbolic link %q is not supported on this system", p, cur)
		}
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
