//go:build linux || freebsd

package procman

import "syscall"

// setParentDeathSignal asks the kernel to signal the child when the thread
// that forked it dies. The Go runtime keeps its threads until the process
// exits, unless a goroutine ends while locked to one (LockOSThread without
// UnlockOSThread): programs using this option must not do that.
func setParentDeathSignal(a *syscall.SysProcAttr, sig syscall.Signal) {
	if sig != 0 {
		a.Pdeathsig = sig
	}
}
