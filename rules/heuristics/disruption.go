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
	ops := operands(v.args, "", nil)
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
		if len(ops) == 1 && (ops[0] == "0" || ops[0] == "6" || ops[0] == "1" || strings.EqualFold(ops[0], "s")) {
			halt = v.prog + " " + ops[0]
		}
	case "systemctl", "loginctl":
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
	case "kill":
		if why := killsEverything(v.args); why != "" {
			s.add(rDisruptKillAll, "kill "+why+": the machine stops working; kill only the process you started", ev())
		}
	case "killall5":
		s.add(rDisruptKillAll, "killall5 signals every process: the machine stops working; kill only the process you started", ev())
	case "pkill", "killall":
		if why := pkillsEverything(v); why != "" {
			s.add(rDisruptKillAll, v.prog+" "+why+": the machine stops working; kill only the process you started", ev())
		}
	}
	if halt != "" {
		s.add(rDisruptHalt, halt+" stops or restarts the whole machine: every user and service goes down with it; refuse it", ev())
	}
	writeTargets(v, func(target string) {
		switch p := cs.resolveIn(v.c, target); {
		case p.Abs == "/proc/sysrq-trigger":
			s.add(rDisruptHalt, "writes /proc/sysrq-trigger: the magic SysRq key can reboot, crash or power off the machine at once; refuse it", target)
		}
	})
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
	ops := operands(v.args, "sUugGPtn", []string{"--signal", "--euid", "--uid", "--group", "--pgroup", "--parent", "--terminal", "--ns", "--session"})
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
		flagValues(v.args, 'u', "user", check)
		flagValues(v.args, 'U', "uid", check)
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
