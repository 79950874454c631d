//go:build linux

package sandbox

import (
	"errors"
	"sync"
)

// applyState remembers the one Apply that got as far as restricting.
var applyState struct {
	sync.Mutex
	attempted bool
	abi       int   // Landlock ABI in force, 0 if Landlock did not succeed
	err       error // what that Apply returned
}

// Apply restricts the current process, all its threads and everything it
// later starts (nothing: exec and fork are denied), irreversibly:
//
//   - Landlock: read-only access to cfg.ReadPaths, no write or execute
//     access anywhere, TCP connect only to cfg.ConnectTCP, no TCP bind,
//     and (ABI 6+) no abstract unix sockets or signals outside the sandbox;
//   - seccomp: the filter described in README.md, on every thread (TSYNC).
//
// Everything that can be checked is checked before anything is restricted;
// a failure there leaves the process untouched. A failure after Landlock
// was applied leaves it partly restricted: any error means the caller must
// not go on as if sandboxed. Apply may be called from any goroutine, and
// only once with success or a partial failure.
func Apply(cfg Config) error {
	applyState.Lock()
	defer applyState.Unlock()
	if applyState.attempted {
		return errors.New("sandbox: Apply was already called; the sandbox cannot be changed")
	}
	abi, err := Supported()
	if err != nil {
		return err
	}
	rules, err := landlockRules(cfg)
	if err != nil {
		return err
	}
	if err := checkFilter(seccompArch); err != nil {
		return err
	}

	// From here on the process changes for good.
	applyState.attempted = true
	if err := applyLandlock(abi, rules); err != nil {
		applyState.err = err
		return err
	}
	applyState.abi = abi
	if err := installSeccomp(seccompArch); err != nil {
		err = errors.Join(err, errors.New("sandbox: Landlock is in force but the seccomp filter is not; do not continue"))
		applyState.err = err
		return err
	}
	return nil
}

func appliedState() (abi int, err error) {
	applyState.Lock()
	defer applyState.Unlock()
	return applyState.abi, applyState.err
}
