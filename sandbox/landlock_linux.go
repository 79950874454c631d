//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// minLandlockABI is the first ABI with TCP connect/bind rules; without them
// the sandbox cannot confine the network and is unavailable.
const minLandlockABI = 4

// landlockPresets maps an ABI version to go-landlock's strict configuration
// handling every access right of that version.
var landlockPresets = map[int]landlock.Config{
	4: landlock.V4, 5: landlock.V5, 6: landlock.V6, 7: landlock.V7,
	8: landlock.V8, 9: landlock.V9, 10: landlock.V10, 11: landlock.V11,
}

const maxLandlockABI = 11

// Supported reports the Landlock ABI version Apply would enforce, or an error
// wrapping ErrUnavailable saying what this system lacks.
func Supported() (abi int, err error) {
	abi, err = landlockABI()
	if err != nil {
		return 0, err
	}
	if seccompArch == nil {
		return 0, fmt.Errorf("%w: no seccomp filter for GOARCH %s (amd64 and arm64 are supported)", ErrUnavailable, runtime.GOARCH)
	}
	// SECCOMP_GET_ACTION_AVAIL answers only if the kernel has seccomp filters.
	action := uint32(unix.SECCOMP_RET_ERRNO)
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action))); e != 0 {
		return 0, fmt.Errorf("%w: seccomp filters with SECCOMP_RET_ERRNO are not available: %v", ErrUnavailable, e)
	}
	return abi, nil
}

func landlockABI() (int, error) {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
			return 0, fmt.Errorf("%w: Landlock is not built into this kernel or not enabled at boot (lsm=...,landlock): %v", ErrUnavailable, err)
		}
		return 0, fmt.Errorf("%w: querying the Landlock ABI version: %v", ErrUnavailable, err)
	}
	// Same errata rule as go-landlock: without the fix for signal scoping
	// (errata bit 2), ABI 6+ is treated as 5, and go-landlock would refuse
	// the V6+ presets.
	if abi >= 6 {
		if errata, err := ll.LandlockGetErrata(); err != nil || errata&0x2 == 0 {
			abi = 5
		}
	}
	if abi < minLandlockABI {
		return 0, fmt.Errorf("%w: Landlock ABI %d has no TCP rules (need %d or later, Linux 6.7+)", ErrUnavailable, abi, minLandlockABI)
	}
	return min(abi, maxLandlockABI), nil
}

// landlockRules turns cfg into go-landlock rules after checking every path.
// Read-only means ReadFile and ReadDir: no Execute, no write rights at all.
func landlockRules(cfg Config) ([]landlock.Rule, error) {
	var rules []landlock.Rule
	for _, p := range cfg.ReadPaths {
		if p == "" {
			return nil, errors.New("sandbox: empty path in ReadPaths")
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("sandbox: read path %q: %w", p, err)
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return nil, fmt.Errorf("sandbox: read path %q: %w", p, err)
		}
		if fi.IsDir() {
			rules = append(rules, landlock.PathAccess(ll.AccessFSReadFile|ll.AccessFSReadDir, abs))
		} else {
			rules = append(rules, landlock.PathAccess(ll.AccessFSReadFile, abs))
		}
	}
	for _, port := range cfg.ConnectTCP {
		if port == 0 {
			return nil, errors.New("sandbox: ConnectTCP contains port 0, which no connection can use")
		}
		rules = append(rules, landlock.ConnectTCP(port))
	}
	return rules, nil
}

func applyLandlock(abi int, rules []landlock.Rule) error {
	preset, ok := landlockPresets[abi]
	if !ok {
		return fmt.Errorf("sandbox: no go-landlock preset for Landlock ABI %d", abi)
	}
	// Strict: no BestEffort, so a kernel that cannot enforce every handled
	// right makes this fail instead of silently doing less.
	if err := preset.Restrict(rules...); err != nil {
		return fmt.Errorf("sandbox: landlock (ABI %d): %w", abi, err)
	}
	return nil
}
