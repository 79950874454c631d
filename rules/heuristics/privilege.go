package heuristics

import (
	"github.com/parapet-dev/parapet/internal/textcut"
	"slices"
	"strings"

	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/shell"
)

// Privilege and persistence: running as another user, weakening
// permissions, and anything that makes code run again later (cron,
// services, shell startup files, SSH keys, git hooks, preloaded libraries).

func (s *scan) checkPrivilege(cs *cmdScan) {
	for i := range cs.views {
		v := &cs.views[i]
		if v.elevated != "" || isElevation(v.prog) {
			who := v.elevated
			if who == "" {
				who = v.prog
			}
			s.add(rPrivElevation, "runs a command with "+who+": a human should approve anything run with elevated rights",
				v.c.Name+" "+evJoin(v.c.Args))
		} else if how := becomesRoot(v); how != "" {
			s.add(rPrivElevation, how+": only a capability or setuid bit being abused lets it, and a human should approve anything run as root",
				v.c.Name+" "+evJoin(v.c.Args))
		}
		if v.fam&famPriv != 0 { // the programs below
			switch v.prog {
			case "chmod":
				s.checkChmod(cs, v)
			case "at", "batch":
				if !hasShortFlag(v.args, 'l') && !hasShortFlag(v.args, 'c') && !hasShortFlag(v.args, 'r') && !hasShortFlag(v.args, 'd') {
					s.add(rPersistCron, v.prog+" schedules a job to run later, after this session: run it now or add it by hand", v.prog+" "+evJoin(v.args))
				}
			case "useradd", "adduser", "usermod", "groupmod", "gpasswd", "chpasswd", "vipw", "visudo", "passwd":
				if why := accountTamper(v); why != "" {
					s.add(rPrivAccount, why+": this changes who can log in or become root; refuse it", v.prog+" "+evJoin(v.args))
				}
			case "docker", "podman", "nerdctl":
				if why := containerEscape(v); why != "" {
					s.add(rPrivContainer, "runs a container with "+why+": that is root on the host; mount only the project directory", v.prog+" "+evJoin(v.args))
				}
				s.checkPreloadWords(workloadEnv(v), false)
				s.checkContainerCommand(cs, v)
				s.checkBuildInput(cs, v)
				s.checkImageSources(v)
			case "osascript":
				// AppleScript's login items start at every login.
				for _, a := range v.args {
					if l := strings.ToLower(a); strings.Contains(l, "login item") && strings.Contains(l, "make") {
						s.add(rPersistLaunchd, "osascript adds a login item: it starts at every login, after this session; add it by hand if you need it", "osascript "+evJoin(v.args))
						break
					}
				}
			case "ctr":
				// containerd's own client takes docker's run options.
				if why := containerEscape(v); why != "" {
					s.add(rPrivContainer, "runs a container with "+why+": that is root on the host; mount only the project directory", "ctr "+evJoin(v.args))
				}
			case "lxc", "incus":
				if why := lxcEscape(v); why != "" {
					s.add(rPrivContainer, "gives a container "+why+": that is root on the host; keep containers unprivileged and mount only the project", v.prog+" "+evJoin(v.args))
				}
			case "curl":
				if sock := engineAPIWrite(v); sock != "" {
					s.add(rPrivContainer, "drives the container engine's API through "+sock+": whoever can create containers there is root on the host; use the docker CLI so the command can be judged", "curl "+evJoin(v.args))
				}
			case "kubectl", "oc":
				s.checkWorkloads(cs, v)
				s.checkPreloadWords(workloadEnv(v), false)
				s.checkImageSources(v)
				why := podEscape(v)
				if why == "" && appliesStdin(v) {
					// cat <<EOF | kubectl apply -f -: the manifest is the text.
					if text, ok := cs.stdinText(v); ok {
						why = manifestHostAccess(text)
					}
				}
				if why != "" {
					s.add(rPrivContainer, "runs a pod with "+why+": that is root on its node; run it without host access", v.prog+" "+evJoin(v.args))
				}
			case "defaults":
				// macOS login and logout hooks run a script as root at every login.
				if firstOperand(v.args) == "write" && (containsArg(v.args, "LoginHook") || containsArg(v.args, "LogoutHook")) {
					s.add(rPersistLaunchd, "defaults write sets a login or logout hook: it runs as root at every login; install it by hand", "defaults "+evJoin(v.args))
				}
			case "nsenter":
				if entersInit(v.args) {
					s.add(rPrivContainer, "nsenter enters the namespaces of init (pid 1): from a container that is root on the host", "nsenter "+evJoin(v.args))
				}
			case "crontab":
				if crontabWrites(v.args) {
					s.add(rPersistCron, "installs or edits a crontab: scheduled jobs keep running after this session; add them by hand if you need them",
						"crontab "+evJoin(v.args))
				}
			case "systemctl":
				if verb := firstOperand(v.args); verb == "enable" || verb == "reenable" || verb == "link" || verb == "preset" || verb == "add-wants" || verb == "set-default" || verb == "edit" {
					s.add(rPersistServiceEnable, "systemctl "+verb+" makes a service start automatically: approve only if you know the unit", "systemctl "+evJoin(v.args))
				}
			case "systemd-run":
				for _, a := range v.args {
					if strings.HasPrefix(a, "--on-") {
						s.add(rPersistCron, "systemd-run "+a+" schedules a job to run later, after this session: run it now or add it by hand", "systemd-run "+evJoin(v.args))
						break
					}
				}
			case "update-rc.d", "chkconfig", "rc-update":
				s.add(rPersistServiceEnable, v.prog+" changes which services start at boot: approve only if you know the service", v.prog+" "+evJoin(v.args))
			case "launchctl":
				switch ops := v.plainOperands(); opAt(ops, 0) {
				case "load", "bootstrap", "submit", "enable":
					s.add(rPersistLaunchd, "launchctl loads a LaunchAgent or daemon that runs at every login: refuse unless you installed it yourself", "launchctl "+evJoin(v.args))
				case "setenv":
					// launchctl setenv NAME VALUE: every program launchd
					// starts from now on gets it, as an export would.
					if len(ops) >= 3 && s.enabled(rPersistLDPreload) {
						s.checkPreloadWords([]string{ops[1] + "=" + strings.Join(ops[2:], " ")}, false)
					}
				}
			case "git":
				if where := credentialHelperCopy(v); where != "" && s.enabled(rCredPasswordPrompt) {
					s.add(rCredPasswordPrompt, "sets a git credential helper that also copies what git hands it ("+where+"): every username, password and token git uses from now on would be kept there; refuse it", "git "+evJoin(v.args))
				}
				if what := extTransportAllowed(v); what != "" && s.enabled(rRCECloneExec) {
					s.add(rRCECloneExec, "git "+what+": a repository's submodule URL (ext::sh -c …) can then run any command on this machine; refuse it", "git "+evJoin(v.args))
				}
				for i, a := range v.args {
					if containsFold(a, "core.hookspath") && !hasFlag(v.args, 0, "get") && !hasFlag(v.args, 0, "unset") {
						if cs.projectHooksDir(v, i) {
							break // husky, lefthook: the repository's own hooks, which it versions
						}
						s.add(rPersistGitHooks, "points git's core.hooksPath at another directory: every git command would run its scripts; review them first", "git "+evJoin(v.args))
						break
					}
				}
			}
		}
		// Writes to persistence locations, however they are made.
		for _, target := range cs.writeTargets(v) {
			p := cs.resolveIn(v.c, target)
			if r, what, ok := persistTarget(p, cs.home); ok && !(r == rPersistShellRC && cs.appendsSettings(v, p.Abs)) &&
				!(r == rPersistGitHooks && cs.hookRunsOnlyChecks(v, p.Abs)) {
				s.add(r, persistMessage(r, what), target)
			}
		}
		// A prefix assignment reaches only the command it precedes:
		// there, a library the system installed is a tuning
		// (LD_PRELOAD=/usr/lib/…/libjemalloc.so.2 ./server).
		s.checkPreloadWords(v.c.Assigns, v.c.Program != "" && v.c.Program != "env")
		if v.prog == "export" || v.prog == "env" || v.prog == "declare" || v.prog == "typeset" || v.c.Program == "env" {
			s.checkPreloadWords(v.c.Args, false)
		}
	}
}

// accountTamper says how an account command grants root, or "".
func accountTamper(v *cmdView) string {
	switch v.prog {
	case "visudo", "vipw":
		// visudo -c only checks the syntax; vipw -h / --help only prints.
		if v.prog == "visudo" && hasFlag(v.args, 'c', "check") || hasFlag(v.args, 'h', "help") || hasFlag(v.args, 'V', "version") {
			return ""
		}
		return v.prog + " edits sudoers or the account database"
	case "chpasswd":
		return "chpasswd sets account passwords"
	case "passwd":
		if ops := v.plainOperands(); len(ops) > 0 && ops[0] == "root" {
			return "passwd sets the root password"
		}
		return ""
	}
	var found string
	flagValues(v.args, 'u', "uid", func(uid string) {
		if uid == "0" {
			found = v.prog + " gives an account uid 0 (root)"
		}
	})
	if found == "" && (hasShortFlag(v.args, 'o') || hasLongFlag(v.args, "non-unique")) {
		found = v.prog + " creates an account sharing another account's uid"
	}
	check := func(g string) {
		for _, name := range strings.Split(g, ",") {
			switch name {
			case "sudo", "wheel", "admin", "root", "docker":
				found = v.prog + " adds an account to the " + name + " group"
			}
		}
	}
	flagValues(v.args, 'G', "groups", check)
	flagValues(v.args, 'g', "gid", func(g string) {
		if g == "0" || g == "root" {
			found = v.prog + " gives an account the root group"
		}
	})
	if v.prog == "gpasswd" {
		flagValues(v.args, 'a', "add", func(string) {
			for _, op := range operands(v.args, "adAM", nil) {
				check(op)
			}
		})
	}
	return found
}

// containerEscape says which host mount or flag hands a container the
// host, or "".
func containerEscape(v *cmdView) string {
	sub, args := dockerSubcommand(v.args)
	if sub != "run" && sub != "create" && sub != "exec" {
		return ""
	}
	v = &cmdView{prog: v.prog, args: args}
	var why string
	inspect := func(spec string) {
		src, _, _ := strings.Cut(spec, ":")
		if strings.HasPrefix(spec, "type=") || strings.Contains(spec, "source=") || strings.Contains(spec, "src=") {
			for _, kv := range strings.Split(spec, ",") {
				if k, val, ok := strings.Cut(kv, "="); ok && (k == "source" || k == "src") {
					src = val
				}
			}
		}
		switch strings.TrimSuffix(src, "/") {
		case "":
			if strings.HasPrefix(src, "/") {
				why = "the host's root filesystem mounted"
			}
		case "/etc", "/root", "/boot", "/usr", "/var", "/home", "/proc", "/sys", "/dev":
			why = "the host's " + src + " mounted"
		case "/var/run/docker.sock", "/run/docker.sock", "/run/podman/podman.sock":
			why = "the container engine socket mounted"
		}
	}
	flagValues(v.args, 'v', "volume", inspect)
	flagValues(v.args, 0, "mount", inspect)
	if why != "" || sub == "exec" {
		return why
	}
	// --privileged hands the container every device and capability: it
	// can mount the host's disks. The host's process namespace and
	// CAP_SYS_ADMIN are ways to the same.
	switch {
	case hasLongFlag(v.args, "privileged") && !containsArg(v.args, "--privileged=false"):
		why = "--privileged (every device and capability of the host)"
	default:
		flagValues(v.args, 0, "pid", func(ns string) {
			if ns == "host" {
				why = "the host's process namespace (--pid host)"
			}
		})
		flagValues(v.args, 0, "cap-add", func(c string) {
			if c = strings.ToUpper(strings.TrimPrefix(strings.ToUpper(c), "CAP_")); c == "SYS_ADMIN" || c == "ALL" || c == "SYS_PTRACE" || c == "SYS_MODULE" {
				why = "--cap-add " + c
			}
		})
	}
	return why
}

// dockerSubcommand returns the subcommand of docker, podman or nerdctl
// and its arguments, past the global options (-H tcp://host, --context
// c, --config dir, -l level, --tls*).
func dockerSubcommand(args []string) (string, []string) {
	return subcommandOf(args, "-H", "--host", "-c", "--context", "--config", "-l", "--log-level", "--tlscacert", "--tlscert",
		"--tlskey", "--url", "--connection", "--identity", "--namespace", "-n", "--address", "-a")
}

// lxcEscape says which setting hands an LXD / Incus container the host:
// security.privileged, or a disk device whose source is / or a system
// directory; "".
func lxcEscape(v *cmdView) string {
	for i, a := range v.args {
		k, val, ok := strings.Cut(a, "=")
		if !ok && i+1 < len(v.args) && (a == "security.privileged" || a == "security.nesting") {
			k, val, ok = a, v.args[i+1], true
		}
		if !ok {
			continue
		}
		switch k {
		case "security.privileged":
			if strings.EqualFold(val, "true") || val == "1" {
				return "security.privileged"
			}
		case "source":
			switch strings.TrimSuffix(val, "/") {
			case "", "/etc", "/root", "/boot", "/usr", "/var", "/home", "/proc", "/sys", "/dev":
				if strings.HasPrefix(val, "/") {
					return "the host's " + val + " as a disk"
				}
			}
		}
	}
	return ""
}

// engineAPIWrite reports curl driving a container engine's API through
// its socket with a request that changes something (create, start,
// exec): docker.sock is root on the host to whoever can write to it.
func engineAPIWrite(v *cmdView) string {
	sock := ""
	flagValues(v.args, 0, "unix-socket", func(p string) {
		if strings.HasSuffix(p, "docker.sock") || strings.HasSuffix(p, "podman.sock") || strings.HasSuffix(p, "containerd.sock") {
			sock = p
		}
	})
	if sock == "" {
		return ""
	}
	write := false
	flagValues(v.args, 'X', "request", func(m string) {
		write = write || !strings.EqualFold(m, "GET") && !strings.EqualFold(m, "HEAD")
	})
	for _, f := range []string{"data", "data-raw", "data-binary", "json"} {
		flagValues(v.args, 0, f, func(string) { write = true })
	}
	flagValues(v.args, 'd', "", func(string) { write = true })
	if !write {
		return ""
	}
	return sock
}

// podEscape says which host access kubectl run / create / apply gives a
// pod in an inline spec (--overrides, a here-document is judged as a
// file), or "".
func podEscape(v *cmdView) string {
	ops := infraOperands(v)
	if len(ops) == 0 || ops[0] != "run" && ops[0] != "create" && ops[0] != "apply" && ops[0] != "debug" && ops[0] != "patch" {
		return ""
	}
	if ops[0] == "debug" && len(ops) > 1 && strings.HasPrefix(ops[1], "node/") {
		// A node's debugging pod shares the node's namespaces and
		// mounts its root filesystem at /host.
		return "the node's filesystem and namespaces (kubectl debug " + ops[1] + ")"
	}
	if hasLongFlag(v.args, "privileged") || containsArg(v.args, "--profile=sysadmin") {
		return "privileged containers"
	}
	for _, a := range v.args {
		if !strings.Contains(a, "host") && !strings.Contains(a, "privileged") {
			continue
		}
		spec := strings.Join(strings.Fields(a), "")
		switch {
		case strings.Contains(spec, `"privileged":true`):
			return "a privileged container"
		case strings.Contains(spec, `"hostPID":true`):
			return "the host's processes"
		case strings.Contains(spec, `"hostPath"`):
			return "a host path mounted"
		case strings.Contains(spec, `"hostNetwork":true`):
			return "the host's network"
		}
	}
	return ""
}

// entersInit reports nsenter -t 1 / --target 1 / --target=1.
func entersInit(args []string) bool {
	for i, a := range args {
		switch {
		case (a == "-t" || a == "--target") && i+1 < len(args):
			if args[i+1] == "1" {
				return true
			}
		case a == "-t1" || a == "--target=1":
			return true
		}
	}
	return false
}

// becomesRoot says how v switches to root by itself, or "": capsh or
// setpriv told to take uid or gid 0, or inline code calling setuid(0)
// (python3 -c 'import os; os.setuid(0); …', perl's POSIX::setuid(0)).
func becomesRoot(v *cmdView) string {
	switch v.prog {
	case "capsh", "setpriv":
		for _, a := range v.args {
			name, val, ok := strings.Cut(a, "=")
			if !ok {
				continue
			}
			switch name {
			case "--uid", "--gid", "--reuid", "--regid", "--ruid", "--euid", "--rgid", "--egid":
				if val == "0" {
					return v.prog + " " + a + " takes root's identity"
				}
			case "--user":
				if val == "root" {
					return v.prog + " " + a + " takes root's identity"
				}
			}
		}
	}
	if v.codeAny(traitSetuidRoot) {
		return v.prog + "'s code switches to root (setuid(0))"
	}
	return ""
}

func isElevation(prog string) bool {
	switch prog {
	case "sudo", "su", "doas", "pkexec", "run0", "runuser", "sudoedit":
		return true
	}
	return false
}

func firstOperand(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// crontabWrites is false for listing (crontab -l) and removing (crontab
// -r): neither installs a job.
func crontabWrites(args []string) bool {
	if hasShortFlag(args, 'l') || hasShortFlag(args, 'r') {
		return false
	}
	return len(args) > 0
}

// loaderVars are the variables whose library the dynamic loader injects
// into every program started.
var loaderVars = []string{"LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES"}

// checkPreloadWords flags assignments of LD_PRELOAD and its kin among
// words. oneShot says they reach one command only, where libraries in
// the system's own directories pass.
func (s *scan) checkPreloadWords(words []string, oneShot bool) {
	for i, w := range words {
		for _, name := range loaderVars {
			if len(w) > len(name)+1 && w[len(name)] == '=' && strings.HasPrefix(w, name) && !(oneShot && systemLibraries(w[len(name)+1:])) {
				s.add(rPersistLDPreload, "sets "+name+": the library is injected into every program started; refuse unless you built it yourself for debugging", w)
			}
		}
		if oneShot {
			continue // NODE_OPTIONS=--require ./otel.js node app.js: one run, instrumented
		}
		next := ""
		if i+1 < len(words) {
			next = words[i+1]
		}
		if name, file := interpreterPreload(w, next); file != "" {
			s.add(rPersistLDPreload, "sets "+name+" to load "+file+" into every "+preloadRuntime[name]+" process started from now on: refuse unless it is your own instrumentation", w)
		}
	}
}

// workloadEnv returns the NAME=VALUE settings a command gives the
// processes of a container or workload: docker run -e / --env, kubectl
// set env. They reach every process there as an export would here.
func workloadEnv(v *cmdView) []string {
	var out []string
	switch v.prog {
	case "docker", "podman", "nerdctl":
		flagValues(containerOptions(v), 'e', "env", func(e string) {
			if strings.Contains(e, "=") {
				out = append(out, e)
			}
		})
	case "kubectl", "oc":
		// kubectl [-n NS] set env RESOURCE NAME=VALUE…
		for i := 0; i+1 < len(v.args); i++ {
			if v.args[i] != "set" || v.args[i+1] != "env" {
				continue
			}
			for _, o := range v.args[i+2:] {
				if strings.Contains(o, "=") && !strings.HasPrefix(o, "-") {
					out = append(out, o)
				}
			}
			break
		}
	}
	return out
}

// preloadRuntime names the runtime each preload variable reaches.
var preloadRuntime = map[string]string{"NODE_OPTIONS": "node", "RUBYOPT": "ruby", "PERL5OPT": "perl", "JAVA_TOOL_OPTIONS": "java",
	"_JAVA_OPTIONS": "java", "JDK_JAVA_OPTIONS": "java", "BASH_ENV": "non-interactive bash"}

// interpreterPreload returns the variable and the file an assignment has
// a runtime load into each of its processes (NODE_OPTIONS=--require
// /tmp/x.js, RUBYOPT=-r/tmp/x.rb, JAVA_TOOL_OPTIONS=-javaagent:/tmp/a.jar,
// BASH_ENV=/tmp/env.sh), or "". A module named without a path
// (--require dotenv/config) or a file of the project (./otel.js) is the
// project's own. next is the
// following word, where a flag's value lands when words were split on
// spaces.
func interpreterPreload(w, next string) (name, file string) {
	name, val, ok := strings.Cut(w, "=")
	if !ok || preloadRuntime[name] == "" {
		return "", ""
	}
	if name == "BASH_ENV" {
		return name, val
	}
	fields := strings.Fields(val)
	if len(fields) > 0 && next != "" && !strings.Contains(next, "=") {
		fields = append(fields, next)
	}
	for j, f := range fields {
		arg := ""
		switch {
		case f == "--require" || f == "-r" || f == "--import" || f == "--loader" || f == "--experimental-loader" || f == "-M" || f == "-m":
			if j+1 < len(fields) {
				arg = fields[j+1]
			}
		case strings.HasPrefix(f, "--require=") || strings.HasPrefix(f, "--import=") || strings.HasPrefix(f, "--loader="):
			_, arg, _ = strings.Cut(f, "=")
		case strings.HasPrefix(f, "-javaagent:") || strings.HasPrefix(f, "-agentpath:"):
			_, arg, _ = strings.Cut(f, ":")
		case len(f) > 2 && (strings.HasPrefix(f, "-r") || strings.HasPrefix(f, "-M")) && name != "NODE_OPTIONS":
			arg = f[2:]
		}
		// A path relative to the project (./instrument.js) is the
		// project's own; one elsewhere is not, nor code given inline
		// (--import=data:text/javascript,…) or by URL.
		if arg = strings.Trim(arg, `"'`); arg != "" && (strings.HasPrefix(arg, "/") || strings.HasPrefix(arg, "~") || strings.HasPrefix(arg, "$") ||
			strings.HasPrefix(arg, "data:") || strings.HasPrefix(arg, "http://") || strings.HasPrefix(arg, "https://")) {
			return name, textcut.Cut(arg, maxEvidence)
		}
	}
	return "", ""
}

func persistMessage(r ruleIndex, what string) string {
	switch r {
	case rPrivAccount:
		return "writes " + what + ": this changes who can log in or become root; refuse it"
	case rPersistShellRC:
		if strings.HasPrefix(what, toolStartupLabel) {
			return "writes " + what + ": whatever it holds runs again each time, unasked; make this change by hand if you need it"
		}
		return "writes " + what + ": it runs in every new shell; make this change by hand if you need it"
	case rPersistAuthorizedKeys:
		return "writes " + what + ": this grants SSH access to whoever holds the key; refuse unless you add the key yourself"
	case rPersistCron:
		return "writes the cron file " + what + ": scheduled jobs keep running after this session; add them by hand"
	case rPersistSystemd:
		return "writes " + what + ": a service or autostart entry runs code at every boot or login; install it by hand"
	case rPersistLaunchd:
		return "writes " + what + ": it runs at every login or boot; install it by hand"
	case rPersistLDPreload:
		return "writes " + what + ": the library would be injected into every program; refuse it"
	case rPersistGitHooks:
		return "writes " + what + ": it runs on every git operation; review the hook before approving"
	}
	return "writes " + what
}

// forEachWriteTarget calls fn with each path a command writes: output
// redirections, tee and sponge, the destination of cp/mv/install/ln/rsync,
// dd of=, sed -i files and curl/wget output files. Rules ask cmdScan.writeTargets,
// which remembers the answer.
func forEachWriteTarget(v *cmdView, fn func(string)) {
	if v.hasCode {
		// fs.writeFileSync(p), open(p, 'a'), File.truncate(p), … in
		// interpreter code.
		for _, e := range v.hostedProgram().effects {
			if e.Op == shell.CodeWrite && e.Path != "" {
				fn(e.Path)
			}
		}
	}
	for _, r := range v.c.Redirects {
		if isOutputRedirect(r.Op) && r.Target != "" && !strings.HasPrefix(r.Target, "&") {
			fn(r.Target)
		}
	}
	switch v.prog {
	case "tee", "sponge":
		for _, op := range v.plainOperands() {
			fn(op)
		}
	case "cp", "mv", "install", "ln", "rsync", "scp":
		dirSet := false
		flagValues(v.args, 't', "target-directory", func(d string) { dirSet = true; fn(d) })
		if !dirSet {
			ops := operands(v.args, "mogSe", []string{"--mode", "--owner", "--group", "--suffix", "--rsh"})
			if len(ops) >= 2 {
				fn(ops[len(ops)-1])
			}
		}
	case "dd":
		for _, a := range v.args {
			if strings.HasPrefix(a, "of=") {
				fn(a[3:])
			}
		}
	case "sed", "gsed", "perl":
		if hasShortFlag(v.args, 'i') || hasLongFlag(v.args, "in-place") {
			ops := operands(v.args, "ef", []string{"--expression", "--file"})
			scriptGiven := false
			flagValues(v.args, 'e', "expression", func(string) { scriptGiven = true })
			if !scriptGiven && len(ops) > 0 {
				ops = ops[1:]
			}
			for _, op := range ops {
				fn(op)
			}
		}
	case "curl":
		flagValues(v.args, 'o', "output", fn)
	case "wget":
		flagValues(v.args, 'O', "output-document", func(p string) {
			if p != "-" {
				fn(p)
			}
		})
	}
}

// checkChmod flags setuid/setgid anywhere and world-writable modes on
// system, home or credential paths.
func (s *scan) checkChmod(cs *cmdScan, v *cmdView) {
	ops := operands(v.args, "", []string{"--reference"})
	if len(ops) < 2 {
		return
	}
	mode := ops[0]
	if setsID(mode) {
		s.add(rPrivUnsafePerms, "chmod "+mode+" sets the setuid/setgid bit: the program would run with its owner's rights; refuse it",
			"chmod "+evJoin(v.args))
		return
	}
	if !worldWritable(mode) {
		return
	}
	for _, op := range ops[1:] {
		p := cs.resolveIn(v.c, op)
		why := criticalDir(p, cs.root, cs.home)
		if why == "the whole workspace" {
			why = ""
		}
		if why == "" && isSystemFile(p.Abs) {
			why = "the system file " + p.Abs
		}
		if why == "" {
			if sens, label := classify(p.Abs, cs.home); sens != sensNone {
				why = label + " (" + op + ")"
			}
		}
		if why == "" {
			if _, what, ok := persistTarget(p, cs.home); ok {
				why = what
			}
		}
		if why == "" {
			if d := homeToolDir(p.Abs, cs.home); d != "" {
				why = d + ", whose files your tools load and run,"
			}
		}
		if why != "" {
			s.add(rPrivUnsafePerms, "chmod "+mode+" makes "+why+" writable by every user: use the narrowest permissions that work (e.g. 755 / 644)",
				"chmod "+evJoin(v.args))
			return
		}
	}
}

// homeToolDir returns the directory of the home that abs is in when
// that directory holds tools' programs, packages or settings (~/.cargo,
// ~/.m2, ~/.local, ~/bin, ~/go), or "": another user who can write
// there plants code that runs as the owner.
func homeToolDir(abs, home string) string {
	if home == "" {
		return ""
	}
	rel, ok := strings.CutPrefix(abs, strings.TrimSuffix(home, "/")+"/")
	if !ok {
		return ""
	}
	first, _, _ := strings.Cut(rel, "/")
	if len(first) > 1 && first[0] == '.' && first != ".." || first == "bin" || first == "go" {
		return "~/" + first
	}
	return ""
}

// setsID reports whether a chmod mode sets setuid or setgid.
func setsID(mode string) bool {
	if isOctal(mode) {
		if len(mode) >= 4 {
			d := mode[len(mode)-4] - '0'
			return d&6 != 0
		}
		return false
	}
	for _, clause := range strings.Split(mode, ",") {
		if i := strings.IndexAny(clause, "+="); i >= 0 && strings.IndexByte(clause[i:], 's') >= 0 {
			return true
		}
	}
	return false
}

// worldWritable reports whether a chmod mode grants write to others.
func worldWritable(mode string) bool {
	if isOctal(mode) {
		d := mode[len(mode)-1] - '0'
		return d&2 != 0
	}
	for _, clause := range strings.Split(mode, ",") {
		i := strings.IndexAny(clause, "+=")
		if i < 0 {
			continue
		}
		who := clause[:i]
		if (who == "" && clause[i] == '=') || strings.ContainsAny(who, "oa") {
			if strings.IndexByte(clause[i:], 'w') >= 0 {
				return true
			}
		}
	}
	return false
}

func isOctal(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return true
}

// checkPathWrites judges paths written by file tools (write_file,
// edit_file, copy_file destinations, unknown tools naming a path).
func (s *scan) checkPathWrite(p *action.Path) {
	if r, what, ok := persistTarget(*p, s.act.Caller.Home); ok {
		s.add(r, persistMessage(r, what), p.Raw)
	}
	if what := loginAuthConfig(p.Abs); what != "" {
		s.add(rPersistLoginAuth, "writes "+what+": it decides who can log in and how; refuse it", p.Raw)
	}
}

// isAccountFile reports the sudoers and account databases.
func isAccountFile(abs string) bool {
	abs = strings.TrimPrefix(abs, "/private")
	switch abs {
	case "/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow", "/etc/master.passwd", "/etc/doas.conf":
		return true
	}
	return underOrAt(abs, "/etc/sudoers") || underOrAt(abs, "/etc/sudoers.d")
}

// systemLibraries reports whether every library of a preload list (':'
// or space separated) lies in a directory the system's packages own.
func systemLibraries(list string) bool {
	libs := strings.FieldsFunc(list, func(r rune) bool { return r == ':' || r == ' ' })
	for _, l := range libs {
		if strings.Contains(l, "..") || strings.ContainsAny(l, "$`*?[") ||
			!(strings.HasPrefix(l, "/usr/lib/") || strings.HasPrefix(l, "/lib/") || strings.HasPrefix(l, "/usr/lib64/") || strings.HasPrefix(l, "/lib64/")) {
			return false
		}
	}
	return len(libs) > 0
}

// appliesStdin reports kubectl apply / create / replace -f - (the
// manifest read from standard input).
func appliesStdin(v *cmdView) bool {
	ops := infraOperands(v)
	if len(ops) == 0 || ops[0] != "apply" && ops[0] != "create" && ops[0] != "replace" {
		return false
	}
	stdin := false
	flagValues(v.args, 'f', "filename", func(f string) { stdin = stdin || f == "-" })
	return stdin
}

// hostRoots are host paths whose mount gives a pod the node: its root,
// configuration, users' homes, the container runtime's socket, the
// kubelet's credentials.
var hostRoots = []string{"/", "/etc", "/root", "/home", "/proc", "/sys", "/var/run", "/run", "/var/lib/kubelet", "/var/run/docker.sock",
	"/run/containerd", "/var/run/containerd/containerd.sock", "/run/containerd/containerd.sock", "/var/lib/docker", "/boot", "/dev"}

// manifestHostAccess says which host access a Kubernetes manifest (YAML
// or JSON) gives its pods, or "": privileged containers, the host's
// processes or network, or a host path that is the node itself.
func manifestHostAccess(text string) string {
	// Lower-cased, without spaces and quotes, lines kept: a value ends at
	// the end of its line (block form) or at , or } (flow form, JSON).
	flat := flatSetting(text)
	switch {
	case strings.Contains(flat, "privileged:true"):
		return "a privileged container"
	case strings.Contains(flat, "hostpid:true"):
		return "the host's processes"
	case strings.Contains(flat, "hostnetwork:true"):
		return "the host's network"
	}
	mounted := ""
	shell.EachIndex(flat, "hostpath:", func(i int) bool {
		rest := flat[i+len("hostpath:"):]
		j := strings.Index(rest, "path:")
		if j < 0 {
			return false
		}
		p := rest[j+len("path:"):]
		if k := strings.IndexAny(p, ",}\r\n"); k >= 0 {
			p = p[:k]
		}
		if root, ok := hostRoot(p); ok {
			mounted = "the node's " + root + " mounted (hostPath)"
			return false
		}
		return true
	})
	return mounted
}

// hostRoot returns p without a trailing slash when its mount hands over
// the machine itself (hostRoots).
func hostRoot(p string) (string, bool) {
	if p != "/" {
		p = strings.TrimSuffix(p, "/")
	}
	return p, slices.Contains(hostRoots, p)
}

// composeFile reports a Docker Compose file: compose.yaml,
// docker-compose.override.yml and their kin.
func composeFile(abs string) bool {
	base := baseName(abs)
	return (strings.HasPrefix(base, "docker-compose") || strings.HasPrefix(base, "compose")) &&
		(strings.HasSuffix(base, ".yml") || strings.HasSuffix(base, ".yaml"))
}

// composeHostAccess says which host access a Compose file gives a
// service, or "": privileged, the host's process namespace, or a bind
// mount of the host itself (/, /etc, the engine's socket, …).
func composeHostAccess(text string) string {
	for line := range strings.Lines(text) {
		l := flatSetting(strings.TrimSpace(line))
		switch {
		case l == "privileged:true":
			return "privileged mode"
		case l == "pid:host":
			return "the host's processes (pid: host)"
		case strings.HasPrefix(l, "-/") || strings.HasPrefix(l, "source:/"):
			// - /host/path:/container/path[:ro], or the long form's source.
			src := strings.TrimPrefix(strings.TrimPrefix(l, "-"), "source:")
			if i := strings.IndexByte(src, ':'); i > 0 {
				src = src[:i]
			}
			if root, ok := hostRoot(src); ok {
				return "the host's " + root + " mounted"
			}
		}
	}
	return ""
}

// projectHooksDir reports a core.hooksPath (v.args[at], its value after
// "=" or in the next argument) set for this repository only to a
// directory inside the project (.githooks, .husky): the hooks that run are
// the project's own files, and a hook the line writes there is judged as
// code where it is written.
func (cs *cmdScan) projectHooksDir(v *cmdView, at int) bool {
	if hasLongFlag(v.args, "global") || hasLongFlag(v.args, "system") || cs.root == "" {
		return false
	}
	_, dir, ok := strings.Cut(v.args[at], "=")
	if !ok {
		if at+1 >= len(v.args) {
			return false
		}
		dir = v.args[at+1]
	}
	if dir == "" || strings.ContainsAny(dir, "$`") {
		return false
	}
	abs := cs.resolveIn(v.c, dir).Abs
	return isBelow(abs, cs.root)
}

// extTransportAllowed says how git is told to allow its ext:: transport,
// which runs a command named in a URL (git -c protocol.ext.allow=always,
// git config protocol.allow always, GIT_ALLOW_PROTOCOL=ext), or "".
func extTransportAllowed(v *cmdView) string {
	for _, a := range v.c.Assigns {
		if name, val, _ := strings.Cut(a, "="); name == "GIT_ALLOW_PROTOCOL" && containsWordIn(val, "ext", &wordBytes) {
			return "is run with GIT_ALLOW_PROTOCOL naming ext"
		}
	}
	for i, a := range v.args {
		l := strings.ToLower(a)
		key, val, glued := strings.Cut(l, "=")
		if !glued && i+1 < len(v.args) {
			val = strings.ToLower(v.args[i+1])
		}
		if (key == "protocol.ext.allow" || key == "protocol.allow") && (val == "always" || val == "user") {
			return "allows the ext:: transport (" + key + "=" + val + ")"
		}
	}
	return ""
}

// credentialHelperCopy returns where a git credential helper set by git
// config (credential.helper or credential.URL.helper = !shell) copies
// the credentials git writes to its input: a file tee or a redirection
// names, or a network program; "" for a helper that only answers
// (!gh auth git-credential, !f() { echo password=$TOKEN; }; f).
func credentialHelperCopy(v *cmdView) string {
	for i, a := range v.args {
		if len(a) < len("credential.helper") || a[0] != 'c' && a[0] != 'C' || i+1 >= len(v.args) {
			continue // most words: one look
		}
		k := strings.ToLower(a)
		if !strings.HasPrefix(k, "credential.") || !strings.HasSuffix(k, "helper") {
			continue
		}
		helper, ok := strings.CutPrefix(strings.TrimSpace(v.args[i+1]), "!")
		if !ok {
			return ""
		}
		for _, f := range strings.Fields(helper) {
			switch {
			case f == "tee" || f == "curl" || f == "wget" || f == "nc" || f == "ncat" || f == "socat":
				return f + " in " + textcut.Cut(helper, maxEvidence)
			case strings.HasPrefix(f, ">") && !strings.HasPrefix(f, ">&") && f != ">/dev/null" && f != ">>/dev/null":
				return "a redirection in " + textcut.Cut(helper, maxEvidence)
			}
		}
	}
	return ""
}
