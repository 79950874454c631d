package sandbox

import "golang.org/x/sys/unix"

var nativeArch = archSpec{
	name:      "amd64",
	auditArch: unix.AUDIT_ARCH_X86_64,
	rejectX32: true,
	// Legacy syscalls arm64 only has in their *at or clone forms.
	extraDeny: []deniedSyscall{
		{unix.SYS_FORK, "fork"},
		{unix.SYS_VFORK, "vfork"},
		{unix.SYS_CHMOD, "chmod"},
		{unix.SYS_CHOWN, "chown"},
		{unix.SYS_LCHOWN, "lchown"},
		{unix.SYS_UTIME, "utime"},
		{unix.SYS_UTIMES, "utimes"},
		{unix.SYS_FUTIMESAT, "futimesat"},
		{unix.SYS_IOPL, "iopl"},
		{unix.SYS_IOPERM, "ioperm"},
		{unix.SYS_USELIB, "uselib"},
	},
}
