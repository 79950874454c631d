//go:build linux && (amd64 || arm64)

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A Landlock domain and a seccomp filter cannot be lifted, so every test
// that applies the sandbox re-executes the test binary: TestMain sees
// childEnv, the child applies the sandbox, tries real operations and prints
// a childResult as JSON; the parent asserts on it and on what it can
// observe from outside (connections, datagrams, files).
const childEnv = "PARAPET_SANDBOX_TEST_CHILD"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ExecHelperArg {
		ExecMain()
	}
	if raw := os.Getenv(childEnv); raw != "" {
		os.Exit(runChild(raw))
	}
	if dir := os.Getenv(probeAsEngineEnv); dir != "" {
		os.Exit(probeAsEngine(dir))
	}
	os.Exit(m.Run())
}

type childParams struct {
	Scenario      string
	Self          string // the test binary
	Workspace     string
	WorkspaceFile string
	FileContent   string
	OutsideDir    string
	OutsideFile   string
	AllowedAddr   string
	DeniedAddr    string
	UDPAddr       string
	AbstractUnix  string
	PathUnix      string
	AllowedPorts  []uint16
	X32           bool // no outer seccomp filter, so an x32 call is safe to try
}

type childResult struct {
	Fatal        string
	Report       Report
	ApplyErrors  []string
	Ops          map[string]string // operation → "ok" or errno name or error
	PreThreads   []threadResult
	NewThreads   []threadResult
	MsAtApply    int
	MsAfter      int
	BeforeReport *Report
}

type threadResult struct {
	Tid    int
	Checks map[string]string
}

func runChild(raw string) int {
	var prm childParams
	res := childResult{Ops: map[string]string{}}
	if err := json.Unmarshal([]byte(raw), &prm); err != nil {
		res.Fatal = err.Error()
	} else {
		switch prm.Scenario {
		case "enforce":
			enforceChild(prm, &res)
		case "refuse":
			refuseChild(prm, &res)
		default:
			res.Fatal = "unknown scenario " + prm.Scenario
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

func enforceChild(prm childParams, res *childResult) {
	cfg := Config{ReadPaths: []string{prm.Workspace}, ConnectTCP: prm.AllowedPorts}

	// OS threads that exist before Apply, each parked with its goroutine.
	const preN = 3
	release := make(chan struct{})
	pre := make(chan threadResult, preN)
	var ready sync.WaitGroup
	for range preN {
		ready.Add(1)
		go func() {
			runtime.LockOSThread()
			tid := unix.Gettid()
			ready.Done()
			<-release
			pre <- threadResult{Tid: tid, Checks: threadChecks(prm)}
		}()
	}
	ready.Wait()

	if err := Prewarm(); err != nil {
		res.Fatal = "Prewarm: " + err.Error()
		return
	}
	prober, err := PrepareProbes(cfg, ProbeOptions{Dir: prm.OutsideDir})
	if err != nil {
		res.Fatal = "PrepareProbes: " + err.Error()
		return
	}
	res.Ops["clone3 before Apply"] = outcome(rawErr(unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)))
	res.Ops["clone thread+netns before Apply"] = outcome(rawErr(unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_THREAD|unix.CLONE_NEWNET, 0, 0, 0, 0, 0)))
	if prm.X32 {
		res.Ops["x32 getpid before Apply"] = outcomeX32(unix.RawSyscall(x32SyscallBit|unix.SYS_GETPID, 0, 0, 0))
	}

	// Apply from a goroutine other than the one that prepared everything.
	errc := make(chan error)
	go func() { errc <- Apply(cfg) }()
	if err := <-errc; err != nil {
		res.Fatal = "Apply: " + err.Error()
		return
	}
	threads := pprof.Lookup("threadcreate")
	res.MsAtApply = threads.Count()

	res.Report = prober.Run()
	realOps(prm, res.Ops)

	close(release)
	for range preN {
		res.PreThreads = append(res.PreThreads, <-pre)
	}

	// More goroutines locked to OS threads at once than there were threads
	// when Apply returned: the runtime must create new threads for them.
	n := res.MsAtApply + 1
	tids := make(chan int, n)
	post := make(chan threadResult, n)
	release2 := make(chan struct{})
	for range n {
		go func() {
			runtime.LockOSThread()
			tid := unix.Gettid()
			tids <- tid
			<-release2
			post <- threadResult{Tid: tid, Checks: threadChecks(prm)}
		}()
	}
	for range n {
		<-tids
	}
	res.MsAfter = threads.Count()
	close(release2)
	for range n {
		res.NewThreads = append(res.NewThreads, <-post)
	}
	runtimeOps(res.Ops)
}

// refuseChild: invalid configs fail before restricting anything; then a
// valid Apply works once.
func refuseChild(prm childParams, res *childResult) {
	missing := filepath.Join(prm.Workspace, "no-such-dir")
	for _, cfg := range []Config{
		{ReadPaths: []string{missing}},
		{ReadPaths: []string{prm.Workspace}, ConnectTCP: []uint16{0}},
		{ReadPaths: []string{""}},
	} {
		if err := Apply(cfg); err != nil {
			res.ApplyErrors = append(res.ApplyErrors, err.Error())
		} else {
			res.ApplyErrors = append(res.ApplyErrors, "<nil>")
		}
	}
	cfg := Config{ReadPaths: []string{prm.Workspace}, ConnectTCP: prm.AllowedPorts}
	prober, err := PrepareProbes(cfg, ProbeOptions{Dir: prm.OutsideDir})
	if err != nil {
		res.Fatal = "PrepareProbes: " + err.Error()
		return
	}
	before := prober.Run()
	res.BeforeReport = &before
	res.Ops["read outside after failed Applys"] = outcome(readFile(prm.OutsideFile, ""))
	if err := Apply(cfg); err != nil {
		res.Fatal = "valid Apply: " + err.Error()
		return
	}
	res.Ops["second Apply"] = outcome(Apply(cfg))
	res.Report = prober.Run()
}

// threadChecks runs on one locked OS thread.
func threadChecks(prm childParams) map[string]string {
	return map[string]string{
		"read workspace": outcome(readFile(filepath.Join(prm.Workspace, prm.WorkspaceFile), prm.FileContent)),
		"read outside":   outcome(readFile(prm.OutsideFile, "")),
		"unix socket":    outcome(withSocket(unix.AF_UNIX, unix.SOCK_STREAM, 0, func(int) error { return nil })),
		"clone process":  outcome(rawErr(unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_SIGHAND, 0, 0, 0, 0, 0))),
		"write outside":  outcome(os.WriteFile(filepath.Join(prm.OutsideDir, fmt.Sprintf("written-by-thread-%d", unix.Gettid())), []byte("x"), 0o600)),
	}
}

func realOps(prm childParams, ops map[string]string) {
	wsFile := filepath.Join(prm.Workspace, prm.WorkspaceFile)
	do := func(name string, err error) { ops[name] = outcome(err) }

	// Files.
	do("read workspace file", readFile(wsFile, prm.FileContent))
	_, err := os.ReadDir(prm.Workspace)
	do("list workspace", err)
	do("read outside file", readFile(prm.OutsideFile, ""))
	do("read test binary", readFile(prm.Self, ""))
	do("read /proc/self/status", readFile("/proc/self/status", ""))
	do("write new file in workspace", os.WriteFile(filepath.Join(prm.Workspace, "written-new"), []byte("x"), 0o600))
	do("write new file outside", os.WriteFile(filepath.Join(prm.OutsideDir, "written-new"), []byte("x"), 0o600))
	f, err := os.OpenFile(wsFile, os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		f.Close()
	}
	do("open workspace file for append", err)
	do("truncate workspace file", os.Truncate(wsFile, 0))
	do("remove workspace file", os.Remove(wsFile))
	do("rename workspace file", os.Rename(wsFile, wsFile+".moved"))
	do("mkdir in workspace", os.Mkdir(filepath.Join(prm.Workspace, "written-dir"), 0o700))
	do("symlink in workspace", os.Symlink("/etc/passwd", filepath.Join(prm.Workspace, "written-link")))
	do("chmod workspace file", os.Chmod(wsFile, 0o777))
	do("chown workspace file", os.Chown(wsFile, os.Getuid(), os.Getgid()))
	do("utimes workspace file", os.Chtimes(wsFile, time.Unix(0, 0), time.Unix(0, 0)))
	do("setxattr workspace file", unix.Setxattr(wsFile, "user.parapet", []byte("x"), 0))

	// Programs and processes.
	cmd := exec.Command(prm.Self, "-test.run=^$")
	cmd.Env = []string{}
	// Inherited stdio: with none, os/exec would open /dev/null, which
	// Landlock refuses before any fork is tried.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stderr, os.Stderr
	do("os/exec", cmd.Run())
	do("execve", unix.Exec(prm.Self, []string{prm.Self, "-test.run=^$"}, []string{}))
	do("clone3", rawErr(unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)))
	do("clone thread+netns", rawErr(unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_THREAD|unix.CLONE_NEWNET, 0, 0, 0, 0, 0)))
	// Lets thread clones through to the kernel, which rejects this one
	// (CLONE_THREAD without CLONE_SIGHAND).
	do("clone thread, invalid", rawErr(unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_THREAD, 0, 0, 0, 0, 0)))
	do("unshare user ns", unix.Unshare(unix.CLONE_NEWUSER))
	var word uintptr
	do("ptrace peek self", rawErr(unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_PEEKDATA, uintptr(unix.Getpid()), 0, uintptr(unsafe.Pointer(&word)), 0, 0)))
	var params [120]byte // struct io_uring_params
	do("io_uring_setup", rawErr(unix.RawSyscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params)), 0)))
	do("signal 0 to parent", unix.Kill(os.Getppid(), 0))
	c := byte('x')
	do("TIOCSTI on stdin", rawErr(unix.RawSyscall(unix.SYS_IOCTL, 0, unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))))
	archOps(prm, ops)

	// Network.
	d := net.Dialer{Timeout: 30 * time.Second} // a safety net, not an assertion
	do("dial allowed", talk(d, "tcp4", prm.AllowedAddr, "hello-plain"))
	mp := d
	mp.SetMultipathTCP(true)
	do("dial allowed asking for MPTCP", talk(mp, "tcp4", prm.AllowedAddr, "hello-mptcp"))
	do("dial denied", talk(d, "tcp4", prm.DeniedAddr, "hello-denied"))
	denied, _ := net.ResolveTCPAddr("tcp4", prm.DeniedAddr)
	do("fastopen to denied", withSocket(unix.AF_INET, unix.SOCK_STREAM, 0, func(fd int) error {
		return unix.Sendto(fd, []byte("hello-fastopen"), unix.MSG_FASTOPEN, &unix.SockaddrInet4{Port: denied.Port, Addr: [4]byte{127, 0, 0, 1}})
	}))
	do("mptcp socket", withSocket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP, func(int) error { return nil }))
	do("dial abstract unix", talk(d, "unix", prm.AbstractUnix, "hello-abstract"))
	do("dial path unix", talk(d, "unix", prm.PathUnix, "hello-path"))
	_, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	do("socketpair", err)
	do("send udp", talk(d, "udp4", prm.UDPAddr, "hello-udp"))
	do("raw socket", withSocket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP, func(int) error { return nil }))
	do("packet socket", withSocket(unix.AF_PACKET, unix.SOCK_RAW, 0, func(int) error { return nil }))
	_, err = net.Interfaces() // netlink
	do("list interfaces", err)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err == nil {
		ln.Close()
	}
	do("listen tcp", err)
	do("bind allowed port", withSocket(unix.AF_INET, unix.SOCK_STREAM, 0, func(fd int) error {
		return unix.Bind(fd, &unix.SockaddrInet4{Port: int(prm.AllowedPorts[0]), Addr: [4]byte{127, 0, 0, 1}})
	}))
	_, err = net.DefaultResolver.LookupHost(context.Background(), "localhost")
	do("resolve localhost", err)
}

func runtimeOps(ops map[string]string) {
	var sink [][]byte
	for range 64 {
		sink = append(sink, make([]byte, 1<<20))
	}
	runtime.GC()
	sink = nil
	runtime.GC()
	debug.FreeOSMemory()
	ops["gc"] = "ok"

	fired := make(chan struct{})
	time.AfterFunc(time.Millisecond, func() { close(fired) })
	<-fired
	tk := time.NewTicker(time.Millisecond)
	for range 3 {
		<-tk.C
	}
	tk.Stop()
	ops["timers"] = "ok"

	ping, pong := make(chan int), make(chan int)
	go func() {
		for v := range ping {
			pong <- v + 1
		}
		close(pong)
	}()
	v := 0
	for range 10000 {
		ping <- v
		v = <-pong
	}
	close(ping)
	if v == 10000 {
		ops["goroutines"] = "ok"
	} else {
		ops["goroutines"] = fmt.Sprint("counted ", v)
	}
	ops["local time zone"], _ = time.Now().Local().Zone()
	if _, err := Supported(); err != nil {
		ops["Supported after Apply"] = err.Error()
	} else {
		ops["Supported after Apply"] = "ok"
	}
}

// talk dials, sends msg and a newline, and for stream connections expects
// "ack <msg>" back.
func talk(d net.Dialer, network, addr, msg string) error {
	c, err := d.Dial(network, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := fmt.Fprintln(c, msg); err != nil {
		return err
	}
	if strings.HasPrefix(network, "udp") {
		return nil
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "ack "+msg+"\n" {
		return fmt.Errorf("got %q back", line)
	}
	return nil
}

func rawErr(_, _ uintptr, e unix.Errno) error { return errnoOrNil(e) }

func outcomeX32(r, _ uintptr, e unix.Errno) string {
	if e != 0 {
		return outcome(e)
	}
	return fmt.Sprint("ok (pid ", r, ")")
}

// --- parent side ---

type fixture struct {
	prm                 childParams
	allowed, denied     net.Listener
	abstract, pathUnix  net.Listener
	udp                 net.PacketConn
	mu                  sync.Mutex
	received            []string
	workspaceFileBefore os.FileInfo
}

func newFixture(t *testing.T, scenario string) *fixture {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ws, outside := t.TempDir(), t.TempDir()
	fx := &fixture{prm: childParams{
		Scenario: scenario, Self: self, Workspace: ws, WorkspaceFile: "notes.txt",
		FileContent: "workspace content\n", OutsideDir: outside,
		OutsideFile: filepath.Join(outside, "secret.txt"),
	}}
	if err := os.WriteFile(filepath.Join(ws, fx.prm.WorkspaceFile), []byte(fx.prm.FileContent), 0o644); err != nil {
		t.Fatal(err)
	}
	if fx.workspaceFileBefore, err = os.Stat(filepath.Join(ws, fx.prm.WorkspaceFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fx.prm.OutsideFile, []byte("outside secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	listen := func(network, addr string) net.Listener {
		ln, err := net.Listen(network, addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return ln
	}
	fx.allowed = listen("tcp4", "127.0.0.1:0")
	fx.denied = listen("tcp4", "127.0.0.1:0")
	fx.abstract = listen("unix", fmt.Sprintf("@parapet-sandbox-test-%d-%s", os.Getpid(), t.Name()))
	fx.pathUnix = listen("unix", filepath.Join(outside, "s.sock"))
	if fx.udp, err = net.ListenPacket("udp4", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fx.udp.Close() })
	go fx.serve(fx.allowed)

	fx.prm.AllowedAddr = fx.allowed.Addr().String()
	fx.prm.DeniedAddr = fx.denied.Addr().String()
	fx.prm.AbstractUnix = fx.abstract.Addr().String()
	fx.prm.PathUnix = fx.pathUnix.Addr().String()
	fx.prm.UDPAddr = fx.udp.LocalAddr().String()
	fx.prm.AllowedPorts = []uint16{uint16(fx.allowed.Addr().(*net.TCPAddr).Port)}
	status, _ := os.ReadFile("/proc/self/status")
	fx.prm.X32 = runtime.GOARCH == "amd64" && bytes.Contains(status, []byte("\nSeccomp:\t0\n"))
	return fx
}

// serve answers each line with "ack <line>" and records it.
func (fx *fixture) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil {
				return
			}
			fx.mu.Lock()
			fx.received = append(fx.received, strings.TrimSuffix(line, "\n"))
			fx.mu.Unlock()
			fmt.Fprintf(c, "ack %s", line)
		}()
	}
}

func (fx *fixture) run(t *testing.T) childResult {
	t.Helper()
	raw, err := json.Marshal(fx.prm)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(fx.prm.Self, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var res childResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("child output is not one JSON result (%v):\n%s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	if res.Fatal != "" {
		t.Fatalf("child: %s\nstderr: %s", res.Fatal, stderr.String())
	}
	return res
}

// pending reports whether ln has a connection waiting, without blocking:
// the child has exited, so anything it connected is already queued.
func pending(t *testing.T, ln net.Listener) bool {
	t.Helper()
	rc, err := ln.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got bool
	var aerr error
	if err := rc.Control(func(fd uintptr) {
		nfd, _, err := unix.Accept4(int(fd), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err == nil {
			unix.Close(nfd)
			got = true
		} else if !errors.Is(err, unix.EAGAIN) {
			aerr = err
		}
	}); err != nil {
		t.Fatal(err)
	}
	if aerr != nil {
		t.Fatalf("accept4: %v", aerr)
	}
	return got
}

func TestSandboxEnforced(t *testing.T) {
	if _, err := Supported(); err != nil {
		t.Skipf("sandbox unavailable here: %v", err)
	}
	fx := newFixture(t, "enforce")
	res := fx.run(t)
	defer func() {
		if t.Failed() {
			out, _ := json.MarshalIndent(res, "", "  ")
			t.Logf("child result: %s", out)
		}
	}()

	// The report, as the engine will see it.
	if res.Report.Status != StatusSandboxed || res.Report.Error != "" {
		t.Errorf("report status %q, error %q; want sandboxed", res.Report.Status, res.Report.Error)
	}
	if res.Report.LandlockABI < minLandlockABI {
		t.Errorf("report Landlock ABI %d", res.Report.LandlockABI)
	}
	names := map[string]bool{}
	for _, p := range res.Report.Probes {
		names[p.Name] = true
		if !p.Blocked || (!p.Control && !p.Skipped) {
			t.Errorf("probe %s: blocked=%v control=%v: %s", p.Name, p.Blocked, p.Control, p.Detail)
		}
		if p.Skipped {
			t.Logf("probe %s skipped: %s", p.Name, p.Detail)
		}
	}
	for _, want := range []string{"read-outside", "write-create", "write-existing", "exec", "spawn", "clone-process",
		"tcp-connect", "tcp-fastopen", "mptcp", "udp-send", "unix-connect", "unix-socketpair", "bind", "listen", "ptrace", "io_uring"} {
		if !names[want] {
			t.Errorf("report has no %s probe", want)
		}
	}

	// Real operations inside the sandbox.
	want := map[string]string{
		"read workspace file":             "ok",
		"list workspace":                  "ok",
		"read outside file":               "EACCES",
		"read test binary":                "EACCES",
		"read /proc/self/status":          "EACCES",
		"write new file in workspace":     "EACCES",
		"write new file outside":          "EACCES",
		"open workspace file for append":  "EACCES",
		"truncate workspace file":         "EACCES",
		"remove workspace file":           "EACCES",
		"rename workspace file":           "EACCES",
		"mkdir in workspace":              "EACCES",
		"symlink in workspace":            "EACCES",
		"chmod workspace file":            "EPERM",
		"chown workspace file":            "EPERM",
		"utimes workspace file":           "EPERM",
		"setxattr workspace file":         "EPERM",
		"os/exec":                         "EPERM",
		"execve":                          "EPERM",
		"clone3 before Apply":             "EINVAL",
		"clone3":                          "ENOSYS",
		"clone thread+netns before Apply": "EINVAL",
		"clone thread+netns":              "EPERM",
		"clone thread, invalid":           "EINVAL",
		"unshare user ns":                 "EPERM",
		"ptrace peek self":                "EPERM",
		"io_uring_setup":                  "EPERM",
		"TIOCSTI on stdin":                "EPERM",
		"dial allowed":                    "ok",
		"dial allowed asking for MPTCP":   "ok",
		"dial denied":                     "EACCES",
		"fastopen to denied":              "EPERM",
		"mptcp socket":                    "EPERM",
		"dial abstract unix":              "EPERM",
		"dial path unix":                  "EPERM",
		"socketpair":                      "EPERM",
		"send udp":                        "EPERM",
		"raw socket":                      "EPERM",
		"packet socket":                   "EPERM",
		"list interfaces":                 "EPERM",
		"listen tcp":                      "EPERM",
		"bind allowed port":               "EPERM",
		"gc":                              "ok",
		"timers":                          "ok",
		"goroutines":                      "ok",
		"Supported after Apply":           "ok",
	}
	if res.Report.LandlockABI >= 6 {
		want["signal 0 to parent"] = "EPERM" // Landlock signal scoping
	}
	for k, v := range archExpectations(fx.prm) {
		want[k] = v
	}
	for op, w := range want {
		got, ok := res.Ops[op]
		if !ok {
			t.Errorf("%s: not run", op)
		} else if got != w {
			t.Errorf("%s: got %s, want %s", op, got, w)
		}
	}
	// Name resolution after Apply must fail, however it fails.
	if got := res.Ops["resolve localhost"]; got == "ok" {
		t.Errorf("resolving localhost after Apply worked")
	}

	// Threads: those parked before Apply and those created after it.
	if len(res.PreThreads) != 3 {
		t.Errorf("%d pre-existing threads reported", len(res.PreThreads))
	}
	if res.MsAfter <= res.MsAtApply {
		t.Errorf("no OS thread was created after Apply (%d threads at Apply, %d after)", res.MsAtApply, res.MsAfter)
	}
	tids := map[int]bool{}
	for _, tr := range res.NewThreads {
		tids[tr.Tid] = true
	}
	if len(tids) != res.MsAtApply+1 {
		t.Errorf("%d distinct threads among %d locked goroutines", len(tids), res.MsAtApply+1)
	}
	threadWant := map[string]string{"read workspace": "ok", "read outside": "EACCES", "unix socket": "EPERM", "clone process": "EPERM", "write outside": "EACCES"}
	for _, group := range [][]threadResult{res.PreThreads, res.NewThreads} {
		for _, tr := range group {
			for k, w := range threadWant {
				if tr.Checks[k] != w {
					t.Errorf("thread %d: %s: got %s, want %s", tr.Tid, k, tr.Checks[k], w)
				}
			}
		}
	}

	// What the parent can see from outside.
	fx.allowed.Close() // ends serve once the handlers are done
	fx.mu.Lock()
	got := strings.Join(fx.received, ",")
	fx.mu.Unlock()
	for _, w := range []string{"hello-plain", "hello-mptcp"} {
		if !strings.Contains(got, w) {
			t.Errorf("allowed listener did not receive %q (got %q)", w, got)
		}
	}
	for name, ln := range map[string]net.Listener{"denied TCP": fx.denied, "abstract unix": fx.abstract, "path unix": fx.pathUnix} {
		if pending(t, ln) {
			t.Errorf("%s listener got a connection from the sandboxed child", name)
		}
	}
	buf := make([]byte, 64)
	n, _, err := recvNonblock(t, fx.udp, buf)
	if err == nil {
		t.Errorf("UDP socket received %q from the sandboxed child", buf[:n])
	}
	for _, dir := range []string{fx.prm.Workspace, fx.prm.OutsideDir} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "written") {
				t.Errorf("the sandboxed child created %s", filepath.Join(dir, e.Name()))
			}
		}
	}
	after, err := os.Stat(filepath.Join(fx.prm.Workspace, fx.prm.WorkspaceFile))
	if err != nil {
		t.Fatalf("workspace file: %v", err)
	}
	content, _ := os.ReadFile(filepath.Join(fx.prm.Workspace, fx.prm.WorkspaceFile))
	b := fx.workspaceFileBefore
	if string(content) != fx.prm.FileContent || after.Mode() != b.Mode() || !after.ModTime().Equal(b.ModTime()) {
		t.Errorf("workspace file changed: %q %v %v (was %v %v)", content, after.Mode(), after.ModTime(), b.Mode(), b.ModTime())
	}
}

func recvNonblock(t *testing.T, pc net.PacketConn, buf []byte) (int, unix.Sockaddr, error) {
	t.Helper()
	rc, err := pc.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var from unix.Sockaddr
	var rerr error
	if err := rc.Control(func(fd uintptr) {
		n, from, rerr = unix.Recvfrom(int(fd), buf, unix.MSG_DONTWAIT)
	}); err != nil {
		t.Fatal(err)
	}
	return n, from, rerr
}

func TestApplyRefusesBadConfigWithoutRestricting(t *testing.T) {
	if _, err := Supported(); err != nil {
		t.Skipf("sandbox unavailable here: %v", err)
	}
	fx := newFixture(t, "refuse")
	res := fx.run(t)

	if len(res.ApplyErrors) != 3 {
		t.Fatalf("apply errors: %q", res.ApplyErrors)
	}
	for i, want := range []string{filepath.Join(fx.prm.Workspace, "no-such-dir"), "port 0", "empty path"} {
		if !strings.Contains(res.ApplyErrors[i], want) {
			t.Errorf("Apply error %d = %q; want it to mention %q", i, res.ApplyErrors[i], want)
		}
	}
	if got := res.Ops["read outside after failed Applys"]; got != "ok" {
		t.Errorf("after refused Applys, reading outside the workspace: %s (want ok: nothing restricted)", got)
	}
	if res.BeforeReport == nil || res.BeforeReport.Status != StatusUnsandboxed {
		t.Errorf("report before a valid Apply: %+v; want unsandboxed", res.BeforeReport)
	}
	if got := res.Ops["second Apply"]; !strings.Contains(got, "already") {
		t.Errorf("second Apply: %s", got)
	}
	if res.Report.Status != StatusSandboxed {
		t.Errorf("report after the valid Apply: %q", res.Report.Status)
		for _, p := range res.Report.Probes {
			t.Logf("%+v", p)
		}
	}
}

// Without Apply every probe runs unblocked and every control holds; this
// runs in the test process itself, which it leaves unrestricted.
func TestProbesUnsandboxed(t *testing.T) {
	cfg := Config{ReadPaths: []string{t.TempDir()}}
	dir := t.TempDir()
	p, err := PrepareProbes(cfg, ProbeOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	rep := p.Run()
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("unsandboxed probes left %d files in %s", len(entries), dir)
	}
	_, supErr := Supported()
	switch {
	case supErr != nil && rep.Status != StatusUnavailable:
		t.Errorf("status %q on a system without the sandbox (%v)", rep.Status, supErr)
	case supErr == nil && rep.Status != StatusUnsandboxed:
		t.Errorf("status %q, want unsandboxed", rep.Status)
	}
	for _, pr := range rep.Probes {
		if pr.Blocked || !pr.Control {
			t.Errorf("probe %s: blocked=%v control=%v: %s", pr.Name, pr.Blocked, pr.Control, pr.Detail)
		}
	}
}

func TestPrepareProbesRefusesCanaryInsideReadPaths(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := PrepareProbes(Config{ReadPaths: []string{root}}, ProbeOptions{Dir: sub}); err == nil || !strings.Contains(err.Error(), "inside read path") {
		t.Errorf("probe dir inside the read path: err = %v", err)
	}
	decoy := filepath.Join(root, "decoy")
	if err := os.WriteFile(decoy, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := PrepareProbes(Config{ReadPaths: []string{root}}, ProbeOptions{Dir: t.TempDir(), CanaryFile: decoy}); err == nil || !strings.Contains(err.Error(), "inside read path") {
		t.Errorf("canary file inside the read path: err = %v", err)
	}
	entries, _ := os.ReadDir(sub)
	if len(entries) != 0 {
		t.Errorf("refused PrepareProbes left %d files behind", len(entries))
	}
}

func TestJudge(t *testing.T) {
	wrapped := fmt.Errorf("open: %w", unix.EACCES)
	for _, tc := range []struct {
		desc          string
		pr            probe
		after         error
		blocked, ctrl bool
		skipped       bool
	}{
		{"landlock block after success", probe{deny: unix.EACCES, mustSucceed: true}, wrapped, true, true, false},
		{"landlock probe failing before: file modes, not the sandbox", probe{deny: unix.EACCES, mustSucceed: true, before: unix.EACCES}, unix.EACCES, true, false, false},
		{"landlock probe needs success before", probe{deny: unix.EACCES, mustSucceed: true, before: unix.ENOENT}, unix.EACCES, true, false, false},
		{"seccomp block after a different errno", probe{deny: unix.EPERM, before: unix.ENOENT}, unix.EPERM, true, true, false},
		{"seccomp probe denied before too", probe{deny: unix.EPERM, before: unix.EPERM}, unix.EPERM, true, false, false},
		{"other failure is not a block", probe{deny: unix.EPERM}, unix.ECONNREFUSED, false, true, false},
		{"success is not a block", probe{deny: unix.EPERM}, nil, false, true, false},
		{"skippable, environment denies", probe{deny: unix.EPERM, skippable: true, before: unix.EPERM}, unix.EPERM, true, false, true},
		{"skippable, environment allows", probe{deny: unix.EPERM, skippable: true, before: unix.EBADF}, unix.EPERM, true, true, false},
	} {
		r := tc.pr.judge(tc.after)
		if r.Blocked != tc.blocked || r.Control != tc.ctrl || r.Skipped != tc.skipped {
			t.Errorf("%s: blocked=%v control=%v skipped=%v; want %v %v %v (%s)", tc.desc, r.Blocked, r.Control, r.Skipped, tc.blocked, tc.ctrl, tc.skipped, r.Detail)
		}
	}
}
