package sandbox

import "golang.org/x/sys/unix"

// arm64 has no fork, vfork, chmod or utime syscalls: processes come from
// clone, metadata changes from the *at forms, all covered in common.
var nativeArch = archSpec{
	name:      "arm64",
	auditArch: unix.AUDIT_ARCH_AARCH64,
}
