package heuristics

import (
	"slices"
	"strings"
)

// Services opened to the network. A program that listens beyond loopback
// with its authentication off serves what it guards to every host that
// reaches this machine: the café's Wi-Fi, the cloud network, the LAN, a
// published container port (Docker opens those past the host firewall).
// A notebook, an editor, a terminal server or the Docker API served that
// way is a shell for anyone (network.exposed-shell, BLOCK); a data
// store, a file tree or a repository anyone may push to is
// network.exposed-service (ESCALATE).
//
// Where the line is: what is served is judged, not that something
// listens. A dev server of the project (npm run dev -- --host 0.0.0.0,
// python3 -m http.server -d dist, git daemon --base-path=. --export-all)
// publishes the project the agent works on, which a colleague or a phone
// on the LAN is often meant to see: everyday. A server of the home
// directory or the root publishes keys and credentials, and a service
// with its own authentication switched off publishes its data or a
// shell: the machine is opened. So a finding needs a listener beyond
// loopback (an address, or the tool's all-interfaces default) AND
// authentication off, a directory outside the workspace, or visitors
// allowed to write. Loopback binds, tools whose default stays on
// loopback (jupyter, mongod, code-server, redis's protected mode) and
// services with a password are everyday.

// checkExposure judges one command for services opened to the network.
func (s *scan) checkExposure(cs *cmdScan, v *cmdView) {
	what, shell := exposure(cs, v)
	if what == "" {
		return
	}
	if shell {
		s.add(rNetExposedShell, what+": whoever reaches this machine runs commands on it; refuse it, or bind it to 127.0.0.1 and keep authentication on",
			v.prog+" "+evJoin(v.args))
		return
	}
	s.add(rNetExposedService, what+": every host that reaches this machine gets it; bind it to 127.0.0.1 or turn authentication on, or approve only if the network is yours",
		v.prog+" "+evJoin(v.args))
}

// flaskDebugger reports flask run with the debugger on (--debug,
// FLASK_DEBUG=1) and bound to every interface (--host 0.0.0.0 or ::).
func flaskDebugger(v *cmdView, args []string) bool {
	if opAt(operands(args, "hp", []string{"--host", "--port", "--app", "--cert", "--key"}), 0) != "run" {
		return false
	}
	debug := slices.Contains(args, "--debug")
	for _, a := range v.c.Assigns {
		if n, val, _ := strings.Cut(a, "="); n == "FLASK_DEBUG" && (val == "1" || strings.EqualFold(val, "true")) {
			debug = true
		}
	}
	any := false
	flagValues(args, 'h', "host", func(h string) { any = h == "0.0.0.0" || h == "::" || h == "[::]" })
	return debug && any
}

// exposure says what v opens to the network, and whether that is a
// shell (or code execution); "" when nothing.
func exposure(cs *cmdScan, v *cmdView) (what string, shell bool) {
	prog, args := v.prog, v.args
	if v.kind == "python" {
		return pythonExposure(cs, v)
	}
	if v.kind == "node" {
		// The inspector runs any code in the process for whoever connects.
		for _, f := range []string{"inspect", "inspect-brk", "inspect-wait"} {
			addr := ""
			flagValues(args, 0, f, func(a string) { addr = a })
			if strings.Contains(addr, ":") && openBind(addr) {
				return prog + " --" + f + " opens the inspector on " + addr, true
			}
		}
		return "", false
	}
	if p, a, ok := packageRun(v); ok {
		prog, args = p, a // npx http-server ~, pnpm dlx serve /
	}
	switch prog {
	case "jupyter", "jupyter-lab", "jupyter-notebook", "jupyter-server", "jupyter-nbclassic":
		if prog == "jupyter" {
			if ops := operands(args, "", nil); len(ops) == 0 || !jupyterApp(ops[0]) {
				return "", false
			}
		}
		return jupyterExposure(args), true
	case "redis-server", "valkey-server", "keydb-server":
		if ops := operands(args, "", nil); len(ops) > 0 && ops[0] == "-" {
			if text, ok := cs.stdinText(v); ok { // echo 'protected-mode no' | redis-server -
				return redisConfExposure(text), false
			}
		}
		return redisExposure(prog, args), false
	case "redis-cli", "valkey-cli", "keydb-cli":
		return redisCLIExposure(args), false
	case "google-chrome", "google-chrome-stable", "chromium", "chromium-browser", "chrome", "microsoft-edge", "brave-browser":
		return remoteDebugExposure(prog, args), true
	case "java":
		// Remote JMX without authentication: MBeans that load classes run
		// code for whoever connects.
		port, noAuth := false, false
		for _, a := range args {
			port = port || strings.HasPrefix(a, "-Dcom.sun.management.jmxremote.port=")
			noAuth = noAuth || a == "-Dcom.sun.management.jmxremote.authenticate=false"
		}
		if port && noAuth {
			return "java opens remote JMX without authentication", true
		}
	case "flask":
		// The debugger's console runs Python for whoever reaches it.
		if flaskDebugger(v, args) {
			return "flask runs with its debugger on every interface", true
		}
	case "mongod":
		return mongoExposure(args), false
	case "elasticsearch", "opensearch":
		return searchExposure(prog, args), false
	case "dockerd":
		return dockerdExposure(args), true
	case "code-server", "openvscode-server", "code", "code-insiders":
		return editorExposure(prog, args), true
	case "git":
		if sub, rest := gitSubcommand(args); sub == "daemon" {
			return gitDaemonExposure(cs, v, rest), false
		}
	case "gotty", "ttyd":
		return terminalExposure(prog, args)
	case "telnetd", "in.telnetd", "utelnetd":
		return telnetdExposure(prog, args), true
	case "x11vnc", "vncserver", "Xvnc", "tigervncserver", "Xtigervnc", "x0vncserver", "x0tigervncserver":
		return vncExposure(prog, args), true
	case "kubectl", "oc":
		return clusterProxyExposure(prog, args), true
	case "docker", "podman", "nerdctl":
		return containerExposure(prog, args)
	case "socat":
		return dockerSocketRelay(v), true
	case "exportfs":
		return nfsExposure(args), false
	case "sshd":
		// -o PermitEmptyPasswords=yes: an account without a password is a
		// login for anyone who reaches the port.
		for i, a := range args {
			opt := a
			if a == "-o" && i+1 < len(args) {
				opt = args[i+1]
			} else if rest, ok := strings.CutPrefix(a, "-o"); ok {
				opt = rest
			}
			if k, v, _ := strings.Cut(strings.ReplaceAll(opt, " ", "="), "="); strings.EqualFold(k, "PermitEmptyPasswords") && strings.EqualFold(v, "yes") {
				return "sshd lets accounts with an empty password log in", true
			}
		}
	case "dlv":
		// A headless Delve server runs any code in the debuggee (and
		// starts processes) for whoever connects; it listens on
		// localhost unless told otherwise.
		addr := ""
		flagValues(args, 'l', "listen", func(a string) { addr = a })
		if hasLongFlag(args, "headless") && strings.Contains(addr, ":") && openBind(addr) {
			return "dlv serves a headless debugger on " + addr, true
		}
	case "gdbserver":
		for _, a := range args {
			if !strings.HasPrefix(a, "-") && strings.Contains(a, ":") && !strings.HasPrefix(a, "/") {
				if openBind(a) {
					return "gdbserver listens on " + a + " for a debugger that runs any code here", true
				}
				break
			}
		}
	case "nvim":
		// Neovim's RPC API runs any command for whoever connects.
		addr := ""
		flagValues(args, 0, "listen", func(a string) { addr = a })
		if strings.Contains(addr, ":") && openBind(addr) {
			return "nvim serves its RPC API, which runs any command, on " + addr, true
		}
	case "rclone":
		return rcloneServe(cs, v, args), false
	case "php", "ruby":
		if dir, ok := servedDirectory(v); ok {
			bind := "" // ruby -run -e httpd: every interface
			flagValues(args, 'S', "", func(a string) { bind = a })
			flagValues(args, 0, "bind-address", func(a string) { bind = a })
			return servedTree(cs, v, prog, dir, bind, false), false
		}
	case "httpd":
		// busybox httpd -h DIR -p [IP:]PORT; Apache's httpd takes neither.
		dir, bind, busybox := ".", "", false
		flagValues(args, 'h', "", func(d string) { dir, busybox = d, true })
		flagValues(args, 'p', "", func(p string) { bind, busybox = busyboxBind(p), true })
		if busybox {
			return servedTree(cs, v, "httpd", dir, bind, false), false
		}
	case "caddy":
		if ops := operands(args, "rld", []string{"--root", "--listen", "--domain"}); len(ops) > 0 && ops[0] == "file-server" {
			dir, bind := ".", ":80"
			flagValues(args, 'r', "root", func(d string) { dir = d })
			flagValues(args, 'l', "listen", func(b string) { bind = b })
			return servedTree(cs, v, "caddy file-server", dir, bind, false), false
		}
	default:
		if srv, ok := fileServers[prog]; ok {
			return srv.judge(cs, v, prog, args), false
		}
	}
	return "", false
}

// packageRun returns the program and arguments a package runner starts
// (npx P, bunx P, pnpx P, pnpm dlx P, yarn dlx P), or ok false.
func packageRun(v *cmdView) (prog string, args []string, ok bool) {
	switch v.prog {
	case "npx", "bunx", "pnpx":
		run := operands(v.args, "p", []string{"--package"})
		if len(run) == 0 {
			return "", nil, false
		}
		return baseName(run[0]), run[1:], true
	case "pnpm", "yarn":
		ops := v.plainOperands()
		if len(ops) < 2 || ops[0] != "dlx" {
			return "", nil, false
		}
		return baseName(ops[1]), ops[2:], true
	}
	return "", nil, false
}

// openBind reports whether a listen address reaches beyond loopback:
// "", "*", "0.0.0.0", "::" (every interface), a LAN or public address,
// an interface or host name. It reads the forms listeners take: "host",
// "host:port", ":port", a bare port, "[::]:port", "tcp://host:port".
// Unix sockets stay on the machine.
func openBind(addr string) bool {
	a := strings.ToLower(strings.TrimSpace(strings.Trim(addr, `"'`)))
	if strings.HasPrefix(a, "unix:") || strings.HasPrefix(a, "/") || strings.HasPrefix(a, "fd:") || strings.HasPrefix(a, "pipe:") {
		return false
	}
	if i := strings.Index(a, "://"); i >= 0 {
		a = a[i+3:]
	}
	a, _, _ = strings.Cut(a, "/")
	host := a
	switch {
	case strings.HasPrefix(a, "["):
		if end := strings.IndexByte(a, ']'); end > 0 {
			host = a[1:end]
		}
	case strings.Count(a, ":") == 1:
		host, _, _ = strings.Cut(a, ":")
	}
	switch host {
	case "lo", "lo0", "_local_", "_local:ipv4_", "_local:ipv6_", "samehost":
		return false
	}
	if isLoopbackHost(host) {
		return false
	}
	if ip, ok := parseInetAton(host); ok && ip>>24 == 127 {
		return false
	}
	return true
}

// servedTree judges a file server publishing dir on bind. The workspace
// and /tmp are what a dev server serves; anything else (the home, the
// root, /etc) opens the machine's files. A server visitors can upload
// to is judged wherever it serves: anyone could plant files.
func servedTree(cs *cmdScan, v *cmdView, server, dir, bind string, uploads bool) string {
	if !openBind(bind) {
		return ""
	}
	abs := cs.resolveIn(v.c, dir).Abs
	if uploads {
		return server + " lets every host that reaches it upload files into " + abs
	}
	if cs.inWorkspaceOrTmp(v.c, dir) {
		return ""
	}
	return server + " serves " + abs + ", outside the project, on " + bindName(bind)
}

// remoteDebugExposure: Chromium's DevTools protocol drives the browser,
// or an Electron app built on it, with its sessions and cookies and (in
// Electron) Node, for whoever reaches the port.
func remoteDebugExposure(prog string, args []string) string {
	addr := ""
	flagValues(args, 0, "remote-debugging-address", func(a string) { addr = a })
	if addr != "" && openBind(addr) {
		return prog + " serves its remote debugging protocol on " + bindName(addr)
	}
	return ""
}

// rcloneServe judges rclone serve PROTOCOL PATH: it listens on localhost
// unless --addr says otherwise; a user, password or htpasswd file closes
// it; its writable protocols take uploads unless --read-only.
func rcloneServe(cs *cmdScan, v *cmdView, args []string) string {
	ops := operands(args, "", []string{"--addr", "--user", "--pass", "--htpasswd", "--baseurl", "--config", "--vfs-cache-mode", "--dir-cache-time"})
	if len(ops) < 3 || ops[0] != "serve" {
		return ""
	}
	for _, a := range []string{"user", "pass", "htpasswd", "authorized-keys"} {
		if hasLongFlag(args, a) {
			return ""
		}
	}
	bind := "localhost"
	flagValues(args, 0, "addr", func(a string) { bind = a })
	dir := ops[2]
	if strings.Contains(dir, ":") {
		return "" // a remote (gdrive:docs): not this machine's files
	}
	uploads := false
	switch ops[1] {
	case "webdav", "ftp", "sftp", "s3", "nfs":
		uploads = !hasLongFlag(args, "read-only")
	}
	return servedTree(cs, v, "rclone serve "+ops[1], dir, bind, uploads)
}

// bindName describes a listen address for a message.
func bindName(bind string) string {
	switch bind {
	case "", "*", "0.0.0.0", "::", "[::]", "0":
		return "every interface"
	}
	return bind
}

// busyboxBind is the address of busybox httpd's -p [IP:]PORT.
func busyboxBind(p string) string {
	if i := strings.LastIndexByte(p, ':'); i >= 0 {
		return p[:i]
	}
	return "" // a port alone: every interface
}

// fileServer describes the options of a static file server.
type fileServer struct {
	dirShort  byte   // option naming the served directory;
	dirLong   string // none: the first operand
	bindShort byte   // option naming the listen address;
	bindLong  string // none, or absent: every interface
	valued    string // short options that take a value (for operands)
	auth      []string
	uploads   []string // options that let visitors write; "*": always
}

// fileServers are the one-line file servers besides python's, php's,
// ruby's, busybox's and caddy's, by program.
var fileServers = map[string]fileServer{
	"http-server": {bindShort: 'a', valued: "paecCKPt", auth: []string{"username", "password"}},
	"serve":       {bindShort: 'l', bindLong: "listen", valued: "lpc"},
	"live-server": {bindLong: "host"},
	"darkhttpd":   {bindLong: "addr"},
	"miniserve":   {bindShort: 'i', bindLong: "interfaces", valued: "ipa", auth: []string{"auth", "auth-file"}, uploads: []string{"upload-files", "u"}},
	"dufs":        {bindShort: 'b', bindLong: "bind", valued: "bpa", auth: []string{"auth", "a"}, uploads: []string{"allow-all", "allow-upload", "A"}},
	"updog":       {dirShort: 'd', dirLong: "directory", auth: []string{"password"}, uploads: []string{"*"}},
}

// judge says what srv, started as prog with args, opens, or "".
func (srv fileServer) judge(cs *cmdScan, v *cmdView, prog string, args []string) string {
	for _, a := range srv.auth {
		if len(a) == 1 && hasShortFlag(args, a[0]) || len(a) > 1 && hasLongFlag(args, a) {
			return ""
		}
	}
	bind := ""
	if srv.bindShort != 0 || srv.bindLong != "" {
		flagValues(args, srv.bindShort, srv.bindLong, func(b string) { bind = b })
	}
	dir := "."
	if srv.dirShort != 0 || srv.dirLong != "" {
		flagValues(args, srv.dirShort, srv.dirLong, func(d string) { dir = d })
	} else if ops := operands(args, srv.valued, []string{"--port", "--addr", "--host", "--listen", "--bind", "--interfaces"}); len(ops) > 0 {
		dir = ops[0]
	}
	uploads := false
	for _, u := range srv.uploads {
		uploads = uploads || u == "*" || len(u) == 1 && hasShortFlag(args, u[0]) || len(u) > 1 && hasLongFlag(args, u)
	}
	return servedTree(cs, v, prog, dir, bind, uploads)
}

// moduleArgs returns the module a python command runs (-m M) and the
// arguments after it, or "".
func moduleArgs(args []string) (string, []string) {
	for i, a := range args {
		switch {
		case a == "-m" && i+1 < len(args):
			return args[i+1], args[i+2:]
		case strings.HasPrefix(a, "-m") && len(a) > 2:
			return a[2:], args[i+1:]
		case a == "-c" || a == "-" || !strings.HasPrefix(a, "-"):
			return "", nil // inline code or a script
		}
	}
	return "", nil
}

// pythonExposure judges python -m http.server, uploadserver and the
// notebook servers.
func pythonExposure(cs *cmdScan, v *cmdView) (string, bool) {
	mod, args := moduleArgs(v.args)
	switch mod {
	case "http.server", "SimpleHTTPServer":
		dir, bind := ".", "" // every interface by default
		flagValues(args, 'd', "directory", func(d string) { dir = d })
		flagValues(args, 'b', "bind", func(b string) { bind = b })
		return servedTree(cs, v, "python -m "+mod, dir, bind, false), false
	case "debugpy":
		addr := ""
		flagValues(args, 0, "listen", func(a string) { addr = a })
		if strings.Contains(addr, ":") && openBind(addr) {
			return "python -m debugpy listens on " + addr + " for a debugger that runs any code in the program", true
		}
		return "", false
	case "uploadserver":
		if hasLongFlag(args, "basic-auth") || hasLongFlag(args, "basic-auth-upload") {
			return "", false
		}
		dir, bind := ".", ""
		flagValues(args, 'd', "directory", func(d string) { dir = d })
		flagValues(args, 'b', "bind", func(b string) { bind = b })
		return servedTree(cs, v, "python -m uploadserver", dir, bind, true), false
	case "jupyter":
		if ops := operands(args, "", nil); len(ops) == 0 || !jupyterApp(ops[0]) {
			return "", false
		}
		return jupyterExposure(args), true
	case "jupyterlab", "notebook", "jupyter_server", "nbclassic":
		return jupyterExposure(args), true
	}
	return "", false
}

// jupyterApp reports jupyter's server subcommands.
func jupyterApp(sub string) bool {
	switch sub {
	case "lab", "notebook", "server", "nbclassic":
		return true
	}
	return false
}

// jupyterExposure: a notebook server on every interface with an empty
// token and no password runs any code its visitors type. Jupyter binds
// to localhost by default; an empty --ip is every interface.
func jupyterExposure(args []string) string {
	ip, tokenOff := "localhost", false
	for _, n := range []string{"ip", "ServerApp.ip", "NotebookApp.ip"} {
		flagValues(args, 0, n, func(a string) { ip = a })
	}
	for _, n := range []string{"token", "ServerApp.token", "NotebookApp.token", "IdentityProvider.token"} {
		flagValues(args, 0, n, func(t string) { tokenOff = emptyValue(t) })
	}
	for _, n := range []string{"ServerApp.password", "NotebookApp.password", "PasswordIdentityProvider.hashed_password"} {
		password := false
		flagValues(args, 0, n, func(p string) { password = !emptyValue(p) })
		if password {
			return ""
		}
	}
	if !tokenOff || !openBind(ip) {
		return ""
	}
	return "jupyter serves notebooks on " + bindName(ip) + " with an empty token and no password"
}

// emptyValue reports an option value that is empty, also when its
// quotes themselves reached the word (two quote characters).
func emptyValue(s string) bool {
	return s == "" || s == "''" || s == `""`
}

// redisOption returns the words after --name up to the next option
// (redis-server --bind 0.0.0.0 ::), and whether it was given.
func redisOption(args []string, name string) ([]string, bool) {
	var vals []string
	found := false
	for i := 0; i < len(args); i++ {
		if args[i] != "--"+name {
			continue
		}
		found = true
		j := i + 1
		for j < len(args) && !strings.HasPrefix(args[j], "--") {
			j++
		}
		vals = args[i+1 : j]
		i = j - 1
	}
	return vals, found
}

// redisExposure: with protected mode off and no password, redis answers
// every host on its binds (every interface when none is given, as
// without a config file). Anyone can read and wipe the data and, with
// CONFIG SET dir, write files as the redis user.
func redisExposure(prog string, args []string) string {
	mode, _ := redisOption(args, "protected-mode")
	if len(mode) == 0 || !strings.EqualFold(mode[0], "no") {
		return ""
	}
	if _, ok := redisOption(args, "requirepass"); ok {
		return ""
	}
	if _, ok := redisOption(args, "aclfile"); ok {
		return ""
	}
	binds, bound := redisOption(args, "bind")
	if bound && !anyOpen(binds) {
		return ""
	}
	return prog + " turns protected mode off with no password, listening beyond loopback"
}

// anyOpen reports whether any of a list of binds reaches beyond
// loopback. Redis marks optional binds with a leading "-" (-::1).
func anyOpen(binds []string) bool {
	for _, b := range binds {
		for part := range strings.SplitSeq(b, ",") {
			if part = strings.TrimPrefix(strings.TrimSpace(part), "-"); part != "" && openBind(part) {
				return true
			}
		}
	}
	return false
}

// redisCLIExposure: CONFIG SET protected-mode no opens a running server
// (its binds are unknown here; turning the mode off is only ever done
// to let other hosts in).
func redisCLIExposure(args []string) string {
	for i := 0; i+3 < len(args); i++ {
		if strings.EqualFold(args[i], "config") && strings.EqualFold(args[i+1], "set") &&
			strings.EqualFold(args[i+2], "protected-mode") && strings.EqualFold(args[i+3], "no") {
			return "CONFIG SET protected-mode no lets every host that reaches the redis server in without a password"
		}
	}
	return ""
}

// mongoExposure: mongod binds to localhost unless told otherwise, and
// checks no credentials without --auth (or a key file).
func mongoExposure(args []string) string {
	open := hasLongFlag(args, "bind_ip_all")
	flagValues(args, 0, "bind_ip", func(list string) { open = open || anyOpen([]string{list}) })
	if !open || flagOn(args, "auth") || hasLongFlag(args, "keyFile") || hasLongFlag(args, "clusterAuthMode") {
		return ""
	}
	return "mongod listens beyond loopback without --auth: anyone can read, change or drop every database"
}

// flagOn reports a boolean long option given and not turned off
// (--auth, --auth=true; not --auth=false).
func flagOn(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if rest, ok := strings.CutPrefix(a, "--"+name); ok && (rest == "" || rest[0] == '=' && !strings.EqualFold(rest[1:], "false") && rest[1:] != "0") {
			return true
		}
	}
	return false
}

// searchExposure: elasticsearch and opensearch with their security
// plugin off and network.host (or http.host) beyond loopback serve every
// index, read and write, to anyone.
func searchExposure(prog string, args []string) string {
	open, off := false, false
	flagValues(args, 'E', "", func(kv string) {
		k, val, _ := strings.Cut(kv, "=")
		open = open || (k == "network.host" || k == "http.host") && anyOpen([]string{val})
		off = off || securityOffSetting(k, val)
	})
	if !open || !off {
		return ""
	}
	return prog + " listens beyond loopback with its security turned off"
}

// securityOffSetting reports the settings that turn a search engine's
// authentication off.
func securityOffSetting(k, val string) bool {
	switch strings.ToLower(k) {
	case "xpack.security.enabled":
		return strings.EqualFold(val, "false")
	case "plugins.security.disabled", "disable_security_plugin":
		return strings.EqualFold(val, "true")
	}
	return false
}

// dockerdExposure: the Docker API over TCP without --tlsverify is root
// on this machine for anyone who reaches the port (docker -H
// tcp://host run --privileged -v /:/host …).
func dockerdExposure(args []string) string {
	open := ""
	flagValues(args, 'H', "host", func(h string) {
		lh := strings.ToLower(h)
		tcp := strings.HasPrefix(lh, "tcp://") || !strings.Contains(lh, "://") && strings.Contains(lh, ":")
		if tcp && openBind(h) {
			open = h
		}
	})
	if open == "" || flagOn(args, "tlsverify") {
		return ""
	}
	return "dockerd serves the Docker API on " + open + " without TLS client verification, which is root on this machine"
}

// editorExposure: a browser editor with its authentication off gives
// every visitor a terminal (code-server --auth none, openvscode-server
// and code serve-web --without-connection-token). They bind to
// localhost by default.
func editorExposure(prog string, args []string) string {
	bind := "localhost"
	switch prog {
	case "code-server":
		auth := ""
		flagValues(args, 0, "auth", func(a string) { auth = a })
		if auth != "none" {
			return ""
		}
		flagValues(args, 0, "bind-addr", func(b string) { bind = b })
	case "code", "code-insiders":
		if ops := operands(args, "", []string{"--host", "--port"}); len(ops) == 0 || ops[0] != "serve-web" {
			return ""
		}
		fallthrough
	default:
		if !hasLongFlag(args, "without-connection-token") {
			return ""
		}
	}
	flagValues(args, 0, "host", func(h string) { bind = h })
	if !openBind(bind) {
		return ""
	}
	return prog + " serves an editor with a terminal on " + bindName(bind) + " with authentication off"
}

// gitDaemonExposure: git daemon listens on every interface unless
// --listen says otherwise. Pushes for anyone (--enable=receive-pack),
// or every repository under a directory outside the project
// (--export-all with such a --base-path, or none and no directory list:
// any repository on the machine a client names), open it.
func gitDaemonExposure(cs *cmdScan, v *cmdView, args []string) string {
	open := true
	listens := false
	flagValues(args, 0, "listen", func(l string) {
		if !listens {
			listens, open = true, false
		}
		open = open || openBind(l)
	})
	if !open {
		return ""
	}
	push := false
	flagValues(args, 0, "enable", func(e string) { push = push || e == "receive-pack" })
	if push {
		return "git daemon lets anyone who reaches it push (--enable=receive-pack)"
	}
	if !hasLongFlag(args, "export-all") {
		return "" // only repositories marked git-daemon-export-ok
	}
	base := ""
	flagValues(args, 0, "base-path", func(b string) { base = b })
	dirs := operands(args, "", nil)
	switch {
	case base != "" && !cs.inWorkspaceOrTmp(v.c, base):
		return "git daemon exports every repository under " + cs.resolveIn(v.c, base).Abs
	case base == "" && len(dirs) == 0:
		return "git daemon exports every repository on the machine (--export-all with no --base-path)"
	}
	for _, d := range dirs {
		if !cs.inWorkspaceOrTmp(v.c, d) {
			return "git daemon exports every repository under " + cs.resolveIn(v.c, d).Abs
		}
	}
	return ""
}

// terminalExposure: gotty and ttyd serve a terminal in the browser, on
// every interface unless bound. Writable without a credential it is a
// shell for anyone; with one, or read-only, a human decides. ttyd's
// clients could type unless -R before 1.7 and only with -W after: the
// version is unknown, so only -R counts as read-only.
func terminalExposure(prog string, args []string) (string, bool) {
	var valued string
	var longValued []string
	if prog == "gotty" {
		valued, longValued = "apc", []string{"--address", "--port", "--credential", "--config", "--title-format", "--tls-crt",
			"--tls-key", "--tls-ca-crt", "--index", "--ws-origin", "--term", "--width", "--height", "--timeout", "--max-connection",
			"--reconnect-time", "--random-url-length", "--close-signal", "--close-timeout"}
	} else {
		valued, longValued = "picugswtTmIbPCKAd", []string{"--port", "--interface", "--credential", "--uid", "--gid", "--signal",
			"--cwd", "--client-option", "--terminal-type", "--max-clients", "--index", "--base-path", "--ping-interval",
			"--ssl-cert", "--ssl-key", "--ssl-ca", "--debug"}
	}
	// Options come before the command served; its own options are not ours.
	end := skipFlags(args, valued, longValued)
	if end < 0 {
		end = len(args)
	}
	opts, bind := args[:end], ""
	var writable bool
	if prog == "gotty" {
		flagValues(opts, 'a', "address", func(a string) { bind = a })
		writable = hasFlag(opts, 'w', "permit-write")
	} else {
		flagValues(opts, 'i', "interface", func(a string) { bind = a })
		writable = !hasFlag(opts, 'R', "readonly")
	}
	if !openBind(bind) {
		return "", false
	}
	where := bindName(bind)
	switch {
	case hasFlag(opts, 'c', "credential"):
		return prog + " serves a terminal on " + where + " behind a password sent in clear over HTTP", false
	case writable:
		return prog + " serves a terminal anyone can type into on " + where + " with no credential", true
	}
	return prog + " publishes a terminal's output on " + where + " with no credential", false
}

// telnetdExposure: telnetd -l SHELL logs nobody in: it runs the shell
// for whoever connects.
func telnetdExposure(prog string, args []string) string {
	login := ""
	flagValues(args, 'l', "", func(l string) { login = l })
	bind := ""
	flagValues(args, 'b', "", func(b string) { bind = b })
	if interpreterKind(baseName(login)) != "shell" || !openBind(bind) {
		return ""
	}
	return prog + " -l " + login + " hands a shell to whoever connects, without a login"
}

// vncExposure: a VNC server with no password shares the desktop, and
// so a terminal, with whoever connects.
func vncExposure(prog string, args []string) string {
	if prog == "x11vnc" {
		for i, a := range args {
			switch strings.TrimLeft(a, "-") {
			case "rfbauth", "passwd", "passwdfile", "usepw", "unixpw", "localhost", "viewpasswd":
				return ""
			case "listen":
				if i+1 < len(args) && !openBind(args[i+1]) {
					return ""
				}
			}
		}
		return "x11vnc shares the desktop with every host that reaches it, with no password"
	}
	none, local := false, false
	for i, a := range args {
		switch l := strings.ToLower(strings.TrimLeft(a, "-")); {
		case strings.HasPrefix(l, "securitytypes"):
			val := ""
			if _, v, ok := strings.Cut(a, "="); ok {
				val = v
			} else if i+1 < len(args) {
				val = args[i+1]
			}
			none = containsFold(","+val+",", ",none,")
		case l == "localhost":
			local = i+1 >= len(args) || !strings.EqualFold(args[i+1], "no") && args[i+1] != "0"
		case l == "interface":
			local = i+1 < len(args) && !openBind(args[i+1])
		}
	}
	if !none || local {
		return ""
	}
	return prog + " shares a desktop with every host that reaches it (SecurityTypes None)"
}

// clusterProxyExposure: kubectl proxy beyond loopback lets every host
// that reaches it act on the cluster with your credentials (its
// --accept-hosts filter reads a header the client writes).
func clusterProxyExposure(prog string, args []string) string {
	if ops := infraOperandsOf(prog, args); len(ops) == 0 || ops[0] != "proxy" {
		return ""
	}
	addr := "127.0.0.1"
	flagValues(args, 0, "address", func(a string) { addr = a })
	if !openBind(addr) {
		return ""
	}
	return prog + " proxy listens on " + addr + ", lending your cluster credentials to every host that reaches it"
}

// infraOperandsOf is infraOperands for a program and arguments.
func infraOperandsOf(prog string, args []string) []string {
	return infraOperands(&cmdView{prog: prog, args: args})
}

// containerExposure: a container that publishes a port beyond loopback
// (-p 8888:8888, -p 0.0.0.0:…, -P, --network host) with its service's
// authentication switched off, by environment or by its command. An
// image's own defaults are not judged: only a switch the line turns.
func containerExposure(prog string, args []string) (string, bool) {
	sub, rest := dockerSubcommand(args)
	if prog == "podman" && sub == "system" {
		// podman system service tcp:0.0.0.0:8888: the engine's API,
		// unauthenticated, for whoever reaches the port.
		if ops := operands(rest, "t", []string{"--time", "--log-level"}); len(ops) >= 2 && ops[0] == "service" {
			if addr, ok := strings.CutPrefix(ops[1], "tcp:"); ok && openBind(addr) {
				return "podman serves its API on " + ops[1] + " with no authentication, which runs containers as this user", true
			}
		}
		return "", false
	}
	if sub != "run" && sub != "create" {
		return "", false
	}
	at := containerImageAt(rest)
	if at < 0 {
		return "", false
	}
	opts, argv := rest[:at], rest[at+1:]
	published := ""
	flagValues(opts, 'p', "publish", func(p string) {
		if publishOpen(p) {
			published = p
		}
	})
	if hasShortFlag(opts, 'P') || hasLongFlag(opts, "publish-all") {
		published = "every exposed port"
	}
	for _, n := range []string{"network", "net"} {
		flagValues(opts, 0, n, func(m string) {
			if m == "host" {
				published = "the host's network"
			}
		})
	}
	if published == "" {
		return "", false
	}
	why, shell := "", false
	flagValues(opts, 'e', "env", func(kv string) {
		if why == "" {
			why, shell = authOffEnv(kv)
		}
	})
	if why == "" {
		why, shell = authOffArgs(argv)
	}
	if why == "" {
		return "", false
	}
	return prog + " " + sub + " publishes " + published + " beyond loopback with " + why, shell
}

// publishOpen reports whether a -p spec publishes beyond loopback:
// "8080", "8080:80" and ":…" are every interface, "IP:8080:80" is IP.
func publishOpen(spec string) bool {
	spec, _, _ = strings.Cut(spec, "/") // 53:53/udp
	if strings.HasPrefix(spec, "[") {
		end := strings.IndexByte(spec, ']')
		return end < 0 || openBind(spec[1:end])
	}
	parts := strings.Split(spec, ":")
	if len(parts) < 3 {
		return true
	}
	return openBind(parts[0])
}

// authOffEnv says which container setting turns authentication off, and
// whether what it opens is a shell; "".
func authOffEnv(kv string) (string, bool) {
	k, val, set := strings.Cut(kv, "=")
	truthy := strings.EqualFold(val, "yes") || strings.EqualFold(val, "true") || val == "1"
	switch strings.ToLower(k) {
	case "postgres_host_auth_method":
		if strings.EqualFold(val, "trust") {
			return "POSTGRES_HOST_AUTH_METHOD=trust (no password for any user)", false
		}
	case "mysql_allow_empty_password", "mariadb_allow_empty_root_password", "mariadb_allow_empty_password", "allow_empty_password":
		if truthy {
			return k + "=" + val + " (no password)", false
		}
	case "gf_auth_anonymous_org_role":
		if strings.EqualFold(val, "admin") {
			return "anonymous Grafana visitors made admins", false
		}
	case "docker_tls_certdir":
		if set && val == "" {
			return "the Docker API served without TLS (DOCKER_TLS_CERTDIR=), which is root on the host", true
		}
	default:
		if securityOffSetting(k, val) {
			return k + "=" + val + " (security off)", false
		}
	}
	return "", false
}

// authOffArgs says which switch in a container's command turns its
// service's authentication off, and whether that opens a shell; "".
func authOffArgs(argv []string) (string, bool) {
	if why := jupyterExposure(append([]string{"--ip=0.0.0.0"}, argv...)); why != "" {
		return "a notebook server with an empty token", true
	}
	for i, a := range argv {
		switch {
		case a == "--auth=none" || a == "--auth" && i+1 < len(argv) && argv[i+1] == "none", a == "--without-connection-token":
			return "an editor's authentication off (" + a + ")", true
		case a == "--protected-mode" && i+1 < len(argv) && strings.EqualFold(argv[i+1], "no"):
			return "redis's protected mode off", false
		case a == "--noauth":
			return "authentication off (--noauth)", false
		}
		if k, val, ok := strings.Cut(strings.TrimPrefix(a, "-E"), "="); ok && securityOffSetting(k, val) {
			return a + " (security off)", false
		}
	}
	return "", false
}

// dockerSocketRelay: socat listening beyond loopback and relaying to the
// Docker socket serves the Docker API, root on this machine, to anyone.
func dockerSocketRelay(v *cmdView) string {
	ops := v.plainOperands()
	if len(ops) < 2 {
		return ""
	}
	listen, sock := false, false
	for _, a := range ops[len(ops)-2:] {
		la := strings.ToLower(a)
		if strings.Contains(la, "docker.sock") || strings.Contains(la, "containerd.sock") || strings.Contains(la, "podman.sock") {
			sock = true
		}
		if (strings.Contains(la, "-listen:") || strings.Contains(la, "-l:")) && !strings.HasPrefix(la, "unix") && !strings.HasPrefix(la, "abstract") {
			bind := ""
			if i := strings.Index(la, ",bind="); i >= 0 {
				bind, _, _ = strings.Cut(la[i+6:], ",")
			}
			listen = openBind(bind)
		}
	}
	if !listen || !sock {
		return ""
	}
	return "socat relays a port on every interface to the container engine's socket, which is root on this machine"
}

// nfsExposure: exportfs to every host (*, 0.0.0.0/0) shares a directory
// with the whole network.
func nfsExposure(args []string) string {
	for _, op := range operands(args, "o", nil) {
		client, dir, ok := strings.Cut(op, ":")
		if ok && (client == "*" || client == "0.0.0.0/0" || client == "::/0") {
			return "exportfs shares " + dir + " over NFS with every host"
		}
	}
	return ""
}

// checkExposedConfig judges text written into a service's configuration
// for the same openings as the command lines: a pg_hba.conf line trusting
// a network, redis.conf with protected mode off, a notebook or editor
// configuration with its token off, elasticsearch.yml or mongod.conf with
// security off beyond loopback, a Docker daemon.json serving TCP without
// TLS verification.
func (s *scan) checkExposedConfig(abs, content string) {
	if !s.enabled(rNetExposedService) && !s.enabled(rNetExposedShell) || !configFileName(abs) {
		return
	}
	what, shell := configExposure(content)
	if what == "" {
		return
	}
	r := rNetExposedService
	if shell {
		r = rNetExposedShell
	}
	s.add(r, "writes "+baseName(abs)+", which "+what+": every host that reaches this machine gets in; keep the service on loopback or its authentication on", abs)
}

// configFileName reports the names a service's configuration has
// (redis.conf, pg_hba.conf, daemon.json, elasticsearch.yml,
// jupyter_server_config.py, …): source code and documents are not read
// for settings.
func configFileName(abs string) bool {
	base := baseName(abs)
	switch base[strings.LastIndexByte(base, '.')+1:] {
	case "conf", "cfg", "cnf", "yml", "yaml", "json", "toml", "ini":
		return true
	case "py":
		return strings.Contains(base, "config")
	}
	return false
}

// configExposure says what a configuration text opens, and whether it
// is a shell; "".
func configExposure(content string) (string, bool) {
	if why := pgHbaTrust(content); why != "" {
		return why, false
	}
	if why := redisConfExposure(content); why != "" {
		return why, false
	}
	tok := func(k string) bool { v, ok := confSetting(content, k); return ok && emptyValue(v) }
	if tok("c.ServerApp.token") || tok("c.NotebookApp.token") || tok("c.IdentityProvider.token") {
		ip, ok := confSetting(content, "c.ServerApp.ip")
		if !ok {
			ip, ok = confSetting(content, "c.NotebookApp.ip")
		}
		if ok && openBind(ip) {
			return "serves notebooks on " + bindName(ip) + " with an empty token", true
		}
	}
	if auth, _ := confSetting(content, "auth"); auth == "none" {
		if bind, ok := confSetting(content, "bind-addr"); ok && openBind(bind) {
			return "serves code-server on " + bind + " with auth: none", true
		}
	}
	sec, _ := confSetting(content, "xpack.security.enabled")
	off, _ := confSetting(content, "plugins.security.disabled")
	if host, ok := confSetting(content, "network.host"); ok && anyOpen([]string{strings.Trim(host, "[]")}) && (securityOffSetting("xpack.security.enabled", sec) || securityOffSetting("plugins.security.disabled", off)) {
		return "serves the search engine on " + host + " with security off", false
	}
	bindAll, _ := confSetting(content, "bindIpAll")
	bindIP, _ := confSetting(content, "bindIp")
	if authz, _ := confSetting(content, "authorization"); authz != "enabled" && (bindAll == "true" || bindIP != "" && anyOpen([]string{bindIP})) {
		return "serves mongod beyond loopback with authorization off", false
	}
	if hosts, ok := confSetting(content, "hosts"); ok && strings.Contains(hosts, "tcp://") {
		if verify, _ := confSetting(content, "tlsverify"); verify != "true" {
			for h := range strings.SplitSeq(strings.Trim(hosts, "[]"), ",") {
				if h = strings.Trim(strings.TrimSpace(h), `"'`); strings.HasPrefix(h, "tcp://") && openBind(h) {
					return "serves the Docker API on " + h + " without TLS verification", true
				}
			}
		}
	}
	return "", false
}

// pgHbaTrust reports a pg_hba.conf line that lets a network in with no
// password: host DB USER ADDR trust, ADDR beyond loopback.
func pgHbaTrust(content string) string {
	if !strings.Contains(content, "trust") {
		return ""
	}
	for line := range strings.SplitSeq(content, "\n") {
		f := strings.Fields(line)
		// host DATABASE USER ADDRESS [MASK] METHOD
		if len(f) < 5 || !strings.HasPrefix(f[0], "host") || f[4] != "trust" && (len(f) < 6 || f[5] != "trust") {
			continue
		}
		if addr, _, _ := strings.Cut(f[3], "/"); openBind(addr) { // all, samenet, 0.0.0.0/0, a LAN
			return "lets " + f[3] + " into postgres with no password (trust)"
		}
	}
	return ""
}

// redisConfExposure: a redis configuration with protected mode off, no
// password and a bind beyond loopback (or none).
func redisConfExposure(content string) string {
	mode, ok := confSetting(content, "protected-mode")
	if !ok || mode != "no" {
		return ""
	}
	if _, ok := confSetting(content, "requirepass"); ok {
		return ""
	}
	if bind, ok := confSetting(content, "bind"); ok && !anyOpen(strings.Fields(bind)) {
		return ""
	}
	return "turns redis's protected mode off with no password, beyond loopback"
}

// confSetting returns the last value a configuration text gives key, in
// the forms services read: "key value" (redis.conf), "key: value"
// (YAML, nested keys by their last part), "key = value" (INI, python's
// c.ServerApp.token = ""), "\"key\": value," (JSON). Quotes and a
// trailing comma are removed.
func confSetting(content, key string) (string, bool) {
	if !strings.Contains(content, key) {
		return "", false
	}
	val, found := "", false
	for line := range strings.SplitSeq(content, "\n") {
		l := strings.TrimSpace(line)
		if l == "" || l[0] == '#' {
			continue
		}
		end := strings.IndexAny(l, " \t:=")
		if end < 0 || strings.Trim(l[:end], `"'`) != key {
			continue
		}
		v := strings.TrimSpace(strings.TrimLeft(l[end:], " \t:="))
		if i := strings.Index(v, " #"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		v = strings.TrimSuffix(v, ",")
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		val, found = v, true
	}
	return val, found
}
