//go:build linux

package secrets

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// NonDumpable makes this process non-dumpable (prctl PR_SET_DUMPABLE 0):
// its /proc/PID entries belong to root from now on, so other processes of
// the same user can no longer read its environ, mem, fd or maps, nor
// ptrace it; it writes no core dump. The setting lasts until the process
// execs another program, which resets it.
func NonDumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("secrets: prctl(PR_SET_DUMPABLE, 0): %w", err)
	}
	return nil
}

// Dumpable reports this process's dumpable flag.
func Dumpable() (bool, error) {
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil {
		return false, fmt.Errorf("secrets: prctl(PR_GET_DUMPABLE): %w", err)
	}
	return v != 0, nil
}
