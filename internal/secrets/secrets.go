// Package secrets keeps a process's credentials out of reach of the other
// processes of the same user: a child gets its token on an inherited pipe
// that it reads once (never in its environment, which /proc/PID/environ
// shows to every process of the user for the life of the child), and a
// process that holds a credential marks itself non-dumpable, which closes
// its /proc/PID/environ, /proc/PID/mem and /proc/PID/fd to them and
// refuses their ptrace.
package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
)

// MaxSecret bounds what ReadFD accepts: a token, not a file.
const MaxSecret = 4096

// PassFD arranges for cmd's child to find secret on an inherited pipe and
// returns the descriptor number the child will see it on (for a flag such
// as --token-fd). The secret is written into the pipe now, and the write
// end closed, so the child reads it whole and then sees EOF; nothing is
// left open in this process but the read end, which done closes once
// cmd has started (or failed to). Call it after every other change to
// cmd.ExtraFiles, so the number stays right.
func PassFD(cmd *exec.Cmd, secret []byte) (fd int, done func(), err error) {
	if len(secret) == 0 || len(secret) > MaxSecret {
		return 0, nil, fmt.Errorf("secrets: a secret of %d bytes (want 1 to %d)", len(secret), MaxSecret)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, nil, fmt.Errorf("secrets: pipe: %w", err)
	}
	// A pipe holds at least 4 KiB before a write blocks (PIPE_BUF), and
	// the secret is smaller: the write completes without a reader.
	_, err = w.Write(secret)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Close()
		return 0, nil, fmt.Errorf("secrets: write pipe: %w", err)
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	return 2 + len(cmd.ExtraFiles), func() { r.Close() }, nil
}

// ReadFD reads the secret a parent passed with PassFD on descriptor fd,
// then closes it, so nothing this process starts later inherits it. An
// empty or oversized secret, or a descriptor that is not open, is an
// error naming fd.
func ReadFD(fd int) ([]byte, error) {
	if fd < 3 {
		return nil, fmt.Errorf("secrets: descriptor %d is stdin, stdout or stderr, not a passed secret", fd)
	}
	f := os.NewFile(uintptr(fd), "secret-"+strconv.Itoa(fd))
	if f == nil {
		return nil, fmt.Errorf("secrets: descriptor %d is not valid", fd)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxSecret+1))
	if err != nil {
		return nil, fmt.Errorf("secrets: read descriptor %d: %w", fd, err)
	}
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return nil, fmt.Errorf("secrets: descriptor %d holds no secret", fd)
	case len(b) > MaxSecret:
		return nil, fmt.Errorf("secrets: descriptor %d holds more than %d bytes", fd, MaxSecret)
	}
	return b, nil
}

// ErrUnsupported: this system has no non-dumpable processes.
var ErrUnsupported = errors.New("secrets: non-dumpable processes are not supported on this system")
