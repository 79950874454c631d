//go:build !linux

package sandbox

import (
	"fmt"
	"runtime"
)

// Landlock and seccomp exist only on Linux: elsewhere the sandbox is
// unavailable and every entry point says so.

func unavailable() error {
	return fmt.Errorf("%w: Landlock and seccomp are Linux-only (GOOS %s)", ErrUnavailable, runtime.GOOS)
}

// Supported always fails outside Linux.
func Supported() (abi int, err error) { return 0, unavailable() }

// Apply always fails outside Linux and restricts nothing.
func Apply(Config) error { return unavailable() }

// Prober has nothing to probe outside Linux.
type Prober struct{}

// PrepareProbes returns a Prober whose Run reports StatusUnavailable.
func PrepareProbes(Config, ProbeOptions) (*Prober, error) { return &Prober{}, nil }

// Run reports StatusUnavailable.
func (*Prober) Run() Report {
	return Report{Status: StatusUnavailable, Probes: []ProbeResult{}, Error: unavailable().Error()}
}

// Close does nothing.
func (*Prober) Close() error { return nil }
