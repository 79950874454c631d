//go:build linux && (amd64 || arm64)

package sandbox

import (
	"fmt"
	"runtime"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The enforcement tests run the filter in the kernel. This test evaluates
// the same assembled program on inputs a Go process cannot safely or
// possibly produce: syscalls of a foreign ABI (int 0x80), x32 numbers,
// fork and vfork, argument high bits.

type seccompInput struct {
	nr   uint32
	arch uint32
	args [6]uint64
}

// word returns the 32-bit word at off in struct seccomp_data
// (little-endian, as on both supported architectures).
func (in seccompInput) word(t *testing.T, off uint32) uint32 {
	switch {
	case off == 0:
		return in.nr
	case off == 4:
		return in.arch
	case off == 8 || off == 12:
		return 0 // instruction pointer
	case off >= 16 && off < 64 && off%4 == 0:
		a := in.args[(off-16)/8]
		if (off-16)%8 == 0 {
			return uint32(a)
		}
		return uint32(a >> 32)
	}
	t.Fatalf("filter loads seccomp_data offset %d", off)
	return 0
}

// evalFilter runs a classic BPF program as the kernel's seccomp does. It
// knows only the instructions the kernel accepts for seccomp and fails on
// anything else.
func evalFilter(t *testing.T, prog []bpf.Instruction, in seccompInput) uint32 {
	t.Helper()
	var a uint32
	for pc := 0; pc < len(prog); pc++ {
		switch ins := prog[pc].(type) {
		case bpf.LoadAbsolute:
			if ins.Size != 4 {
				t.Fatalf("pc %d: load of size %d", pc, ins.Size)
			}
			a = in.word(t, ins.Off)
		case bpf.ALUOpConstant:
			if ins.Op != bpf.ALUOpAnd {
				t.Fatalf("pc %d: unexpected ALU op %v", pc, ins.Op)
			}
			a &= ins.Val
		case bpf.JumpIf:
			var cond bool
			switch ins.Cond {
			case bpf.JumpEqual:
				cond = a == ins.Val
			case bpf.JumpNotEqual:
				cond = a != ins.Val
			case bpf.JumpGreaterThan:
				cond = a > ins.Val
			case bpf.JumpGreaterOrEqual:
				cond = a >= ins.Val
			case bpf.JumpLessThan:
				cond = a < ins.Val
			case bpf.JumpLessOrEqual:
				cond = a <= ins.Val
			case bpf.JumpBitsSet:
				cond = a&ins.Val != 0
			case bpf.JumpBitsNotSet:
				cond = a&ins.Val == 0
			default:
				t.Fatalf("pc %d: unexpected jump %v", pc, ins.Cond)
			}
			if cond {
				pc += int(ins.SkipTrue)
			} else {
				pc += int(ins.SkipFalse)
			}
		case bpf.RetConstant:
			return ins.Val
		default:
			t.Fatalf("pc %d: instruction %#v is not allowed in seccomp", pc, ins)
		}
	}
	t.Fatal("program ran off its end")
	return 0
}

func TestFilterDecisions(t *testing.T) {
	built, err := buildFilter(seccompArch)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := bpf.Assemble(built)
	if err != nil {
		t.Fatal(err)
	}
	// Evaluate what the kernel would receive, decoded back from the raw form.
	prog, complete := bpf.Disassemble(raw)
	if !complete {
		t.Fatal("assembled filter does not disassemble completely")
	}

	native := seccompArch.auditArch
	foreign := []uint32{unix.AUDIT_ARCH_I386, unix.AUDIT_ARCH_AARCH64}
	if runtime.GOARCH == "arm64" {
		foreign = []uint32{unix.AUDIT_ARCH_ARM, unix.AUDIT_ARCH_X86_64}
	}
	const goThread = unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_SYSVSEM | unix.CLONE_THREAD
	const glibcThread = goThread | unix.CLONE_SETTLS | unix.CLONE_PARENT_SETTID | unix.CLONE_CHILD_CLEARTID

	type call struct {
		desc string
		in   seccompInput
		want uint32
	}
	sys := func(nr uint32, args ...uint64) seccompInput {
		in := seccompInput{nr: nr, arch: native}
		copy(in.args[:], args)
		return in
	}
	calls := []call{
		{"getpid", sys(unix.SYS_GETPID), retAllow},
		{"openat", sys(unix.SYS_OPENAT), retAllow},
		{"connect (Landlock's job)", sys(unix.SYS_CONNECT), retAllow},
		{"futex", sys(unix.SYS_FUTEX), retAllow},
		{"clone3", sys(unix.SYS_CLONE3), retENOSYS},
		{"clone: Go runtime thread", sys(unix.SYS_CLONE, goThread), retAllow},
		{"clone: glibc pthread", sys(unix.SYS_CLONE, glibcThread), retAllow},
		{"clone: high bits ignored, as by the kernel", sys(unix.SYS_CLONE, 1<<40|goThread), retAllow},
		{"clone: fork", sys(unix.SYS_CLONE, uint64(unix.SIGCHLD)), retEPERM},
		{"clone: os/exec vfork", sys(unix.SYS_CLONE, unix.CLONE_VM|unix.CLONE_VFORK|uint64(unix.SIGCHLD)), retEPERM},
		{"clone: thread in new netns", sys(unix.SYS_CLONE, goThread|unix.CLONE_NEWNET), retEPERM},
		{"clone: thread in new user ns", sys(unix.SYS_CLONE, goThread|unix.CLONE_NEWUSER), retEPERM},
		{"socket tcp4 nonblock cloexec", sys(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0), retAllow},
		{"socket tcp6 IPPROTO_TCP", sys(unix.SYS_SOCKET, unix.AF_INET6, unix.SOCK_STREAM, unix.IPPROTO_TCP), retAllow},
		{"socket mptcp", sys(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP), retEPERM},
		{"socket mptcp6", sys(unix.SYS_SOCKET, unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, unix.IPPROTO_MPTCP), retEPERM},
		{"socket sctp stream", sys(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP), retEPERM},
		{"socket udp", sys(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_DGRAM, 0), retEPERM},
		{"socket raw", sys(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP), retEPERM},
		{"socket unknown type flag", sys(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM|0x100, 0), retEPERM},
		{"socket unix", sys(unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM, 0), retEPERM},
		{"socket netlink", sys(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW, 0), retEPERM},
		{"socket packet", sys(unix.SYS_SOCKET, unix.AF_PACKET, unix.SOCK_RAW, 0), retEPERM},
		{"socket vsock", sys(unix.SYS_SOCKET, unix.AF_VSOCK, unix.SOCK_STREAM, 0), retEPERM},
		{"sendto plain", sys(unix.SYS_SENDTO, 3, 0, 1, unix.MSG_NOSIGNAL), retAllow},
		{"sendto fastopen", sys(unix.SYS_SENDTO, 3, 0, 1, unix.MSG_FASTOPEN), retEPERM},
		{"sendmsg plain", sys(unix.SYS_SENDMSG, 3, 0, unix.MSG_NOSIGNAL), retAllow},
		{"sendmsg fastopen", sys(unix.SYS_SENDMSG, 3, 0, unix.MSG_FASTOPEN|unix.MSG_NOSIGNAL), retEPERM},
		{"sendmmsg fastopen", sys(unix.SYS_SENDMMSG, 3, 0, 1, unix.MSG_FASTOPEN), retEPERM},
		{"ioctl TCGETS", sys(unix.SYS_IOCTL, 0, unix.TCGETS), retAllow},
		{"ioctl TIOCGWINSZ", sys(unix.SYS_IOCTL, 0, unix.TIOCGWINSZ), retAllow},
		{"ioctl TIOCSTI", sys(unix.SYS_IOCTL, 0, unix.TIOCSTI), retEPERM},
		{"ioctl TIOCLINUX", sys(unix.SYS_IOCTL, 0, unix.TIOCLINUX), retEPERM},
	}
	for _, d := range deniedSyscalls(seccompArch) {
		calls = append(calls, call{d.name, sys(d.nr), retEPERM})
	}
	for _, a := range foreign {
		calls = append(calls, call{fmt.Sprintf("getpid under foreign arch %#x", a), seccompInput{nr: unix.SYS_GETPID, arch: a}, retEPERM})
	}
	if seccompArch.rejectX32 {
		calls = append(calls, call{"x32 getpid", sys(x32SyscallBit | unix.SYS_GETPID), retEPERM})
	}
	for _, c := range calls {
		if got := evalFilter(t, prog, c.in); got != c.want {
			t.Errorf("%s: filter answers %#x, want %#x", c.desc, got, c.want)
		}
	}
}

// The deny list must name each syscall once; a duplicate would hint at a
// wrong constant.
func TestDeniedSyscallsDistinct(t *testing.T) {
	seen := map[uint32]string{}
	for _, d := range deniedSyscalls(seccompArch) {
		if prev, dup := seen[d.nr]; dup {
			t.Errorf("syscall %d listed as %s and %s", d.nr, prev, d.name)
		}
		seen[d.nr] = d.name
	}
	for _, special := range []uint32{unix.SYS_CLONE, unix.SYS_CLONE3, unix.SYS_SOCKET, unix.SYS_SENDTO, unix.SYS_SENDMSG, unix.SYS_SENDMMSG, unix.SYS_IOCTL} {
		if name, ok := seen[special]; ok {
			t.Errorf("%s is in the deny list but has argument rules", name)
		}
	}
}
