package heuristics

import (
	"net/netip"
	"strconv"
	"strings"
)

// Discovery: what an intruder runs first, to learn how to get further.
// A search of the whole system for set-uid programs or file
// capabilities, a DNS zone transfer, a dump of every permission an
// account or a cluster grants, a node's kubelet API called by address,
// or a process list grepped for passwords map the way to root, to other
// hosts and to credentials. A project's work stays in the project, so
// these escalate; the same tools pointed at the project or used for
// one lookup (find . -perm -u+x, dig example.com, kubectl auth can-i get
// pods) are everyday.

// checkDiscovery judges the line's commands for discovery.
func (s *scan) checkDiscovery(cs *cmdScan) {
	for i := range cs.views {
		v := &cs.views[i]
		switch v.prog {
		case "find":
			if what := privescSearch(cs, v); what != "" {
				s.add(rDiscoverPrivesc, "find searches "+what+": that is a search for a way to root; say what you are looking for", "find "+evJoin(v.args))
			}
		case "getcap":
			if hasShortFlag(v.args, 'r') {
				for _, op := range operands(v.args, "", nil) {
					if k := criticalKind(cs.resolveIn(v.c, op), cs.root, cs.home); k == critRoot || k == critSystem {
						s.add(rDiscoverPrivesc, "getcap -r lists every program with file capabilities under "+op+": a way to root; say what you are looking for", "getcap "+evJoin(v.args))
						break
					}
				}
			}
		case "dig", "host", "drill":
			if zoneTransfer(v) {
				s.add(rDiscoverEnum, v.prog+" asks for a zone transfer: every name of the domain; look up the names you need", v.prog+" "+evJoin(v.args))
			}
		case "ldapsearch", "ldapdomaindump", "windapsearch", "adidnsdump":
			s.add(rDiscoverEnum, v.prog+" lists a directory's users, groups and hosts: a coding task needs one entry, not the directory", v.prog+" "+evJoin(v.args))
		case "kubectl", "oc":
			if ops := infraOperands(v); len(ops) >= 2 && ops[0] == "auth" && ops[1] == "can-i" && hasLongFlag(v.args, "list") {
				s.add(rDiscoverEnum, v.prog+" auth can-i --list prints every permission this account has: ask for the one you need", v.prog+" "+evJoin(v.args))
			}
		case "aws":
			if ops := infraOperands(v); len(ops) >= 2 && ops[0] == "iam" && ops[1] == "get-account-authorization-details" {
				s.add(rDiscoverEnum, "aws iam get-account-authorization-details dumps every user, role and policy of the account: ask for the one you need", "aws "+evJoin(v.args))
			}
		case "curl", "wget", "http", "https":
			for _, a := range v.args {
				if api := nodeAPI(a); api != "" {
					s.add(rDiscoverEnum, v.prog+" calls "+api+" by address, around the cluster's API server and its checks: use kubectl", v.prog+" "+evJoin(v.args))
					break
				}
			}
		case "osascript", "zenity", "kdialog", "yad":
			if what := passwordPrompt(v); what != "" {
				s.add(rCredPasswordPrompt, v.prog+" "+what+": whatever the user types goes to this command; a coding task never asks for a password this way", v.prog+" "+evJoin(v.args))
			}
		case "cat", "strings", "tr", "xargs", "head", "tail":
			// /proc/*/cmdline read and searched, as ps output is.
			if !readsCommandLines(v) {
				break
			}
			if pat := grepAfter(cs, v); pat != "" && secretPattern(pat) {
				s.add(rCredProcessArgs, "other processes' command lines (/proc/*/cmdline) searched for "+pat+": they hold their passwords and tokens; refuse it", v.prog+" "+evJoin(v.args)+" | grep "+pat)
			}
		case "ping", "ping6", "fping", "arping", "hping3", "nping", "nc", "ncat", "netcat", "traceroute", "tcptraceroute":
			if host := sweptOperand(cs, v); host != "" {
				s.add(rDiscoverEnum, v.prog+" probes each address a loop hands it ("+host+"): a sweep maps what else on the network can be reached; name the host you need",
					v.prog+" "+evJoin(v.args))
			} else if host := portScan(v); host != "" {
				s.add(rDiscoverEnum, v.prog+" probes many ports of "+host+": a port scan maps the services another host runs; name the port you need",
					v.prog+" "+evJoin(v.args))
			}
		case "ps", "pgrep":
			pat := grepAfter(cs, v)
			switch {
			case pat != "" && secretPattern(pat):
				s.add(rCredProcessArgs, v.prog+" output searched for "+pat+": other processes' command lines hold their passwords and tokens; refuse it", v.prog+" "+evJoin(v.args)+" | grep "+pat)
			case pat != "" && securityProducts(pat) >= 2:
				s.add(rDiscoverEnum, v.prog+" output searched for security products ("+pat+"): that is how an intruder learns what watches the machine", v.prog+" "+evJoin(v.args)+" | grep "+pat)
			}
		}
	}
}

// privescSearch says what a find over the system looks for when it is a
// way to root: set-uid / set-gid files or files anyone may write, from
// the root or a system directory; "".
func privescSearch(cs *cmdScan, v *cmdView) string {
	wide := false
	for _, a := range v.args {
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
			break
		}
		if k := criticalKind(cs.resolveIn(v.c, a), cs.root, cs.home); k == critRoot || k == critSystem {
			wide = true
		}
	}
	if !wide {
		return ""
	}
	for i, a := range v.args {
		switch {
		case a == "-perm" && i+1 < len(v.args):
			m := strings.TrimLeft(v.args[i+1], "-/+")
			switch {
			case m == "4000" || m == "2000" || m == "6000" || strings.Contains(m, "u=s") || strings.Contains(m, "g=s") || strings.Contains(m, "u+s") || strings.Contains(m, "g+s"):
				return "the system for set-uid or set-gid programs"
			case m == "2" || m == "o+w" || m == "o=w" || m == "002" || m == "0002":
				return "the system for files anyone may write"
			}
		case a == "-writable":
			return "the system for files it may write"
		}
	}
	return ""
}

// zoneTransfer reports dig axfr / ixfr (-t axfr, type AXFR) and host -l.
func zoneTransfer(v *cmdView) bool {
	if v.prog == "host" && hasShortFlag(v.args, 'l') {
		return true
	}
	for _, a := range v.args {
		switch strings.ToLower(strings.TrimPrefix(a, "-t")) {
		case "axfr", "ixfr":
			return true
		}
		if l := strings.ToLower(a); strings.HasPrefix(l, "axfr") || strings.HasPrefix(l, "ixfr=") {
			return true
		}
	}
	return false
}

// nodeAPI names the node API a URL calls by address: a kubelet
// (10250, 10255) or etcd (2379); "".
func nodeAPI(u string) string {
	h := urlHost(u)
	if h == "" {
		return ""
	}
	rest := u[strings.Index(u, h)+len(h):]
	if !strings.HasPrefix(rest, ":") {
		return ""
	}
	port := strings.TrimPrefix(rest, ":")
	if i := strings.IndexAny(port, "/?#"); i >= 0 {
		port = port[:i]
	}
	if _, err := netip.ParseAddr(strings.Trim(h, "[]")); err != nil {
		return "" // a name: a service of its own on that port
	}
	switch port {
	case "10250", "10255":
		return "a node's kubelet API"
	case "2379":
		return "the cluster's etcd"
	}
	return ""
}

// grepAfter returns the pattern of the grep that reads v's output in its
// pipeline, or "".
func grepAfter(cs *cmdScan, v *cmdView) string {
	for _, i := range cs.after(v) {
		if u := cs.view(i); u != nil && (u.prog == "grep" || u.prog == "egrep" || u.prog == "rg") {
			pat := ""
			flagValues(u.args, 'e', "regexp", func(p string) { pat = p })
			if pat != "" {
				return pat
			}
			if op := searchOperand(u.args); op != "" {
				return op
			}
		}
	}
	return ""
}

// sweptOperand returns the first operand of a probe that takes its
// value from a loop over values the line does not show (for ip in
// $(seq …), while read host): one probe per address is a sweep. nc's
// port alone iterated (a service waited for) is not.
func sweptOperand(cs *cmdScan, v *cmdView) string {
	if len(cs.script.Iterated) == 0 {
		return ""
	}
	ops := v.plainOperands()
	if (v.prog == "nc" || v.prog == "ncat" || v.prog == "netcat") && len(ops) > 1 {
		ops = ops[:1]
	}
	for _, op := range ops {
		if iteratedIn(cs, op) {
			return op
		}
	}
	return ""
}

// portScan returns the host nc -z probes on many ports (a range of more
// than four, or four ports or more listed, as a loop over a list hands
// them over), when the host is not this machine; or "".
func portScan(v *cmdView) string {
	if v.prog != "nc" && v.prog != "ncat" && v.prog != "netcat" || !hasShortFlag(v.args, 'z') {
		return ""
	}
	ops := operands(v.args, "wipsxXqIOT", nil)
	if len(ops) < 2 || isLoopbackHost(ops[0]) {
		return ""
	}
	ports := 0
	for _, p := range ops[1:] {
		lo, hi, isRange := strings.Cut(p, "-")
		a, errA := strconv.Atoi(lo)
		if !isRange {
			if errA == nil {
				ports++
			}
			continue
		}
		if b, errB := strconv.Atoi(hi); errA == nil && errB == nil && b > a {
			ports += b - a + 1
		}
	}
	if ports < 4 {
		return ""
	}
	return ops[0]
}

// iteratedIn reports a word that uses a variable a loop sets to values
// the line does not show ($ip, ${host}, 10.0.0.$i).
func iteratedIn(cs *cmdScan, word string) bool {
	if strings.IndexByte(word, '$') < 0 {
		return false
	}
	for _, name := range cs.script.Iterated {
		if strings.Contains(word, "$"+name) || strings.Contains(word, "${"+name+"}") {
			return true
		}
	}
	return false
}

// readsCommandLines reports an operand naming processes' command lines
// (/proc/*/cmdline, /proc/[0-9]*/cmdline).
func readsCommandLines(v *cmdView) bool {
	for _, a := range v.args {
		if strings.HasPrefix(a, "/proc/") && strings.HasSuffix(a, "/cmdline") && strings.ContainsAny(a, "*?[") {
			return true
		}
	}
	return false
}

// secretPattern reports a search pattern for secrets: pass, token,
// secret, api key, credential.
func secretPattern(p string) bool {
	l := strings.ToLower(p)
	for _, w := range []string{"pass", "token", "secret", "apikey", "api_key", "api-key", "credential", "pwd"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// passwordPrompt says how v asks the user for a password of its own:
// AppleScript's dialog with a hidden answer, zenity / kdialog --password,
// yad's hidden entry; "".
func passwordPrompt(v *cmdView) string {
	switch v.prog {
	case "osascript":
		for _, a := range v.args {
			if l := strings.ToLower(a); strings.Contains(l, "display dialog") && strings.Contains(l, "hidden answer") {
				return "shows a dialog with a hidden answer"
			}
		}
	case "zenity", "kdialog":
		if hasLongFlag(v.args, "password") {
			return "asks for a password in a dialog"
		}
	case "yad":
		if hasLongFlag(v.args, "hide-text") {
			return "asks for hidden text in a dialog"
		}
	}
	return ""
}

// securityProducts counts the endpoint security and monitoring agents a
// search pattern names: one is a look at a service, several a survey.
func securityProducts(p string) int {
	l := strings.ToLower(p)
	n := 0
	for _, w := range []string{"falcon", "crowdstrike", "sentinel", "osquery", "auditd", "wazuh", "carbonblack", "cbagent", "cylance",
		"mdatp", "defender", "sophos", "eset", "qualys", "tanium", "elastic-agent", "velociraptor", "sysmon", "cortex", "traps", "clamd",
		"ossec", "tripwire", "aide", "rkhunter"} {
		if strings.Contains(l, w) {
			n++
		}
	}
	return n
}
