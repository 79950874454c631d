package procman

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// ExitRestart is the exit code by which a child asks to be restarted; it is
// not counted as a crash (openparallax.v1 process model).
const ExitRestart = 75

// Defaults of the openparallax.v1 process model.
const (
	DefaultMaxCrashes   = 5
	DefaultCrashWindow  = 60 * time.Second
	DefaultCrashDelay   = time.Second
	DefaultStopTimeout  = 5 * time.Second
	DefaultStartTimeout = 30 * time.Second
)

// drainGrace bounds how long a finished run waits for its stdout to reach EOF;
// a descendant outside the child's group may still hold the pipe open.
const drainGrace = time.Second

// GroupMode says where the child goes in the process-group hierarchy.
type GroupMode int

const (
	// NewGroup (default) makes the child lead a new process group (Setpgid),
	// so SIGKILL on stop or after exit takes its descendants too.
	NewGroup GroupMode = iota
	// Detached starts the child in a new session (Setsid): no controlling
	// terminal, for daemon mode. It leads its group as with NewGroup.
	Detached
	// SameGroup leaves the child in our own group: for a child that cannot
	// fork (the sandboxed agent), so a SIGKILL to our group reaches it.
	SameGroup
)

// Options tune a Supervisor. Zero values take the defaults above.
type Options struct {
	// Name labels the child in events and errors: "engine", "agent".
	Name string
	// MaxCrashes crashes within CrashWindow exhaust the budget.
	MaxCrashes  int
	CrashWindow time.Duration
	// CrashDelay is the pause before restarting after a crash.
	CrashDelay time.Duration
	// StopTimeout is how long a child gets between SIGTERM and SIGKILL.
	StopTimeout time.Duration

	// Startup makes the supervisor read the startup report (PORT:, WEB...)
	// from each child's stdout; the supervisor then owns the child's stdout.
	Startup bool
	// StartTimeout bounds the whole report.
	StartTimeout time.Duration
	// Output receives the child's stdout after its report (Startup mode),
	// so the child never blocks on a full pipe. Nil discards. It is written
	// from another goroutine.
	Output io.Writer

	Group GroupMode
	// ParentDeathSignal, if set, is delivered to the child when this process
	// dies, even by SIGKILL (Linux and FreeBSD; ignored elsewhere).
	ParentDeathSignal syscall.Signal

	// OnEvent is called synchronously from the supervising goroutine for
	// each lifecycle event; keep it quick.
	OnEvent func(Event)
}

func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = "child"
	}
	if o.MaxCrashes <= 0 {
		o.MaxCrashes = DefaultMaxCrashes
	}
	if o.CrashWindow <= 0 {
		o.CrashWindow = DefaultCrashWindow
	}
	if o.CrashDelay <= 0 {
		o.CrashDelay = DefaultCrashDelay
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = DefaultStopTimeout
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	return o
}

// EventKind names a lifecycle event.
type EventKind int

const (
	EventStarted    EventKind = iota + 1 // a child was spawned: Pid
	EventReady                           // its startup report is complete: Pid, Info
	EventExited                          // it is gone (or failed to spawn): Pid, State, Crash, Err
	EventRestarting                      // a new child follows: Delay, Crashes
	EventGaveUp                          // the crash budget is exhausted: Err
)

func (k EventKind) String() string {
	switch k {
	case EventStarted:
		return "started"
	case EventReady:
		return "ready"
	case EventExited:
		return "exited"
	case EventRestarting:
		return "restarting"
	case EventGaveUp:
		return "gave up"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event reports one step in the child's life.
type Event struct {
	Kind  EventKind
	Name  string
	Pid   int
	Info  StartInfo        // EventReady
	State *os.ProcessState // EventExited, nil if it never started
	Crash bool             // EventExited: counted against the budget
	// Err is the *CrashError for a crash, the *GiveUpError for EventGaveUp.
	Err     error
	Crashes int           // EventRestarting: crashes in the current window
	Delay   time.Duration // EventRestarting
}

func (e Event) String() string {
	switch e.Kind {
	case EventStarted:
		return fmt.Sprintf("%s started pid %d", e.Name, e.Pid)
	case EventReady:
		return fmt.Sprintf("%s pid %d ready: grpc port %d, web %s", e.Name, e.Pid, e.Info.GRPCPort, e.Info.Web.State)
	case EventExited:
		switch {
		case e.Crash:
			return fmt.Sprintf("%s crashed: %v", e.Name, e.Err)
		case e.State != nil:
			return fmt.Sprintf("%s pid %d exited: %v", e.Name, e.Pid, e.State)
		}
		return fmt.Sprintf("%s pid %d exited", e.Name, e.Pid)
	case EventRestarting:
		if e.Crashes == 0 {
			return fmt.Sprintf("%s restarting as it asked (exit %d)", e.Name, ExitRestart)
		}
		return fmt.Sprintf("%s restarting in %s (%d recent crashes)", e.Name, e.Delay, e.Crashes)
	case EventGaveUp:
		return e.Err.Error()
	}
	return e.Kind.String()
}

// CrashError says why one run of the child counts as a crash.
type CrashError struct {
	Pid   int              // 0 if it never started
	State *os.ProcessState // how it ended; nil if it never started
	// Err is set when the run failed before or during its startup report.
	Err error
	// Killed: we terminated the child because of Err.
	Killed bool
}

func (e *CrashError) Error() string {
	switch {
	case e.Pid == 0:
		return fmt.Sprintf("could not start: %v", e.Err)
	case e.Err == nil:
		return fmt.Sprintf("pid %d exited with %v", e.Pid, e.State)
	case e.Killed:
		return fmt.Sprintf("pid %d: %v (stopped it: %v)", e.Pid, e.Err, e.State)
	}
	return fmt.Sprintf("pid %d exited with %v before finishing its startup report: %v", e.Pid, e.State, e.Err)
}

func (e *CrashError) Unwrap() error { return e.Err }

// GiveUpError is returned by Run when the crash budget is exhausted.
type GiveUpError struct {
	Name    string
	Crashes int
	Window  time.Duration
	Last    *CrashError
}

func (e *GiveUpError) Error() string {
	return fmt.Sprintf("%s crashed %d times within %s, giving up; last crash: %v", e.Name, e.Crashes, e.Window, e.Last)
}

func (e *GiveUpError) Unwrap() error { return e.Last }

// Supervisor runs one child at a time and restarts it by the rules of the
// openparallax.v1 process model: exit 0 ends supervision, exit 75 restarts at once, anything else is a
// crash, restarted after CrashDelay until MaxCrashes fall within CrashWindow.
type Supervisor struct {
	newCmd func() (*exec.Cmd, error)
	opts   Options

	stopCh   chan struct{} // closed when stop is requested
	stopOnce sync.Once
	killCh   chan struct{} // closed to skip the rest of StopTimeout
	killOnce sync.Once
	done     chan struct{} // closed when Run returns

	mu      sync.Mutex
	runCall bool
	pid     int
	info    StartInfo
	ready   bool
}

// NewSupervisor returns a supervisor for the commands newCmd makes; it is
// called for every (re)start, because an exec.Cmd runs only once. Do not use
// exec.CommandContext there: stopping is the supervisor's job. The
// supervisor sets the group fields of SysProcAttr and, in Startup mode, Stdout.
func NewSupervisor(newCmd func() (*exec.Cmd, error), opts Options) *Supervisor {
	return &Supervisor{
		newCmd: newCmd,
		opts:   opts.withDefaults(),
		stopCh: make(chan struct{}),
		killCh: make(chan struct{}),
		done:   make(chan struct{}),
	}
}

// Pid is the current child's pid, 0 between children.
func (s *Supervisor) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pid
}

// StartInfo is the current child's startup report; false until it is complete.
func (s *Supervisor) StartInfo() (StartInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info, s.ready
}

// Run supervises until the child exits 0, stop is requested (by Stop or by
// ctx ending; the child is then terminated as by Stop), or the crash budget is
// exhausted (a *GiveUpError). A requested stop returns nil. Call it once.
func (s *Supervisor) Run(ctx context.Context) error {
	s.mu.Lock()
	if s.runCall {
		s.mu.Unlock()
		return errors.New("procman: Supervisor.Run called twice")
	}
	s.runCall = true
	s.mu.Unlock()
	defer close(s.done)
	defer context.AfterFunc(ctx, s.requestStop)()

	var crashes []time.Time
	for !s.stopping() {
		out, cerr, err := s.runOnce()
		switch out {
		case outFatal:
			return err
		case outStopped, outClean:
			return nil
		case outRestart:
			s.emit(Event{Kind: EventRestarting})
			continue
		}

		// Sliding window: only crashes after the cutoff count.
		now := time.Now()
		cutoff := now.Add(-s.opts.CrashWindow)
		recent := crashes[:0]
		for _, t := range crashes {
			if t.After(cutoff) {
				recent = append(recent, t)
			}
		}
		crashes = append(recent, now)
		if len(crashes) >= s.opts.MaxCrashes {
			gerr := &GiveUpError{Name: s.opts.Name, Crashes: len(crashes), Window: s.opts.CrashWindow, Last: cerr}
			s.emit(Event{Kind: EventGaveUp, Err: gerr})
			return gerr
		}
		s.emit(Event{Kind: EventRestarting, Crashes: len(crashes), Delay: s.opts.CrashDelay})
		t := time.NewTimer(s.opts.CrashDelay)
		select {
		case <-t.C:
		case <-s.stopCh:
			t.Stop()
			return nil
		}
	}
	return nil
}

// Stop terminates the child: SIGTERM, then SIGKILL to its process group after
// StopTimeout, or at once when ctx ends first. It returns when Run has
// returned (at once if Run was never called).
func (s *Supervisor) Stop(ctx context.Context) error {
	s.requestStop()
	s.mu.Lock()
	running := s.runCall
	s.mu.Unlock()
	if !running {
		return nil
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		s.killOnce.Do(func() { close(s.killCh) })
		<-s.done
	}
	return nil
}

func (s *Supervisor) requestStop() { s.stopOnce.Do(func() { close(s.stopCh) }) }

func (s *Supervisor) stopping() bool {
	select {
	case <-s.stopCh:
		return true
	default:
		return false
	}
}

func (s *Supervisor) emit(ev Event) {
	if s.opts.OnEvent != nil {
		ev.Name = s.opts.Name
		s.opts.OnEvent(ev)
	}
}

type outcome int

const (
	outCrash outcome = iota
	outClean
	outRestart
	outStopped
	outFatal // misuse: retrying cannot help
)

type startResult struct {
	info StartInfo
	err  error
}

// runOnce spawns one child and sees it to its end.
func (s *Supervisor) runOnce() (outcome, *CrashError, error) {
	crash := func(c *CrashError) (outcome, *CrashError, error) {
		s.emit(Event{Kind: EventExited, Pid: c.Pid, State: c.State, Crash: true, Err: c})
		return outCrash, c, c
	}
	cmd, err := s.newCmd()
	if err != nil {
		return crash(&CrashError{Err: fmt.Errorf("preparing command: %w", err)})
	}
	if cmd.Process != nil {
		return outFatal, nil, errors.New("procman: the command factory returned a started command")
	}
	s.setGroup(cmd)
	if cmd.WaitDelay == 0 {
		// Wait also waits for os/exec's copying of non-file Stdin/Stderr;
		// a descendant holding such a pipe must not stall supervision.
		cmd.WaitDelay = drainGrace
	}

	var stdout *os.File
	if s.opts.Startup {
		if cmd.Stdout != nil {
			return outFatal, nil, errors.New("procman: Startup mode owns the child's stdout; set Options.Output instead of Cmd.Stdout")
		}
		r, w, err := os.Pipe()
		if err != nil {
			return crash(&CrashError{Err: fmt.Errorf("stdout pipe: %w", err)})
		}
		stdout, cmd.Stdout = r, w
	}
	err = cmd.Start()
	if w, ok := cmd.Stdout.(*os.File); ok && stdout != nil {
		w.Close() // the child has its copy; EOF must follow the child's exit
	}
	if err != nil {
		if stdout != nil {
			stdout.Close()
		}
		return crash(&CrashError{Err: fmt.Errorf("starting %s: %w", cmd.Path, err)})
	}
	proc := cmd.Process
	pid := proc.Pid
	s.setCurrent(pid)
	defer s.setCurrent(0)
	s.emit(Event{Kind: EventStarted, Pid: pid})

	waitDone := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the verdict is read from cmd.ProcessState
		close(waitDone)
	}()

	var (
		startErr  error
		killed    bool
		stopped   bool
		drainDone chan struct{}
	)
	if stdout != nil {
		results := make(chan startResult, 1)
		drainDone = make(chan struct{})
		go s.readStdout(stdout, results, drainDone)
		timer := time.NewTimer(s.opts.StartTimeout)
		exited := waitDone
	report:
		for {
			select {
			case res := <-results:
				if res.err != nil {
					startErr = fmt.Errorf("bad startup report: %w", res.err)
					break report
				}
				s.mu.Lock()
				s.info, s.ready = res.info, true
				s.mu.Unlock()
				s.emit(Event{Kind: EventReady, Pid: pid, Info: res.info})
				break report
			case <-exited:
				// Let the reader decide: it sees the last lines, then EOF.
				// Descendants still holding the pipe are killed so EOF comes.
				s.killGroup(proc)
				exited = nil
			case <-timer.C:
				startErr = fmt.Errorf("no complete startup report within %s", s.opts.StartTimeout)
				break report
			case <-s.stopCh:
				stopped = true
				break report
			}
		}
		timer.Stop()
	}

	select {
	case <-waitDone:
	default:
		switch {
		case stopped:
			s.terminate(proc, waitDone)
		case startErr != nil:
			// A child that closed stdout is usually exiting: give it a
			// moment, so the crash is reported as its own exit.
			if errors.Is(startErr, errStdoutClosed) {
				t := time.NewTimer(drainGrace)
				select {
				case <-waitDone:
				case <-t.C:
				}
				t.Stop()
			}
			select {
			case <-waitDone:
			default:
				killed = true
				s.terminate(proc, waitDone)
			}
		default:
			select {
			case <-waitDone:
			case <-s.stopCh:
				stopped = true
				s.terminate(proc, waitDone)
			}
		}
	}
	<-waitDone
	s.killGroup(proc) // descendants left behind by the child
	s.mu.Lock()
	s.ready = false
	s.mu.Unlock()
	if stdout != nil {
		t := time.NewTimer(drainGrace)
		select {
		case <-drainDone:
		case <-t.C:
		}
		t.Stop()
		stdout.Close() // unblocks the reader if something still holds the pipe
		<-drainDone
	}

	state := cmd.ProcessState
	exited := func() {
		s.emit(Event{Kind: EventExited, Pid: pid, State: state})
	}
	switch {
	case stopped || s.stopping():
		exited()
		return outStopped, nil, nil
	case startErr != nil:
		return crash(&CrashError{Pid: pid, State: state, Err: startErr, Killed: killed})
	case state.ExitCode() == 0:
		exited()
		return outClean, nil, nil
	case state.ExitCode() == ExitRestart:
		exited()
		return outRestart, nil, nil
	}
	return crash(&CrashError{Pid: pid, State: state})
}

// readStdout parses the startup report, then copies the rest of stdout to
// Output until EOF, so the child never blocks on a full pipe.
func (s *Supervisor) readStdout(r *os.File, results chan<- startResult, done chan<- struct{}) {
	defer close(done)
	br := bufio.NewReaderSize(r, maxLineLen)
	info, err := ParseStartup(br)
	results <- startResult{info, err}
	out := s.opts.Output
	if out == nil {
		out = io.Discard
	}
	_, _ = br.WriteTo(&forgivingWriter{w: out})
}

// forgivingWriter switches to discarding after the first write error: a
// broken log must not stop the draining.
type forgivingWriter struct{ w io.Writer }

func (f *forgivingWriter) Write(p []byte) (int, error) {
	if f.w != nil {
		if _, err := f.w.Write(p); err != nil {
			f.w = nil
		}
	}
	return len(p), nil
}

// terminate sends SIGTERM, then SIGKILL to the child's group after
// StopTimeout (or when Stop's context ends), and waits for the exit.
func (s *Supervisor) terminate(p *os.Process, waitDone <-chan struct{}) {
	_ = p.Signal(syscall.SIGTERM) // fails only if it is already gone
	t := time.NewTimer(s.opts.StopTimeout)
	defer t.Stop()
	select {
	case <-waitDone:
		return
	case <-t.C:
	case <-s.killCh:
	}
	s.killGroup(p)
	_ = p.Kill()
	<-waitDone
}

// killGroup SIGKILLs the child's process group, if it leads one. After the
// child is reaped this only reaches descendants it left behind: the group id
// stays reserved while any member lives.
func (s *Supervisor) killGroup(p *os.Process) {
	if s.opts.Group == SameGroup {
		return
	}
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL) // ESRCH: nobody left
}

func (s *Supervisor) setGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	switch s.opts.Group {
	case NewGroup:
		a.Setpgid, a.Pgid, a.Setsid = true, 0, false
	case Detached:
		// Setpgid after setsid would fail: a session leader leads its group already.
		a.Setsid, a.Setpgid = true, false
	}
	setParentDeathSignal(a, s.opts.ParentDeathSignal)
}

func (s *Supervisor) setCurrent(pid int) {
	s.mu.Lock()
	s.pid = pid
	s.mu.Unlock()
}
