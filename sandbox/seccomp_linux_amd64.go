package sandbox

import "golang.org/x/sys/unix"

var nativeArch = archSpec{
	name:      "amd64",
	auditArch: unix.AUDIT_ARCH_X86_64,
	rejectX32: true,
	// Legacy syscalls arm64 only has in their *at or clone forms.
	extraDeny: []deniedSyscall{
		{unix.SYS_FORK, "fork", letsPrograms},
		{unix.SYS_VFORK, "vfork", letsPrograms},
		{unix.SYS_CHMOD, "chmod", letsMetadata},
		{unix.SYS_CHOWN, "chown", letsMetadata},
		{unix.SYS_LCHOWN, "lchown", letsMetadata},
		{unix.SYS_UTIME, "utime", letsMetadata},
		{unix.SYS_UTIMES, "utimes", letsMetadata},
		{unix.SYS_FUTIMESAT, "futimesat", letsMetadata},
		{unix.SYS_IOPL, "iopl", 0},
		{unix.SYS_IOPERM, "ioperm", 0},
		{unix.SYS_USELIB, "uselib", 0},
	},
}
