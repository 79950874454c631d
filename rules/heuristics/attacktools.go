package heuristics

import "strings"

// Attack tooling: scanners, brute-forcers, password crackers, exploitation
// frameworks and post-exploitation kits. None is needed to write, build
// or test software, and each is how an intrusion spreads or deepens; a
// human should approve their use. Naming them (which nmap, man hydra, a
// search of the docs) and their help and version output are everyday.

// attackTool says what kind of attack tool prog is, or "".
func attackTool(prog string) string {
	switch prog {
	case "nmap", "masscan", "zmap", "rustscan", "unicornscan", "naabu", "arp-scan", "netdiscover", "nbtscan", "fping", "hping3":
		return "a network scanner"
	case "hydra", "medusa", "ncrack", "patator", "crowbar", "kerbrute", "thc-hydra":
		return "a login brute-forcer"
	case "john", "hashcat", "unshadow", "ophcrack", "fcrackzip", "pdfcrack", "aircrack-ng", "hcxpcapngtool":
		return "a password cracker"
	case "sqlmap", "nikto", "wpscan", "gobuster", "dirb", "dirbuster", "ffuf", "wfuzz", "feroxbuster", "nuclei", "commix", "xsstrike":
		return "a web attack scanner"
	case "msfconsole", "msfvenom", "msfdb", "searchsploit", "setoolkit", "beef-xss", "routersploit", "sliver-client", "havoc":
		return "an exploitation framework"
	case "mimikatz", "mimipenguin", "lazagne", "crackmapexec", "netexec", "nxc", "evil-winrm", "bloodhound-python", "enum4linux",
		"enum4linux-ng", "smbmap", "rpcclient", "impacket-secretsdump", "secretsdump.py", "psexec.py", "wmiexec.py", "smbexec.py",
		"impacket-psexec", "impacket-wmiexec", "getuserspns.py", "impacket-getuserspns", "linpeas.sh", "linpeas", "pspy", "pspy64",
		"linenum.sh", "les.sh", "linux-exploit-suggester.sh", "certipy", "certipy-ad", "ldapdomaindump", "windapsearch",
		"bloodhound-ce-python", "getnpusers.py", "gettgt.py", "ntlmrelayx.py", "dcomexec.py", "atexec.py":
		return "a post-exploitation tool"
	case "responder", "mitm6", "bettercap", "arpspoof", "ettercap", "dsniff", "mitmdump-transparent", "sslsplit", "dnschef":
		return "a traffic interception tool"
	case "dnsrecon", "fierce", "dnsenum", "onesixtyone", "snmp-check", "braa", "smtp-user-enum", "ike-scan":
		return "a reconnaissance scanner"
	}
	// impacket's examples, installed as impacket-<Name> or <Name>.py.
	if len(prog) > 9 && (prog[0] == 'i' || prog[0] == 'I') && hasPrefixFold(prog, "impacket-") {
		return "a post-exploitation tool"
	}
	return ""
}

// checkAttackTool judges one command for attack tooling.
func (s *scan) checkAttackTool(v *cmdView) {
	if v.fam&famAttack == 0 {
		return
	}
	if hash := passTheHash(v); hash != "" {
		s.add(rAttackTool, v.prog+" signs in with a password hash instead of a password ("+hash+"): that is pass-the-hash, a stolen credential used as it was taken; a human should approve it",
			v.prog+" "+evJoin(v.args))
		return
	}
	what := attackTool(v.prog)
	if what == "" || len(v.args) == 1 && (v.args[0] == "--help" || v.args[0] == "-h" || v.args[0] == "--version" || v.args[0] == "-V") {
		return
	}
	if what == "a network scanner" && scansOnlyLoopback(v) {
		return // which of this machine's own ports are open
	}
	s.add(rAttackTool, v.prog+" is "+what+": no coding task needs it, and it is how an intrusion spreads; a human should approve it", v.prog+" "+evJoin(v.args))
}

// scansOnlyLoopback reports a scanner whose every target is this
// machine (localhost, 127.0.0.0/8, ::1). A target list read from a file
// (-iL) or none at all is not known to be.
func scansOnlyLoopback(v *cmdView) bool {
	if hasShortFlag(v.args, 'i') && containsArg(v.args, "-iL") || hasLongFlag(v.args, "input-file") {
		return false
	}
	targets := operands(v.args, "pPeSgTiDoMsbrc", []string{"--top-ports", "--script", "--script-args", "--exclude", "--exclude-ports",
		"--min-rate", "--max-rate", "--source-port", "--data-length", "--ports", "--interface", "--timeout", "--batch-size", "-oN", "-oX", "-oG", "-oA"})
	if len(targets) == 0 {
		return false
	}
	for _, t := range targets {
		if !isLoopbackHost(t) {
			return false
		}
	}
	return true
}

// hashLoginClient reports an everyday client that can sign in with an
// NT hash in place of a password.
func hashLoginClient(prog string) bool {
	switch prog {
	case "xfreerdp", "wlfreerdp", "sdl-freerdp", "xfreerdp3", "smbclient", "rpcclient":
		return true
	}
	return false
}

// passTheHash returns the option with which a client signs in with a
// password hash (xfreerdp /pth:HASH, smbclient --pw-nt-hash), or "".
func passTheHash(v *cmdView) string {
	if !hashLoginClient(v.prog) {
		return ""
	}
	for _, a := range v.args {
		if strings.HasPrefix(strings.ToLower(a), "/pth:") || strings.HasPrefix(a, "-pth:") || a == "--pw-nt-hash" {
			return a
		}
	}
	return ""
}
