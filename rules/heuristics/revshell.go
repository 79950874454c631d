package heuristics

import (
	"strings"
)

// Reverse and bind shells: a shell's input and output wired to a network
// socket so someone elsewhere can drive the machine.

func isNetcat(prog string) bool {
	switch prog {
	case "nc", "ncat", "netcat", "nc.traditional", "nc.openbsd", "pwncat", "telnet":
		return true
	}
	return false
}

func (s *scan) checkReverseShell(cs *cmdScan, src string) {
	if s.enabled(rRevDevTCP) {
		// Text check: works even when the redirection sits in a nested or
		// unparseable part of the command. Every marker contains "/dev/",
		// "/inet/" or "zsh/net/": three scans rule out the six.
		for _, marker := range devSocketMarkers(src) {
			if i := strings.Index(src, marker); i >= 0 && !loopbackProbe(src, marker) {
				s.add(rRevDevTCP, "opens a raw network socket through "+strings.Trim(marker[:len(marker)-1], "/")+
					": this is how reverse shells connect out; refuse unless you wrote this yourself", around(src, i))
				break
			}
		}
	}
	if cs.fams&famNetcat != 0 && s.enabled(rRevNetcat) {
		s.checkNetcat(cs)
	}
	// Prefilter: "-display" / "--display" arguments and DISPLAY= settings.
	if s.enabled(rRevX11Display) && (strings.Contains(src, "-display") || strings.Contains(src, "DISPLAY=")) {
		s.checkX11Display(cs)
	}
	for i := range cs.views {
		v := &cs.views[i]
		if (v.prog == "socat" || v.prog == "websocat") && s.enabled(rRevSocat) {
			for _, a := range v.args {
				if programAddress(v.prog, a) {
					s.add(rRevSocat, v.prog+" connects a socket to a program ("+a+"): this gives whoever is on the other end a shell", evJoin(v.args))
					break
				}
			}
		}
		if s.enabled(rRevScript) {
			if code := v.code; v.codeAll(traitShell) && (v.codeAny(traitSocket|traitModSocket) || runsNetcatShell(code)) {
				s.add(rRevScript, "a "+v.prog+" one-liner connects a socket to a shell or process: this is a reverse shell", code)
			}
		}
		if v.prog == "ssh" && s.enabled(rRevSSHTunnel) && (hasShortFlag(v.args, 'R') || hasLongFlag(v.args, "remote-forward")) {
			s.add(rRevSSHTunnel, "ssh -R opens a port on "+firstHost(operands(v.args, "RLDipoFlbcEeIJmOQSWw", nil))+
				" that leads back into this machine: approve only if you know who uses the tunnel", "ssh "+evJoin(v.args))
		}
	}
}

// programAddress reports a socat or websocat address that runs a program
// (socat exec: / system:, websocat exec: / sh-c: / cmd:), whether the
// other side is a socket it connects to or one it listens on.
func programAddress(prog, a string) bool {
	if containsFold(a, "exec:") {
		return true
	}
	if prog == "socat" {
		return containsFold(a, "system:")
	}
	return containsFold(a, "sh-c:") || containsFold(a, "cmd:")
}

var socketPathMarkers = []string{"/dev/tcp/", "/dev/udp/", "/inet/tcp/", "/inet/udp/", "zsh/net/tcp", "zsh/net/socket"}

// devSocketMarkers returns the socket path markers to look for in src:
// none when src holds none of their common parts.
func devSocketMarkers(src string) []string {
	if strings.Contains(src, "/dev/") || strings.Contains(src, "/inet/") || strings.Contains(src, "zsh/net/") {
		return socketPathMarkers
	}
	return nil
}

// loopbackProbe reports a /dev/tcp or /dev/udp use that only reaches
// this machine and wires no shell to it: echo > /dev/tcp/127.0.0.1/5432
// checks a port is open. A shell on a loopback socket (bash -i >&
// /dev/tcp/127.0.0.1/4444 0>&1) may reach out through a forward, so it
// stays a reverse shell.
func loopbackProbe(src, marker string) bool {
	if marker != "/dev/tcp/" && marker != "/dev/udp/" {
		return false
	}
	if strings.Contains(src, "-i") || strings.Contains(src, "0>&") || strings.Contains(src, "0<&") || strings.Contains(src, ">&0") {
		return false
	}
	for rest := src; ; {
		i := strings.Index(rest, marker)
		if i < 0 {
			return true
		}
		rest = rest[i+len(marker):]
		host, _, _ := strings.Cut(rest, "/")
		if !isLoopbackHost(host) {
			return false
		}
	}
}

func (s *scan) checkNetcat(cs *cmdScan) {
	hasFifo := false
	for i := range cs.views {
		if cs.views[i].prog == "mkfifo" || cs.views[i].prog == "mknod" {
			hasFifo = true
		}
	}
	for i := range cs.views {
		v := &cs.views[i]
		if !isNetcat(v.prog) && !(v.prog == "openssl" && len(v.args) > 0 && v.args[0] == "s_client") {
			continue
		}
		line := v.prog + " " + strings.Join(v.args, " ")
		// telnet and openssl use -e / -c for other things.
		isNC := v.prog != "telnet" && v.prog != "openssl"
		if isNC && (hasShortFlag(v.args, 'e') || hasShortFlag(v.args, 'c') || hasLongFlag(v.args, "exec") ||
			hasLongFlag(v.args, "sh-exec") || hasLongFlag(v.args, "lua-exec")) {
			s.add(rRevNetcat, v.prog+" runs a program for whoever connects (-e/-c): this is a remote shell; refuse it", line)
			return
		}
		if hasFifo {
			s.add(rRevNetcat, v.prog+" with a named pipe (mkfifo) relays a shell over the network: this is a reverse shell", line)
			return
		}
		for _, i := range cs.pipelineOf(v) {
			if o := cs.view(i); o != nil && o != v && o.kind != "" {
				s.add(rRevNetcat, v.prog+" is piped to or from "+o.prog+": this relays a shell over the network", line)
				return
			}
		}
	}
}

// checkX11Display flags X11 clients sent to a display on another host:
// xterm -display 203.0.113.7:1 shows a terminal, and so a shell, on the
// other host's screen. The display comes from -display / --display, or a
// DISPLAY= assignment (before the command, through env, or exported).
// A program that only prints or tests its words opens no display, so
// those words are data; where they reach an X client (xterm $(echo …),
// echo … | xargs xterm) the walker hands them to the client, whose own
// view is judged here.
func (s *scan) checkX11Display(cs *cmdScan) {
	report := func(v *cmdView, target string) {
		prog := v.prog
		if prog == "" {
			prog = "the command"
		}
		s.add(rRevX11Display, prog+" connects to the X display "+target+" on another host: whoever owns that display gets its windows, and a terminal there is a shell on this machine; refuse it",
			strings.TrimSpace(evJoin(v.c.Assigns)+" "+v.c.Name+" "+evJoin(v.c.Args)))
	}
	for i := range cs.views {
		v := &cs.views[i]
		if printsOrTests(v.prog) {
			continue
		}
		for _, a := range v.c.Assigns {
			if val, ok := strings.CutPrefix(a, "DISPLAY="); ok && remoteDisplay(val) {
				report(v, val)
				return
			}
		}
		// "env DISPLAY=… xterm" and "sudo DISPLAY=… xterm" reach the
		// wrapped command as Assigns; "export DISPLAY=…" keeps it in Args.
		args := v.c.Args
		for j, a := range args {
			var val string
			switch {
			case a == "-display" || a == "--display":
				if j+1 < len(args) {
					val = args[j+1]
				}
			case strings.HasPrefix(a, "--display="):
				val = a[len("--display="):]
			case strings.HasPrefix(a, "DISPLAY=") && setsVariables(v.prog):
				val = a[len("DISPLAY="):]
			default:
				continue
			}
			if remoteDisplay(val) {
				report(v, val)
				return
			}
		}
	}
}

// printsOrTests reports the builtins that only print their words (echo,
// printf) or test them (test, [, [[).
func printsOrTests(prog string) bool {
	switch prog {
	case "echo", "printf", "test", "[", "[[":
		return true
	}
	return false
}

func setsVariables(prog string) bool {
	switch prog {
	case "export", "declare", "typeset", "readonly", "local":
		return true
	}
	return false
}

// remoteDisplay reports whether an X display name ("host:N[.S]") names a
// display on another host. Local forms are not: ":0", "unix:0",
// "localhost:10.0" (ssh X forwarding), "127.0.0.1:0", "/tmp/…:0" (a
// socket path). A name computed at run time ("$DISPLAY") is not judged.
func remoteDisplay(d string) bool {
	if strings.ContainsAny(d, "$`") {
		return false
	}
	i := strings.LastIndexByte(d, ':')
	if i < 0 || !isDisplayNumber(d[i+1:]) {
		return false // not a display name ("vnc=:1" for qemu -display, "gtk")
	}
	host := strings.ToLower(d[:i])
	for _, p := range []string{"tcp/", "inet/", "inet6/", "unix/"} {
		host = strings.TrimPrefix(host, p)
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	host = strings.TrimSuffix(host, ":") // "::1:0" splits as "::1" / "0"; "host::0" is DECnet
	if strings.ContainsAny(host, "=, ") {
		return false // another program's option syntax (qemu -display vnc=host:1)
	}
	if ip, ok := parseInetAton(host); ok && (ip == 0 || ip>>24 == 127) {
		return false // "0:0", "2130706433:0": this host, as the resolver reads a number
	}
	switch {
	case host == "", host == "unix", host == "localhost", host == "::1", host == "::", host == "0.0.0.0",
		strings.HasPrefix(host, "/"), strings.HasPrefix(host, "127."), strings.HasSuffix(host, ".localhost"):
		return false
	}
	return true
}

var socketMarkers = []string{
	"socket", "tcpsocket", "fsockopen", "net.connect", "net.socket", "createconnection", "io::socket", "tcpclient", "stream_socket_client",
	"net.dial", "tcpstream::connect",
	"new_tcp", // Neovim's vim.uv.new_tcp()
}

var shellMarkers = []string{
	"/bin/sh", "/bin/bash", "/bin/zsh", "cmd.exe", "pty.spawn", "os.dup2", "subprocess", "child_process", "os.execute", "io.popen",
	"exec(", "exec ", "system(", "system ", "system$", "system\"", "system'", "popen", "spawn(", "proc_open", "shell_exec", "passthru", "iex", "invoke-expression",
}

// runsNetcatShell reports code that starts netcat with a shell or an
// interactive shell: child_process.exec("nc -e /bin/sh …").
func runsNetcatShell(code string) bool {
	for _, m := range []string{"nc -e", "ncat -e", "nc -c", "netcat -e", "ncat --exec", "sh -i", "bash -i"} {
		if strings.Contains(code, m) {
			return true
		}
	}
	return false
}

// around returns up to 60 bytes either side of s[i], for evidence.
func around(s string, i int) string {
	lo, hi := i-60, i+60
	if lo < 0 {
		lo = 0
	}
	if hi > len(s) {
		hi = len(s)
	}
	for lo > 0 && lo < len(s) && s[lo]&0xC0 == 0x80 {
		lo--
	}
	for hi < len(s) && s[hi]&0xC0 == 0x80 {
		hi++
	}
	return s[lo:hi]
}

// isDisplayNumber matches the "N" or "N.S" after a display's colon.
func isDisplayNumber(s string) bool {
	n, scr, _ := strings.Cut(s, ".")
	return isDigits(n) && (scr == "" || isDigits(scr))
}
