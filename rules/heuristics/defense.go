package heuristics

import (
	"path"
	"slices"
	"strconv"
	"strings"
)

// Defense impairment: turning off what would notice or record an attack
// (audit rules, SELinux / AppArmor, the firewall, ASLR, security and
// logging services, system logs, shell history). Reading their state
// (auditctl -l, getenforce, iptables -L, ufw status) is ordinary.

// securityServices are units whose stop or disable blinds the machine's
// defenders; logServices record what happens on it.
var (
	securityServices = wordSet("auditd", "apparmor", "firewalld", "ufw", "iptables", "ip6tables", "nftables", "netfilter-persistent",
		"fail2ban", "selinux", "setroubleshootd", "falcon-sensor", "falcond", "osqueryd", "wazuh-agent", "ossec", "crowdstrike",
		"sysmon", "aide", "clamav-daemon", "clamd", "sentinelone", "sentinelagent", "mdatp", "elastic-agent", "auditbeat", "tetragon", "falco")
	logServices = wordSet("rsyslog", "syslog", "syslog-ng", "systemd-journald", "journald", "auditbeat", "filebeat", "fluentd",
		"fluent-bit", "td-agent", "vector", "promtail", "splunkd", "splunkforwarder", "nxlog", "logstash", "datadog-agent", "otelcol")
)

// wordSet is a set of exact words.
func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// serviceUnit returns a unit name without its .service / .socket suffix.
func serviceUnit(u string) string {
	for _, suf := range []string{".service", ".socket", ".target"} {
		u = strings.TrimSuffix(u, suf)
	}
	return u
}

// serviceStops calls fn with each unit a command stops, disables or masks
// (systemctl stop|disable|mask|kill, service X stop, rc-service, update-rc.d
// X disable|remove, chkconfig X off, launchctl unload|bootout).
func serviceStops(v *cmdView, fn func(unit, verb string)) {
	switch v.prog {
	case "systemctl", "service", "rc-service", "update-rc.d", "rc-update", "chkconfig", "launchctl":
	default:
		return // the operands are worked out only for the programs below
	}
	ops := v.plainOperands()
	switch v.prog {
	case "systemctl":
		if len(ops) < 2 {
			return
		}
		switch ops[0] {
		case "stop", "disable", "mask", "kill", "isolate":
			for _, u := range ops[1:] {
				fn(serviceUnit(u), ops[0])
			}
		}
	case "service", "rc-service":
		if len(ops) >= 2 && (ops[1] == "stop" || ops[1] == "disable") {
			fn(serviceUnit(ops[0]), ops[1])
		}
	case "update-rc.d", "rc-update":
		if len(ops) >= 2 && (ops[1] == "disable" || ops[1] == "remove" || ops[0] == "del" || ops[0] == "delete") {
			u := ops[0]
			if ops[0] == "del" || ops[0] == "delete" {
				u = ops[1]
			}
			fn(serviceUnit(u), "disable")
		}
	case "chkconfig":
		if len(ops) >= 2 && ops[len(ops)-1] == "off" {
			fn(serviceUnit(ops[0]), "off")
		}
	case "launchctl":
		if len(ops) >= 2 && (ops[0] == "unload" || ops[0] == "bootout" || ops[0] == "disable" || ops[0] == "remove") {
			for _, u := range ops[1:] {
				fn(baseName(strings.TrimSuffix(u, ".plist")), ops[0])
			}
		}
	}
}

// guardName reports a service or process named as a guard over what an
// agent or the machine runs (agent-guard.service, cmd-gate-daemon,
// shellguard, the shield's own shieldd): stopping it lets what it judged
// run unjudged.
func guardName(name string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) {
		switch {
		case w == "gate" || w == "shieldd" || w == "parapet":
			return true
		case strings.HasSuffix(w, "guard") || strings.HasSuffix(w, "shield"):
			return true
		}
	}
	return false
}

// guardRulesChanged returns a guard's rules file (a configuration file in
// a directory named as a guard: ~/.config/shellguard/rules.yaml) that v
// deletes or writes, or "".
func guardRulesChanged(cs *cmdScan, v *cmdView) string {
	if v.fam&famDestroy == 0 && len(cs.writeTargets(v)) == 0 {
		return "" // neither deletes nor writes
	}
	var paths []string
	switch v.prog {
	case "rm", "shred", "truncate", "unlink":
		paths = erasedOperands(v)
	}
	paths = append(paths, cs.writeTargets(v)...)
	for _, p := range paths {
		switch path.Ext(p) {
		case ".yaml", ".yml", ".json", ".toml", ".rules", ".rego", ".conf":
		default:
			continue
		}
		if abs := cs.resolveIn(v.c, p).Abs; guardName(baseName(parentDir(abs))) {
			return p
		}
	}
	return ""
}

// firstIs reports whether ops starts with w.
func firstIs(ops []string, w string) bool { return len(ops) > 0 && ops[0] == w }

// checkDefense judges one command for defense impairment.
func (s *scan) checkDefense(cs *cmdScan, v *cmdView) {
	ev := func() string { return v.prog + " " + evJoin(v.args) }
	serviceStops(v, func(unit, verb string) {
		name := unit
		if i := strings.LastIndexByte(name, '.'); i > 0 && strings.Contains(name, "com.") {
			name = name[i+1:] // launchd labels: com.crowdstrike.falcond
		}
		switch {
		case securityServices[name] || name != unit && securityServices[unit] || guardName(unit):
			s.add(rDefSecurityOff, v.prog+" "+verb+" "+unit+" turns off a security control: leave it running", ev())
		case logServices[name] || name != unit && logServices[unit]:
			s.add(rDefLogTamper, v.prog+" "+verb+" "+unit+" stops the machine's logging: nothing after it would be recorded; leave it running", ev())
		}
	})
	// /etc/init.d/auditd stop, /etc/rc.d/rsyslog stop: an init script.
	if d := parentDir(v.c.Name); (d == "/etc/init.d" || d == "/etc/rc.d" || d == "/etc/rc.d/init.d") && firstIs(v.plainOperands(), "stop") {
		switch {
		case securityServices[v.prog]:
			s.add(rDefSecurityOff, v.c.Name+" stop turns off a security control: leave it running", ev())
		case logServices[v.prog]:
			s.add(rDefLogTamper, v.c.Name+" stop stops the machine's logging: leave it running", ev())
		}
	}
	if rules := guardRulesChanged(cs, v); rules != "" && s.enabled(rDefSecurityOff) {
		s.add(rDefSecurityOff, v.prog+" deletes or rewrites "+rules+", the rules of a guard over what runs: whatever they stopped would run unjudged; refuse it", ev())
	}
	switch v.prog {
	case "auditctl":
		// -D deletes every rule, -d / -W one rule or watch, -e 0 disables
		// auditing; listing (-l, -s) is read-only, and adding ordinary
		// rules (-a always,exit, -w) only records more.
		off := hasShortFlag(v.args, 'D') || containsArg(v.args, "-d") || containsArg(v.args, "-W")
		flagValues(v.args, 'e', "", func(val string) { off = off || val == "0" })
		// -a never,exit / -A never,…: a rule that suppresses auditing.
		never := func(val string) { off = off || strings.HasPrefix(val, "never,") || strings.HasSuffix(val, ",never") }
		flagValues(v.args, 'a', "", never)
		flagValues(v.args, 'A', "", never)
		if off {
			s.add(rDefSecurityOff, "auditctl deletes the audit rules or turns auditing off: actions would no longer be recorded; refuse it", ev())
		}
	case "setenforce":
		ops := v.plainOperands()
		if len(ops) > 0 && (ops[0] == "0" || strings.EqualFold(ops[0], "permissive")) {
			s.add(rDefSecurityOff, "setenforce 0 switches SELinux to permissive: its confinement stops; refuse it", ev())
		}
	case "aa-teardown", "aa-disable", "aa-complain":
		s.add(rDefSecurityOff, v.prog+" removes or weakens AppArmor confinement: refuse it", ev())
	case "apparmor_parser":
		if hasShortFlag(v.args, 'R') || hasLongFlag(v.args, "remove") {
			s.add(rDefSecurityOff, "apparmor_parser -R unloads an AppArmor profile: refuse it", ev())
		}
	case "iptables", "ip6tables", "iptables-legacy", "ip6tables-legacy", "iptables-nft", "ip6tables-nft":
		if firewallFlush(v.args) {
			s.add(rDefSecurityOff, v.prog+" flushes the firewall or opens its default policy: every port becomes reachable; refuse it", ev())
		}
	case "nft":
		ops := v.plainOperands()
		if len(ops) == 1 {
			ops = strings.Fields(ops[0]) // nft 'flush ruleset'
		}
		if len(ops) >= 2 && ops[0] == "flush" && (ops[1] == "ruleset" || ops[1] == "table" || ops[1] == "chain") ||
			len(ops) >= 2 && ops[0] == "delete" && ops[1] == "table" {
			s.add(rDefSecurityOff, "nft flushes or deletes firewall rules: refuse it", ev())
		}
	case "ufw":
		ops := v.plainOperands()
		if len(ops) > 0 && (ops[0] == "disable" || ops[0] == "reset") || len(ops) >= 3 && ops[0] == "default" && ops[1] == "allow" && ops[2] == "incoming" {
			s.add(rDefSecurityOff, "ufw "+strings.Join(ops, " ")+" turns the firewall off: refuse it", ev())
		}
	case "firewall-cmd":
		if containsArg(v.args, "--set-default-zone=trusted") {
			s.add(rDefSecurityOff, "firewall-cmd makes every connection trusted: refuse it", ev())
		}
	case "spctl":
		// macOS Gatekeeper: --master-disable / --global-disable let any
		// unsigned download run.
		if hasLongFlag(v.args, "master-disable") || hasLongFlag(v.args, "global-disable") || containsArg(v.args, "--disable") && !hasLongFlag(v.args, "label") {
			s.add(rDefSecurityOff, "spctl turns Gatekeeper off: any unsigned program may then run; refuse it", ev())
		}
	case "csrutil":
		if ops := v.plainOperands(); len(ops) > 0 && (ops[0] == "disable" || ops[0] == "authenticated-root" && opAt(ops, 1) == "disable") {
			s.add(rDefSecurityOff, "csrutil turns System Integrity Protection off: the system's own files and processes are no longer protected; refuse it", ev())
		}
	case "sysadminctl":
		if flagSetTo(v.args, "-screenLock", "off") {
			s.add(rDefSecurityOff, "sysadminctl turns the screen lock off: the session is open to whoever sits at it; refuse it", ev())
		}
	case "defaults":
		if what := macSecurityDefault(v); what != "" {
			s.add(rDefSecurityOff, "defaults write "+what+": refuse it", ev())
		}
	case "xattr":
		// Deleting com.apple.quarantine from a download skips the
		// Gatekeeper check its first run would make.
		if (hasShortFlag(v.args, 'd') || hasShortFlag(v.args, 'c')) && (containsArg(v.args, "com.apple.quarantine") || hasShortFlag(v.args, 'c') && hasShortFlag(v.args, 'r')) {
			s.add(rDefSecurityOff, "xattr removes the quarantine mark macOS checks a download against before it first runs: refuse it unless you built the file yourself", ev())
		}
	case "pfctl":
		if hasShortFlag(v.args, 'd') || containsArg(v.args, "-F") {
			s.add(rDefSecurityOff, "pfctl disables or flushes the packet filter: refuse it", ev())
		}
	case "sysctl":
		for _, a := range v.args {
			if k, val, ok := strings.Cut(a, "="); ok && aslrKey(k) && strings.TrimSpace(val) == "0" {
				s.add(rDefSecurityOff, "sysctl turns address-space layout randomisation off: memory exploits become reliable; refuse it", ev())
			} else if ok && (strings.TrimSpace(k) == "kernel.yama.ptrace_scope" || strings.TrimSpace(k) == "kernel/yama/ptrace_scope") && strings.TrimSpace(val) == "0" {
				s.add(rDefSecurityOff, "sysctl lets any process read another's memory (ptrace_scope 0): refuse it", ev())
			}
		}
	case "pkill", "killall":
		// Killing a security or logging daemon by name stops it as surely
		// as systemctl stop.
		for _, op := range operands(withoutSignals(v.args), "sUugGPtn", []string{"--signal", "--euid", "--uid", "--group", "--pgroup", "--parent", "--terminal"}) {
			name := strings.TrimSuffix(op, "d")
			switch {
			case securityServices[op] || securityServices[name] || op == "auditd" || op == "falcond" || guardName(op):
				s.add(rDefSecurityOff, v.prog+" "+op+" kills a security daemon: leave it running", ev())
			case logServices[op] || logServices[name] || op == "rsyslogd" || op == "syslogd" || op == "journald":
				s.add(rDefLogTamper, v.prog+" "+op+" kills the machine's logging: leave it running", ev())
			}
		}
	case "journalctl":
		if what := journalWiped(v.args); what != "" {
			s.add(rDefLogTamper, "journalctl "+what+" deletes the system journal, all but what was logged last: refuse it", ev())
		}
	case "history":
		ops := v.plainOperands()
		if hasShortFlag(v.args, 'c') || hasShortFlag(v.args, 'd') && len(ops) == 0 {
			s.add(rDefHistory, "history -c erases the shell history: leave it as it is", ev())
		}
	case "bash", "sh", "zsh", "ksh":
		for i, a := range v.args {
			if a == "+o" && i+1 < len(v.args) && v.args[i+1] == "history" {
				s.add(rDefHistory, v.prog+" +o history starts a shell that keeps no history: leave it on", ev())
			}
		}
	case "set", "setopt", "unsetopt":
		for i, a := range v.args {
			if (a == "+o" && i+1 < len(v.args) && v.args[i+1] == "history") || (v.prog == "unsetopt" && strings.EqualFold(a, "history")) {
				s.add(rDefHistory, "turns shell history off: leave it on", ev())
			}
		}
	case "unset":
		ops := v.plainOperands()
		for _, a := range ops {
			if isHistoryVar(a) {
				s.add(rDefHistory, "unset "+a+" turns shell history off: leave it on", ev())
			}
		}
	case "export", "declare", "typeset", "local", "readonly":
		s.checkHistoryAssigns(v.args, ev)
	case "kubectl", "oc":
		if what := clusterDefenseOff(v); what != "" {
			s.add(rDefSecurityOff, v.prog+" "+what+": leave it in place", ev())
		}
	case "aws", "gcloud", "gh":
		if what := cloudDefenseOff(v); what != "" {
			s.add(rDefSecurityOff, v.prog+" "+what+": leave it on", ev())
		}
	case "git":
		// git rm .gitleaks.toml .github/workflows/codeql.yml
		if ops := v.plainOperands(); len(ops) > 1 && ops[0] == "rm" && s.enabled(rDefWeakeningEdit) {
			for _, op := range ops[1:] {
				if securityConfig(cs.resolveIn(v.c, op).Abs) {
					s.add(rDefWeakeningEdit, "git rm "+op+" deletes the configuration of a security check (a secret or code scan, the review rule): "+
						"the check stops without a word about it; make the change by hand, in review", ev())
					break
				}
			}
		}
	case "rm", "shred", "unlink", "truncate", "srm", "wipe":
		ops := v.plainOperands()
		for _, op := range ops {
			p := cs.resolveIn(v.c, op)
			switch {
			case isHistoryFile(p.Abs, cs.home):
				s.add(rDefHistory, v.prog+" erases the shell history file "+op+": leave it as it is", ev())
			case isLogPath(p.Abs):
				s.add(rDefLogTamper, v.prog+" erases the system log "+op+": logs are how anyone finds out what happened; refuse it", ev())
			case securityConfig(p.Abs) && s.enabled(rDefWeakeningEdit):
				s.add(rDefWeakeningEdit, v.prog+" deletes "+op+", which configures a security check (a secret or code scan, the review rule): "+
					"the check stops without a word about it; make the change by hand, in review", ev())
			}
		}
	case "xhost":
		// xhost + (or +ALL): any host may open windows on the display,
		// read its keystrokes and inject its own.
		if slices.Contains(v.args, "+") || slices.Contains(v.args, "+ALL") {
			s.add(rDefSecurityOff, "xhost + turns the X display's access control off: any host can read its keystrokes and type into it; refuse it", ev())
		}
	case "ln":
		ops := v.plainOperands()
		if len(ops) >= 2 && ops[0] == "/dev/null" && isHistoryFile(cs.resolveIn(v.c, ops[len(ops)-1]).Abs, cs.home) {
			s.add(rDefHistory, "links the shell history file to /dev/null: history would no longer be kept; refuse it", ev())
		}
		if len(ops) >= 2 && s.enabled(rDefWeakeningEdit) {
			if tool := hollowTool(ops); tool != "" {
				s.add(rDefWeakeningEdit, "links "+tool+" to a program that does nothing: every check it runs passes; make the change by hand, in review", ev())
			}
		}
	case "mv":
		// mv .github/workflows/security-scan.yml /tmp: deleted from where
		// it runs.
		if ops := v.plainOperands(); len(ops) == 2 && s.enabled(rDefWeakeningEdit) {
			if src, dst := cs.resolveIn(v.c, ops[0]).Abs, cs.resolveIn(v.c, ops[1]).Abs; securityConfig(src) && !securityConfig(dst) &&
				!strings.Contains(dst, "/.github/workflows/") {
				s.add(rDefWeakeningEdit, "mv takes "+ops[0]+", which configures a security check, out of where it runs: the check stops without a word about it; make the change by hand, in review", ev())
			}
		}
	}
	s.checkHistoryAssigns(v.c.Assigns, ev)
	// Writes into the kernel's switches and over logs and history.
	for _, target := range cs.writeTargets(v) {
		p := cs.resolveIn(v.c, target)
		switch {
		case p.Abs == "/proc/sys/kernel/randomize_va_space":
			s.add(rDefSecurityOff, "writes "+p.Abs+": turning ASLR off makes memory exploits reliable; refuse it", target)
		case p.Abs == "/proc/sys/kernel/yama/ptrace_scope":
			s.add(rDefSecurityOff, "writes "+p.Abs+": this lets any process read another's memory; refuse it", target)
		case p.Abs == "/sys/fs/selinux/enforce" || p.Abs == "/etc/selinux/config" || p.Abs == "/etc/sysconfig/selinux":
			s.add(rDefSecurityOff, "writes "+p.Abs+": this can switch SELinux off; refuse it", target)
		case strings.HasPrefix(p.Abs, "/etc/audit/") || p.Abs == "/etc/audit":
			s.add(rDefSecurityOff, "writes the audit configuration "+p.Abs+": refuse it", target)
		case isHistoryFile(p.Abs, cs.home):
			s.add(rDefHistory, "overwrites the shell history file "+target+": leave it as it is", target)
		case isLogPath(p.Abs):
			s.add(rDefLogTamper, "overwrites the system log "+p.Abs+": logs are how anyone finds out what happened; refuse it", target)
		}
	}
}

// checkHistoryAssigns flags HISTFILE=/dev/null, HISTFILE= and HISTSIZE=0
// style assignments that stop history being written.
func (s *scan) checkHistoryAssigns(words []string, ev func() string) {
	for _, w := range words {
		k, val, ok := strings.Cut(w, "=")
		if !ok || !isHistoryVar(k) {
			continue
		}
		val = strings.Trim(val, `"'`)
		switch {
		case k == "HISTFILE" && (val == "" || val == "/dev/null"),
			(k == "HISTSIZE" || k == "HISTFILESIZE" || k == "SAVEHIST") && val == "0",
			k == "HISTIGNORE" && (val == "*" || val == "'*'"):
			s.add(rDefHistory, "sets "+w+": shell history stops being kept; leave it as it is", ev())
		}
	}
}

func isHistoryVar(n string) bool {
	switch n {
	case "HISTFILE", "HISTSIZE", "HISTFILESIZE", "SAVEHIST", "HISTIGNORE":
		return true
	}
	return false
}

// isHistoryFile reports a shell or REPL history file in a home directory.
func isHistoryFile(abs, home string) bool {
	rest, _, ok := homeRel(abs, home)
	if !ok || strings.IndexByte(rest, '/') >= 0 {
		return false
	}
	switch rest {
	case ".bash_history", ".zsh_history", ".zhistory", ".sh_history", ".history", ".python_history", ".mysql_history",
		".psql_history", ".node_repl_history", ".lesshst", ".viminfo":
		return true
	}
	return false
}

// isLogPath reports system logs and audit trails (not the workspace's
// own log files).
func isLogPath(abs string) bool {
	switch {
	case strings.HasPrefix(abs, "/var/log/"), abs == "/var/log",
		abs == "/var/run/utmp", abs == "/run/utmp", abs == "/var/log/wtmp", abs == "/var/log/btmp":
		return true
	}
	return false
}

// aslrKey matches the sysctl key of ASLR in both spellings.
func aslrKey(k string) bool {
	k = strings.TrimSpace(k)
	return k == "kernel.randomize_va_space" || k == "kernel/randomize_va_space"
}

// firewallFlush reports iptables -F / -X / -P … ACCEPT on the input side.
func firewallFlush(args []string) bool {
	for i, a := range args {
		switch a {
		case "-F", "--flush", "-X", "--delete-chain":
			return true
		case "-P", "--policy":
			if i+2 < len(args) && (args[i+1] == "INPUT" || args[i+1] == "FORWARD") && args[i+2] == "ACCEPT" {
				return true
			}
		}
	}
	return false
}

// clusterGuards are the cluster-side security tools and admission
// controllers whose removal blinds a cluster: runtime detection (falco,
// tetragon), policy engines (gatekeeper, kyverno).
var clusterGuards = newFoldSet("falco", "tetragon", "tracee", "gatekeeper", "kyverno", "sysdig", "crowdstrike",
	"neuvector", "twistlock", "aqua-", "wazuh", "kubearmor", "datadog-agent", "datadog-cluster-agent", "guardduty", "wiz-sensor")

// clusterDefenseOff says how a kubectl command turns a cluster's
// defences off, or "": deleting or scaling to zero a security tool,
// deleting an admission webhook, pod security set to privileged, a
// cluster's certificate check skipped.
func clusterDefenseOff(v *cmdView) string {
	if v.prog != "kubectl" && v.prog != "oc" {
		return ""
	}
	ops := infraOperands(v)
	if len(ops) == 0 {
		return ""
	}
	words := strings.Join(ops[1:], " ") + " " + strings.Join(v.args, " ")
	switch ops[0] {
	case "delete", "scale":
		if ops[0] == "scale" && !containsArg(v.args, "--replicas=0") && !(containsArg(v.args, "--replicas") && containsArg(v.args, "0")) {
			return ""
		}
		for _, o := range ops[1:] {
			kind := strings.ToLower(o)
			if strings.HasPrefix(kind, "validatingwebhookconfiguration") || strings.HasPrefix(kind, "mutatingwebhookconfiguration") {
				return "removes an admission webhook, the cluster's check of what may run (" + o + ")"
			}
		}
		if clusterGuards.in(words) {
			return ops[0] + "s a cluster security tool (" + strings.Join(ops, " ") + ")"
		}
	case "patch":
		// A security agent's DaemonSet pinned to no node: it runs nowhere.
		if clusterGuards.in(words) && (strings.Contains(words, "nodeselector") || strings.Contains(words, "nodeSelector")) {
			return "patches a cluster security tool so that it runs on no node (" + strings.Join(ops, " ") + ")"
		}
	case "label":
		if strings.Contains(words, "pod-security.kubernetes.io/enforce=privileged") {
			return "sets a namespace's pod security to privileged: any pod may take the node"
		}
	case "config":
		if len(ops) > 1 && ops[1] == "set-cluster" && (containsArg(v.args, "--insecure-skip-tls-verify=true") || containsArg(v.args, "--insecure-skip-tls-verify")) {
			return "stops checking the cluster's certificate (--insecure-skip-tls-verify): anyone on the path can pose as the cluster"
		}
	}
	return ""
}

// cloudSecurityServices mark a cloud service that detects or blocks attacks:
// gcloud services disable securitycenter.googleapis.com.
var cloudSecurityServices = newFoldSet("security", "scanning", "binaryauthorization", "containeranalysis", "cloudaudit", "iap.",
	"accesscontextmanager", "cloudkms", "dlp.", "recaptcha", "websecurityscanner")

// cloudDefenseOff says how a cloud or forge command turns a security
// control off, or "": instance metadata open to any request again
// (IMDSv1), a security service or hub disabled, a repository's secret
// scanning or push protection disabled through the API.
func cloudDefenseOff(v *cmdView) string {
	ops := infraOperands(v)
	switch v.prog {
	case "aws":
		switch svc, verb := opAt(ops, 0), opAt(ops, 1); {
		case svc == "ec2" && verb == "modify-instance-metadata-options":
			off := false
			flagValues(v.args, 0, "http-tokens", func(x string) { off = off || strings.EqualFold(x, "optional") })
			if off {
				return "ec2 modify-instance-metadata-options --http-tokens optional lets any request on the instance read its credentials again (IMDSv1), as SSRF attacks do"
			}
		case svc == "securityhub" && (verb == "disable-security-hub" || verb == "disable-import-findings-for-product"),
			svc == "inspector2" && verb == "disable", svc == "macie2" && verb == "disable-macie",
			svc == "detective" && verb == "disable-organization-admin-account":
			return svc + " " + verb + " turns a security service off"
		}
	case "gcloud":
		if i := slices.Index(ops, "services"); i >= 0 && opAt(ops, i+1) == "disable" {
			for _, svc := range ops[i+2:] {
				if cloudSecurityServices.in(svc) {
					return "services disable " + svc + " turns a security service off"
				}
			}
		}
	case "gh":
		if opAt(ops, 0) != "api" {
			return ""
		}
		for _, a := range v.args {
			l := strings.ToLower(a)
			if strings.Contains(l, "security_and_analysis") && strings.Contains(l, "disabled") {
				return "api turns the repository's secret scanning, push protection or security updates off (" + a + ")"
			}
			if strings.HasPrefix(l, "vulnerability-alerts") || strings.HasSuffix(l, "/vulnerability-alerts") {
				if apiMethod(v.args) == "DELETE" {
					return "api turns the repository's vulnerability alerts off"
				}
			}
		}
	}
	return ""
}

// journalWiped returns the journalctl --vacuum option of args that
// leaves almost nothing: less than a day of logs, less than 32 MB, or
// fewer than two files; "" for none. Keeping days, weeks or a sizeable
// store is log rotation.
func journalWiped(args []string) string {
	what := ""
	flagValues(args, 0, "vacuum-time", func(val string) {
		if secs, ok := journalSeconds(val); !ok || secs < 24*3600 {
			what = "--vacuum-time=" + val
		}
	})
	flagValues(args, 0, "vacuum-size", func(val string) {
		if n, ok := journalBytes(val); !ok || n < 32<<20 {
			what = "--vacuum-size=" + val
		}
	})
	flagValues(args, 0, "vacuum-files", func(val string) {
		if n, err := strconv.Atoi(val); err != nil || n < 2 {
			what = "--vacuum-files=" + val
		}
	})
	return what
}

// journalSeconds reads a journalctl time span (30s, 12h, 7d, 2weeks,
// 1month, 1y; a bare number is seconds) with durationUnits.
func journalSeconds(val string) (int64, bool) {
	n, unit := leadingNumber(val)
	if n < 0 {
		return 0, false
	}
	if unit = strings.TrimSpace(strings.ToLower(unit)); unit == "" {
		return n, true
	}
	secs := unitAfter(unit)
	return n * secs, secs >= 0
}

// journalBytes reads a journalctl size (500M, 2G, 4096; K, M, G, T in
// powers of 1024).
func journalBytes(val string) (int64, bool) {
	n, unit := leadingNumber(val)
	if n < 0 {
		return 0, false
	}
	switch strings.ToUpper(strings.TrimSpace(unit)) {
	case "", "B":
		return n, true
	case "K":
		return n << 10, true
	case "M":
		return n << 20, true
	case "G":
		return n << 30, true
	case "T":
		return n << 40, true
	}
	return 0, false
}

// leadingNumber splits s into the decimal number it starts with (up to
// nine digits) and the rest; -1 when it starts with none.
func leadingNumber(s string) (int64, string) {
	i := 0
	for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return -1, s
	}
	n, _ := strconv.ParseInt(s[:i], 10, 64)
	return n, s[i:]
}

// flagSetTo reports an option given the value val (-screenLock off).
func flagSetTo(args []string, opt, val string) bool {
	for i, a := range args {
		if a == opt && i+1 < len(args) && strings.EqualFold(args[i+1], val) {
			return true
		}
	}
	return false
}

// macSecurityDefault says which macOS protection a defaults write turns
// off, or "": the quarantine of downloads (LSQuarantine), the password
// the screen saver asks for, the application firewall (globalstate 0),
// Gatekeeper's assessment (GKAutoRearm / assessments enabled).
func macSecurityDefault(v *cmdView) string {
	ops := v.plainOperands()
	if opAt(ops, 0) != "write" || len(ops) < 4 {
		return ""
	}
	domain, key, val := ops[1], ops[2], strings.ToLower(ops[len(ops)-1])
	off := val == "false" || val == "0" || val == "no"
	switch {
	case !off:
		return ""
	case key == "LSQuarantine":
		return "stops marking downloads as quarantined, so Gatekeeper never checks them"
	case key == "askForPassword" && strings.Contains(domain, "screensaver"):
		return "lets the screen saver end without a password"
	case key == "globalstate" && strings.Contains(domain, "alf"):
		return "turns the application firewall off"
	case key == "GKAutoRearm" || key == "enabled" && strings.Contains(domain, "assessment"):
		return "turns Gatekeeper's checks off"
	}
	return ""
}
