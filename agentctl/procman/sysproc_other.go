//go:build !linux && !freebsd

package procman

import "syscall"

// setParentDeathSignal is a no-op: the platform has no parent-death signal.
func setParentDeathSignal(*syscall.SysProcAttr, syscall.Signal) {}
