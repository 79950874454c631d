//go:build linux

// Package secretstest runs test processes as one ordinary user. What
// non-dumpable processes hide, they hide from the other processes of the
// same user; root (CAP_SYS_PTRACE) still sees it. So when the tests run
// as root, the processes under test and the process that tries to read
// them all run as nobody (65534); otherwise as the tests' own user.
package secretstest

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// User is where the processes of one test run.
type User struct {
	// Exe is a copy of the test binary that User may execute (go test's
	// own directory is private to root).
	Exe  string
	cred *syscall.Credential
}

// Nobody is the user a test running as root switches to.
const Nobody = 65534

// New prepares a User for t.
func New(t testing.TB) *User {
	t.Helper()
	if os.Geteuid() != 0 {
		return &User{Exe: os.Args[0]}
	}
	u := &User{cred: &syscall.Credential{Uid: Nobody, Gid: Nobody, NoSetGroups: true}}
	dir := u.Dir(t)
	u.Exe = filepath.Join(dir, filepath.Base(os.Args[0]))
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(u.Exe, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return u
}

// Apply makes cmd run as User.
func (u *User) Apply(cmd *exec.Cmd) {
	if u.cred == nil {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = u.cred
}

// Dir is a new directory that User owns, removed after the test.
func (u *User) Dir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "secretstest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	u.Own(t, dir)
	return dir
}

// Own hands path (and, for a directory, what is in it) to User.
func (u *User) Own(t testing.TB, path string) {
	t.Helper()
	if u.cred == nil {
		return
	}
	err := filepath.Walk(path, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, Nobody, Nobody)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Read reads path as User would, in a process of its own (cat), and
// returns what it read or the error it got.
func (u *User) Read(path string) ([]byte, error) {
	cmd := exec.Command("cat", path)
	u.Apply(cmd)
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return out, &ReadError{Path: path, Stderr: string(ee.Stderr)}
	}
	return out, err
}

// ReadError is a read User was refused.
type ReadError struct{ Path, Stderr string }

func (e *ReadError) Error() string { return "cat " + e.Path + ": " + e.Stderr }
