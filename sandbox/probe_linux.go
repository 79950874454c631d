//go:build linux

package sandbox

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Prober holds the live targets and the before-Apply answers of the canary
// probes. Prepare it with PrepareProbes before Apply; Run it after.
type Prober struct {
	probes []*probe
	// Targets kept open until Close.
	tcp, unixLn net.Listener
	udp         net.PacketConn
	canary      string // created by PrepareProbes; removable only unsandboxed
}

type probe struct {
	name string
	// deny is the answer that counts as blocked: EACCES from Landlock,
	// EPERM from the seccomp filter.
	deny unix.Errno
	// mustSucceed: the positive control needs the operation to work before
	// Apply. Landlock probes need it, because an EACCES before could come
	// from file modes; for seccomp probes a different errno suffices.
	mustSucceed bool
	// skippable: if the environment already answers deny before Apply, the
	// probe is reported as skipped instead of failing its control.
	skippable bool
	op        func() error
	before    error
}

// PrepareProbes sets up, before Apply, what the probes need: a canary file
// in opts.Dir, a TCP listener on 127.0.0.1 whose port is not in
// cfg.ConnectTCP, a UDP socket and an abstract unix listener. It then runs
// every probe once as its positive control. cfg must be the Config later
// given to Apply: the canary has to lie outside its ReadPaths.
func PrepareProbes(cfg Config, opts ProbeOptions) (*Prober, error) {
	dir := opts.Dir
	if dir == "" {
		dir = os.TempDir()
	}
	dir, err := resolvePath(dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: probe directory: %w", err)
	}
	roots := make([]string, 0, len(cfg.ReadPaths))
	for _, rp := range cfg.ReadPaths {
		r, err := resolvePath(rp)
		if err != nil {
			return nil, fmt.Errorf("sandbox: read path %q: %w", rp, err)
		}
		roots = append(roots, r)
	}
	if r, inside := insideAny(dir, roots); inside {
		return nil, fmt.Errorf("sandbox: probe directory %s is inside read path %s; the canary there would be readable (set ProbeOptions.Dir)", dir, r)
	}

	p := &Prober{}
	ok := false
	defer func() {
		if !ok {
			p.Close()
		}
	}()

	token := rand.Text()
	f, err := os.CreateTemp(dir, "parapet-canary-*")
	if err != nil {
		return nil, fmt.Errorf("sandbox: creating the canary file: %w", err)
	}
	p.canary = f.Name()
	_, werr := f.WriteString(token)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, fmt.Errorf("sandbox: writing the canary file %s: %w", p.canary, werr)
	}
	readTarget, readWant := p.canary, token
	if opts.CanaryFile != "" {
		c, err := resolvePath(opts.CanaryFile)
		if err != nil {
			return nil, fmt.Errorf("sandbox: canary file: %w", err)
		}
		if r, inside := insideAny(c, roots); inside {
			return nil, fmt.Errorf("sandbox: canary file %s is inside read path %s", c, r)
		}
		readTarget, readWant = c, ""
	}

	if err := p.listen(cfg.ConnectTCP); err != nil {
		return nil, err
	}
	tcpAddr := &unix.SockaddrInet4{Port: p.tcp.Addr().(*net.TCPAddr).Port, Addr: [4]byte{127, 0, 0, 1}}
	udpAddr := &unix.SockaddrInet4{Port: p.udp.LocalAddr().(*net.UDPAddr).Port, Addr: [4]byte{127, 0, 0, 1}}
	unixAddr := &unix.SockaddrUnix{Name: p.unixLn.Addr().String()}
	missing := filepath.Join(dir, "parapet-no-such-program-"+token)

	p.probes = []*probe{
		{name: "read-outside", deny: unix.EACCES, mustSucceed: true, op: func() error {
			return readFile(readTarget, readWant)
		}},
		{name: "write-create", deny: unix.EACCES, mustSucceed: true, op: func() error {
			name := filepath.Join(dir, "parapet-probe-"+rand.Text())
			fd, err := unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
			if err != nil {
				return err
			}
			unix.Close(fd)
			return unix.Unlink(name)
		}},
		{name: "write-existing", deny: unix.EACCES, mustSucceed: true, op: func() error {
			fd, err := unix.Open(p.canary, unix.O_WRONLY|unix.O_APPEND|unix.O_CLOEXEC, 0)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
		{name: "chmod", deny: unix.EPERM, op: func() error {
			return unix.Fchmodat(unix.AT_FDCWD, p.canary, 0o600, 0) // the mode it has
		}},
		{name: "exec", deny: unix.EPERM, op: func() error {
			return execve(unix.SYS_EXECVE, missing)
		}},
		{name: "execveat", deny: unix.EPERM, op: func() error {
			return execve(unix.SYS_EXECVEAT, missing)
		}},
		{name: "spawn", deny: unix.EPERM, op: func() error {
			// The real fork+exec path of package syscall (clone, then
			// execve in the child): ENOENT from the child proves a process
			// was created before Apply.
			pid, err := syscall.ForkExec(missing, []string{missing}, &syscall.ProcAttr{})
			if err == nil {
				_, _ = syscall.Wait4(pid, nil, 0, nil)
			}
			return err
		}},
		{name: "clone-process", deny: unix.EPERM, op: func() error {
			// CLONE_SIGHAND without CLONE_VM: the kernel rejects it (EINVAL)
			// before creating anything; the filter rejects it first because
			// it lacks CLONE_THREAD.
			_, _, e := unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_SIGHAND, 0, 0, 0, 0, 0)
			return errnoOrNil(e)
		}},
		{name: "ptrace", deny: unix.EPERM, op: func() error {
			// PEEKDATA on ourselves: ESRCH, as we are not our own tracer.
			var word uintptr
			_, _, e := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_PEEKDATA, uintptr(unix.Getpid()), 0, uintptr(unsafe.Pointer(&word)), 0, 0)
			return errnoOrNil(e)
		}},
		{name: "io_uring", deny: unix.EPERM, skippable: true, op: ioURing},
		{name: "tcp-connect", deny: unix.EACCES, mustSucceed: true, op: func() error {
			return withSocket(unix.AF_INET, unix.SOCK_STREAM, 0, func(fd int) error {
				return unix.Connect(fd, tcpAddr)
			})
		}},
		{name: "tcp-fastopen", deny: unix.EPERM, op: func() error {
			// Connects through sendto, where Landlock does not look.
			return withSocket(unix.AF_INET, unix.SOCK_STREAM, 0, func(fd int) error {
				return unix.Sendto(fd, []byte{'x'}, unix.MSG_FASTOPEN, tcpAddr)
			})
		}},
		{name: "mptcp", deny: unix.EPERM, op: func() error {
			return withSocket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP, func(fd int) error {
				return unix.Connect(fd, tcpAddr)
			})
		}},
		{name: "udp-send", deny: unix.EPERM, op: func() error {
			return withSocket(unix.AF_INET, unix.SOCK_DGRAM, 0, func(fd int) error {
				return unix.Sendto(fd, []byte{'x'}, 0, udpAddr)
			})
		}},
		{name: "unix-connect", deny: unix.EPERM, op: func() error {
			return withSocket(unix.AF_UNIX, unix.SOCK_STREAM, 0, func(fd int) error {
				return unix.Connect(fd, unixAddr)
			})
		}},
		{name: "unix-socketpair", deny: unix.EPERM, op: func() error {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err == nil {
				unix.Close(fds[0])
				unix.Close(fds[1])
			}
			return err
		}},
		{name: "netlink-socket", deny: unix.EPERM, op: func() error {
			return withSocket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE, func(int) error { return nil })
		}},
		{name: "bind", deny: unix.EPERM, op: func() error {
			return withSocket(unix.AF_INET, unix.SOCK_STREAM, 0, func(fd int) error {
				return unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
			})
		}},
		{name: "listen", deny: unix.EPERM, op: func() error {
			// listen on an unbound socket binds it to an ephemeral port.
			return withSocket(unix.AF_INET, unix.SOCK_STREAM, 0, func(fd int) error {
				return unix.Listen(fd, 1)
			})
		}},
	}
	for _, pr := range p.probes {
		pr.before = pr.op()
	}
	ok = true
	return p, nil
}

// Run runs every probe again, after Apply, and builds the report.
func (p *Prober) Run() Report {
	abi, applyErr := appliedState()
	results := make([]ProbeResult, 0, len(p.probes))
	for _, pr := range p.probes {
		results = append(results, pr.judge(pr.op()))
	}
	rep := Report{Status: statusOf(results, applyErr), LandlockABI: abi, Probes: results}
	if applyErr != nil {
		rep.Error = applyErr.Error()
	}
	if _, err := Supported(); err != nil {
		rep.Status, rep.Error = StatusUnavailable, err.Error()
	}
	return rep
}

// judge compares the answer after Apply with the control taken before.
func (pr *probe) judge(after error) ProbeResult {
	r := ProbeResult{
		Name:    pr.name,
		Blocked: errors.Is(after, pr.deny),
		Control: !errors.Is(pr.before, pr.deny) && (pr.before == nil || !pr.mustSucceed),
		Detail:  fmt.Sprintf("before Apply: %s; now: %s (blocked means %s)", outcome(pr.before), outcome(after), unix.ErrnoName(pr.deny)),
	}
	if pr.skippable && errors.Is(pr.before, pr.deny) {
		r.Skipped = true
		r.Detail = "the environment already denied this before Apply, so the probe cannot tell; " + r.Detail
	}
	return r
}

// Close releases the live targets and, if the process is not sandboxed,
// removes the canary file.
func (p *Prober) Close() error {
	var errs []error
	for _, c := range []interface{ Close() error }{p.tcp, p.unixLn} {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	if p.udp != nil {
		errs = append(errs, p.udp.Close())
	}
	if p.canary != "" {
		_ = os.Remove(p.canary) // fails once sandboxed: nothing can be deleted
	}
	return errors.Join(errs...)
}

// listen opens the live targets.
func (p *Prober) listen(allowed []uint16) error {
	// An ephemeral port could coincide with an allowed one; Landlock rules
	// are per port, whatever the address, so such a target proves nothing.
	for range 16 {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("sandbox: probe TCP listener: %w", err)
		}
		if !slices.Contains(allowed, uint16(ln.Addr().(*net.TCPAddr).Port)) {
			p.tcp = ln
			break
		}
		ln.Close()
	}
	if p.tcp == nil {
		return errors.New("sandbox: probe TCP listener: every port tried is in ConnectTCP")
	}
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("sandbox: probe UDP socket: %w", err)
	}
	p.udp = udp
	ul, err := net.Listen("unix", "@parapet-probe-"+rand.Text())
	if err != nil {
		return fmt.Errorf("sandbox: probe abstract unix listener: %w", err)
	}
	p.unixLn = ul
	return nil
}

func readFile(path, want string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	buf := make([]byte, 256)
	n, err := unix.Read(fd, buf)
	if err != nil {
		return err
	}
	if want != "" && !bytes.Equal(buf[:n], []byte(want)) {
		return fmt.Errorf("read %q, not the canary's content", buf[:n])
	}
	return nil
}

// execve calls execve or execveat on a program that does not exist:
// ENOENT unsandboxed, EPERM from the filter.
func execve(nr uintptr, path string) error {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	argv := []*byte{p, nil}
	envp := []*byte{nil}
	var e unix.Errno
	if nr == unix.SYS_EXECVEAT {
		fdcwd := unix.AT_FDCWD // negative: convert at run time
		_, _, e = unix.Syscall6(nr, uintptr(fdcwd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envp[0])), 0, 0)
	} else {
		_, _, e = unix.Syscall(nr, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envp[0])))
	}
	return errnoOrNil(e)
}

// ioURing calls the three io_uring syscalls with arguments the kernel
// rejects (no params, fd -1). It returns EPERM only if all three answer
// EPERM, else the first other answer.
func ioURing() error {
	calls := [][4]uintptr{
		{unix.SYS_IO_URING_ENTER, ^uintptr(0), 0, 0},
		{unix.SYS_IO_URING_REGISTER, ^uintptr(0), 0, 0},
		{unix.SYS_IO_URING_SETUP, 0, 0, 0},
	}
	var results []error
	for _, c := range calls {
		_, _, e := unix.RawSyscall6(c[0], c[1], c[2], c[3], 0, 0, 0)
		results = append(results, errnoOrNil(e))
	}
	// enter and register decide: a kernel that disables io_uring_setup by
	// sysctl (io_uring_disabled=2) answers EPERM there even unsandboxed.
	for _, err := range results[:2] {
		if !errors.Is(err, unix.EPERM) {
			return err
		}
	}
	return results[2]
}

func withSocket(domain, typ, proto int, f func(fd int) error) error {
	fd, err := unix.Socket(domain, typ|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return f(fd)
}

func errnoOrNil(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	var e unix.Errno
	if errors.As(err, &e) {
		if name := unix.ErrnoName(e); name != "" {
			return name
		}
	}
	return err.Error()
}

// resolvePath makes p absolute and resolves symlinks, as Landlock rules
// attach to what a path resolves to.
func resolvePath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

func insideAny(path string, roots []string) (string, bool) {
	for _, r := range roots {
		if r == "/" || path == r || strings.HasPrefix(path, r+"/") {
			return r, true
		}
	}
	return "", false
}
