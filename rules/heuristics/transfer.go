package heuristics

import (
	"strings"
)

// File transfer and socket tools: copying files to another host (scp,
// rsync, sftp, smbclient, ftp, tftp), relaying or serving data with
// socat / netcat, and curl reading local files through file://. Whatever
// they move, a human should know where it goes. Fetching from a remote
// host, local copies and copies to loopback or trusted hosts are ordinary;
// sensitive files anywhere are exfil.sensitive-file (BLOCK).

// isLoopbackHost reports hosts that stay on this machine.
func isLoopbackHost(h string) bool {
	h = strings.Trim(strings.ToLower(h), "[]")
	return h == "localhost" || h == "::1" || strings.HasPrefix(h, "127.") || h == "0:0:0:0:0:0:0:1" || strings.HasSuffix(h, ".localhost")
}

// checkTransfer judges one command for file transfers.
func (s *scan) checkTransfer(cs *cmdScan, v *cmdView) {
	if !s.enabled(rExfilTransfer) {
		return
	}
	report := func(what string) {
		s.add(rExfilTransfer, what+": approve only if you know the host and what is sent", v.prog+" "+evJoin(v.args))
	}
	untrusted := func(h string) bool { return h != "" && !isLoopbackHost(h) && !s.an.trusted.match(h) }
	switch v.prog {
	case "scp", "rsync":
		ops := copyOperands(v)
		if len(ops) < 2 || v.prog == "rsync" && (hasShortFlag(v.args, 'n') || hasLongFlag(v.args, "dry-run")) {
			return // rsync -n lists what it would copy and copies nothing
		}
		dst := ops[len(ops)-1]
		h := remoteHost(dst)
		if strings.HasPrefix(dst, "rsync://") || strings.HasPrefix(dst, "scp://") {
			h = urlHost(dst)
		}
		// A host of the organisation's own network (a build box, a
		// staging server) keeps the files inside it; secrets sent there
		// are still exfil.sensitive-file. A single-label name is not one:
		// to scp it is as likely an ssh alias, which can point anywhere.
		if untrusted(h) && !internalNetworkHost(h) {
			report(v.prog + " copies local files to " + h)
		}
	case "skopeo", "crane", "gcrane", "regctl", "oras":
		if from, to := imageCopy(v); from != "" && privateImage(from) && publicImage(to) && imageOwner(from) != imageOwner(to) {
			report(v.prog + " copies the image " + from + " from a private registry to " + to + ", where anyone can pull it")
		}
	case "docker", "podman", "nerdctl":
		// docker tag PRIVATE PUBLIC && docker push PUBLIC: the same copy
		// in two steps.
		if ops := v.plainOperands(); opAt(ops, 0) == "push" && len(ops) >= 2 && publicImage(ops[1]) {
			for i := 0; i < v.idx; i++ {
				u := &cs.views[i]
				if tops := u.plainOperands(); u.prog == v.prog && opAt(tops, 0) == "tag" && len(tops) == 3 && tops[2] == ops[1] &&
					privateImage(tops[1]) && imageOwner(tops[1]) != imageOwner(ops[1]) {
					report(v.prog + " pushes " + tops[1] + ", an image of a private registry, to " + ops[1] + ", where anyone can pull it")
					break
				}
			}
		}
	case "sftp":
		ops := operands(v.args, "BbcDFiJlPRoSs", nil)
		if len(ops) > 0 {
			h := remoteHost(ops[0] + ":")
			if strings.HasPrefix(ops[0], "sftp://") {
				h = urlHost(ops[0])
			}
			if untrusted(h) && !internalNetworkHost(h) && (hasShortFlag(v.args, 'b') || hasHereInput(v)) && !sftpBatchOnlyReads(v) {
				report("sftp runs a batch of transfer commands against " + h)
			}
		}
	case "smbclient":
		cmds := ""
		flagValues(v.args, 'c', "command", func(c string) { cmds += " " + c })
		tarMode := ""
		flagValues(v.args, 'T', "tar", func(t string) { tarMode = t })
		lc := strings.ToLower(cmds)
		if containsWord(lc, "put") || containsWord(lc, "mput") || strings.HasPrefix(tarMode, "x") || hasHereInput(v) {
			report("smbclient uploads files to a network share")
		}
	case "ftp", "lftp", "ncftp", "pftp", "tnftp":
		cmds := ""
		flagValues(v.args, 'e', "", func(c string) { cmds += " " + c })
		flagValues(v.args, 'c', "", func(c string) { cmds += " " + c })
		lc := strings.ToLower(cmds)
		host := firstOperandHost(v.args)
		if (containsWord(lc, "put") || containsWord(lc, "mput") || strings.Contains(lc, "mirror -r") || strings.Contains(lc, "mirror --reverse") ||
			hasHereInput(v)) && (host == "" || untrusted(host)) {
			report(v.prog + " uploads files over FTP")
		}
	case "rclone":
		// rclone copy|sync|move SRC REMOTE:path uploads; a local
		// destination (no "name:") is a download or a local copy.
		if verb, files, ok := rcloneCopy(v); ok && !dryRun(v.args) && !hasShortFlag(v.args, 'n') { // -n, --dry-run: copies nothing
			if dst := files[len(files)-1]; remoteStore(dst) {
				report("rclone " + verb + " uploads files to the remote " + remoteName(dst))
			}
		}
	case "openssl":
		// openssl s_client -connect HOST:PORT < file: a TLS netcat.
		if len(v.args) > 0 && v.args[0] == "s_client" && (hasHereInput(v) && !onlyDevNullInput(v) || len(cs.before(v)) > 0 && !cs.emptyInput(v)) {
			host := ""
			for i, a := range v.args {
				if a == "-connect" && i+1 < len(v.args) {
					host, _, _ = strings.Cut(v.args[i+1], ":")
				}
			}
			if untrusted(host) {
				report("openssl s_client streams data to " + host)
			}
		}
	case "python", "python3", "php", "ruby":
		// A built-in web server publishing a directory outside the
		// workspace (python3 -m http.server --directory ~).
		if dir, ok := servedDirectory(v); ok && !cs.inWorkspaceOrTmp(v.c, dir) {
			report(v.prog + " serves " + dir + " over HTTP to anyone who can reach this machine")
		}
	case "ncftpput", "curlftpfs", "wput":
		report(v.prog + " uploads files over FTP")
	case "wormhole", "croc", "ffsend", "onionshare-cli", "sendme":
		// Peer-to-peer senders: whoever holds the code gets the files,
		// through relays no policy names.
		if ops := v.plainOperands(); len(ops) >= 2 && (ops[0] == "send" || ops[0] == "upload") || v.prog == "onionshare-cli" && len(ops) > 0 {
			report(v.prog + " hands files to whoever holds its code, through a relay")
		}
	case "mail", "mailx", "mutt", "neomutt", "swaks", "s-nail", "bsd-mailx":
		if f := mailAttachment(v); f != "" {
			report(v.prog + " mails the file " + f + " as an attachment")
		}
	case "tftp", "atftp":
		put := hasShortFlag(v.args, 'p') || hasLongFlag(v.args, "put") || hasHereInput(v)
		flagValues(v.args, 'c', "", func(c string) { put = put || strings.HasPrefix(strings.TrimSpace(c), "put") })
		for _, a := range v.args {
			put = put || a == "put"
		}
		if put {
			report(v.prog + " uploads a file over TFTP")
		}
	case "ssh":
		// cmd | ssh HOST 'cat > F': what the line produces is written on
		// the other host, as scp would copy it.
		fed := len(cs.before(v)) > 0
		for _, r := range v.c.Redirects {
			fed = fed || r.Op == "<" && r.Target != "/dev/null"
		}
		if hasShortFlag(v.args, 'n') {
			fed = false // ssh -n reads its stdin from /dev/null
		}
		ops := operands(v.args, "bcDEeFIiJLlmOopQRSWw", nil)
		if fed && len(ops) >= 2 && !remoteReadsProgram(v) {
			h := ops[0]
			if at := strings.LastIndexByte(h, '@'); at >= 0 {
				h = h[at+1:]
			}
			if untrusted(strings.ToLower(h)) {
				report("ssh sends what is piped into it to " + h)
			}
		}
	case "socat":
		s.checkSocatTransfer(v, report)
	case "nc", "ncat", "netcat", "nc.traditional", "nc.openbsd", "pwncat":
		if hasShortFlag(v.args, 'z') || hasShortFlag(v.args, 'h') {
			return // port scan / help
		}
		listen := hasShortFlag(v.args, 'l') || hasLongFlag(v.args, "listen")
		fed := false
		for _, r := range v.c.Redirects {
			if r.Op == "<" || isOutputRedirect(r.Op) && r.Target != "/dev/null" && !strings.HasPrefix(r.Target, "&") {
				fed = true
			}
		}
		fed = fed || len(cs.before(v)) > 0 || len(cs.after(v)) > 0
		host := firstOperandHost(v.args)
		if listen && loopbackListen(v.args) {
			return // only this machine can connect
		}
		if fed && (listen || untrusted(host)) {
			if listen {
				report(v.prog + " serves or receives data on a listening port")
			} else {
				report(v.prog + " streams data to " + host)
			}
		}
	case "curl", "wget":
		for _, a := range v.args {
			if len(a) > 7 && strings.EqualFold(a[:7], "file://") {
				p := cs.resolveIn(v.c, fileURLPath(a))
				if !isBelow(p.Abs, cs.root) && p.Abs != cs.root {
					report(v.prog + " reads the local file " + p.Abs + " through a file:// URL")
				}
				if sens, label := classify(p.Abs, cs.home); sens != sensNone && sens != sensLeakOnly {
					s.add(credentialRule(sens), credentialMessage(sens, label, a), v.prog+" "+evJoin(v.args))
				}
			}
		}
	}
}

// fileURLPath returns the path of a file:// URL ("file:///etc/passwd",
// "file://localhost/etc/passwd").
func fileURLPath(u string) string {
	rest := u[7:]
	if strings.HasPrefix(rest, "/") {
		return rest
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[i:]
	}
	return "/"
}

// firstOperandHost returns the first operand that is not a number, as a
// host, or "".
func firstOperandHost(args []string) string {
	for _, op := range operands(args, "pwsiqlJoFIeWbcDLRO", nil) {
		if isDigits(op) {
			continue
		}
		if h := urlHost(op); h != "" {
			return h
		}
		if at := strings.LastIndexByte(op, '@'); at >= 0 {
			op = op[at+1:]
		}
		return strings.ToLower(op)
	}
	return ""
}

// hasHereInput reports commands fed a script through a here-document or
// here-string, or from a file (ftp <<EOF … put …).
func hasHereInput(v *cmdView) bool {
	for _, r := range v.c.Redirects {
		switch r.Op {
		case "<<", "<<-", "<<<", "<":
			return true
		}
	}
	return false
}

// socatNetPrefixes are socat address types that reach the network.
var socatNetPrefixes = []string{"tcp:", "tcp4:", "tcp6:", "tcp-connect:", "tcp4-connect:", "tcp6-connect:", "tcp-listen:", "tcp4-listen:",
	"tcp6-listen:", "tcp-l:", "udp:", "udp4:", "udp6:", "udp-connect:", "udp-listen:", "udp-l:", "udp-sendto:", "udp-recv:", "openssl:",
	"openssl-connect:", "ssl:", "openssl-listen:", "ssl-l:", "sctp:", "sctp-connect:", "sctp-listen:", "dccp-connect:", "socks4:", "socks4a:",
	"socks5:", "proxy:", "vsock-connect:", "vsock-listen:"}

// checkSocatTransfer flags socat joining a network address to a file,
// the terminal or another network address (a relay). A program address
// (exec:, system:) is revshell.socat.
func (s *scan) checkSocatTransfer(v *cmdView, report func(string)) {
	ops := v.plainOperands()
	if len(ops) < 2 {
		return
	}
	net, internal, localListener := 0, 0, false
	for _, a := range ops[len(ops)-2:] {
		la := strings.ToLower(a)
		for _, p := range socatNetPrefixes {
			if strings.HasPrefix(la, p) {
				if strings.Contains(p, "listen") || strings.HasSuffix(p, "-l:") {
					// A listener bound to loopback is reachable from here only.
					if i := strings.Index(la, ",bind="); i >= 0 {
						h, _, _ := strings.Cut(la[i+6:], ",")
						if isLoopbackHost(h) {
							localListener = true
							break
						}
					}
				} else {
					h, _, _ := strings.Cut(la[len(p):], ":")
					if isLoopbackHost(h) {
						break
					}
					if privateHost(h) || internalNetworkHost(h) {
						internal++
					}
				}
				net++
				break
			}
		}
	}
	// A loopback listener relayed to a host of the organisation's network
	// is a local port forward (to a staging database): nothing leaves.
	if net > 0 && !(localListener && internal == net) {
		report("socat joins a network socket to a file, the terminal or another socket")
	}
}

// emptyInput reports a command whose pipe input is an empty line (echo
// | openssl s_client …, the usual way to make it connect and quit): a
// bare echo, true, or printf of nothing.
func (cs *cmdScan) emptyInput(v *cmdView) bool {
	b := cs.before(v)
	if len(b) == 0 {
		return false
	}
	u := cs.view(b[len(b)-1])
	if u == nil || len(u.c.Redirects) > 0 {
		return false
	}
	switch u.prog {
	case "echo", "true", ":":
		return len(u.args) == 0 || u.prog == "echo" && len(u.args) == 1 && (u.args[0] == "" || u.args[0] == "-n")
	case "printf":
		return len(u.args) == 1 && (u.args[0] == "" || u.args[0] == "\\n" || u.args[0] == "Q" || u.args[0] == "QUIT\\n")
	}
	return false
}

// onlyDevNullInput reports a command whose only input redirection is
// </dev/null (openssl s_client … </dev/null just closes stdin).
func onlyDevNullInput(v *cmdView) bool {
	for _, r := range v.c.Redirects {
		if (r.Op == "<" && r.Target != "/dev/null") || r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" {
			return false
		}
	}
	return true
}

// servedDirectory returns the directory a one-line web server publishes:
// python -m http.server [--directory D] (else the current directory),
// php -S ADDR [-t D], ruby -run -e httpd [D].
func servedDirectory(v *cmdView) (string, bool) {
	switch v.prog {
	case "python", "python3":
		mod := ""
		flagValues(v.args, 'm', "", func(m string) { mod = m })
		if mod != "http.server" && mod != "SimpleHTTPServer" {
			return "", false
		}
		dir := "."
		flagValues(v.args, 'd', "directory", func(d string) { dir = d })
		return dir, true
	case "php":
		if !hasShortFlag(v.args, 'S') {
			return "", false
		}
		dir := "."
		flagValues(v.args, 't', "", func(d string) { dir = d })
		return dir, true
	case "ruby":
		if !containsArg(v.args, "httpd") {
			return "", false
		}
		ops := operands(v.args, "repI", nil)
		if len(ops) > 0 && ops[len(ops)-1] != "httpd" {
			return ops[len(ops)-1], true
		}
		return ".", true
	}
	return "", false
}

// loopbackListen reports a netcat listener bound to loopback: nc -l
// 127.0.0.1 9999, nc -l -s localhost -p 9999, ncat -l ::1 8080.
func loopbackListen(args []string) bool {
	bind := ""
	flagValues(args, 's', "source", func(a string) { bind = a })
	if bind == "" {
		for _, op := range operands(args, "pswiqIOPTVX", []string{"--source", "--source-port", "--wait", "--idle-timeout", "--proxy", "--proxy-type"}) {
			if !isDigits(op) {
				bind = op
				break
			}
		}
	}
	return bind != "" && isLoopbackHost(bind)
}

// imageCopy returns the source and destination of an image copy:
// skopeo copy / sync, crane copy / cp, regctl image copy, oras cp.
func imageCopy(v *cmdView) (from, to string) {
	ops := operands(v.args, "", []string{"--src-creds", "--dest-creds", "--authfile", "--src-authfile", "--dest-authfile", "--platform", "--override-arch", "--override-os", "--format"})
	switch {
	case v.prog == "regctl" && len(ops) >= 4 && ops[0] == "image" && (ops[1] == "copy" || ops[1] == "cp"):
		ops = ops[2:]
	case len(ops) >= 3 && (ops[0] == "copy" || ops[0] == "cp" || ops[0] == "sync"):
		ops = ops[1:]
	default:
		return "", ""
	}
	strip := func(ref string) string {
		for _, t := range []string{"docker://", "oci:", "containers-storage:"} {
			ref = strings.TrimPrefix(ref, t)
		}
		return ref
	}
	return strip(ops[0]), strip(ops[1])
}

// imageRegistry is the registry host of an image reference: its first
// component when that names a host (a dot, a port, localhost), else
// Docker Hub.
func imageRegistry(ref string) string {
	first, _, ok := strings.Cut(ref, "/")
	if ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return strings.ToLower(first)
	}
	return "docker.io"
}

// publicRegistries serve images to anyone who asks.
var publicRegistries = map[string]bool{"docker.io": true, "index.docker.io": true, "registry-1.docker.io": true, "ghcr.io": true,
	"quay.io": true, "registry.gitlab.com": true, "public.ecr.aws": true, "registry.k8s.io": true, "mcr.microsoft.com": true}

func publicImage(ref string) bool { return publicRegistries[imageRegistry(ref)] }

// privateImage reports an image on a registry of the organisation's own
// (an internal host, a cloud account's registry).
func privateImage(ref string) bool {
	reg := imageRegistry(ref)
	return !publicRegistries[reg] && !strings.HasPrefix(ref, "/") && !strings.HasPrefix(ref, ".") && reg != "localhost"
}

// imageOwner is the first path component after the registry: the
// account or organisation an image belongs to.
func imageOwner(ref string) string {
	if reg := imageRegistry(ref); strings.HasPrefix(strings.ToLower(ref), reg+"/") {
		ref = ref[len(reg)+1:]
	}
	owner, _, _ := strings.Cut(ref, "/")
	return strings.ToLower(owner)
}

// internalNetworkHost is privateHost without single-label names, which
// ssh and scp read as aliases from ~/.ssh/config.
func internalNetworkHost(h string) bool {
	return privateHost(h) && strings.Contains(h, ".") || strings.Contains(h, ":") && privateHost(h)
}

// mailAttachment returns the first file a mail client attaches (mail -a
// FILE, mutt -a FILE --, swaks --attach FILE or @FILE), or "". heirloom
// mailx's -a is an attachment as well; -A names an account.
func mailAttachment(v *cmdView) string {
	file := ""
	switch v.prog {
	case "swaks":
		flagValues(v.args, 0, "attach", func(f string) {
			if file == "" {
				file = strings.TrimPrefix(f, "@")
			}
		})
	default:
		flagValues(v.args, 'a', "attach", func(f string) {
			if file == "" {
				file = f
			}
		})
	}
	return file
}

// copyOperands returns scp's or rsync's operands, past the options'
// values: the sources, then the destination.
func copyOperands(v *cmdView) []string {
	return operands(v.args, "iPoFcJlSeB", []string{"--rsh", "--exclude", "--include", "--filter", "--exclude-from", "--include-from",
		"--files-from", "--log-file", "--password-file", "--port", "--chmod", "--chown", "--rsync-path", "--bwlimit", "--timeout",
		"--partial-dir", "--temp-dir", "--backup-dir", "--suffix", "--link-dest", "--compare-dest", "--copy-dest"})
}

// sftpBatchOnlyReads reports an sftp batch the line shows (a
// here-document, -b <(echo …)) that uploads nothing: no put, mput or
// reput among its commands.
func sftpBatchOnlyReads(v *cmdView) bool {
	batch, shown := heredocText(v.c.Redirects)
	flagValues(v.args, 'b', "", func(b string) {
		if inner, ok := strings.CutPrefix(b, "<("); ok && !shown {
			batch, shown = inner, true
		}
	})
	if !shown {
		return false // a batch file: what it does is not in the line
	}
	l := strings.ToLower(batch)
	return !containsWord(l, "put") && !containsWord(l, "mput") && !containsWord(l, "reput") && !strings.Contains(l, "$(")
}

// rcloneValueFlags are rclone's options that take a separate value.
var rcloneValueFlags = []string{"--config", "--include", "--exclude", "--filter", "--transfers", "--checkers", "--bwlimit", "--log-file",
	"--max-depth", "--min-size", "--max-size", "--min-age", "--max-age", "--include-from", "--exclude-from", "--filter-from",
	"--files-from", "--backup-dir", "--suffix", "--order-by", "--max-transfer", "--retries", "--timeout", "--contimeout",
	"--log-level", "--stats", "--tpslimit", "--buffer-size", "--user-agent", "--multi-thread-streams"}

// rcloneCopy reads rclone copy|sync|move (copyto, moveto, bisync): the
// subcommand, and its operands, the sources then the destination.
func rcloneCopy(v *cmdView) (verb string, files []string, ok bool) {
	ops := operands(v.args, "", rcloneValueFlags)
	if len(ops) < 3 {
		return "", nil, false
	}
	switch ops[0] {
	case "copy", "sync", "move", "copyto", "moveto", "bisync":
		return ops[0], ops[1:], true
	}
	return "", nil, false
}
