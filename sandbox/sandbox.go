// Package sandbox restricts the current process, irreversibly, before it does
// any untrusted work: Landlock (filesystem and TCP rules) plus a seccomp
// filter (no exec, no new processes, no debugging, no io_uring, only
// TCP-over-IP sockets, no bind or listen). Canary probes then prove from the
// inside that each restriction holds.
//
// The agent calls, in order: [Prewarm], [PrepareProbes], [Apply], then
// [Prober.Run], and refuses to continue unless the [Report] says
// [StatusSandboxed]. See README.md for what is and is not covered.
package sandbox

import (
	"crypto/x509"
	"errors"
	"fmt"
	"mime"
	"net"
	"time"
)

// Config says what the sandboxed process may still do. Everything else that
// Landlock and the seccomp filter can express is denied.
type Config struct {
	// ReadPaths are files or directories the process may read (read-only,
	// recursively for directories): the workspace, typically. Each must
	// exist when Apply runs.
	ReadPaths []string `json:"read_paths"`
	// ConnectTCP are the TCP ports the process may connect to, on any
	// address: the engine's gRPC port and the LLM endpoint's port.
	ConnectTCP []uint16 `json:"connect_tcp"`
}

// Status summarises a Report.
type Status string

const (
	// StatusSandboxed: every probe was blocked and every positive control held.
	StatusSandboxed Status = "sandboxed"
	// StatusPartial: some probes were blocked, or all were but a positive
	// control failed (so a block cannot be trusted), or Apply failed half-way.
	StatusPartial Status = "partial"
	// StatusUnsandboxed: no probe was blocked.
	StatusUnsandboxed Status = "unsandboxed"
	// StatusUnavailable: this kernel, OS or architecture cannot provide the
	// sandbox (no Landlock with TCP rules, no seccomp filters).
	StatusUnavailable Status = "unavailable"
)

// ProbeResult is the outcome of one canary probe.
type ProbeResult struct {
	Name string `json:"name"`
	// Blocked: the operation failed with exactly the error the sandbox
	// answers with (EACCES from Landlock, EPERM or ENOSYS from seccomp). Any
	// other failure does not count as blocked.
	Blocked bool `json:"blocked"`
	// Control: before Apply, the same operation succeeded or failed
	// differently, so a block now is the sandbox's doing.
	Control bool `json:"control_ok"`
	// Skipped: the environment already denied the operation before Apply in
	// the same way (only io_uring, which container runtimes often deny), so
	// the probe proves nothing either way and does not count.
	Skipped bool   `json:"skipped,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// Report is what the agent sends to the engine after Apply.
type Report struct {
	Status Status `json:"status"`
	// LandlockABI is the Landlock ABI version Apply enforced; 0 when Apply
	// did not run or did not get that far.
	LandlockABI int           `json:"landlock_abi"`
	Probes      []ProbeResult `json:"probes"`
	// Error says why the status is unavailable, or what Apply reported.
	Error string `json:"error,omitempty"`
}

// ProbeOptions configures PrepareProbes.
type ProbeOptions struct {
	// Dir is a directory outside every read path, writable before Apply,
	// where the canary file is created and where the write probe tries to
	// create a file. Empty means os.TempDir(). Nothing can be deleted once
	// the sandbox is in force, so the canary stays behind: callers that mind
	// pass a directory they remove after the process exits.
	Dir string
	// CanaryFile, if set, is an existing readable file outside every read
	// path (a decoy secret, say) used by the read probe instead of the
	// created canary.
	CanaryFile string
}

// ErrUnavailable is wrapped by errors from Supported and Apply when the
// sandbox cannot be provided here; the status for that case is
// StatusUnavailable.
var ErrUnavailable = errors.New("sandbox unavailable")

// Prewarm makes the Go standard library read now, while files are still
// readable, what it would otherwise read lazily from disk later: the system
// certificate pool, the local time zone, MIME tables, /etc/services, and the
// IP stack and MPTCP capability probes of package net (which use bind). Call it
// before Apply. Host names must also be resolved before Apply: afterwards
// resolv.conf is unreadable and DNS (UDP, or TCP to port 53) is denied, so
// dial addresses by IP.
func Prewarm() error {
	if _, err := x509.SystemCertPool(); err != nil {
		return fmt.Errorf("sandbox: prewarm: loading the system certificate pool: %w", err)
	}
	_ = time.Local.String() // loads /etc/localtime (or $TZ) once
	_ = mime.TypeByExtension(".txt")
	// Loads /etc/services; Go falls back to a built-in table if it is missing.
	_, _ = net.LookupPort("tcp", "https")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("sandbox: prewarm: loopback listen for net's capability probes: %w", err)
	}
	return ln.Close()
}

// statusOf derives the status from probe results. applyErr is what Apply
// returned (nil if it succeeded or was never called).
func statusOf(probes []ProbeResult, applyErr error) Status {
	counted, blocked, controlsOK := 0, 0, true
	for _, p := range probes {
		if p.Skipped {
			continue
		}
		counted++
		if p.Blocked {
			blocked++
		}
		if !p.Control {
			controlsOK = false
		}
	}
	switch {
	case counted == 0 || blocked == 0:
		return StatusUnsandboxed
	case blocked == counted && controlsOK && applyErr == nil:
		return StatusSandboxed
	default:
		return StatusPartial
	}
}
