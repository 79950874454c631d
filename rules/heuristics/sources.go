package heuristics

import "strings"

// Supply-chain settings: where packages and code come from, and whether
// what arrives is checked. Pointing npm, pip, go, gem, conda or git at a
// host nobody trusted (npm config set registry http://…, pip.conf's
// index-url, git's url.X.insteadOf, go env -w GOPROXY=…) makes every later
// install fetch from it; turning off TLS, checksum or signature checks
// (git http.sslVerify false, strict-ssl false, pip trusted-host,
// GOINSECURE, NODE_TLS_REJECT_UNAUTHORIZED=0, .curlrc insecure, apt
// --allow-unauthenticated, dnf --nogpgcheck) lets anyone on the path
// serve code. Both are set once, on purpose, by a person: they escalate.
// Reading settings, pointing at a trusted host, and one-off flags of a
// single download (curl -k) are left alone.

// setting is one configuration key and value: a command-line config
// write, an environment assignment or a line of a config file. key is
// prefixed by the tool whose key it is ("npm:registry", "env:GOPROXY").
type setting struct{ key, value string }

// checkSources judges the settings v writes by command, by environment
// assignment or into a config file.
func (s *scan) checkSources(cs *cmdScan, v *cmdView) {
	if !s.enabled(rSupplySource) && !s.enabled(rSupplyVerifyOff) {
		return
	}
	var buf [4]setting
	sets := buf[:0]
	for _, a := range v.c.Assigns {
		sets = appendEnvSetting(sets, a)
	}
	switch v.prog {
	case "export", "declare", "typeset", "env", "setenv":
		for _, a := range v.args {
			sets = appendEnvSetting(sets, a)
		}
	case "npm", "pnpm", "yarn", "pip", "pip3", "git", "go", "gem", "conda", "mamba", "poetry", "apt", "apt-get",
		"aptitude", "dnf", "yum", "microdnf", "zypper", "rpm", "conan", "vagrant", "helm", "bundle", "dotnet", "composer", "mvn",
		"flatpak", "gradle", "gradlew", "./gradlew":
		if mayConfigure(v) || v.prog == "mvn" {
			sets = cliSettings(v, sets)
		}
		if (v.prog == "npm" || v.prog == "pnpm") && s.enabled(rSupplySource) {
			s.checkScopeRegistryDeleted(cs, v)
		}
	case "brew":
		// brew tap NAME URL: formulae (build scripts) from that repository.
		if ops := v.plainOperands(); len(ops) >= 3 && ops[0] == "tap" {
			sets = append(sets, setting{"brew:tap", ops[2]})
		}
	case "docker", "podman", "nerdctl", "kubectl", "oc":
		// -e npm_config_strict_ssl=false reaches the container's installs.
		for _, e := range workloadEnv(v) {
			sets = appendEnvSetting(sets, e)
		}
		// --add-host registry.npmjs.org:IP: the container's installs
		// fetch from that address in the registry's name.
		flagValues(containerOptions(v), 0, "add-host", func(m string) {
			host, addr, ok := strings.Cut(m, ":")
			if ok && s.enabled(rSupplySource) && (officialSource(host) || s.an.trusted.match(host)) && !isLoopbackHost(addr) {
				s.add(rSupplySource, "resolves "+host+" to "+addr+" inside the container: what it fetches from "+host+" comes from that address instead", v.prog+" "+evJoin(v.args))
			}
		})
	default:
		if v.kind == "python" && hasShortFlag(v.args, 'm') && containsArg(v.args, "pip") {
			sets = cliSettings(&cmdView{prog: "pip", args: afterArg(v.args, "pip")}, sets)
		}
	}
	if writesConfigFile(v) {
		for _, f := range cs.writtenFiles(v) {
			sets = fileSettings(f.abs, f.content, sets)
		}
	}
	if v.hasCode {
		sets = cs.codeConfigEdits(v, sets)
	}
	if v.prog == "go" && mayConfigure(v) {
		sets = cs.clonedReplaces(v, sets)
	}
	for _, st := range sets {
		if s.judgeSetting(v, st) {
			return
		}
	}
}

// configFileNames are words of the files configFileTool knows: code
// that names none of them edits none of them.
var configFileNames = newFoldSet("requirements", ".lock", "package.json", "rc", "pip.", ".conf", "cmake", ".gitmodules", ".toml",
	"go.mod", "gemfile", "gems.rb", ".pre-commit", ".gitlab-ci", "settings.xml", ".in")

// codeConfigEdits adds the settings a program's replace calls write into
// a manifest or a config file it names and writes back
// (s.replace('requests==2.31.0', 'requests @ https://…')).
func (cs *cmdScan) codeConfigEdits(v *cmdView, sets []setting) []setting {
	code := v.code
	if !v.codeAll(traitReplace|traitWrites) || !configFileNames.in(code) {
		return sets
	}
	var subs [][2]string
	padded := " " + code
	for _, call := range replaceCalls {
		subs = literalPairs(padded, call, subs)
	}
	if len(subs) == 0 {
		return sets
	}
	eachCodeLiteral(code, func(lit string) {
		if !path2Ext(lit) || configFileTool(lit) == "" {
			return
		}
		abs := cs.resolveIn(v.c, lit).Abs
		for _, sub := range subs {
			sets = fileSettings(abs, sub[1], sets)
		}
	})
	return sets
}

// clonedReplaces adds the go mod edit -replace of v whose target is a
// directory the line cloned a repository into, from another owner than
// the module's: git clone https://github.com/x-crypt0/crypto /tmp/x &&
// go mod edit -replace golang.org/x/crypto=/tmp/x builds with that
// repository's code in the module's place. A local path alone is the
// developer's own checkout, and foreignModule leaves it.
func (cs *cmdScan) clonedReplaces(v *cmdView, sets []setting) []setting {
	eachGoReplace(v.args, func(old, dir string) {
		if dir == "" || dir[0] != '/' && dir[0] != '.' {
			return
		}
		if url := cs.clonedInto(v, cs.resolveIn(v.c, dir).Abs); url != "" {
			if owner, repo, ok := codeHostRepo(url); ok && foreignModule(old, "github.com/"+owner+"/"+repo) {
				sets = append(sets, setting{"go:replace", old + "=" + url})
			}
		}
	})
	return sets
}

// eachGoReplace calls fn with the old and new module of each
// go mod edit -replace of args: --replace, and -replace with one dash,
// which go's flag package also takes.
func eachGoReplace(args []string, fn func(old, repl string)) {
	each := func(r string) {
		if old, repl, ok := strings.Cut(r, "="); ok {
			fn(old, repl)
		}
	}
	flagValues(args, 0, "replace", each)
	for i, a := range args {
		if r, ok := strings.CutPrefix(a, "-replace="); ok {
			each(r)
		} else if a == "-replace" && i+1 < len(args) {
			each(args[i+1])
		}
	}
}

// clonedInto returns the URL a git clone earlier in the line cloned into
// abs, or "".
func (cs *cmdScan) clonedInto(v *cmdView, abs string) string {
	for i := range cs.views[:v.idx] { // the commands of the line before v
		if url, dir, ok := cs.cloneOf(&cs.views[i]); ok && dir == abs {
			return url
		}
	}
	return ""
}

// npmInjection says how an npm setting runs code of its own in every
// node process or npm script, or "": node-options that load a module
// (--require, --import, --loader), a script-shell other than a system
// shell.
func npmInjection(st setting) string {
	switch st.key {
	case "npm:node-options", "npm:node_options":
		for _, f := range strings.Fields(st.value) {
			switch {
			case f == "-r" || f == "--require" || f == "--import" || f == "--loader" || f == "--experimental-loader",
				strings.HasPrefix(f, "--require=") || strings.HasPrefix(f, "--import=") || strings.HasPrefix(f, "--loader=") ||
					strings.HasPrefix(f, "--experimental-loader="):
				return "sets npm's node-options to load a module into every node process npm starts (" + st.value + ")"
			}
		}
	case "npm:script-shell", "npm:script_shell":
		switch st.value {
		case "", "sh", "bash", "/bin/sh", "/bin/bash", "/usr/bin/bash", "/usr/bin/sh", "pwsh", "powershell", "cmd", "cmd.exe", "zsh", "/bin/zsh":
			return ""
		}
		return "makes npm run every package script through " + st.value
	}
	return ""
}

// mayConfigure is a cheap first look: does v hold a word that the
// settings cliSettings reads start with? Most git, npm and go commands
// configure nothing.
func mayConfigure(v *cmdView) bool {
	for _, a := range v.args {
		switch {
		case a == "config" || a == "set" || a == "env" || a == "edit" || a == "sources" || a == "source" || a == "-c" || a == "remote" || a == "repo":
			return true
		case strings.HasPrefix(a, "--plugin-source"):
			return true
		case strings.HasPrefix(a, "--") && (strings.HasPrefix(a, "--registry") || strings.HasPrefix(a, "--trusted-host") ||
			strings.HasPrefix(a, "--allow-") || strings.HasPrefix(a, "--no") || strings.HasPrefix(a, "--setopt") ||
			strings.HasPrefix(a, "--dependency-verification")):
			return true
		case strings.HasPrefix(a, "-o") && strings.Contains(a, "::"), a == "-o":
			return true // apt -o Acquire::…
		}
	}
	return false
}

// writesConfigFile reports whether v may write one of the config files
// fileSettings reads: by redirection, tee or an in-place edit.
func writesConfigFile(v *cmdView) bool {
	for _, r := range v.c.Redirects {
		if isOutputRedirect(r.Op) && (configFileTool(r.Target) != "" || r.Target != "" && r.Target[0] == '$') {
			return true
		}
	}
	switch v.prog {
	case "tee", "sed", "gsed", "perl":
		for _, a := range v.args {
			if configFileTool(a) != "" {
				return true
			}
		}
	}
	return false
}

// checkSourceWrites judges the settings the file tools write into a
// package manager's, git's, curl's or ssh's configuration file.
func (s *scan) checkSourceWrites() {
	if s.act.Type != "write_file" && s.act.Type != "edit_file" {
		return
	}
	for i := range s.act.Paths {
		p := &s.act.Paths[i]
		if p.Access != actionWrite || configFileTool(p.Abs) == "" {
			continue
		}
		found := false
		s.writtenContents(func(content string) bool {
			for _, st := range fileSettings(p.Abs, content, nil) {
				if s.judgeSetting(nil, st) {
					found = true
					return false
				}
			}
			return true
		})
		if found {
			return
		}
	}
}

// judgeSetting reports st when it points a tool at an untrusted source or
// turns a check off; v is the command that sets it, if any.
func (s *scan) judgeSetting(v *cmdView, st setting) bool {
	ev := st.key + "=" + st.value
	if v != nil {
		ev = v.prog + " " + evJoin(v.args)
	}
	if what := verificationOff(st); what != "" {
		s.add(rSupplyVerifyOff, what+": whoever is on the network path can then serve code; fix the certificate or the mirror instead", ev)
		return true
	}
	if what := npmInjection(st); what != "" && s.enabled(rPersistLDPreload) {
		s.add(rPersistLDPreload, what+": refuse unless you wrote that file yourself", ev)
		return true
	}
	if st.key == "go:replace" {
		old, repl, _ := strings.Cut(st.value, "=")
		s.add(rSupplySource, "replaces the module "+old+" with "+repl+", which another owner publishes: the build takes its code instead", ev)
		return true
	}
	if !sourceKey(st.key) {
		return false
	}
	src := st.value
	if base, ok := gitURLBase(st.key); ok {
		from, moved := repoMove(base, st.value)
		if !moved {
			return false // the same repositories by another protocol
		}
		if s.an.trusted.match(urlHost(base)) || officialSource(urlHost(base)) {
			s.add(rSupplySource, "makes git fetch "+from+" from "+base+" instead: every clone and fetch of those repositories takes code from elsewhere", ev)
			return true
		}
		src = base
	}
	for _, u := range strings.FieldsFunc(src, func(r rune) bool { return r == ',' || r == '|' || r == ' ' || r == '"' || r == '\'' }) {
		if !strings.Contains(u, "://") {
			continue
		}
		h := urlHost(u)
		// A host of the organisation's own network, over https, is its
		// mirror (an Artifactory or Nexus proxy), not a stranger's
		// registry; over plain http anyone on that network can serve it.
		if h == "" || s.vouchedSource(h) || privateHost(h) && strings.HasPrefix(u, "https://") {
			continue
		}
		s.add(rSupplySource, "points "+toolOf(st.key)+" at "+h+" ("+u+"), which is not trusted: every later install or fetch takes code from it; use the registry or add the host to trusted_hosts", ev)
		return true
	}
	return false
}

// vouchedSource reports a host packages may come from without asking:
// this machine, an official registry, or a host the policy trusts.
func (s *scan) vouchedSource(h string) bool {
	return isLoopbackHost(h) || officialSource(h) || s.an.trusted.match(h)
}

// officialSource reports the public registries and proxies the tools use
// by default: setting one back is never a new source.
func officialSource(h string) bool {
	h = strings.ToLower(h)
	switch h {
	case "registry.npmjs.org", "registry.yarnpkg.com", "registry.npmmirror.com", "pypi.org", "pypi.python.org", "files.pythonhosted.org",
		"proxy.golang.org", "sum.golang.org", "rubygems.org", "index.crates.io", "crates.io", "conda.anaconda.org", "repo.anaconda.com",
		"repo.maven.apache.org", "repo1.maven.org", "center.conan.io", "center2.conan.io", "services.gradle.org", "plugins.gradle.org",
		"downloads.gradle.org", "repo.packagist.org", "packagist.org", "static.crates.io", "api.nuget.org":
		return true
	}
	return chartRepos[h] || releaseHosts[h]
}

// releaseHosts are where widely used tools publish their own release
// downloads (their install guides' curl): a binary from one of them is
// the tool's own.
var releaseHosts = map[string]bool{
	"releases.hashicorp.com": true, "get.helm.sh": true, "dl.k8s.io": true, "dl.google.com": true, "nodejs.org": true, "go.dev": true,
	"static.rust-lang.org": true, "download.docker.com": true, "releases.astral.sh": true, "awscli.amazonaws.com": true,
}

// chartRepos are the Helm chart repositories of widely used projects
// (their install guides' helm repo add): a chart from one of them is no
// new source.
var chartRepos = map[string]bool{
	"charts.bitnami.com": true, "charts.jetstack.io": true, "helm.releases.hashicorp.com": true, "helm.elastic.co": true,
	"charts.gitlab.io": true, "helm.traefik.io": true, "traefik.github.io": true, "helm.cilium.io": true,
	"helm.datadoghq.com": true, "charts.external-secrets.io": true, "kubernetes.github.io": true,
	"kubernetes-sigs.github.io": true, "prometheus-community.github.io": true, "grafana.github.io": true,
	"argoproj.github.io": true, "open-telemetry.github.io": true, "aquasecurity.github.io": true,
	"istio-release.storage.googleapis.com": true, "charts.crossplane.io": true, "helm.nginx.com": true,
	"charts.min.io": true, "operator.min.io": true, "charts.longhorn.io": true, "helm.linkerd.io": true,
	"fluent.github.io": true, "kedacore.github.io": true, "charts.konghq.com": true, "helm.vector.dev": true,
	"charts.dexidp.io": true, "codecentric.github.io": true, "bitnami-labs.github.io": true, "stakater.github.io": true,
}

// sourceKey reports keys that name where packages or code come from.
func sourceKey(key string) bool {
	tool, k, _ := strings.Cut(key, ":")
	k = strings.ToLower(k)
	switch tool {
	case "npm":
		return k == "registry" || strings.HasSuffix(k, ":registry") || k == "npmregistryserver" || k == "dependency" ||
			strings.HasSuffix(k, ".npmregistryserver") // yarn's npmScopes.SCOPE.npmRegistryServer
	case "pip":
		return strings.HasSuffix(k, "index-url") || strings.HasSuffix(k, "find-links")
	case "env":
		switch k {
		case "pip_index_url", "pip_extra_index_url", "pip_find_links", "uv_index_url", "uv_extra_index_url", "uv_default_index",
			"npm_config_registry", "yarn_registry", "yarn_npm_registry_server", "goproxy", "bundle_mirror__all":
			return true
		}
		return downloadHostVar(k)
	case "go":
		return k == "goproxy"
	case "gem", "conda", "poetry", "cargo", "lock", "maven", "conan", "pre-commit", "cargo-manifest", "gemfile", "helm", "gitlab-ci",
		"nuget", "terraform", "cmake", "brew":
		return true // their sources, channels, registries, remotes, hook repositories; a lockfile's resolved URLs
	case "composer":
		return k == "repository"
	case "git":
		// url.<base>.insteadOf rewrites URLs to <base>: the base is the
		// source; submodule.<name>.url is where a submodule's code comes
		// from at the next git submodule update.
		return strings.HasPrefix(k, "url.") && (strings.HasSuffix(k, ".insteadof") || strings.HasSuffix(k, ".pushinsteadof")) ||
			strings.HasPrefix(k, "submodule.") && strings.HasSuffix(k, ".url")
	}
	return false
}

// gitURLBase returns the base URL of a git url.<base>.insteadOf key.
func gitURLBase(key string) (string, bool) {
	k, ok := strings.CutPrefix(key, "git:")
	if !ok || !strings.HasPrefix(strings.ToLower(k), "url.") {
		return "", false
	}
	k = k[len("url."):]
	if i := strings.LastIndexByte(k, '.'); i > 0 {
		return k[:i], true
	}
	return "", false
}

// repoMove reports a git url rewrite that sends repositories somewhere
// else: a different host or path, not the same place by another protocol
// (url."git@github.com:".insteadOf "https://github.com/" is everyday).
// from is the prefix being rewritten.
func repoMove(base, from string) (string, bool) {
	bh, bp := repoPlace(base)
	fh, fp := repoPlace(from)
	if bh == "" || fh == "" {
		return "", false
	}
	return from, !strings.EqualFold(bh, fh) || strings.Trim(bp, "/") != strings.Trim(fp, "/")
}

// repoPlace splits a git URL prefix into host and path:
// https://h/p, ssh://git@h/p, git@h:p.
func repoPlace(u string) (host, path string) {
	if i := strings.Index(u, "://"); i >= 0 {
		rest := u[i+3:]
		if at := strings.IndexByte(rest, '@'); at >= 0 && at < strings.IndexByte(rest+"/", '/') {
			rest = rest[at+1:]
		}
		host, path, _ = strings.Cut(rest, "/")
		host, _, _ = strings.Cut(host, ":")
		return host, path
	}
	if at := strings.IndexByte(u, '@'); at >= 0 {
		u = u[at+1:]
	}
	host, path, ok := strings.Cut(u, ":")
	if !ok {
		return "", ""
	}
	return host, path
}

// foreignModule reports a go module replacement by a module of another
// host or owner; a local directory (./fork, ../x, /src/x) is the
// developer's own.
func foreignModule(old, repl string) bool {
	repl = strings.TrimSpace(repl)
	if repl == "" || repl[0] == '.' || repl[0] == '/' {
		return false
	}
	owner := func(m string) string {
		m, _, _ = strings.Cut(m, "@")
		parts := strings.SplitN(m, "/", 3)
		if len(parts) >= 2 {
			return strings.ToLower(parts[0] + "/" + parts[1])
		}
		return strings.ToLower(m)
	}
	return owner(old) != owner(repl)
}

// verificationOff says which check st turns off, or "".
func verificationOff(st setting) string {
	tool, k, _ := strings.Cut(st.key, ":")
	k = strings.ToLower(k)
	val := strings.ToLower(strings.Trim(strings.TrimSpace(st.value), `"'`))
	off := val == "false" || val == "0" || val == "no" || val == "off"
	switch tool {
	case "git":
		if (k == "http.sslverify" || strings.HasSuffix(k, ".sslverify")) && off {
			return "turns off git's TLS certificate check (" + k + ")"
		}
		if k == "core.sshcommand" {
			if flat := strings.ReplaceAll(val, " ", ""); strings.Contains(flat, "stricthostkeychecking=no") || strings.Contains(flat, "userknownhostsfile=/dev/null") {
				return "makes every git fetch and push over ssh skip the host key check (core.sshCommand " + st.value + ")"
			}
		}
	case "npm":
		if (k == "strict-ssl" || k == "enablestrictssl") && off {
			return "turns off the package manager's TLS certificate check (" + k + ")"
		}
		if k == "checksumbehavior" && (val == "ignore" || val == "update") {
			return "tells yarn to take packages whose checksum does not match the lockfile (checksumBehavior " + val + ")"
		}
	case "composer":
		if k == "secure-http" && off {
			return "lets composer fetch packages over plain http (secure-http false)"
		}
	case "pip":
		if strings.HasSuffix(k, "trusted-host") && val != "" {
			return "tells pip to trust " + st.value + " without checking its TLS certificate"
		}
	case "conda":
		if k == "ssl_verify" && off {
			return "turns off conda's TLS certificate check"
		}
	case "curl":
		if k == "insecure" || k == "-k" || k == "--insecure" {
			return "makes every curl skip the TLS certificate check (.curlrc)"
		}
	case "wget":
		if k == "check_certificate" && off {
			return "makes every wget skip the TLS certificate check (.wgetrc)"
		}
	case "ssh":
		if k == "stricthostkeychecking" && off || k == "userknownhostsfile" && val == "/dev/null" {
			return "stops ssh from checking host keys (" + st.key[4:] + " " + st.value + ")"
		}
	case "go":
		return goVerificationOff(k, val)
	case "pkg":
		return "installs packages without checking their signatures (" + k + ")"
	case "env":
		switch k {
		case "git_ssl_no_verify":
			if val != "" && !off {
				return "turns off git's TLS certificate check (GIT_SSL_NO_VERIFY)"
			}
		case "node_tls_reject_unauthorized", "pythonhttpsverify":
			if val == "0" {
				return "turns off TLS certificate checks (" + strings.ToUpper(k) + "=0)"
			}
		case "npm_config_strict_ssl":
			if off {
				return "turns off npm's TLS certificate check"
			}
		case "pip_trusted_host":
			if val != "" {
				return "tells pip to trust " + st.value + " without checking its TLS certificate"
			}
		default:
			if checksumSkipVar(k) && !off && val != "" {
				return "tells the installer not to check the checksums of what it downloads (" + strings.ToUpper(k) + "=" + st.value + ")"
			}
			return goVerificationOff(k, val)
		}
	}
	return ""
}

// goVerificationOff reads the go settings that skip the checksum database
// or TLS: GOSUMDB=off, GOINSECURE, GONOSUMDB=* / GONOSUMCHECK, GOFLAGS=-insecure.
func goVerificationOff(k, val string) string {
	switch k {
	case "gosumdb":
		if val == "off" {
			return "turns off go's checksum database (GOSUMDB=off)"
		}
	case "goinsecure":
		if val != "" {
			return "lets go fetch modules without TLS or checksum checks (GOINSECURE=" + val + ")"
		}
	case "gonosumdb", "gonosumcheck", "goprivate":
		if val == "*" || val == "1" && k == "gonosumcheck" {
			return "exempts every module from go's checksum database (" + strings.ToUpper(k) + "=" + val + ")"
		}
	case "goflags":
		if strings.Contains(val, "-insecure") {
			return "lets go fetch modules without TLS (GOFLAGS=-insecure)"
		}
	}
	return ""
}

// appendEnvSetting adds a NAME=VALUE word as an environment setting when
// NAME is one sourceKey or verificationOff reads (most assignments,
// CGO_ENABLED=0 and the like, are not: no key is built for them).
func appendEnvSetting(sets []setting, word string) []setting {
	name, val, ok := strings.Cut(word, "=")
	if !ok || name == "" {
		return sets
	}
	switch strings.ToUpper(name) { // no copy for a name already upper case
	case "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX",
		"NPM_CONFIG_REGISTRY", "YARN_REGISTRY", "YARN_NPM_REGISTRY_SERVER", "GOPROXY", "BUNDLE_MIRROR__ALL",
		"GIT_SSL_NO_VERIFY", "NODE_TLS_REJECT_UNAUTHORIZED", "PYTHONHTTPSVERIFY", "NPM_CONFIG_STRICT_SSL", "PIP_TRUSTED_HOST",
		"GOSUMDB", "GOINSECURE", "GONOSUMDB", "GONOSUMCHECK", "GOPRIVATE", "GOFLAGS":
		return append(sets, setting{"env:" + strings.ToLower(name), val})
	}
	if downloadHostVar(name) || checksumSkipVar(name) {
		return append(sets, setting{"env:" + strings.ToLower(name), val})
	}
	return sets
}

// downloadHostSuffixes end the names of the variables through which an
// installer takes the host it downloads binaries, toolchains or
// browsers from: PLAYWRIGHT_DOWNLOAD_HOST, PUPPETEER_DOWNLOAD_BASE_URL,
// PYTHON_BUILD_MIRROR_URL, NVM_NODEJS_ORG_MIRROR, ELECTRON_MIRROR,
// SASS_BINARY_SITE, CHROMEDRIVER_CDNURL, RUSTUP_DIST_SERVER.
var downloadHostSuffixes = []string{"_DOWNLOAD_HOST", "_DOWNLOAD_BASE_URL", "_DOWNLOAD_URL", "_DOWNLOAD_MIRROR", "_MIRROR", "_MIRROR_URL",
	"_CDNURL", "_CDN_URL", "_BINARY_SITE", "_BINARY_HOST", "_BINARY_HOST_MIRROR", "_DIST_SERVER", "_UPDATE_ROOT",
	"_UPDATE_URL"} // GRYPE_DB_UPDATE_URL: where a scanner takes its vulnerability database

// downloadHostVar reports a variable named as one of downloadHostSuffixes
// says, in either case.
func downloadHostVar(name string) bool {
	if len(name) < 8 || name[0] == '$' {
		return false
	}
	for _, suf := range downloadHostSuffixes {
		if len(name) > len(suf) && strings.EqualFold(name[len(name)-len(suf):], suf) {
			return true
		}
	}
	return false
}

// checksumSkipVar reports a variable that tells an installer to skip
// checking what it downloaded (PYTHON_BUILD_MIRROR_URL_SKIP_CHECKSUM).
func checksumSkipVar(name string) bool {
	const suf = "_SKIP_CHECKSUM"
	return len(name) > len(suf) && strings.EqualFold(name[len(name)-len(suf):], suf)
}

// cliSettings adds what a package manager's or git's config command sets:
// npm config set K V, pip config set K V, git config K V, go env -w K=V,
// gem sources --add U, conda config --set K V / --add channels U, poetry
// source add N U, and install options that skip signature checks.
func cliSettings(v *cmdView, sets []setting) []setting {
	ops := v.plainOperands()
	op := operandAt(ops)
	switch v.prog {
	case "npm", "pnpm", "yarn":
		if op(0) == "pkg" && op(1) == "set" {
			// npm pkg set dependencies.lodash=https://…/lodash.tgz: a
			// dependency fetched from that host instead of the registry.
			for _, o := range ops[2:] {
				if k, val, ok := strings.Cut(o, "="); ok && strings.Contains(strings.ToLower(k), "dependencies.") && strings.Contains(val, "://") {
					sets = append(sets, setting{"npm:dependency", strings.TrimPrefix(val, "git+")})
				}
			}
			return sets
		}
		i := 0
		if op(0) == "config" {
			i = 1
		}
		if op(i) == "set" {
			if k, val, ok := strings.Cut(op(i+1), "="); ok {
				return append(sets, setting{"npm:" + k, val})
			}
			return append(sets, setting{"npm:" + op(i+1), op(i + 2)})
		}
		flagValues(v.args, 0, "registry", func(u string) {
			if op(0) != "install" && op(0) != "i" && op(0) != "add" { // installs: checkPackageFromURL
				sets = append(sets, setting{"npm:registry", u})
			}
		})
	case "pip", "pip3":
		if op(0) == "config" && op(1) == "set" {
			return append(sets, setting{"pip:" + op(2), op(3)})
		}
		if op(0) == "install" || op(0) == "download" {
			flagValues(v.args, 0, "trusted-host", func(h string) { sets = append(sets, setting{"pip:trusted-host", h}) })
		}
	case "git":
		sub, rest := gitSubcommand(v.args)
		for i := 0; i+1 < len(v.args); i++ {
			if v.args[i] == "-c" { // git -c http.sslVerify=false clone …
				// core.sshCommand for one command is ssh -o for one
				// connection; written into a config it is every fetch's.
				if k, val, ok := strings.Cut(v.args[i+1], "="); ok && !strings.EqualFold(k, "core.sshCommand") {
					sets = append(sets, setting{"git:" + k, val})
				}
			}
		}
		if sub == "config" {
			kv := operands(rest, "f", []string{"--file", "--type", "--default", "--blob"})
			if len(kv) >= 2 && !strings.HasPrefix(kv[0], "-") {
				sets = append(sets, setting{"git:" + kv[0], kv[1]})
			}
		}
	case "go":
		if op(0) == "mod" && op(1) == "edit" {
			eachGoReplace(v.args, func(old, repl string) {
				if foreignModule(old, repl) {
					sets = append(sets, setting{"go:replace", old + "=" + repl})
				}
			})
		}
		if op(0) == "env" && hasShortFlag(v.args, 'w') {
			for _, a := range ops[1:] {
				if k, val, ok := strings.Cut(a, "="); ok {
					sets = append(sets, setting{"go:" + strings.ToLower(k), val})
				}
			}
		}
	case "gem":
		if op(0) == "sources" {
			flagValues(v.args, 'a', "add", func(u string) { sets = append(sets, setting{"gem:source", u}) })
		}
	case "conda", "mamba":
		if op(0) == "config" {
			flagValues(v.args, 0, "add", func(string) { sets = append(sets, setting{"conda:channels", strings.Join(v.args, " ")}) })
			for i := 0; i+2 < len(v.args); i++ {
				if v.args[i] == "--set" {
					sets = append(sets, setting{"conda:" + v.args[i+1], v.args[i+2]})
				}
			}
		}
	case "poetry":
		if op(0) == "source" && op(1) == "add" {
			sets = append(sets, setting{"poetry:source", op(3)})
		}
	case "helm":
		if op(0) == "repo" && op(1) == "add" { // helm repo add NAME URL
			sets = append(sets, setting{"helm:repo", op(3)})
		}
	case "conan":
		if op(0) == "remote" && (op(1) == "add" || op(1) == "update") {
			for _, a := range v.args {
				if strings.Contains(a, "://") {
					sets = append(sets, setting{"conan:remote", strings.TrimPrefix(a, "--url=")})
				}
			}
		}
	case "bundle":
		// bundle config [set] [--global] mirror.https://rubygems.org URL
		for i, a := range ops {
			if strings.HasPrefix(a, "mirror.") && i+1 < len(ops) {
				sets = append(sets, setting{"gem:mirror", ops[i+1]})
			}
		}
	case "dotnet":
		if op(0) == "nuget" && op(1) == "add" && op(2) == "source" {
			sets = append(sets, setting{"nuget:source", op(3)})
		}
	case "composer":
		// composer config [-g] secure-http false; repos.NAME / repositories.NAME [TYPE] URL
		if op(0) == "config" {
			for i, a := range ops {
				switch {
				case a == "secure-http" && i+1 < len(ops):
					sets = append(sets, setting{"composer:secure-http", ops[i+1]})
				case strings.HasPrefix(a, "repos.") || strings.HasPrefix(a, "repositories."):
					for _, u := range ops[i+1:] {
						if strings.Contains(u, "://") {
							sets = append(sets, setting{"composer:repository", u})
						}
					}
				}
			}
		}
	case "mvn":
		// -DremoteRepositories=id::layout::URL,… (dependency:get)
		for _, a := range v.args {
			if list, ok := strings.CutPrefix(a, "-DremoteRepositories="); ok {
				for _, r := range strings.Split(list, ",") {
					if i := strings.LastIndex(r, "::"); i >= 0 {
						r = r[i+2:]
					}
					sets = append(sets, setting{"maven:url", r})
				}
			}
		}
	case "vagrant":
		if op(0) == "plugin" && op(1) == "install" {
			flagValues(v.args, 0, "plugin-source", func(u string) { sets = append(sets, setting{"gem:source", u}) })
		}
	case "apt", "apt-get", "aptitude":
		for _, a := range v.args {
			if a == "--allow-unauthenticated" || a == "--allow-insecure-repositories" || strings.Contains(a, "AllowUnauthenticated=true") ||
				strings.Contains(a, "AllowInsecureRepositories=true") {
				sets = append(sets, setting{"pkg:" + a, ""})
			}
		}
	case "dnf", "yum", "microdnf", "zypper", "rpm":
		for _, a := range v.args {
			if a == "--nogpgcheck" || a == "--no-gpg-checks" || a == "--nosignature" || a == "--nodigest" || strings.HasPrefix(a, "--setopt=gpgcheck=0") {
				sets = append(sets, setting{"pkg:" + a, ""})
			}
		}
	case "flatpak":
		if (op(0) == "remote-add" || op(0) == "remote-modify" || op(0) == "install") && hasLongFlag(v.args, "no-gpg-verify") {
			sets = append(sets, setting{"pkg:--no-gpg-verify", ""})
		}
	case "gradle", "gradlew", "./gradlew":
		// Gradle's dependency verification (verification-metadata.xml)
		// switched off or to lenient for the build.
		flagValues(v.args, 0, "dependency-verification", func(m string) {
			if m == "off" || m == "lenient" {
				sets = append(sets, setting{"pkg:--dependency-verification=" + m, ""})
			}
		})
	}
	return sets
}

// configFileTool names the tool whose configuration file abs is, or "".
func configFileTool(abs string) string {
	base := baseName(abs)
	switch {
	case base == ".npmrc" || base == ".yarnrc" || base == ".yarnrc.yml" || base == ".pnpmrc":
		return "npm"
	case base == "pip.conf" || base == "pip.ini":
		return "pip"
	case base == ".curlrc" || strings.HasSuffix(abs, "/curl/.curlrc") || strings.HasSuffix(abs, "/.config/curlrc"):
		return "curl"
	case base == ".wgetrc" || abs == "/etc/wgetrc":
		return "wget"
	case base == ".gemrc":
		return "gem"
	case base == ".condarc":
		return "conda"
	case pathEndsIn(abs, ".cargo/config.toml") || pathEndsIn(abs, ".cargo/config"):
		return "cargo"
	case strings.HasSuffix(abs, "/.ssh/config") || abs == "/etc/ssh/ssh_config" || strings.HasPrefix(abs, "/etc/ssh/ssh_config.d/"):
		return "ssh"
	case hookKind(abs) == "gitconfig" || base == ".gitmodules":
		return "git"
	}
	switch {
	case base == "settings.xml" && (strings.Contains(abs, "/.m2/") || strings.HasPrefix(abs, "/etc/maven/")):
		return "maven"
	case base == ".pre-commit-config.yaml":
		return "pre-commit"
	case base == ".gitlab-ci.yml" || base == ".gitlab-ci.yaml":
		return "gitlab-ci" // include: remote: templates
	case base == "Cargo.toml":
		return "cargo-manifest"
	case base == "Gemfile" || base == "gems.rb":
		return "gemfile"
	case base == "package.json":
		return "npm-manifest" // a dependency given as a tarball or git URL
	case base == "CMakeLists.txt" || strings.HasSuffix(base, ".cmake"):
		return "cmake" // file(DOWNLOAD URL …), FetchContent and ExternalProject URLs
	case base == "go.mod":
		return "gomod"
	case base == ".terraformrc" || base == "terraform.rc":
		return "terraform" // provider_installation mirrors
	}
	if eco, ok := manifestEcosystem(base); lockFile(base) && base != "go.sum" || ok && eco == ecoPyPI { // requirements*.txt / .lock / .in
		return "lock" // where each dependency is fetched from (go.sum names no URL)
	}
	return ""
}

// pathEndsIn reports whether path is rel or ends in "/"+rel: a path as
// written (.cargo/config.toml) or resolved.
func pathEndsIn(path, rel string) bool {
	return strings.HasSuffix(path, rel) && (len(path) == len(rel) || path[len(path)-len(rel)-1] == '/')
}

// manifestLinkKeys are package.json keys whose URLs are the package's own
// links, not where a dependency comes from.
var manifestLinkKeys = map[string]bool{"homepage": true, "url": true, "repository": true, "bugs": true, "funding": true,
	"$schema": true, "author": true, "email": true, "registry": true}

// fileSettings adds the settings of a config file's text (or of the part
// a command writes): key = value, key: value, key value (ssh, curl), and
// git's [section "sub"] headers.
func fileSettings(abs, text string, sets []setting) []setting {
	tool := configFileTool(abs)
	if tool == "" {
		return sets
	}
	switch tool {
	case "maven":
		// <mirror> and <repository> entries: each <url> is where
		// artifacts come from.
		for rest := text; len(sets) < 64; {
			i := strings.Index(rest, "<url>")
			if i < 0 {
				break
			}
			rest = rest[i+len("<url>"):]
			u, _, _ := strings.Cut(rest, "</url>")
			sets = append(sets, setting{"maven:url", strings.TrimSpace(u)})
		}
		return sets
	case "gitlab-ci":
		// include: - remote: URL: a template fetched and run as part of
		// the pipeline.
		for line := range strings.SplitSeq(text, "\n") {
			t := strings.TrimPrefix(strings.TrimSpace(line), "- ")
			if u, ok := strings.CutPrefix(t, "remote:"); ok && len(sets) < 64 {
				sets = append(sets, setting{"gitlab-ci:include", unquoteYAML(strings.TrimSpace(u))})
			}
		}
		return sets
	case "pre-commit", "cargo-manifest":
		// repo: URL (a hook repository); git = "URL" or registry-index
		// (a crate fetched from elsewhere than crates.io).
		for line := range strings.SplitSeq(text, "\n") {
			for _, key := range []string{"repo:", "git =", "git=", "registry-index =", "index ="} {
				if i := strings.Index(line, key); i >= 0 && len(sets) < 64 {
					u := strings.Trim(strings.TrimSpace(line[i+len(key):]), `"',{} `)
					u, _, _ = strings.Cut(u, `"`)
					sets = append(sets, setting{tool + ":" + strings.TrimRight(key, " =:"), u})
				}
			}
		}
		return sets
	}
	if tool == "gomod" {
		// replace old => new [version], alone or in a replace ( … ) block.
		block := false
		for line := range strings.SplitSeq(text, "\n") {
			t := strings.TrimSpace(line)
			switch {
			case t == "replace (":
				block = true
				continue
			case block && t == ")":
				block = false
				continue
			case strings.HasPrefix(t, "replace "):
				t = strings.TrimSpace(t[len("replace "):])
			case !block:
				continue
			}
			old, repl, ok := strings.Cut(t, "=>")
			oldMod, newMod := firstField(old), firstField(repl)
			if ok && foreignModule(oldMod, newMod) && len(sets) < 64 {
				sets = append(sets, setting{"go:replace", oldMod + "=" + newMod})
			}
		}
		return sets
	}
	if tool == "npm-manifest" {
		// "name": "URL": a dependency fetched from that URL instead of
		// the registry. The package's own links are not dependencies.
		for line := range strings.SplitSeq(text, ",") {
			k, val, ok := strings.Cut(line, ":")
			k = strings.Trim(strings.TrimSpace(k), `"{ `)
			val = strings.Trim(strings.TrimSpace(val), `"} `)
			if !ok || manifestLinkKeys[k] || !strings.Contains(val, "://") || len(sets) >= 64 {
				continue
			}
			sets = append(sets, setting{"lock:resolved", val})
		}
		return sets
	}
	if tool == "lock" || tool == "gemfile" || tool == "cmake" {
		// Every URL a lockfile or a Gemfile names is a place a dependency
		// comes from.
		eachURL(text, func(u string) bool {
			sets = append(sets, setting{tool + ":resolved", u})
			return len(sets) <= 64
		})
		return sets
	}
	section := ""
	for line := range strings.SplitSeq(text, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		if tool == "git" && t[0] == '[' && strings.HasSuffix(t, "]") {
			name, sub, hasSub := strings.Cut(strings.Trim(t, "[]"), " ")
			section = strings.ToLower(name) + "."
			if hasSub {
				section += strings.Trim(strings.TrimSpace(sub), `"`) + "."
			}
			continue
		}
		var k, val string
		switch i := strings.IndexAny(t, "=:"); {
		case tool == "ssh" || tool == "curl":
			k, val, _ = strings.Cut(t, " ")
			if kk, vv, ok := strings.Cut(t, "="); ok && !strings.Contains(kk, " ") {
				k, val = kk, vv
			}
		case tool == "npm" && strings.HasPrefix(t, "registry "): // .yarnrc v1: registry "https://…"
			k, val = "registry", t[len("registry "):]
		case i > 0:
			k, val = t[:i], t[i+1:]
			if tool == "npm" && t[i] == ':' && strings.HasPrefix(t, "@") {
				// @scope:registry=https://… keeps its colon in the key.
				if j := strings.IndexByte(t, '='); j > 0 {
					k, val = t[:j], t[j+1:]
				}
			}
		default:
			k = t // a flag alone: .curlrc's "insecure"
		}
		k = strings.TrimSpace(strings.TrimLeft(k, "- "))
		sets = append(sets, setting{tool + ":" + section + k, strings.TrimSpace(val)})
	}
	return sets
}

// toolOf names the tool of a setting key for a message.
func toolOf(key string) string {
	tool, k, _ := strings.Cut(key, ":")
	switch tool {
	case "env":
		return "$" + strings.ToUpper(k)
	case "lock":
		return "a lockfile's dependency"
	case "cmake":
		return "a CMake build's download"
	case "brew":
		return "a Homebrew tap"
	case "pre-commit":
		return "a pre-commit hook"
	case "helm":
		return "helm's chart repositories"
	case "gitlab-ci":
		return "the pipeline's included templates"
	case "cargo-manifest":
		return "a Cargo dependency"
	case "gemfile":
		return "a Gemfile source"
	}
	return tool
}

// afterArg returns the arguments after the first that equals a.
func afterArg(args []string, a string) []string {
	for i, x := range args {
		if x == a {
			return args[i+1:]
		}
	}
	return nil
}

// firstField is the first blank-separated word of s, or "".
func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

// checkScopeRegistryDeleted judges npm config delete @scope:registry: the
// scope's packages then resolve on the public registry, where anyone can
// publish a package of that name (dependency confusion).
func (s *scan) checkScopeRegistryDeleted(cs *cmdScan, v *cmdView) {
	ops := v.plainOperands()
	if len(ops) < 3 || ops[0] != "config" || ops[1] != "delete" && ops[1] != "rm" {
		return
	}
	if key := ops[2]; strings.HasPrefix(key, "@") && strings.HasSuffix(key, ":registry") {
		s.add(rSupplySource, v.prog+" config delete "+key+": packages of "+strings.TrimSuffix(key, ":registry")+" then come from the public registry, where anyone can publish that name",
			v.prog+" "+evJoin(v.args))
	}
}
