package heuristics

import (
	"strings"
)

// System disruption: stopping the whole machine (shutdown, reboot, halt,
// the magic SysRq key) or killing init or every process. Stopping one
// process or one service is ordinary.

// checkDisruption judges one command for system disruption.
func (s *scan) checkDisruption(cs *cmdScan, v *cmdView) {
	ev := func() string { return v.prog + " " + evJoin(v.args) }
	halt := ""
	switch v.prog {
	case "shutdown", "reboot", "halt", "poweroff", "kexec":
		// --help and --version only print; shutdown -c cancels a pending
		// shutdown; reboot --wtmp-only (-w) just writes a record.
		if !hasLongFlag(v.args, "help") && !hasLongFlag(v.args, "version") && !(v.prog == "shutdown" && hasShortFlag(v.args, 'c')) &&
			!hasShortFlag(v.args, 'w') && !hasLongFlag(v.args, "wtmp-only") {
			halt = v.prog
		}
	case "init", "telinit":
		ops := v.plainOperands()
		if len(ops) == 1 && (ops[0] == "0" || ops[0] == "6" || ops[0] == "1" || strings.EqualFold(ops[0], "s")) {
			halt = v.prog + " " + ops[0]
		}
	case "systemctl", "loginctl":
		ops := v.plainOperands()
		if len(ops) > 0 {
			switch ops[0] {
			case "poweroff", "reboot", "halt", "kexec", "soft-reboot", "emergency", "rescue", "suspend", "hibernate", "hybrid-sleep":
				halt = v.prog + " " + ops[0]
			case "isolate":
				if len(ops) > 1 && (strings.HasPrefix(ops[1], "rescue") || strings.HasPrefix(ops[1], "emergency") ||
					strings.HasPrefix(ops[1], "poweroff") || strings.HasPrefix(ops[1], "reboot") || strings.HasPrefix(ops[1], "halt")) {
					halt = "systemctl isolate " + ops[1]
				}
			case "start":
				for _, u := range ops[1:] {
					switch serviceUnit(u) {
					case "poweroff", "reboot", "halt", "kexec", "rescue", "emergency":
						halt = v.prog + " start " + u
					}
				}
			case "kill", "stop", "restart":
				for _, u := range ops[1:] {
					switch serviceUnit(u) {
					case "systemd-logind", "dbus", "dbus-broker", "sshd", "ssh", "systemd-networkd", "NetworkManager", "networking":
						if ops[0] != "restart" {
							halt = v.prog + " " + ops[0] + " " + u + " (cuts every session off)"
						}
					}
				}
			}
		}
	case "shutdown.exe":
		halt = v.prog
	case "ip":
		ops := v.plainOperands()
		// ip link set DEV down: the machine drops off the network.
		if len(ops) >= 4 && (ops[0] == "link" || ops[0] == "l") && ops[1] == "set" && ops[len(ops)-1] == "down" && !isLoopbackDevice(ops[2]) {
			halt = "ip link set " + ops[2] + " down (cuts the machine off the network)"
		}
	case "ifconfig":
		ops := v.plainOperands()
		if len(ops) >= 2 && ops[len(ops)-1] == "down" && !isLoopbackDevice(ops[0]) {
			halt = "ifconfig " + ops[0] + " down (cuts the machine off the network)"
		}
	case "ifdown":
		ops := v.plainOperands()
		if len(ops) > 0 && !isLoopbackDevice(ops[0]) || hasShortFlag(v.args, 'a') {
			halt = "ifdown (cuts the machine off the network)"
		}
	case "nmcli":
		ops := v.plainOperands()
		if len(ops) >= 2 && (ops[0] == "networking" || ops[0] == "n") && ops[1] == "off" || len(ops) >= 3 && ops[0] == "radio" && ops[2] == "off" && ops[1] == "all" {
			halt = "nmcli " + ops[0] + " off (cuts the machine off the network)"
		}
	case "kill":
		if why := killsEverything(v.args); why != "" {
			s.add(rDisruptKillAll, "kill "+why+": the machine stops working; kill only the process you started", ev())
		}
		// kill $(pgrep sshd), kill `pidof systemd`: the target is named
		// inside the substitution.
		for _, a := range v.args {
			if name := pidLookupTarget(a); name != "" {
				switch {
				case name == "init" || name == "systemd" || name == "sshd" || name == "dbus-daemon" || name == "systemd-logind":
					s.add(rDisruptKillAll, "kill "+a+" kills "+name+": the machine or every session stops; kill only the process you started", ev())
				case securityServices[name] || securityServices[strings.TrimSuffix(name, "d")] || name == "auditd" || guardName(name):
					s.add(rDefSecurityOff, "kill "+a+" kills the security daemon "+name+": leave it running", ev())
				case logServices[name] || logServices[strings.TrimSuffix(name, "d")]:
					s.add(rDefLogTamper, "kill "+a+" kills the logging daemon "+name+": leave it running", ev())
				}
			}
		}
	case "killall5":
		s.add(rDisruptKillAll, "killall5 signals every process: the machine stops working; kill only the process you started", ev())
	case "pkill", "killall":
		if why := pkillsEverything(v); why != "" {
			s.add(rDisruptKillAll, v.prog+" "+why+": the machine stops working; kill only the process you started", ev())
		}
	}
	if v.hasCode && strings.Contains(v.code, "kill") {
		if why := codeKillsAll(v.code); why != "" {
			s.add(rDisruptKillAll, "a "+v.prog+" program "+why+": the machine stops working; kill only the process you started", v.code)
		}
	}
	if v.fam&famDiskFill != 0 {
		s.checkDiskFill(cs, v)
	}
	if halt != "" {
		s.add(rDisruptHalt, halt+" stops or restarts the whole machine: every user and service goes down with it; refuse it", ev())
	}
	for _, target := range cs.writeTargets(v) {
		if cs.resolveIn(v.c, target).Abs == "/proc/sysrq-trigger" {
			s.add(rDisruptHalt, "writes /proc/sysrq-trigger: the magic SysRq key can reboot, crash or power off the machine at once; refuse it", target)
		}
	}
}

// codeKillsAll says how interpreter code signals every process, or "":
// a kill of pid -1 (os.kill(-1, 9), perl's kill 9, -1), or a kill over
// every process it lists (/proc, psutil.process_iter()) without
// choosing them by name.
func codeKillsAll(code string) string {
	flat := strings.ToLower(strings.Join(strings.Fields(code), ""))
	for _, k := range []string{"kill(-1,", "kill9,-1", "kill'kill',-1", "kill(9,-1", "kill('kill',-1", "kill(\"kill\",-1", "kill-9,-1", "kill(:kill,-1"} {
		// The pid ends at -1: -1234 is a process group.
		if i := strings.Index(flat, k); i >= 0 && (k[len(k)-1] == ',' || i+len(k) == len(flat) || flat[i+len(k)] < '0' || flat[i+len(k)] > '9') {
			return "signals every process (pid -1)"
		}
	}
	listsAll := strings.Contains(code, "/proc/[0-9]") || strings.Contains(code, "process_iter(") || strings.Contains(code, "listdir('/proc')") ||
		strings.Contains(code, `listdir("/proc")`) || strings.Contains(code, "readdirSync('/proc')") || strings.Contains(code, `readdirSync("/proc")`) ||
		strings.Contains(code, "Dir.glob('/proc/") || strings.Contains(code, `Dir.glob("/proc/`)
	if listsAll && !containsAnyOf(code, []string{"name", "cmdline", "comm", "exe", "username", "ppid"}) {
		return "kills every process it finds"
	}
	return ""
}

// killsEverything says why kill's targets are init or every process, or
// returns "". "kill -9 -1" signals every process the caller may signal;
// "kill 1" / "kill -TERM 1" targets init. A leading "-1" followed by pids
// is the signal (SIGHUP), not a target.
func killsEverything(args []string) string {
	i := 0
	if len(args) > 0 {
		switch a := args[0]; {
		case a == "-l" || a == "-L" || a == "--list" || a == "--table":
			return ""
		case a == "-s" || a == "-n" || a == "--signal":
			i = 2
		case len(a) > 1 && a[0] == '-' && a != "--" && len(args) > 1:
			i = 1
		}
	}
	for ; i < len(args); i++ {
		switch args[i] {
		case "--":
			continue
		case "-1":
			return "-1 signals every process"
		case "1":
			return "1 signals init"
		}
	}
	return ""
}

// pkillsEverything says why a pkill / killall matches every process, or "".
func pkillsEverything(v *cmdView) string {
	args := withoutSignals(v.args)
	ops := operands(args, "sUugGPtn", []string{"--signal", "--euid", "--uid", "--group", "--pgroup", "--parent", "--terminal", "--ns", "--session"})
	for _, op := range ops {
		switch op {
		case ".", ".*", "^", "^.*$", "init", "systemd":
			return "matches every process or init (" + op + ")"
		}
	}
	// killall -u USER / pkill -U UID with no pattern: every process of
	// that user, the session itself included.
	if len(ops) == 0 {
		who := ""
		check := func(u string) { who = u }
		flagValues(args, 'u', "user", check)
		flagValues(args, 'U', "uid", check)
		if who != "" {
			return "kills every process of " + who
		}
	}
	return ""
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isLoopbackDevice reports the loopback and dummy interfaces, which carry
// no one's connection.
func isLoopbackDevice(dev string) bool {
	return dev == "lo" || dev == "lo0" || strings.HasPrefix(dev, "dummy") || strings.HasPrefix(dev, "veth")
}

// withoutSignals drops signal options (-9, -HUP, -SIGKILL, -s SIG is kept
// for operands to skip) from pkill / killall arguments, so their letters
// are not read as grouped flags (-HUP is not -H -U P).
func withoutSignals(args []string) []string {
	out := args[:0:0]
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && isSignalName(a[1:]) {
			continue
		}
		out = append(out, a)
	}
	return out
}

func isSignalName(s string) bool {
	if isDigits(s) {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return len(s) >= 2 // -HUP, -KILL, -SIGTERM, -USR1 (not -u, -f, -x)
}

// pidLookupTarget returns the process name of a pid lookup substitution
// ("$(pgrep -f sshd)", "`pidof auditd`"), or "".
func pidLookupTarget(a string) string {
	inner := ""
	switch {
	case strings.HasPrefix(a, "$(") && strings.HasSuffix(a, ")"):
		inner = a[2 : len(a)-1]
	case len(a) > 2 && a[0] == '`' && a[len(a)-1] == '`':
		inner = a[1 : len(a)-1]
	default:
		return ""
	}
	f := strings.Fields(inner)
	if len(f) < 2 || (f[0] != "pgrep" && f[0] != "pidof") {
		return ""
	}
	name := f[len(f)-1]
	if strings.HasPrefix(name, "-") {
		return ""
	}
	return baseName(strings.Trim(name, `"'`))
}
