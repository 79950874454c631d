//go:build linux && !amd64 && !arm64

package sandbox

import "errors"

// archSpec is empty here: there is no seccomp filter for this architecture,
// so Supported reports the sandbox unavailable and Apply refuses.
type archSpec struct{}

var seccompArch *archSpec

func installSeccomp(*archSpec) error {
	return errors.New("sandbox: seccomp: no filter for this architecture")
}

func checkFilter(*archSpec) error {
	return errors.New("sandbox: seccomp: no filter for this architecture")
}
