//go:build !linux || (!amd64 && !arm64)

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
)

// Executor is unavailable here: NewExecutor always fails.
type Executor struct{}

// NewExecutor fails: the confined executor needs Linux on amd64 or arm64.
func NewExecutor(string) (*Executor, error) {
	return nil, fmt.Errorf("%w: the confined executor needs Linux on amd64 or arm64 (GOOS %s, GOARCH %s)", ErrUnavailable, runtime.GOOS, runtime.GOARCH)
}

// LandlockABI is 0.
func (*Executor) LandlockABI() int { return 0 }

// Start always fails.
func (*Executor) Start(ExecSpec) (*exec.Cmd, *os.File, error) {
	_, err := NewExecutor("")
	return nil, nil, err
}

// Close does nothing.
func (*Executor) Close() error { return nil }

// Probe reports the executor unavailable.
func (*Executor) Probe(string) Report {
	_, err := NewExecutor("")
	return Report{Status: StatusUnavailable, Probes: []ProbeResult{}, Error: err.Error()}
}

// ExecMain refuses to run anything.
func ExecMain() {
	_, err := NewExecutor("")
	fmt.Fprintf(os.Stderr, "parapet: the command was not run: %v\n", err)
	os.Exit(126)
}
