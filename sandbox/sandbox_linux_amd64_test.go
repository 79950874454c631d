package sandbox

import "golang.org/x/sys/unix"

// archOps: amd64 has a plain fork syscall and x32 numbering.
func archOps(prm childParams, ops map[string]string) {
	ops["fork"] = outcome(rawFork())
	if prm.X32 {
		ops["x32 getpid"] = outcomeX32(unix.RawSyscall(x32SyscallBit|unix.SYS_GETPID, 0, 0, 0))
	}
}

func archExpectations(prm childParams) map[string]string {
	want := map[string]string{"fork": "EPERM"}
	if prm.X32 {
		want["x32 getpid"] = "EPERM"
	}
	return want
}

// rawFork calls fork(2). Should the filter let it through, the new process
// exits at once, before running any more Go code than the comparison.
func rawFork() error {
	pid, _, e := unix.RawSyscall(unix.SYS_FORK, 0, 0, 0)
	if e != 0 {
		return e
	}
	if pid == 0 {
		unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
	}
	var ws unix.WaitStatus
	_, _ = unix.Wait4(int(pid), &ws, 0, nil)
	return nil
}
