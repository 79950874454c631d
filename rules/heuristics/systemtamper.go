package heuristics

import (
	"strconv"
	"strings"
)

// System tampering: changing what the whole machine runs, trusts or
// boots. A command line that writes into the system's configuration or
// programs (however it writes), changes how logins are authenticated, or
// changes the running kernel (modules, parameters, mounts). Reading all
// of these is everyday; the default policy already refuses the file
// tools' writes there (file-write-system), and a shell line gets the same
// judgement here.

// configDirs hold the machine's own configuration and programs: the
// directories of the default policy's file-write-system rule.
var configDirs = [...]string{"/etc", "/usr", "/bin", "/sbin", "/boot", "/lib", "/lib32", "/lib64", "/libx32", "/private/etc", "/System"}

// inSystemDir reports whether abs is one of configDirs or inside one.
func inSystemDir(abs string) bool {
	if len(abs) < 4 || abs[0] != '/' {
		return false
	}
	for _, d := range configDirs {
		if underOrAt(abs, d) {
			return true
		}
	}
	return false
}

// loginAuthConfig labels a file that decides how logins are
// authenticated (PAM's configuration and modules, the SSH server's
// configuration), or returns "".
func loginAuthConfig(abs string) string {
	abs = strings.TrimPrefix(abs, "/private")
	switch {
	case underOrAt(abs, "/etc/pam.d") || abs == "/etc/pam.conf":
		return "the PAM configuration " + abs
	case underOrAt(abs, "/etc/security") && !underOrAt(abs, "/etc/security/limits.conf") && !underOrAt(abs, "/etc/security/limits.d"):
		return "the PAM configuration " + abs
	case abs == "/etc/ssh/sshd_config" || underOrAt(abs, "/etc/ssh/sshd_config.d"):
		return "the SSH server configuration " + abs
	case strings.HasPrefix(abs, "/lib") || strings.HasPrefix(abs, "/usr/lib"):
		// PAM modules: /lib/security, /usr/lib64/security,
		// /lib/x86_64-linux-gnu/security, …
		if i := strings.Index(abs+"/", "/security/"); i > 0 && strings.Count(abs[:i], "/") <= 3 {
			return "the PAM module directory " + abs[:i+len("/security")]
		}
	}
	return ""
}

// checkSystemTamper judges one command for system tampering.
func (s *scan) checkSystemTamper(cs *cmdScan, v *cmdView) {
	for _, t := range cs.writeTargets(v) {
		s.judgeSystemWrite(cs, v, t, "writes")
	}
	if v.fam&famSystem == 0 {
		return
	}
	ev := func() string { return v.prog + " " + evJoin(v.args) }
	switch v.prog {
	case "chattr":
		// chattr [-RVf] [-v version] [-p project] [+-=]mode… file…: the
		// mode words start with + - or =, so operands() cannot tell them
		// from options; the files are the other words.
		for i := 0; i < len(v.args); i++ {
			a := v.args[i]
			switch {
			case a == "-v" || a == "-p":
				i++
			case a == "" || a[0] == '+' || a[0] == '-' || a[0] == '=':
			default:
				s.judgeSystemWrite(cs, v, a, "changes the attributes of")
			}
		}
	case "insmod", "modprobe", "rmmod", "kldload", "kldunload", "kextload", "kextunload":
		if v.prog == "modprobe" && (hasFlag(v.args, 'n', "dry-run") || hasFlag(v.args, 'c', "showconfig") ||
			hasLongFlag(v.args, "show-depends") || hasFlag(v.args, 'D', "show-depends") || hasLongFlag(v.args, "help")) {
			return
		}
		if len(v.plainOperands()) == 0 && !hasShortFlag(v.args, 'a') {
			return
		}
		s.add(rKernelChange, v.prog+" loads or removes kernel code: a module runs with every right on the machine and can hide anything; a human should approve it", ev())
	case "sysctl":
		set := hasFlag(v.args, 'w', "write") || hasFlag(v.args, 'p', "load") || hasLongFlag(v.args, "system")
		for _, op := range v.plainOperands() {
			set = set || strings.IndexByte(op, '=') > 0
		}
		if set {
			s.add(rKernelChange, "sysctl sets kernel parameters: they change how the whole machine behaves (networking, memory, security); a human should approve it", ev())
		}
	case "mount", "umount":
		if len(operands(v.args, "tOoLUN", []string{"--types", "--options", "--label", "--uuid", "--namespace"})) > 0 || hasShortFlag(v.args, 'a') || hasLongFlag(v.args, "all") {
			s.add(rKernelChange, v.prog+" changes what is mounted: a bind mount or remount can hide processes and files or make read-only system files writable; a human should approve it", ev())
		}
	}
}

// judgeSystemWrite reports a change (how: "writes", …) to target when it
// is a system file that no more specific rule judges.
func (s *scan) judgeSystemWrite(cs *cmdScan, v *cmdView, target, how string) {
	if target == "" || target[0] == '&' {
		return
	}
	p := cs.resolveIn(v.c, target)
	switch {
	case strings.HasPrefix(p.Abs, "/proc/sys/"):
		s.add(rKernelChange, how+" the kernel parameter "+p.Abs+": it changes how the whole machine behaves; a human should approve it", target)
		return
	case !inSystemDir(p.Abs):
		return
	}
	if auth := loginAuthConfig(p.Abs); auth != "" {
		if !(strings.HasPrefix(auth, "the SSH server") && sshdHardeningEdit(v)) {
			s.add(rPersistLoginAuth, how+" "+auth+": it decides who can log in and how; refuse it", target)
		}
		return
	}
	if _, _, ok := persistTarget(p, cs.home); ok && how == "writes" {
		return // checkPrivilege judges it as persistence or account tampering
	}
	s.add(rSystemFileWrite, how+" the system file "+p.Abs+": system configuration and programs are the administrator's; make this change yourself if it is needed", target)
}

// sshdHardening are SSH server settings, lower-cased, that only narrow
// who can log in and how; a number after a key is a limit that must not
// grow past the default.
var sshdHardening = map[string]string{
	"passwordauthentication": "no", "permitemptypasswords": "no", "x11forwarding": "no", "kbdinteractiveauthentication": "no",
	"challengeresponseauthentication": "no", "pubkeyauthentication": "yes", "allowagentforwarding": "no", "allowtcpforwarding": "no",
	"permituserenvironment": "no", "hostbasedauthentication": "no", "ignorerhosts": "yes", "strictmodes": "yes",
}

// sshdHardeningEdit reports a sed -i or perl -pi edit whose every line
// written is a hardening setting of the SSH server (PasswordAuthentication
// no, PermitRootLogin prohibit-password, MaxAuthTries 3) and that deletes
// nothing.
func sshdHardeningEdit(v *cmdView) bool {
	_, scripts, ok := inPlaceScripts(v)
	if !ok {
		return false
	}
	script := strings.Join(scripts, "\n")
	if len(sedDeletions(script)) > 0 {
		return false
	}
	subs := sedSubstitutions(script)
	var added strings.Builder
	sedAddedLines(script, &added)
	lines := strings.Split(added.String(), "\n")
	for _, sub := range subs {
		lines = append(lines, strings.Split(unescapeRegex(sub[1]), "\n")...)
	}
	settings := 0
	for _, line := range lines {
		f := strings.Fields(strings.ToLower(line))
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return false
		}
		switch key, val := f[0], f[1]; {
		case sshdHardening[key] == val:
		case key == "permitrootlogin" && (val == "no" || val == "prohibit-password" || val == "without-password"):
		case key == "maxauthtries" || key == "logingracetime" || key == "maxsessions":
			n, err := strconv.Atoi(val)
			if err != nil || n <= 0 || n > 6 && key != "logingracetime" || key == "logingracetime" && n > 120 {
				return false
			}
		default:
			return false
		}
		settings++
	}
	return settings > 0
}
