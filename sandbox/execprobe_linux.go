//go:build linux && (amd64 || arm64)

package sandbox

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Probe runs the executor's canary probes in a confined helper, the same
// way a command runs, and returns the report. dir is a private directory
// the probe may use (outside every granted path, removed by the caller).
// The helper is confined as a default execute_command is: a workspace
// (dir/ws) writable with its .parapet masked, no network.
func (x *Executor) Probe(dir string) Report {
	rep, err := x.probe(dir)
	if errors.Is(err, ErrUnavailable) {
		return Report{Status: StatusUnavailable, Probes: []ProbeResult{}, Error: err.Error()}
	}
	if err != nil {
		return Report{Status: StatusPartial, Probes: []ProbeResult{}, LandlockABI: x.abi, Error: err.Error()}
	}
	return rep
}

func (x *Executor) probe(dir string) (Report, error) {
	dir, err := resolvePath(dir)
	if err != nil {
		return Report{}, err
	}
	ws := filepath.Join(dir, "ws")
	state := filepath.Join(ws, ".parapet")
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{ws, state, outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return Report{}, err
		}
	}
	canaryWant, maskedWant := rand.Text(), rand.Text()
	canary := filepath.Join(outside, "canary")
	masked := filepath.Join(state, "state.json")
	if err := os.WriteFile(canary, []byte(canaryWant), 0o600); err != nil {
		return Report{}, err
	}
	if err := os.WriteFile(masked, []byte(maskedWant), 0o600); err != nil {
		return Report{}, err
	}
	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return Report{}, err
	}
	defer tcp.Close()
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		return Report{}, err
	}
	defer udp.Close()
	ul, err := net.Listen("unix", "@parapet-exec-probe-"+rand.Text())
	if err != nil {
		return Report{}, err
	}
	defer ul.Close()
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", os.Getpid()))
	if err != nil {
		return Report{}, err
	}

	spec := ExecSpec{
		Dir: ws, ReadExec: DefaultSystemPaths(), Write: []string{ws}, Mask: []string{state},
		Probe: &execProbeTargets{
			Canary: canary, CanaryWant: canaryWant, MaskedFile: masked, MaskedWant: maskedWant,
			OutsideDir: outside, InsideDir: ws,
			TCPPort: tcp.Addr().(*net.TCPAddr).Port, UDPPort: udp.LocalAddr().(*net.UDPAddr).Port,
			UnixName: ul.Addr().String(), EnginePID: os.Getpid(), EngineCmdln: string(cmdline),
		},
	}
	cmd, outR, err := x.Start(spec)
	if err != nil {
		return Report{}, err
	}
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	out, _ := io.ReadAll(outR)
	outR.Close()
	werr := cmd.Wait()
	timer.Stop()
	if werr != nil {
		if cmd.ProcessState.ExitCode() == exitNoNamespaces {
			return Report{}, fmt.Errorf("%w: %s", ErrUnavailable, strings.TrimSpace(string(out)))
		}
		return Report{}, fmt.Errorf("probe helper: %v: %s", werr, strings.TrimSpace(string(out)))
	}
	// The report is the last line; anything before it is the helper's
	// stderr (nothing, when all is well).
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var rep Report
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rep); err != nil {
		return Report{}, fmt.Errorf("probe helper report: %w (output: %s)", err, strings.TrimSpace(string(out)))
	}
	return rep, nil
}

// execProber holds the probes and their before-confinement answers.
type execProber struct {
	probes []*probe
	checks []func() error // must work after confinement: exec, workspace writes
	t      *execProbeTargets
}

func newExecProber(spec *ExecSpec) *execProber {
	t := spec.Probe
	loop := [4]byte{127, 0, 0, 1}
	engineProc := fmt.Sprintf("/proc/%d/cmdline", t.EnginePID)
	ep := &execProber{t: t}
	ep.probes = []*probe{
		{name: "read-outside", deny: unix.EACCES, mustSucceed: true, op: func() error { return readFile(t.Canary, t.CanaryWant) }},
		// The state directory is covered by an empty tmpfs: the file is gone.
		{name: "read-state-dir", deny: unix.ENOENT, mustSucceed: true, op: func() error { return readFile(t.MaskedFile, t.MaskedWant) }},
		{name: "write-outside", deny: unix.EACCES, mustSucceed: true, op: func() error {
			return createRemove(filepath.Join(t.OutsideDir, "probe-"+rand.Text()))
		}},
		// The engine is in another PID namespace: its /proc entry is absent.
		{name: "proc-engine", deny: unix.ENOENT, mustSucceed: true, op: func() error {
			b, err := os.ReadFile(engineProc)
			if err != nil {
				return err
			}
			if string(b) != t.EngineCmdln {
				return unix.ENOENT // another process with the same number in this namespace
			}
			return nil
		}},
		{name: "tcp-connect", deny: unix.EACCES, mustSucceed: true, op: func() error {
			return withSocket(unix.AF_INET, unix.SOCK_STREAM, 0, func(fd int) error {
				return unix.Connect(fd, &unix.SockaddrInet4{Port: t.TCPPort, Addr: loop})
			})
		}},
		{name: "udp-send", deny: unix.EPERM, mustSucceed: true, op: func() error {
			return withSocket(unix.AF_INET, unix.SOCK_DGRAM, 0, func(fd int) error {
				return unix.Sendto(fd, []byte("probe"), 0, &unix.SockaddrInet4{Port: t.UDPPort, Addr: loop})
			})
		}},
		{name: "unix-connect", deny: unix.EPERM, mustSucceed: true, op: func() error {
			return withSocket(unix.AF_UNIX, unix.SOCK_STREAM, 0, func(fd int) error {
				return unix.Connect(fd, &unix.SockaddrUnix{Name: t.UnixName})
			})
		}},
		{name: "netlink-socket", deny: unix.EPERM, op: func() error {
			return withSocket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE, func(int) error { return nil })
		}},
		{name: "ptrace", deny: unix.EPERM, op: func() error {
			_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_PEEKDATA, uintptr(unix.Getpid()), 0, 0, 0, 0)
			return errnoOrNil(e)
		}},
		{name: "mount", deny: unix.EPERM, op: func() error {
			err := unix.Mount("none", t.OutsideDir, "tmpfs", 0, "size=4k")
			if err == nil {
				unix.Unmount(t.OutsideDir, unix.MNT_DETACH)
			}
			return err
		}},
		// A multithreaded process cannot enter a user namespace (EINVAL);
		// the filter answers EPERM first.
		{name: "unshare", deny: unix.EPERM, op: func() error { return unix.Unshare(unix.CLONE_NEWUSER) }},
		// Unprivileged bpf is often off already (the probe is then skipped).
		{name: "bpf", deny: unix.EPERM, skippable: true, op: func() error {
			_, _, e := unix.Syscall(unix.SYS_BPF, unix.BPF_PROG_LOAD, 0, 0)
			return errnoOrNil(e)
		}},
		{name: "perf_event_open", deny: unix.EPERM, op: func() error {
			_, _, e := unix.Syscall6(unix.SYS_PERF_EVENT_OPEN, 0, 0, ^uintptr(0), ^uintptr(0), 0, 0)
			return errnoOrNil(e)
		}},
		{name: "keyctl", deny: unix.EPERM, op: func() error {
			_, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false)
			return err
		}},
		{name: "init_module", deny: unix.EPERM, op: func() error {
			_, _, e := unix.Syscall(unix.SYS_FINIT_MODULE, ^uintptr(0), uintptr(unsafe.Pointer(&[1]byte{})), 0)
			return errnoOrNil(e)
		}},
	}
	// A file nobody may read: only CAP_DAC_OVERRIDE opens it, which the
	// helper has (as root, or as root of its user namespace) and the
	// program must not.
	locked := filepath.Join(t.InsideDir, "mode-000-probe")
	os.WriteFile(locked, nil, 0)
	ep.probes = append(ep.probes, &probe{name: "capabilities", deny: unix.EACCES, mustSucceed: true, op: func() error {
		fd, err := unix.Open(locked, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}})
	ep.checks = []func() error{
		func() error {
			if err := createRemove(filepath.Join(t.InsideDir, "probe-"+rand.Text())); err != nil {
				return fmt.Errorf("writing in the workspace failed: %w", err)
			}
			return nil
		},
		func() error {
			if out, err := exec.Command("/bin/sh", "-c", "echo ok").Output(); err != nil || string(out) != "ok\n" {
				return fmt.Errorf("running /bin/sh failed: %v (%q)", err, out)
			}
			return nil
		},
	}
	for _, pr := range ep.probes {
		pr.before = pr.op()
	}
	return ep
}

// run repeats every probe after confinement and checks that what must
// still work works.
func (ep *execProber) run(abi int) Report {
	results := make([]ProbeResult, 0, len(ep.probes))
	for _, pr := range ep.probes {
		results = append(results, pr.judge(pr.op()))
	}
	var errs []error
	for _, c := range ep.checks {
		if err := c(); err != nil {
			errs = append(errs, err)
		}
	}
	err := errors.Join(errs...)
	rep := Report{Status: statusOf(results, err), LandlockABI: abi, Probes: results}
	if err != nil {
		rep.Error = err.Error()
	}
	return rep
}

func createRemove(name string) error {
	fd, err := unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return unix.Unlink(name)
}
