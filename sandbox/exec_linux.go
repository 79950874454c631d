//go:build linux && (amd64 || arm64)

package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// execProfile is the seccomp profile of confined programs: everything the
// agent's filter denies except running programs, metadata writes,
// socketpair and, with a network grant, UDP.
func execProfile(network bool) filterProfile {
	p := filterProfile{lets: letsPrograms | letsMetadata | letsSocketpair}
	if network {
		p.lets |= letsUDP
	}
	return p
}

// maxSpecBytes bounds the spec the helper reads: commands are capped far
// below this by the tools; a larger spec is an error, never truncated.
const maxSpecBytes = 16 << 20

// Executor starts confined programs by re-executing Self as the helper.
// Starting a Go binary costs more than the confinement itself (runtime
// and package initialisation), so one helper is always started ahead,
// waiting for its spec: a call takes it and the next one is started in
// the background.
type Executor struct {
	self string
	abi  int

	mu      sync.Mutex
	ready   chan *helper // holds at most the one helper started ahead
	filling bool         // a helper is being started
	closed  bool
}

// helper is a started helper process waiting for its spec.
type helper struct {
	err  error // starting it failed
	cmd  *exec.Cmd
	out  *os.File // read end of its combined stdout and stderr
	spec *os.File // write end of its spec pipe (fd 3)
}

// NewExecutor returns an executor that re-executes self (a binary whose
// main calls ExecMain for ExecHelperArg). It fails, wrapping
// ErrUnavailable, where Landlock with TCP rules or seccomp is missing.
func NewExecutor(self string) (*Executor, error) {
	abi, err := Supported()
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(self) {
		return nil, fmt.Errorf("sandbox: executor binary %q is not an absolute path", self)
	}
	return &Executor{self: self, abi: abi}, nil
}

// LandlockABI is the Landlock ABI the executor enforces.
func (x *Executor) LandlockABI() int { return x.abi }

// Start starts spec, confined. It returns the running helper, to Wait on
// and to kill (it is its own process group), and the read end of the
// program's combined stdout and stderr, which the caller drains and
// closes. Stdin is /dev/null. The helper is PID 1 of its own PID
// namespace, so when the program exits, or is killed, the kernel kills
// every process it left behind (setsid, nohup and & included).
func (x *Executor) Start(spec ExecSpec) (*exec.Cmd, *os.File, error) {
	if err := spec.check(); err != nil {
		return nil, nil, err
	}
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: encoding the exec spec: %w", err)
	}
	if len(data) > maxSpecBytes {
		return nil, nil, fmt.Errorf("sandbox: exec spec of %d bytes exceeds %d", len(data), maxSpecBytes)
	}
	h, err := x.take()
	if err != nil {
		return nil, nil, err
	}
	// A pipe holds 64 KiB; a longer spec is written while the helper reads.
	go func() {
		h.spec.Write(data) // a short write leaves invalid JSON: the helper refuses it
		h.spec.Close()
	}()
	return h.cmd, h.out, nil
}

// take returns the waiting helper, waits for the one being started, or
// starts one; then it has the next one started.
func (x *Executor) take() (*helper, error) {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return nil, errors.New("sandbox: the executor is closed")
	}
	if x.ready == nil {
		x.ready = make(chan *helper, 1)
	}
	filling := x.filling
	x.mu.Unlock()

	var h *helper
	select {
	case h = <-x.ready:
	default:
		if filling {
			h = <-x.ready // started moments ago: cheaper than another
		}
	}
	x.startFill()
	if h == nil {
		return x.spawn()
	}
	if h.err != nil {
		return nil, h.err
	}
	return h, nil
}

// startFill starts the next helper in the background unless one is
// being started or waiting.
func (x *Executor) startFill() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.filling || x.closed || len(x.ready) > 0 {
		return
	}
	x.filling = true
	go func() {
		h, err := x.spawn()
		if err != nil {
			h = &helper{err: err}
		}
		x.mu.Lock()
		x.filling = false
		closed := x.closed
		x.mu.Unlock()
		if closed {
			// A take may be waiting for this one: it gets the error.
			h.discard()
			h = &helper{err: errors.New("sandbox: the executor is closed")}
		}
		x.ready <- h // never blocks: only one is started at a time, into an empty channel
	}()
}

// Close stops the waiting helper; later Starts fail.
func (x *Executor) Close() error {
	x.mu.Lock()
	x.closed = true
	ready := x.ready
	x.mu.Unlock()
	if ready != nil {
		select {
		case h := <-ready:
			h.discard()
		default:
		}
	}
	return nil
}

func (h *helper) discard() {
	if h.err != nil {
		return
	}
	h.spec.Close() // the helper reads no spec and exits
	h.cmd.Process.Kill()
	h.out.Close()
	go h.cmd.Wait()
}

func (x *Executor) spawn() (*helper, error) {
	specR, specW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: spec pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		specR.Close()
		specW.Close()
		return nil, fmt.Errorf("sandbox: output pipe: %w", err)
	}
	cmd := exec.Command(x.self, ExecHelperArg)
	cmd.Env = []string{} // the helper needs none; the program gets spec.Env
	cmd.Stdout, cmd.Stderr = outW, outW
	cmd.ExtraFiles = []*os.File{specR}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = namespaceAttr()
	} else {
		// An ordinary user's helper needs a user namespace, whose maps
		// only a dumpable parent may write; the engine is not dumpable
		// (it holds tokens). A process fresh from exec is: it clones the
		// helper (helperParent).
		cmd.Args = append(cmd.Args, helperParentArg)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	}
	err = cmd.Start()
	specR.Close()
	outW.Close()
	if err != nil {
		specW.Close()
		outR.Close()
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EACCES) {
			// clone refused the namespaces (user namespaces disabled).
			return nil, fmt.Errorf("%w: the confined helper cannot get its own PID and mount namespaces here: %v", ErrUnavailable, err)
		}
		return nil, fmt.Errorf("sandbox: starting the confined helper: %w", err)
	}
	return &helper{cmd: cmd, out: outR, spec: specW}, nil
}

// helperParentArg, after ExecHelperArg, starts helperParent instead of
// the helper.
const helperParentArg = "--parent"

// helperParent starts the helper for an ordinary user: it is the engine's
// child, dumpable again because it was started by exec, so it can write
// the maps of the helper's user namespace. It passes on the spec (fd 3)
// and the output, waits, and exits as the helper did; if it dies, the
// helper is killed (Pdeathsig), and with it everything it started.
func helperParent() int {
	// Pdeathsig fires when the thread that started the child ends.
	runtime.LockOSThread()
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "parapet: the command was not run: finding the helper binary: %v\n", err)
		return 126
	}
	spec := os.NewFile(3, "spec")
	cmd := exec.Command(self, ExecHelperArg)
	cmd.Env = []string{}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{spec}
	cmd.SysProcAttr = namespaceAttr()
	err = cmd.Start()
	spec.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "parapet: the command was not run: the confined helper cannot get its own namespaces here: %v\n", err)
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EACCES) {
			return exitNoNamespaces
		}
		return 126
	}
	_ = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()) // as a shell reports it
	}
	return cmd.ProcessState.ExitCode()
}

// namespaceAttr puts the helper in new PID and mount namespaces: PID so
// that nothing outlives the program, mount so that masked paths and a
// private /proc do not leak into the host. Root needs nothing else. Other
// users get a user namespace in which they are root (their own uid is the
// only one mapped, to 0): the helper needs CAP_SYS_ADMIN there for its
// mounts, and drops every capability before the program starts.
func namespaceAttr() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS,
		Setpgid:    true,
		Pdeathsig:  syscall.SIGKILL,
	}
	if os.Geteuid() != 0 {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
		attr.GidMappingsEnableSetgroups = false
	}
	return attr
}

func (s *ExecSpec) check() error {
	switch {
	case s.Probe == nil && (s.Path == "" || !filepath.IsAbs(s.Path)):
		return fmt.Errorf("sandbox: exec spec: program path %q is not absolute", s.Path)
	case s.Probe == nil && len(s.Args) == 0:
		return errors.New("sandbox: exec spec: no argv")
	case s.Dir == "" || !filepath.IsAbs(s.Dir):
		return fmt.Errorf("sandbox: exec spec: working directory %q is not absolute", s.Dir)
	}
	for _, p := range s.ConnectTCP {
		if p == 0 {
			return errors.New("sandbox: exec spec: port 0 in ConnectTCP")
		}
	}
	for _, list := range [][]string{s.ReadExec, s.Read, s.Write, s.Mask} {
		for _, p := range list {
			if !filepath.IsAbs(p) {
				return fmt.Errorf("sandbox: exec spec: path %q is not absolute", p)
			}
		}
	}
	return nil
}

// ExecMain is the helper: it reads the spec from fd 3, confines the
// process and execs the program. It never returns; on any error the
// program does not run, the error goes to stderr (the tool's output) and
// the exit code is 126.
func ExecMain() {
	if len(os.Args) > 2 && os.Args[2] == helperParentArg {
		os.Exit(helperParent())
	}
	// Capabilities are per thread; the thread that drops them must be the
	// one that execs.
	runtime.LockOSThread()
	err := execHelper()
	fmt.Fprintf(os.Stderr, "parapet: the command was not run: %v\n", err)
	var ne nsError
	if errors.As(err, &ne) {
		os.Exit(exitNoNamespaces)
	}
	os.Exit(126)
}

// exitNoNamespaces is the helper's exit code when the host does not let it
// set up its namespaces (no user namespaces for this user, or no mount
// rights in them): the executor is unavailable here, not broken.
const exitNoNamespaces = 125

// nsError marks a failure to set up the helper's namespaces.
type nsError struct{ err error }

func (e nsError) Error() string { return e.err.Error() }
func (e nsError) Unwrap() error { return e.err }

func execHelper() error {
	spec, err := readSpec(os.NewFile(3, "spec"))
	if err != nil {
		return err
	}
	if os.Getpid() != 1 {
		return errors.New("the executor helper is not alone in a PID namespace; refusing to run unconfined")
	}
	var pr *execProber
	if spec.Probe != nil {
		pr = newExecProber(spec)
	}
	abi, err := confine(spec)
	if err != nil {
		return err
	}
	if err := unix.Chdir(spec.Dir); err != nil {
		return fmt.Errorf("chdir %s: %w", spec.Dir, err)
	}
	if pr != nil {
		rep := pr.run(abi)
		json.NewEncoder(os.Stdout).Encode(rep)
		os.Exit(0)
	}
	err = unix.Exec(spec.Path, spec.Args, spec.Env)
	return fmt.Errorf("exec %s: %w", spec.Path, err)
}

func readSpec(f *os.File) (*ExecSpec, error) {
	if f == nil {
		return nil, errors.New("no spec on fd 3")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSpecBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the spec: %w", err)
	}
	if len(data) > maxSpecBytes {
		return nil, errors.New("the spec is too large")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var spec ExecSpec
	if err := dec.Decode(&spec); err != nil {
		return nil, fmt.Errorf("decoding the spec: %w", err)
	}
	if err := spec.check(); err != nil {
		return nil, err
	}
	return &spec, nil
}

// confine applies, in order: a private mount tree with its own /proc and
// the masks, an empty capability set, Landlock, and the seccomp filter.
// It returns the Landlock ABI enforced.
func confine(spec *ExecSpec) (int, error) {
	abi, err := Supported()
	if err != nil {
		return 0, err
	}
	// Nothing mounted here may propagate to the host.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return 0, nsError{fmt.Errorf("making the mount tree private: %w", err)}
	}
	// A /proc of this PID namespace: the program sees its own processes,
	// never the engine's, the agent's or other calls'.
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return 0, nsError{fmt.Errorf("mounting /proc: %w", err)}
	}
	for _, m := range spec.Mask {
		if err := mask(m); err != nil {
			return 0, err
		}
	}
	rules, err := execRules(spec)
	if err != nil {
		return 0, err
	}
	if err := dropCapabilities(); err != nil {
		return 0, err
	}
	// Landlock and seccomp on this thread only: it is the one that execs,
	// and exec ends every other thread. Restricting all threads would stop
	// the world for nothing (a millisecond per call).
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := restrictThread(abi, rules); err != nil {
		return 0, err
	}
	if err := installSeccompFilter(seccompArch, execProfile(spec.Network), 0); err != nil {
		return 0, err
	}
	return abi, nil
}

// mask hides path: an empty read-only tmpfs over a directory, /dev/null
// over a file. A path that does not exist has nothing to hide.
func mask(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mask %s: %w", path, err)
	}
	const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if fi.IsDir() {
		if err := unix.Mount("tmpfs", path, "tmpfs", flags|unix.MS_RDONLY, "size=4k,mode=0500"); err != nil {
			return fmt.Errorf("mask %s: %w", path, err)
		}
		return nil
	}
	if err := unix.Mount("/dev/null", path, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("mask %s: %w", path, err)
	}
	if err := unix.Mount("", path, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|flags, ""); err != nil {
		return fmt.Errorf("mask %s read-only: %w", path, err)
	}
	return nil
}

const (
	fileRead  = ll.AccessFSReadFile
	fileRX    = ll.AccessFSReadFile | ll.AccessFSExecute
	fileRW    = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate
	dirRead   = ll.AccessFSReadFile | ll.AccessFSReadDir
	dirRX     = dirRead | ll.AccessFSExecute
	dirWriteX = dirRX | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
		ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSym | ll.AccessFSMakeFifo | ll.AccessFSMakeSock |
		ll.AccessFSRefer
)

// llRule is one Landlock rule: a path with its access rights, or a TCP
// port that may be connected to.
type llRule struct {
	path   string
	access uint64
	port   uint16
}

// execRules turns spec into Landlock rules. Missing paths are skipped; the
// /dev files every shell expects are added.
func execRules(spec *ExecSpec) ([]llRule, error) {
	var rules []llRule
	for _, group := range []struct {
		paths     []string
		file, dir uint64
	}{
		{spec.ReadExec, fileRX, dirRX},
		{spec.Read, fileRead, dirRead},
		{spec.Write, fileRW | ll.AccessFSExecute, dirWriteX},
		{[]string{"/proc"}, fileRead, dirRead},
		{[]string{"/dev/null", "/dev/full"}, fileRW, fileRW},
		{[]string{"/dev/zero", "/dev/random", "/dev/urandom"}, fileRead, fileRead},
	} {
		for _, p := range group.paths {
			fi, err := os.Stat(p)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("path %s: %w", p, err)
			}
			access := group.file
			if fi.IsDir() {
				access = group.dir
			}
			rules = append(rules, llRule{path: p, access: access})
		}
	}
	for _, port := range spec.ConnectTCP {
		rules = append(rules, llRule{port: port})
	}
	return rules, nil
}

// restrictThread enforces a Landlock ruleset handling every right of abi
// (go-landlock's preset: the same rights the agent's sandbox handles) on
// the calling thread, which must have no_new_privs.
func restrictThread(abi int, rules []llRule) error {
	preset, ok := landlockPresets[abi]
	if !ok {
		return fmt.Errorf("no go-landlock preset for Landlock ABI %d", abi)
	}
	attr := ll.RulesetAttr{HandledAccessFS: uint64(preset.HandledAccessFS), HandledAccessNet: uint64(preset.HandledAccessNet), Scoped: uint64(preset.Scoped)}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return fmt.Errorf("landlock_create_ruleset (ABI %d): %w", abi, err)
	}
	defer unix.Close(fd)
	for _, r := range rules {
		if r.path == "" {
			if err := ll.LandlockAddNetPortRule(fd, &ll.NetPortAttr{AllowedAccess: ll.AccessNetConnectTCP, Port: uint64(r.port)}, 0); err != nil {
				return fmt.Errorf("landlock: TCP port %d: %w", r.port, err)
			}
			continue
		}
		pfd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("landlock: open %s: %w", r.path, err)
		}
		err = ll.LandlockAddPathBeneathRule(fd, &ll.PathBeneathAttr{AllowedAccess: r.access & attr.HandledAccessFS, ParentFd: pfd}, 0)
		unix.Close(pfd)
		if err != nil {
			return fmt.Errorf("landlock: rule for %s: %w", r.path, err)
		}
	}
	if err := ll.LandlockRestrictSelf(fd, 0); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// dropCapabilities empties the bounding, ambient, inheritable, permitted
// and effective sets of this thread, so that not even root gets any back
// on exec. A process without capabilities has nothing to drop.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	if data[0].Effective|data[1].Effective|data[0].Permitted|data[1].Permitted == 0 {
		return nil
	}
	for c := 0; c < 64; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if errors.Is(err, unix.EINVAL) {
				break // past the last capability this kernel knows
			}
			return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}
