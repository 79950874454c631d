//go:build linux && (amd64 || arm64)

package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// archSpec holds what the filter needs to know about one architecture.
type archSpec struct {
	name      string
	auditArch uint32
	// rejectX32: on amd64, x32 syscalls arrive with AUDIT_ARCH_X86_64 and
	// bit 30 set in the number; they have their own numbering, so they
	// would slip past every rule below.
	rejectX32 bool
	// extraDeny lists syscalls only this architecture has (fork, chmod...).
	extraDeny []deniedSyscall
}

type deniedSyscall struct {
	nr   uint32
	name string
	// lets names what a filter profile may allow; 0: denied by every profile.
	lets allowance
}

// allowance is a set of things the executor's profile allows that the
// agent's does not.
type allowance uint8

const (
	// letsPrograms: execve, execveat, fork, vfork and clone of a process
	// (never with namespace flags). The executor runs programs.
	letsPrograms allowance = 1 << iota
	// letsMetadata: chmod, chown, utime and xattr calls. Landlock cannot
	// restrict them, but chmod +x, touch, cp -p and tar need them; chown to
	// another user needs CAP_CHOWN, which the executor drops.
	letsMetadata
	// letsSocketpair: an unnamed AF_UNIX pair connects nowhere, and
	// Python's asyncio and many test runners need one.
	letsSocketpair
	// letsUDP: AF_INET/AF_INET6 datagram sockets, for DNS when a verdict
	// grants network. Landlock below ABI 10 does not govern UDP ports.
	letsUDP
)

// filterProfile selects what one filter allows beyond the common core.
type filterProfile struct {
	lets allowance
}

// agentProfile is the agent's filter: no programs, no metadata writes.
var agentProfile = filterProfile{}

var seccompArch = &nativeArch

// Return values of the filter. Denials answer EPERM rather than killing, so
// the Go runtime survives a denied call and the probes can observe it.
const (
	retAllow  = unix.SECCOMP_RET_ALLOW
	retEPERM  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
)

// Offsets in struct seccomp_data. Arguments are 64-bit little-endian on both
// supported architectures, so an argument's low word sits at its offset.
// Only low words are inspected: the kernel itself truncates every argument
// checked here to 32 bits (int domain/type/protocol, unsigned int flags and
// ioctl cmd, lower_32_bits(clone_flags)).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
)

func argLow(i int) bpf.LoadAbsolute { return bpf.LoadAbsolute{Off: uint32(offArg0 + 8*i), Size: 4} }

const x32SyscallBit = 0x40000000

// Namespace flags refused even on thread clones: a thread in new namespaces
// widens what the process can reach.
const cloneNamespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// deniedSyscalls answer EPERM whatever their arguments.
func deniedSyscalls(a *archSpec) []deniedSyscall {
	list := []deniedSyscall{
		// New programs, debugging, other processes' memory and fds.
		{unix.SYS_EXECVE, "execve", letsPrograms},
		{unix.SYS_EXECVEAT, "execveat", letsPrograms},
		{unix.SYS_PTRACE, "ptrace", 0},
		{unix.SYS_PROCESS_VM_READV, "process_vm_readv", 0},
		{unix.SYS_PROCESS_VM_WRITEV, "process_vm_writev", 0},
		{unix.SYS_PIDFD_GETFD, "pidfd_getfd", 0},
		{unix.SYS_PROCESS_MADVISE, "process_madvise", 0},
		// io_uring performs socket and file operations the filter never sees.
		{unix.SYS_IO_URING_SETUP, "io_uring_setup", 0},
		{unix.SYS_IO_URING_ENTER, "io_uring_enter", 0},
		{unix.SYS_IO_URING_REGISTER, "io_uring_register", 0},
		// Sockets: socketpair only makes AF_UNIX pairs; nothing may serve.
		{unix.SYS_SOCKETPAIR, "socketpair", letsSocketpair},
		{unix.SYS_BIND, "bind", 0},
		{unix.SYS_LISTEN, "listen", 0},
		// Namespaces and mounts.
		{unix.SYS_UNSHARE, "unshare", 0},
		{unix.SYS_SETNS, "setns", 0},
		{unix.SYS_MOUNT, "mount", 0},
		{unix.SYS_UMOUNT2, "umount2", 0},
		{unix.SYS_PIVOT_ROOT, "pivot_root", 0},
		{unix.SYS_CHROOT, "chroot", 0},
		{unix.SYS_FSOPEN, "fsopen", 0},
		{unix.SYS_FSCONFIG, "fsconfig", 0},
		{unix.SYS_FSMOUNT, "fsmount", 0},
		{unix.SYS_FSPICK, "fspick", 0},
		{unix.SYS_MOVE_MOUNT, "move_mount", 0},
		{unix.SYS_OPEN_TREE, "open_tree", 0},
		{unix.SYS_OPEN_TREE_ATTR, "open_tree_attr", 0},
		{unix.SYS_MOUNT_SETATTR, "mount_setattr", 0},
		// Kernel and system state, mostly for an agent that runs as root.
		{unix.SYS_INIT_MODULE, "init_module", 0},
		{unix.SYS_FINIT_MODULE, "finit_module", 0},
		{unix.SYS_DELETE_MODULE, "delete_module", 0},
		{unix.SYS_KEXEC_LOAD, "kexec_load", 0},
		{unix.SYS_KEXEC_FILE_LOAD, "kexec_file_load", 0},
		{unix.SYS_REBOOT, "reboot", 0},
		{unix.SYS_SWAPON, "swapon", 0},
		{unix.SYS_SWAPOFF, "swapoff", 0},
		{unix.SYS_ACCT, "acct", 0},
		{unix.SYS_QUOTACTL, "quotactl", 0},
		{unix.SYS_QUOTACTL_FD, "quotactl_fd", 0},
		{unix.SYS_BPF, "bpf", 0},
		{unix.SYS_PERF_EVENT_OPEN, "perf_event_open", 0},
		{unix.SYS_USERFAULTFD, "userfaultfd", 0},
		{unix.SYS_KEYCTL, "keyctl", 0},
		{unix.SYS_ADD_KEY, "add_key", 0},
		{unix.SYS_REQUEST_KEY, "request_key", 0},
		{unix.SYS_SETHOSTNAME, "sethostname", 0},
		{unix.SYS_SETDOMAINNAME, "setdomainname", 0},
		{unix.SYS_SETTIMEOFDAY, "settimeofday", 0},
		{unix.SYS_CLOCK_SETTIME, "clock_settime", 0},
		{unix.SYS_CLOCK_ADJTIME, "clock_adjtime", 0},
		{unix.SYS_ADJTIMEX, "adjtimex", 0},
		// Reads Landlock does not see: the kernel log, other processes' file
		// accesses (fanotify hands out their fds), files by handle.
		{unix.SYS_SYSLOG, "syslog", 0},
		{unix.SYS_FANOTIFY_INIT, "fanotify_init", 0},
		{unix.SYS_FANOTIFY_MARK, "fanotify_mark", 0},
		{unix.SYS_OPEN_BY_HANDLE_AT, "open_by_handle_at", 0},
		// Metadata writes Landlock cannot restrict.
		{unix.SYS_FCHMOD, "fchmod", letsMetadata},
		{unix.SYS_FCHMODAT, "fchmodat", letsMetadata},
		{unix.SYS_FCHMODAT2, "fchmodat2", letsMetadata},
		{unix.SYS_FCHOWN, "fchown", letsMetadata},
		{unix.SYS_FCHOWNAT, "fchownat", letsMetadata},
		{unix.SYS_UTIMENSAT, "utimensat", letsMetadata},
		{unix.SYS_SETXATTR, "setxattr", letsMetadata},
		{unix.SYS_LSETXATTR, "lsetxattr", letsMetadata},
		{unix.SYS_FSETXATTR, "fsetxattr", letsMetadata},
		{unix.SYS_SETXATTRAT, "setxattrat", letsMetadata},
		{unix.SYS_REMOVEXATTR, "removexattr", letsMetadata},
		{unix.SYS_LREMOVEXATTR, "lremovexattr", letsMetadata},
		{unix.SYS_FREMOVEXATTR, "fremovexattr", letsMetadata},
		{unix.SYS_REMOVEXATTRAT, "removexattrat", letsMetadata},
	}
	return append(list, a.extraDeny...)
}

// buildFilter returns the agent's seccomp program for a.
func buildFilter(a *archSpec) ([]bpf.Instruction, error) { return buildProfileFilter(a, agentProfile) }

// buildProfileFilter returns the seccomp program for a and profile.
// Syscalls not named here are allowed: an allow-list of everything the Go
// runtime (or, for the executor, any program) may call would break with
// each release, while what must not happen is a short list.
func buildProfileFilter(a *archSpec, prof filterProfile) ([]bpf.Instruction, error) {
	var p program
	p.add(bpf.LoadAbsolute{Off: offArch, Size: 4})
	p.jump(bpf.JumpEqual, a.auditArch, "", "deny") // foreign ABI (e.g. int 0x80)
	p.add(bpf.LoadAbsolute{Off: offNr, Size: 4})
	if a.rejectX32 {
		p.jump(bpf.JumpGreaterOrEqual, x32SyscallBit, "deny", "")
	}
	// clone3 passes its flags in memory, out of the filter's sight: answer
	// ENOSYS so Go and glibc fall back to clone, whose flags are inspected.
	p.jump(bpf.JumpEqual, unix.SYS_CLONE3, "enosys", "")
	p.jump(bpf.JumpEqual, unix.SYS_CLONE, "clone", "")
	p.jump(bpf.JumpEqual, unix.SYS_SOCKET, "socket", "")
	// MSG_FASTOPEN on an unconnected TCP socket connects without connect(2),
	// which Landlock does not check (landlock-lsm/linux#41).
	p.jump(bpf.JumpEqual, unix.SYS_SENDTO, "flags_arg3", "")
	p.jump(bpf.JumpEqual, unix.SYS_SENDMMSG, "flags_arg3", "")
	p.jump(bpf.JumpEqual, unix.SYS_SENDMSG, "flags_arg2", "")
	p.jump(bpf.JumpEqual, unix.SYS_IOCTL, "ioctl", "")
	for _, s := range deniedSyscalls(a) {
		if s.lets != 0 && prof.lets&s.lets == s.lets {
			continue
		}
		p.jump(bpf.JumpEqual, s.nr, "deny", "")
	}
	p.add(bpf.RetConstant{Val: retAllow})

	// clone: for the agent only threads (the Go runtime's and libc's),
	// never a process; for the executor processes too. Never in new
	// namespaces.
	p.label("clone")
	p.add(argLow(0))
	if prof.lets&letsPrograms == 0 {
		p.jump(bpf.JumpBitsSet, unix.CLONE_THREAD, "", "deny")
	}
	p.jump(bpf.JumpBitsSet, cloneNamespaceFlags, "deny", "allow")

	// socket: AF_INET or AF_INET6, SOCK_STREAM, protocol 0 or TCP. That
	// leaves only what Landlock's TCP rules govern: no AF_UNIX, netlink or
	// packet sockets, no UDP (DNS exfiltration; Landlock confines UDP only
	// from ABI 10), no raw sockets, no MPTCP or SCTP (Landlock's TCP rules
	// do not apply to them). With letsUDP, datagram sockets with protocol
	// 0 or UDP as well.
	p.label("socket")
	p.add(argLow(0))
	p.jump(bpf.JumpEqual, unix.AF_INET, "socket_type", "")
	p.jump(bpf.JumpEqual, unix.AF_INET6, "", "deny")
	p.label("socket_type")
	p.add(argLow(1))
	p.add(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: ^uint32(unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC)})
	if prof.lets&letsUDP != 0 {
		p.jump(bpf.JumpEqual, unix.SOCK_DGRAM, "socket_udp", "")
	}
	p.jump(bpf.JumpEqual, unix.SOCK_STREAM, "", "deny")
	p.add(argLow(2))
	p.jump(bpf.JumpEqual, 0, "allow", "")
	p.jump(bpf.JumpEqual, unix.IPPROTO_TCP, "allow", "deny")
	if prof.lets&letsUDP != 0 {
		p.label("socket_udp")
		p.add(argLow(2))
		p.jump(bpf.JumpEqual, 0, "allow", "")
		p.jump(bpf.JumpEqual, unix.IPPROTO_UDP, "allow", "deny")
	}

	p.label("flags_arg3") // sendto, sendmmsg
	p.add(argLow(3))
	p.jump(bpf.JumpBitsSet, unix.MSG_FASTOPEN, "deny", "allow")
	p.label("flags_arg2") // sendmsg
	p.add(argLow(2))
	p.jump(bpf.JumpBitsSet, unix.MSG_FASTOPEN, "deny", "allow")

	// ioctl: no typing into an inherited terminal (TIOCSTI) or its console
	// (TIOCLINUX); Landlock's ioctl rights only cover devices opened later.
	p.label("ioctl")
	p.add(argLow(1))
	p.jump(bpf.JumpEqual, unix.TIOCSTI, "deny", "")
	p.jump(bpf.JumpEqual, unix.TIOCLINUX, "deny", "allow")

	p.label("allow")
	p.add(bpf.RetConstant{Val: retAllow})
	p.label("deny")
	p.add(bpf.RetConstant{Val: retEPERM})
	p.label("enosys")
	p.add(bpf.RetConstant{Val: retENOSYS})
	return p.resolve()
}

// checkFilter builds the filter without installing it, so Apply can fail
// before it restricts anything.
func checkFilter(a *archSpec) error {
	_, err := buildFilter(a)
	return err
}

// installSeccomp loads the filter on every thread of the process (TSYNC),
// present and future, after setting no_new_privs, which seccomp requires
// of unprivileged callers and which TSYNC carries to the other threads.
func installSeccomp(a *archSpec) error { return installProfileSeccomp(a, agentProfile) }

// installProfileSeccomp is installSeccomp for any profile.
func installProfileSeccomp(a *archSpec, prof filterProfile) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: seccomp: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	return installSeccompFilter(a, prof, unix.SECCOMP_FILTER_FLAG_TSYNC)
}

// installSeccompFilter loads the filter with flags (TSYNC: on every
// thread; 0: on the calling thread, which must be locked to its goroutine
// and have no_new_privs).
func installSeccompFilter(a *archSpec, prof filterProfile, flags uintptr) error {
	insns, err := buildProfileFilter(a, prof)
	if err != nil {
		return err
	}
	raw, err := bpf.Assemble(insns)
	if err != nil {
		return fmt.Errorf("sandbox: seccomp: assembling the filter: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}

	r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if e != 0 {
		return fmt.Errorf("sandbox: seccomp(SECCOMP_SET_MODE_FILTER, TSYNC): %w", e)
	}
	if r != 0 {
		// With TSYNC, a positive result is a thread that could not be
		// synchronised, and then no thread got the filter.
		return fmt.Errorf("sandbox: seccomp: thread %d could not be synchronised (TSYNC); no filter installed", r)
	}
	return nil
}

// program assembles classic BPF with symbolic forward jumps.
type program struct {
	insns  []bpf.Instruction
	jumps  []pendingJump
	labels map[string]int
}

type pendingJump struct {
	at              int
	ifTrue, ifFalse string // "" = the next instruction
}

func (p *program) add(i bpf.Instruction) { p.insns = append(p.insns, i) }

func (p *program) jump(cond bpf.JumpTest, val uint32, ifTrue, ifFalse string) {
	p.jumps = append(p.jumps, pendingJump{at: len(p.insns), ifTrue: ifTrue, ifFalse: ifFalse})
	p.add(bpf.JumpIf{Cond: cond, Val: val})
}

func (p *program) label(name string) {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	p.labels[name] = len(p.insns)
}

func (p *program) resolve() ([]bpf.Instruction, error) {
	skip := func(from int, target string) (uint8, error) {
		if target == "" {
			return 0, nil
		}
		to, ok := p.labels[target]
		if !ok {
			return 0, fmt.Errorf("sandbox: seccomp filter: undefined label %q", target)
		}
		d := to - from - 1
		if d < 0 || d > 255 {
			return 0, fmt.Errorf("sandbox: seccomp filter: jump from %d to %q (%d) out of range", from, target, to)
		}
		return uint8(d), nil
	}
	for _, j := range p.jumps {
		ji := p.insns[j.at].(bpf.JumpIf)
		var err error
		if ji.SkipTrue, err = skip(j.at, j.ifTrue); err != nil {
			return nil, err
		}
		if ji.SkipFalse, err = skip(j.at, j.ifFalse); err != nil {
			return nil, err
		}
		p.insns[j.at] = ji
	}
	if len(p.insns) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("sandbox: seccomp filter has %d instructions, more than %d", len(p.insns), unix.BPF_MAXINSNS)
	}
	return p.insns, nil
}
