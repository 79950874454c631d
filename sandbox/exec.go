package sandbox

// The confined executor: what the engine runs for an allowed tool call runs
// in a child that is confined before the real program starts. The engine
// (Executor.Start) re-executes its own binary with ExecHelperArg; that
// helper (ExecMain) reads an ExecSpec from fd 3, enters the confinement
// and execs the program. See README.md, "The confined executor".

// ExecHelperArg is the first argument that makes a binary the executor's
// helper. A program that uses an Executor must call ExecMain at the very
// start of main (and test binaries in TestMain) when os.Args[1] is this.
const ExecHelperArg = "internal-exec"

// ExecSpec is one confined program.
type ExecSpec struct {
	// Path is the program (absolute), Args its argv (Args[0] included),
	// Env its whole environment, Dir its working directory.
	Path string   `json:"path"`
	Args []string `json:"args"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
	// ReadExec: files or directories readable and executable (the system's
	// read-only locations). Read: readable only. Write: readable, writable
	// and executable (the workspace when granted, the call's temp dir).
	// Paths that do not exist are skipped.
	ReadExec []string `json:"read_exec"`
	Read     []string `json:"read"`
	Write    []string `json:"write"`
	// Mask: paths beneath a Read or Write path that must stay unreadable
	// (WORKSPACE/.parapet, a session database kept in the workspace). A
	// directory is covered by an empty read-only tmpfs, a file by
	// /dev/null, in the child's own mount namespace.
	Mask []string `json:"mask"`
	// ConnectTCP: the only TCP ports the program may connect to; none
	// means no network at all. Network: UDP sockets too (DNS), set when a
	// verdict grants network.
	ConnectTCP []uint16 `json:"connect_tcp"`
	Network    bool     `json:"network"`

	// probe, when set, makes the helper run the executor's canary probes
	// instead of a program (Executor.Probe).
	Probe *execProbeTargets `json:"probe,omitempty"`
}

// execProbeTargets is what the probe helper tries to reach.
type execProbeTargets struct {
	Canary      string `json:"canary"`       // readable file outside every granted path
	CanaryWant  string `json:"canary_want"`  // its content
	MaskedFile  string `json:"masked_file"`  // a file below a Mask directory
	MaskedWant  string `json:"masked_want"`  // its content
	OutsideDir  string `json:"outside_dir"`  // writable before, outside every Write path
	InsideDir   string `json:"inside_dir"`   // a Write path
	TCPPort     int    `json:"tcp_port"`     // a live 127.0.0.1 listener not in ConnectTCP
	UDPPort     int    `json:"udp_port"`     // a live 127.0.0.1 UDP socket
	UnixName    string `json:"unix_name"`    // a live abstract unix listener
	EnginePID   int    `json:"engine_pid"`   // a process outside the call
	EngineCmdln string `json:"engine_cmdln"` // its /proc/PID/cmdline
}

// ExecutorState is the executor's part of a status report: whether tool
// calls run confined, and the probe report that says so.
type ExecutorState struct {
	// Confined: commands run in the confined executor. False with
	// Unconfined means the operator accepted running them unconfined
	// (--allow-unconfined); false without it means commands are refused.
	Confined   bool   `json:"confined"`
	Unconfined bool   `json:"unconfined,omitempty"`
	Report     Report `json:"report"`
}

// DefaultSystemPaths are the read-only locations a confined program may
// read and execute from: the system's programs, libraries and /etc.
func DefaultSystemPaths() []string {
	return []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}
}
