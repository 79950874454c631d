package heuristics

import (
	"path"
	"slices"
	"strings"

	"github.com/parapet-dev/parapet/rules/shell"
)

// Remote code execution: code fetched over the network and run without a
// chance to review it.

// isFetcher reports whether v writes network content to its stdout or a
// file: curl, wget, netcat and friends, or an interpreter one-liner that
// downloads.
func isFetcher(v *cmdView) bool {
	switch v.prog {
	case "curl", "wget", "fetch", "http", "https", "xh", "httpie", "lwp-request", "lwp-download", "GET",
		"aria2c", "lynx", "w3m", "links", "nc", "ncat", "netcat", "telnet", "socat", "tftp", "atftp", "ftpget":
		return true
	case "scp", "rsync":
		src, _ := copyFromHost(v)
		return src != ""
	case "openssl":
		return len(v.args) > 0 && v.args[0] == "s_client"
	case "aws", "gsutil", "gcloud", "s5cmd":
		return bucketToStdout(v)
	}
	return v.codeAny(traitFetch | traitModFetch)
}

// bucketToStdout reports an object store CLI that writes a bucket's
// object to its standard output: aws s3 cp s3://b/k -, gsutil cat
// gs://b/k, gcloud storage cat gs://b/k, s5cmd cat s3://b/k.
func bucketToStdout(v *cmdView) bool {
	ops := v.plainOperands()
	switch v.prog {
	case "aws":
		return len(ops) >= 4 && ops[0] == "s3" && ops[1] == "cp" && strings.HasPrefix(ops[2], "s3://") && ops[len(ops)-1] == "-"
	case "gsutil", "s5cmd":
		return len(ops) >= 2 && ops[0] == "cat"
	case "gcloud":
		return len(ops) >= 3 && ops[0] == "storage" && ops[1] == "cat"
	}
	return false
}

// moduleFlags returns the module options of perl (-MLWP::Simple) and ruby
// (-ropen-uri, -rsocket), which load network code outside the -e text.
func moduleFlags(v *cmdView) string {
	if v.kind != "perl" && v.kind != "ruby" {
		return ""
	}
	for _, a := range v.args {
		if strings.HasPrefix(a, "-M") || strings.HasPrefix(a, "-r") && len(a) > 2 {
			return a
		}
	}
	return ""
}

var fetchMarkers = []string{
	"urllib", "urlopen", "requests.get", "requests.post", "http.client", "httpx.", // python
	"lwp::", "lwp", "http::tiny", "getstore", "getprint", "get(\"http", "get('http", // perl
	"open-uri", "net::http", "uri.open", // ruby
	"https.get", "http.get", "fetch(", "axios", "require('https')", "require(\"https\")", "require('http')", "require(\"http\")", // node
	"file_get_contents(\"http", "file_get_contents('http", "curl_exec", // php
	"source(\"http", "source('http", "source_url(", "download.file(", // R
	"invoke-webrequest", "iwr ", "invoke-restmethod", "irm ", "downloadstring", "net.webclient", "downloadfile", // powershell
}

// fetcherWords are program names that, inside a substitution, mean the
// substituted text comes from the network.
var fetcherWords = []string{"curl", "wget", "fetch", "lwp-request", "aria2c", "xh", "nc", "ncat", "netcat", "urlopen", "urllib", "Invoke-WebRequest", "iwr", "DownloadString"}

func mentionsFetcher(s string) bool {
	for _, w := range fetcherWords {
		if containsWord(s, w) {
			return true
		}
	}
	return false
}

// firstHost returns the host of the first URL or host-like operand of v,
// for messages.
func firstHost(args []string) string {
	for _, a := range args {
		if h := urlHost(a); h != "" {
			return h
		}
	}
	for _, a := range args {
		if a != "" && a[0] != '-' && looksLikeHost(a) {
			h, _, _ := strings.Cut(a, "/")
			return h
		}
	}
	return "the network"
}

// urlHost returns the lower-case host of a URL-looking word, or "".
func urlHost(w string) string {
	i := strings.Index(w, "://")
	if i < 0 {
		return ""
	}
	return hostAfterScheme(w[i+3:])
}

// hostAfterScheme is urlHost for the text after "://", for callers that
// already found it.
func hostAfterScheme(rest string) string {
	if at := strings.IndexByte(rest, '@'); at >= 0 {
		if sl := strings.IndexAny(rest, "/?#"); sl < 0 || at < sl {
			rest = rest[at+1:]
		}
	}
	end := strings.IndexAny(rest, "/?#")
	if end >= 0 {
		rest = rest[:end]
	}
	if strings.HasPrefix(rest, "[") { // IPv6 literal
		if j := strings.IndexByte(rest, ']'); j > 0 {
			return strings.ToLower(rest[1:j])
		}
	}
	if c := strings.LastIndexByte(rest, ':'); c >= 0 {
		rest = rest[:c]
	}
	return strings.TrimSuffix(strings.ToLower(rest), ".")
}

func looksLikeHost(a string) bool {
	h, _, _ := strings.Cut(a, "/")
	h, _, _ = strings.Cut(h, ":")
	if !strings.Contains(h, ".") || strings.HasPrefix(h, ".") || strings.HasSuffix(h, ".") || strings.ContainsAny(h, " @$`'\"=") {
		return false
	}
	return strings.IndexFunc(h, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }) >= 0
}

func (s *scan) checkRCE(cs *cmdScan) {
	if !s.enabled(rRCEPipe) && !s.enabled(rRCESubstitute) && !s.enabled(rRCESaveExec) && !s.enabled(rRCEInlineFetch) && !s.enabled(rRCECloneExec) {
		return
	}
	var savedBuf [4]savedFile // the files of a usual line, without a heap allocation
	saved := savedBuf[:0]
	var cloned []savedFile
	for i := range cs.views {
		v := &cs.views[i]
		if len(cloned) > 0 {
			if f, ok := cs.executesSaved(v, cloned); ok {
				s.add(rRCECloneExec, "clones "+f.dir+" from "+f.host+" and runs "+v.prog+" from it in the same step: read what it runs first, then run it in a separate action",
					v.c.Name+" "+evJoin(v.args))
			}
		}
		if f, ok := cs.clonedRepo(v); ok {
			cloned = append(cloned, f)
		}
		known := len(saved)
		if isFetcher(v) {
			cs.downloadsIntoRunner(s, v)
			s.checkFetchedPatch(cs, v)
			if runner := cs.stdinRunnerAfter(v); runner != nil {
				s.add(rRCEPipe, "pipes a download from "+firstHost(v.args)+" into "+runner.prog+
					": download the script to a file, review it, then run the local file", v.c.Name+" … | "+runner.prog)
			}
			saved = appendSaved(saved, v)
			saved = cs.appendPiped(saved, v)
		}
		if f, ok := cs.extractsSaved(v, saved); ok {
			saved = append(saved, f)
		}
		if f, ok := compilesSaved(v, saved); ok {
			saved = append(saved, f)
		}
		for _, f := range saved[known:] {
			if f.dir != "" && f.dir == cs.home {
				s.add(rPersistShellRC, "unpacks a download from "+f.host+" into your home: it can replace .bashrc, .profile and the other files that run at every login; unpack it into a directory of its own and look at it first",
					v.c.Name+" "+evJoin(v.args))
			}
			// Unpacked where programs run by name or tools load plugins
			// (~/.local/bin, ~/.vscode/extensions), as curl -o there is.
			if d := programDir(f.dir+"/x", cs.home); f.dir != "" && d != "" && f.host != "" && !codeHost(&s.an.trusted, f.host) && !officialSource(f.host) && s.enabled(rRCEPackageURL) {
				s.add(rRCEPackageURL, "unpacks a download from "+f.host+" into "+d+", a host that is not trusted: what it holds runs when the tool loads it; check that the host is the tool's own and the archive's checksum, or add the host to trusted_hosts",
					v.c.Name+" "+evJoin(v.args))
			}
		}
		// Interpreter code holds no shell substitutions (a backtick is a
		// JavaScript template literal); the commands it runs are
		// followed as nested commands.
		if code, ok := executedText(v); ok && !(v.hasCode && v.kind != "shell") && hasSubstitution(code) && mentionsFetcher(code) {
			s.add(rRCESubstitute, "runs the output of a download as code ("+progLabel(v)+
				"): save the script to a file, review it, then run the local file", code)
		}
		if opt, text, ok := configSubstitution(v); ok && mentionsFetcher(text) {
			s.add(rRCESubstitute, v.prog+" "+opt+" loads a download as its settings or start-up script, which name what it fetches and runs: "+
				"save the file, review it, then point "+v.prog+" at the local copy", text)
		}
		if len(saved) > 0 {
			if f, ok := cs.executesSaved(v, saved); ok {
				what := f.name
				if what == "" {
					what = "files into " + f.dir
				}
				s.add(rRCESaveExec, "downloads "+what+" from "+f.host+" and runs it in the same step: "+
					"download first, review the file, then run it in a separate action", v.c.Name+" "+evJoin(v.args))
			}
		}
		if v.codeAny(traitFetch|traitModFetch) && v.codeAll(traitExec) {
			s.add(rRCEInlineFetch, "a "+v.prog+" one-liner downloads code and executes it: fetch the code to a file and review it first", v.code)
		}
	}
	if len(saved) > 0 && s.enabled(rRCESaveExec) {
		if f, u, ok := cs.wiresSaved(s, saved); ok {
			s.add(rRCESaveExec, "downloads "+f.name+" from "+f.host+" and has "+u.prog+" wire it into what the build or package manager runs by itself: "+
				"it runs unseen at the next build or install; download it first, review it, then wire it in a separate action", u.c.Name+" "+evJoin(u.args))
		}
	}
}

// checkFetchedPatch judges a download piped into patch, git apply or
// git am: its hunks change the project's (or a vendored dependency's)
// code without anyone having read them.
func (s *scan) checkFetchedPatch(cs *cmdScan, v *cmdView) {
	for _, i := range cs.after(v) {
		u := cs.view(i)
		if u == nil || u.prog != "patch" && u.prog != "git" {
			continue
		}
		if sub, _ := gitSubcommand(u.args); u.prog == "git" && sub != "apply" && sub != "am" {
			continue
		}
		h := firstHost(v.args)
		if h == "" || isLoopbackHost(h) || codeHost(&s.an.trusted, h) || !s.enabled(rSupplyTamper) {
			return
		}
		s.add(rSupplyTamper, u.prog+" applies a patch downloaded from "+h+": its hunks change code no one has read; download it, review it, then apply it",
			v.c.Name+" … | "+u.prog)
		return
	}
}

// wiresSaved returns a file the line downloads from a host that is not
// trusted and a command of the same line, before or after the download,
// that names it in a file tools run by themselves: npm pkg set
// scripts.x="node dl.js", a sed into pyproject.toml that makes it the
// build backend, an echo into a Makefile.
func (cs *cmdScan) wiresSaved(s *scan, saved []savedFile) (savedFile, *cmdView, bool) {
	for i := range cs.views {
		u := &cs.views[i]
		if !cs.writesRunnerSettings(u) {
			continue
		}
		args := strings.Join(u.args, " ")
		for _, f := range saved {
			stem := strings.TrimSuffix(f.name, path.Ext(f.name))
			if f.name == "" || f.dir != "" || len(stem) < 4 || s.an.trusted.match(f.host) || officialSource(f.host) {
				continue
			}
			if strings.Contains(args, f.name) || strings.Contains(args, stem) {
				return f, u, true
			}
		}
	}
	return savedFile{}, nil, false
}

// writesRunnerSettings reports a command that writes where a tool reads
// what to run by itself: npm pkg set, or a write (redirection, tee, an
// in-place edit) into a file of hookKind or a build's settings.
func (cs *cmdScan) writesRunnerSettings(u *cmdView) bool {
	if (u.prog == "npm" || u.prog == "pnpm" || u.prog == "yarn") && len(u.args) > 1 && u.args[0] == "pkg" && u.args[1] == "set" {
		return true
	}
	if files, _, ok := inPlaceScripts(u); ok {
		for _, f := range files {
			if hookKind(f) != "" || buildSettingsFile([]string{f}) {
				return true
			}
		}
		return false
	}
	for _, t := range cs.writeTargets(u) {
		if hookKind(t) != "" || buildSettingsFile([]string{t}) {
			return true
		}
	}
	return false
}

// downloadsIntoRunner reports a download saved into a file that a tool
// runs by itself (hookKind): a CI workflow, a git hook, a makefile, a
// Gradle init script. Its content is not on the line; whatever it holds
// runs at the next push, commit or build.
func (cs *cmdScan) downloadsIntoRunner(s *scan, v *cmdView) {
	if !s.enabled(rRCESaveExec) && !s.enabled(rRCEPackageURL) {
		return
	}
	for _, t := range cs.writeTargets(v) {
		abs := cs.resolveIn(v.c, t).Abs
		if kind := hookKind(abs); kind != "" && kind != "ci-env" && s.enabled(rRCESaveExec) {
			if h := firstHost(v.args); kind == "build-wrapper" && (s.an.trusted.match(h) || officialSource(h)) {
				continue // the wrapper from the build tool's own site
			}
			s.add(rRCESaveExec, "downloads "+baseName(abs)+" from "+firstHost(v.args)+" into a file that "+hookRunner(kind)+
				": what it holds runs unseen; download it elsewhere, review it, then put it in place", v.c.Name+" "+evJoin(v.args))
			return
		}
		if dir := programDir(abs, cs.home); dir != "" && s.enabled(rRCEPackageURL) {
			if h := firstHost(v.args); h != "" && !codeHost(&s.an.trusted, h) && !officialSource(h) {
				s.add(rRCEPackageURL, "installs "+baseName(abs)+" from "+h+" into "+dir+", a host that is not trusted: it runs whenever "+baseName(abs)+
					" is called; check that the host is the tool's own and the file's checksum, or add the host to trusted_hosts", v.c.Name+" "+evJoin(v.args))
				return
			}
		}
	}
}

// stdinRunnerAfter returns the first command after v in its pipeline that
// executes its standard input, or nil.
func (cs *cmdScan) stdinRunnerAfter(v *cmdView) *cmdView {
	for _, i := range cs.after(v) {
		if d := cs.view(i); d != nil && readsProgramFromStdin(d) {
			return d
		}
	}
	return nil
}

// checkPackageFromURL escalates installs that bypass the package registry:
// pip install https://…/x.tar.gz, npm install git+https://…, cargo install
// --git URL, ansible-galaxy collection install URL: their build hooks or
// tasks run arbitrary code; vagrant box add URL: the image boots.
func (s *scan) checkPackageFromURL(cs *cmdScan) {
	if !s.enabled(rRCEPackageURL) {
		return
	}
	for i := range cs.views {
		v := &cs.views[i]
		if ext := editorExtensionFile(v); ext != "" {
			s.add(rRCEPackageURL, v.prog+" installs the extension "+ext+" from a file, not from the marketplace: it runs with the editor's rights; install it from the marketplace or review it first",
				v.prog+" "+evJoin(v.args))
			return
		}
		if u := remoteScript(v); u != "" {
			if h := urlHost(u); h == "" || !codeHost(&s.an.trusted, h) {
				s.add(rRCEPackageURL, v.prog+" runs "+u+" straight from the network: its imports and code run with your rights; download it and review it first",
					v.prog+" "+evJoin(v.args))
				return
			}
		}
		if !isPackageInstall(v) {
			continue
		}
		for _, op := range packageSpecs(v) {
			if strings.Contains(op, "://") || strings.HasPrefix(op, "git+") || strings.HasPrefix(op, "github:") {
				host := urlHost(strings.TrimPrefix(op, "git+"))
				if host != "" && s.an.trusted.match(host) {
					continue
				}
				s.add(rRCEPackageURL, v.prog+" installs "+op+" straight from a URL: its install hooks run code; check the source or install from the registry", v.prog+" "+evJoin(v.args))
				return
			}
		}
		if list := remoteRequirements(v, s.an.trusted); list != "" {
			s.add(rRCEPackageURL, v.prog+" installs what "+list+" lists, a file on a host that is not trusted: whoever serves it picks the packages; download it and review it first",
				v.prog+" "+evJoin(v.args))
			return
		}
		if index, host := untrustedIndex(v, s.an.trusted); index != "" {
			s.add(rRCEPackageURL, v.prog+" installs from the package index "+index+" on "+host+", which is not trusted: an index can serve any code under a package's name; use the registry or add the host to trusted_hosts",
				v.prog+" "+evJoin(v.args))
			return
		}
	}
}

// remoteScript returns the URL a runtime runs as its program (deno
// run|install|compile URL, bun run URL), or "".
func remoteScript(v *cmdView) string {
	if v.prog != "deno" && v.prog != "bun" {
		return ""
	}
	ops := v.plainOperands()
	if len(ops) < 2 || !(ops[0] == "run" || v.prog == "deno" && (ops[0] == "install" || ops[0] == "compile")) {
		return ""
	}
	if u := ops[1]; strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return u
	}
	return ""
}

// untrustedIndex returns the package index an install is pointed at
// (pip -i / --index-url / --extra-index-url / -f / --find-links, npm
// --registry, gem --source) and its host, when the host is not trusted.
func untrustedIndex(v *cmdView, trusted hostSet) (index, host string) {
	check := func(u string) {
		if index != "" || !strings.Contains(u, "://") {
			return
		}
		if h := urlHost(u); h != "" && !trusted.match(h) {
			index, host = u, h
		}
	}
	switch v.prog {
	case "npm", "pnpm", "yarn", "bun", "cnpm":
		flagValues(v.args, 0, "registry", check)
	case "gem":
		flagValues(v.args, 's', "source", check)
	case "dotnet", "nuget":
		// dotnet add package X --source URL, dotnet tool install
		// --add-source URL, nuget install -Source URL.
		flagValues(v.args, 's', "source", check)
		flagValues(v.args, 0, "add-source", check)
		for i, a := range v.args {
			if strings.EqualFold(a, "-Source") && i+1 < len(v.args) {
				check(v.args[i+1])
			}
		}
	default:
		flagValues(v.args, 'i', "index-url", check)
		flagValues(v.args, 0, "extra-index-url", check)
		flagValues(v.args, 'f', "find-links", check)
		flagValues(v.args, 0, "index", check) // uv --index
	}
	return index, host
}

// editorExtensionFile returns the .vsix file (or URL) an editor is told
// to install (code --install-extension x.vsix), or "": marketplace ids
// (publisher.name) are everyday.
func editorExtensionFile(v *cmdView) string {
	switch v.prog {
	case "code", "code-insiders", "codium", "cursor", "windsurf", "code-oss":
	default:
		return ""
	}
	file := ""
	flagValues(v.args, 0, "install-extension", func(x string) {
		if strings.HasSuffix(strings.ToLower(x), ".vsix") || strings.Contains(x, "://") {
			file = x
		}
	})
	return file
}

// packageSpecs returns the words of an install that name packages. A
// runner (npx, uvx, pnpm dlx) names one, its first operand or --package
// / --from / --spec value: what follows are the program's own arguments
// (npx wait-on https://host).
func packageSpecs(v *cmdView) []string {
	op := firstOperand(v.args)
	runner := v.prog == "npx" || v.prog == "bunx" || v.prog == "pnpx" || v.prog == "uvx" || op == "dlx" || op == "exec" || op == "x" ||
		v.prog == "pipx" && op == "run" || v.prog == "uv" && (op == "run" || op == "tool")
	if !runner {
		return operands(v.args, "ricte", []string{"--index-url", "--extra-index-url", "--requirement", "--constraint", "--target", "--registry"})
	}
	var specs []string
	for _, f := range []string{"package", "from", "spec", "with"} {
		flagValues(v.args, 0, f, func(x string) { specs = append(specs, x) })
	}
	flagValues(v.args, 'p', "", func(x string) { specs = append(specs, x) })
	ops := operands(v.args, "p", []string{"--package", "--from", "--spec", "--with", "--registry", "--python", "--index-url", "--index"})
	if len(ops) > 0 && (ops[0] == "dlx" || ops[0] == "exec" || ops[0] == "x" || ops[0] == "run") && v.prog != "npx" && v.prog != "uvx" {
		ops = ops[1:]
	}
	if len(ops) > 0 {
		specs = append(specs, ops[0])
	}
	return specs
}

// remoteRequirements returns a requirements or constraints file given by
// URL (pip install -r https://…) on a host that is not trusted, or "".
func remoteRequirements(v *cmdView, trusted hostSet) string {
	found := ""
	check := func(u string) {
		if h := urlHost(u); found == "" && strings.Contains(u, "://") && h != "" && !isLoopbackHost(h) && !trusted.match(h) {
			found = u
		}
	}
	switch v.prog {
	case "conda", "mamba", "micromamba":
		flagValues(v.args, 'f', "file", check) // conda env create -f URL
	default:
		flagValues(v.args, 'r', "requirement", check)
		flagValues(v.args, 'c', "constraint", check)
	}
	return found
}

func isPackageInstall(v *cmdView) bool {
	op := firstOperand(v.args)
	switch v.prog {
	case "pip", "pip3", "pipx", "uv", "poetry", "easy_install":
		if v.prog == "uv" && op == "pip" {
			ops := v.plainOperands()
			return len(ops) > 1 && ops[1] == "install"
		}
		return op == "install" || op == "add" || v.prog == "pipx" && op == "run" || v.prog == "uv" && op == "run" && hasLongFlag(v.args, "with") ||
			v.prog == "uv" && op == "tool" // uv tool install|run --from SPEC
	case "conda", "mamba", "micromamba":
		ops := v.plainOperands()
		return len(ops) >= 2 && ops[0] == "env" && (ops[1] == "create" || ops[1] == "update") // -f environment.yml
	case "npm", "pnpm", "yarn", "bun", "cnpm":
		return op == "install" || op == "i" || op == "add" || op == "dlx" || op == "exec" || op == "x"
	case "npx", "bunx", "pnpx", "uvx":
		// Each fetches a package and runs it at once (uvx --from URL).
		return true
	case "gem", "cargo":
		return op == "install" // cargo install --git URL builds and installs what the repository holds
	case "ansible-galaxy":
		ops := v.plainOperands()
		return len(ops) >= 2 && (ops[0] == "collection" || ops[0] == "role") && ops[1] == "install" || op == "install"
	case "vagrant":
		ops := v.plainOperands()
		return len(ops) >= 2 && ops[0] == "box" && ops[1] == "add" // a VM image, booted by vagrant up
	case "dotnet":
		ops := v.plainOperands()
		return len(ops) >= 2 && (ops[0] == "add" && ops[1] == "package" || ops[0] == "tool" && (ops[1] == "install" || ops[1] == "update")) ||
			len(ops) >= 1 && ops[0] == "restore"
	case "nuget":
		return op == "install" || op == "restore"
	}
	return v.kind == "python" && hasShortFlag(v.args, 'm') && containsArg(v.args, "pip") && containsArg(v.args, "install")
}

func progLabel(v *cmdView) string {
	if v.prog == "" {
		return "a command name computed from a download"
	}
	return v.prog
}

// executedText returns the text an executor will run: the inline program
// of an interpreter, the script operand, every argument of eval / source,
// or the name of a command computed at run time.
func executedText(v *cmdView) (string, bool) {
	if v.prog == "" {
		return v.c.Name, true
	}
	switch v.prog {
	case "eval", "source", ".", "exec":
		if v.prog != "eval" && v.prog != "exec" && len(v.args) > 0 && isStdinPath(v.args[0]) {
			// source /dev/stdin <<< "$(curl …)": the here-string is the script.
			for _, r := range v.c.Redirects {
				if text, ok := r.Input(); ok {
					return text, true
				}
			}
		}
		return strings.Join(v.args, " "), len(v.args) > 0
	case "make", "gmake":
		// make -f <(curl …): the recipes are the download's.
		var file string
		flagValues(v.args, 'f', "file", func(f string) { file = f })
		flagValues(v.args, 0, "makefile", func(f string) { file = f })
		return file, file != ""
	}
	if v.prog == "ssh" {
		// ssh HOST 'bash -s' < <(curl …): the remote shell's program is
		// the download, through ssh's input.
		if t, ok := stdinSubstitution(v); ok && remoteReadsProgram(v) {
			return t, true
		}
		return "", false
	}
	if v.kind == "" {
		return "", false
	}
	if code, ok := inlineCode(v); ok {
		return code, true
	}
	// bash -s < <(curl …): the program is the substitution's output.
	if t, ok := stdinSubstitution(v); ok && readsProgramFromStdin(v) {
		return t, true
	}
	// The script file operand: bash <(curl …), python3 <(wget -O- …),
	// bun run <(curl …).
	for i, a := range v.args {
		if i == 0 && a == "run" && (v.prog == "deno" || v.prog == "bun") {
			continue
		}
		if len(a) > 0 && a[0] != '-' {
			return a, true
		}
		if hasSubstitution(a) {
			return a, true
		}
	}
	return "", false
}

// configOptions returns, for a program, the options that name a
// settings file or start-up script whose contents decide what it fetches
// or runs: Maven's settings (repositories, mirrors), Gradle's init
// scripts, npm's user config (registry, scripts' shell), ssh's config
// (ProxyCommand), a shell's or editor's start-up file, a compose file.
func configOptions(prog string) []string {
	switch prog {
	case "mvn", "mvnw":
		return []string{"-s", "--settings", "-gs", "--global-settings"}
	case "gradle", "gradlew":
		return []string{"-I", "--init-script", "-c", "--settings-file", "-b", "--build-file"}
	case "npm", "pnpm":
		return []string{"--userconfig", "--globalconfig"}
	case "ssh", "scp", "sftp":
		return []string{"-F"}
	case "bash":
		return []string{"--rcfile", "--init-file"}
	case "vim", "nvim":
		return []string{"-u", "-S"}
	case "tmux":
		return []string{"-f"}
	case "docker", "docker-compose", "podman-compose":
		return []string{"-f", "--file"}
	}
	return nil
}

// configSubstitution returns an option of v that names a settings file
// (configOptions) given as a process substitution, and the
// substitution: mvn -s <(curl …), gradle --init-script=<(wget -O- …).
func configSubstitution(v *cmdView) (opt, text string, ok bool) {
	opts := configOptions(v.prog)
	if len(opts) == 0 {
		return "", "", false
	}
	for i, a := range v.args {
		if !strings.Contains(a, "<(") {
			continue
		}
		if k, val, cut := strings.Cut(a, "="); cut && slices.Contains(opts, k) {
			return k, val, true
		}
		if i > 0 && slices.Contains(opts, v.args[i-1]) {
			return v.args[i-1], a, true
		}
	}
	return "", "", false
}

// stdinSubstitution returns the process substitution v reads as its
// input (< <(cmd)), or false.
func stdinSubstitution(v *cmdView) (string, bool) {
	for _, r := range v.c.Redirects {
		if r.Op == "<" && strings.HasPrefix(r.Target, "<(") {
			return r.Target, true
		}
	}
	return "", false
}

// remoteReadsProgram reports whether the command ssh runs on the other
// host is a shell or interpreter that reads its program from its input:
// ssh HOST bash -s, ssh HOST 'sh', ssh HOST python3 -.
func remoteReadsProgram(v *cmdView) bool {
	ops := operands(v.args, "bcDEeFIiJLlmOopQRSWw", nil)
	if len(ops) < 2 {
		return false
	}
	words := strings.Fields(strings.Join(ops[1:], " "))
	if len(words) == 0 {
		return false // ssh HOST '': no command
	}
	switch baseName(words[0]) {
	case "sh", "bash", "dash", "zsh", "ksh", "ash", "python", "python3", "perl", "ruby", "node":
	default:
		return false
	}
	for _, w := range words[1:] {
		if w != "-s" && w != "-" && w != "-x" && w != "-e" && w != "-l" {
			return false
		}
	}
	return true
}

var execMarkers = []string{
	"exec(", "eval(", "eval ", "subprocess", "os.system", "os.popen", "pty.spawn", "system(", "popen(",
	"child_process", "execsync", "spawn(", "function(", "shell_exec", "passthru", "proc_open",
	"iex", "invoke-expression", "`", "compile(", "runpy", "importlib",
	// Replacing the process with a program, or running one from memory.
	"execv", "execl", "spawnv", "spawnl", "memfd_create", "pcntl_exec",
	// Deserialising runs the code the data names.
	"pickle.load", "marshal.load", "dill.load", "joblib.load",
	// Bytes made executable and called as machine code (ctypes over an
	// mmap with PROT_EXEC, mprotect, VirtualAlloc).
	"cfunctype", "prot_exec", "mprotect", "virtualalloc",
	// PHP's and R's way to run a file or a URL as code.
	"include \"", "include '", "include(", "include_once", "require_once", "source(",
	// eval handed over as a function: fetch(u).then(r => r.text()).then(eval).
	"(eval)",
}

type savedFile struct {
	name string // base name of the saved file
	host string
	// dir, when set, is the absolute directory a download was unpacked
	// into (curl … | tar x -C dir): any file under it came from host.
	dir string
}

// appendPiped records the files the commands after the fetcher v in its
// pipeline write what it downloaded to: curl … | sed … > x.sh, curl … |
// tee x.sh, and the directory curl … | tar x [-C dir] unpacks into.
func (cs *cmdScan) appendPiped(saved []savedFile, v *cmdView) []savedFile {
	for _, i := range cs.after(v) {
		d := cs.view(i)
		if d == nil {
			continue
		}
		if dir, ok := cs.unpackDir(d, ""); ok {
			saved = append(saved, savedFile{dir: dir, host: firstHost(v.args)})
			continue
		}
		if out, ok := compilesStdin(d); ok {
			// curl … | gcc -x c -o /tmp/x -: the program built is the download.
			saved = append(saved, savedFile{name: baseName(out), host: firstHost(v.args)})
			continue
		}
		var files []string
		if d.prog == "tee" {
			files = operands(d.args, "", nil)
		}
		if d.prog == "dd" {
			for _, a := range d.args {
				if strings.HasPrefix(a, "of=") {
					files = append(files, a[3:])
				}
			}
		}
		for _, r := range d.c.Redirects {
			if (r.Op == ">" || r.Op == ">>" || r.Op == ">|" || r.Op == "&>") && (r.FD == "" || r.FD == "1") {
				files = append(files, r.Target)
			}
		}
		for _, f := range files {
			if f != "/dev/null" && !isStdinPath(f) {
				saved = append(saved, savedFile{name: baseName(f), host: firstHost(v.args)})
			}
		}
	}
	return saved
}

// extractsSaved returns the directory v unpacks a saved archive into
// (tar xf x.tgz -C dir, unzip x.zip -d dir), as a saved file of the
// archive's host.
func (cs *cmdScan) extractsSaved(v *cmdView, saved []savedFile) (savedFile, bool) {
	if len(saved) == 0 || v.prog != "tar" && v.prog != "bsdtar" && v.prog != "unzip" {
		return savedFile{}, false
	}
	var archive string
	if v.prog == "unzip" {
		if ops := operands(v.args, "dxP", nil); len(ops) > 0 {
			archive = ops[0]
		}
	} else {
		flagValues(v.args, 'f', "file", func(a string) { archive = a })
		if first := firstOperand(v.args); archive == "" && oldStyleTar(first) && strings.ContainsRune(first, 'f') {
			if i := slices.Index(v.args, first); i+1 < len(v.args) {
				archive = v.args[i+1] // tar xzf FILE: f's value follows the letters
			}
		}
	}
	for _, f := range saved {
		if archive != "" && f.name != "" && baseName(archive) == f.name {
			if dir, ok := cs.unpackDir(v, archive); ok {
				return savedFile{dir: dir, host: f.host}, true
			}
		}
	}
	return savedFile{}, false
}

// clonedRepo returns the directory git clone URL [DIR] writes a remote
// repository into, as a saved file of the URL's host.
func (cs *cmdScan) clonedRepo(v *cmdView) (savedFile, bool) {
	url, dir, ok := cs.cloneOf(v)
	if !ok {
		return savedFile{}, false
	}
	host := gitRemoteHost(url)
	if host == "" {
		return savedFile{}, false // a local repository
	}
	return savedFile{dir: dir, host: host}, true
}

// cloneOf returns the repository a git clone in v fetches and the
// absolute directory it writes (the repository's name when none is
// given).
func (cs *cmdScan) cloneOf(v *cmdView) (url, dir string, ok bool) {
	if v.prog != "git" {
		return "", "", false
	}
	sub, args := gitSubcommand(v.args)
	if sub != "clone" {
		return "", "", false
	}
	ops := operands(args, "obcju", []string{"--origin", "--branch", "--config", "--jobs", "--upload-pack", "--template",
		"--reference", "--separate-git-dir", "--depth", "--shallow-since", "--shallow-exclude", "--filter", "--server-option"})
	if len(ops) == 0 {
		return "", "", false
	}
	dir = strings.TrimSuffix(baseName(strings.TrimRight(ops[0], "/")), ".git")
	if len(ops) > 1 {
		dir = ops[1]
	}
	return ops[0], cs.resolveIn(v.c, dir).Abs, true
}

// compilesSaved returns the program a compiler builds from a saved
// source (gcc x.c -o /tmp/x, go build -o x main.go): running it runs
// the download.
func compilesSaved(v *cmdView, saved []savedFile) (savedFile, bool) {
	switch v.prog {
	case "gcc", "cc", "clang", "g++", "c++", "clang++", "tcc", "rustc", "go", "nim", "zig":
	default:
		return savedFile{}, false
	}
	out := "a.out"
	if v.prog == "go" || v.prog == "rustc" {
		out = ""
	}
	flagValues(v.args, 'o', "output", func(o string) { out = o })
	if out == "" {
		return savedFile{}, false
	}
	for _, a := range v.args {
		for _, f := range saved {
			if f.name != "" && !strings.HasPrefix(a, "-") && baseName(a) == f.name {
				return savedFile{name: baseName(out), host: f.host}, true
			}
		}
	}
	return savedFile{}, false
}

// compilesStdin returns the program a compiler builds from source it
// reads on its input (gcc -x c -o out -), when it does.
func compilesStdin(v *cmdView) (string, bool) {
	switch v.prog {
	case "gcc", "cc", "clang", "g++", "c++", "clang++", "tcc":
	default:
		return "", false
	}
	if !slices.Contains(v.args, "-") && !slices.Contains(v.args, "/dev/stdin") {
		return "", false
	}
	out := "a.out"
	flagValues(v.args, 'o', "output", func(o string) { out = o })
	return out, true
}

// dynamicLoader reports the dynamic linker run as a program
// (/lib64/ld-linux-x86-64.so.2 ./x): it loads and runs its operand, even
// from a file system mounted noexec.
func dynamicLoader(prog string) bool {
	return strings.HasPrefix(prog, "ld-linux") || strings.HasPrefix(prog, "ld-musl") || prog == "ld.so" || strings.HasPrefix(prog, "ld64.so")
}

// oldStyleTar reports tar's first word in the old style, letters with no
// dash (tar xzf a.tgz).
func oldStyleTar(w string) bool {
	return w != "" && w[0] != '-' && strings.Trim(w, "xtcvzjJfpoaOkmS") == ""
}

// unpackDir returns the absolute directory tar x or unzip unpacks into
// (-C / --directory, -d; else the command's own directory). archive is
// the file it reads, "" for tar reading stdin.
func (cs *cmdScan) unpackDir(v *cmdView, archive string) (string, bool) {
	dir := "."
	switch v.prog {
	case "tar", "bsdtar":
		first := firstOperand(v.args)
		extracts := hasShortFlag(v.args, 'x') || hasLongFlag(v.args, "extract") || hasLongFlag(v.args, "get") ||
			oldStyleTar(first) && strings.ContainsRune(first, 'x')
		if !extracts {
			return "", false
		}
		if archive == "" {
			reads := ""
			flagValues(v.args, 'f', "file", func(a string) { reads = a })
			if reads != "" && reads != "-" {
				return "", false // an archive of its own, not the pipe
			}
		}
		flagValues(v.args, 'C', "directory", func(d string) { dir = d })
	case "unzip":
		if archive == "" {
			return "", false // unzip cannot read a pipe
		}
		flagValues(v.args, 'd', "", func(d string) { dir = d })
	default:
		return "", false
	}
	return cs.resolveIn(v.c, dir).Abs, true
}

// appendSaved records files a fetcher writes: curl -o / -O, wget (-O),
// or a > redirection.
func appendSaved(saved []savedFile, v *cmdView) []savedFile {
	host := "" // firstHost(v.args), worked out once something is saved
	add := func(p string) {
		if p == "" || p == "-" || p == "/dev/null" || isStdinPath(p) {
			return
		}
		if host == "" {
			host = firstHost(v.args) // never "": "the network" at worst
		}
		saved = append(saved, savedFile{name: baseName(p), host: host})
	}
	remoteName := func() {
		for _, a := range v.args {
			if i := strings.Index(a, "://"); i >= 0 {
				rest := a[i+3:]
				if j := strings.IndexAny(rest, "?#"); j >= 0 {
					rest = rest[:j]
				}
				if j := strings.IndexByte(rest, '/'); j >= 0 && j+1 < len(rest) {
					add(baseName(rest[j:]))
				}
			}
		}
	}
	switch v.prog {
	case "curl":
		flagValues(v.args, 'o', "output", add)
		if hasFlag(v.args, 'O', "remote-name") || hasLongFlag(v.args, "remote-name-all") {
			remoteName()
		}
	case "wget":
		named := false
		flagValues(v.args, 'O', "output-document", func(p string) { named = true; add(p) })
		if !named {
			remoteName()
		}
	case "tftp", "atftp":
		// busybox tftp -g -r REMOTE [-l LOCAL] HOST; atftp -g -r … -l …;
		// tftp HOST -c get REMOTE [LOCAL].
		local := false
		flagValues(v.args, 'l', "local-file", func(p string) { local = true; add(p) })
		if !local {
			flagValues(v.args, 'r', "remote-file", func(p string) { add(baseName(p)) })
		}
		if ops := v.plainOperands(); len(ops) >= 3 && ops[1] == "get" {
			add(baseName(ops[len(ops)-1]))
		}
	case "ftpget":
		// ftpget [options] HOST LOCAL [REMOTE]
		if ops := operands(v.args, "uPp", []string{"--username", "--password", "--port"}); len(ops) >= 2 {
			add(ops[1])
		}
	case "scp", "rsync":
		// A copy from another host: the last operand, or the remote
		// file's name inside it when it is a directory.
		if src, dst := copyFromHost(v); src != "" {
			if dst == "." || strings.HasSuffix(dst, "/") {
				dst = baseName(src)
			}
			add(dst)
		}
	default:
		if code := v.code; v.codeAny(traitFetch) {
			// python -c "urllib.request.urlretrieve(url, 'x.py')": any
			// quoted file name in the code may be the saved file.
			for _, w := range strings.FieldsFunc(code, func(r rune) bool { return r == '\'' || r == '"' || r == ' ' || r == ',' || r == '(' || r == ')' }) {
				if strings.Contains(w, ".") && !strings.Contains(w, "://") && !strings.ContainsAny(w, "=;") {
					add(w)
				}
			}
		}
	}
	for _, r := range v.c.Redirects {
		if r.Op == ">" || r.Op == ">>" || r.Op == ">|" || r.Op == "&>" {
			if r.FD == "" || r.FD == "1" {
				add(r.Target)
			}
		}
	}
	return saved
}

// executesSaved reports whether v runs one of the saved files: ./x.sh,
// sh x.sh, python3 x.py, source x.sh, or a file under a directory a
// download was unpacked into.
func (cs *cmdScan) executesSaved(v *cmdView, saved []savedFile) (savedFile, bool) {
	match := func(p string) (savedFile, bool) {
		b := baseName(p)
		abs := ""
		for _, f := range saved {
			if f.name != "" && f.name == b {
				return f, true
			}
			if f.dir != "" {
				if abs == "" {
					abs = cs.resolveIn(v.c, p).Abs
				}
				if isBelow(abs, f.dir) {
					return f, true
				}
			}
		}
		return savedFile{}, false
	}
	if strings.Contains(v.c.Name, "/") && v.prog == baseName(v.c.Name) && v.c.Program == v.prog {
		if f, ok := match(v.c.Name); ok {
			return f, true
		}
	}
	if v.prog != "" && v.prog != baseName(v.c.Name) { // a wrapper ran it: sudo ./x.sh
		if f, ok := match(v.prog); ok {
			return f, true
		}
	}
	if dynamicLoader(v.prog) {
		if ops := operands(v.args, "", []string{"--library-path", "--preload", "--audit", "--argv0"}); len(ops) > 0 {
			return match(ops[0])
		}
		return savedFile{}, false
	}
	switch v.prog {
	case "source", ".", "exec":
		if len(v.args) > 0 {
			return match(v.args[0])
		}
		return savedFile{}, false
	case "jupyter", "papermill":
		// jupyter nbconvert --execute NB, papermill NB OUT: the notebook's
		// cells run.
		if v.prog == "papermill" || slices.Contains(v.args, "--execute") || slices.Contains(v.args, "execute") {
			for _, op := range operands(v.args, "", []string{"--to", "--output", "--ExecutePreprocessor.timeout"}) {
				if f, ok := match(op); ok {
					return f, true
				}
			}
		}
		return savedFile{}, false
	case "java":
		// java -jar FILE, java -cp FILE Main: the JVM runs what it loads.
		for i, a := range v.args {
			if (a == "-jar" || a == "-cp" || a == "-classpath" || a == "--class-path") && i+1 < len(v.args) {
				if f, ok := match(v.args[i+1]); ok {
					return f, true
				}
			}
			// -javaagent:FILE[=options]: loaded into the JVM first.
			if agent, ok := strings.CutPrefix(a, "-javaagent:"); ok {
				agent, _, _ = strings.Cut(agent, "=")
				if f, ok := match(agent); ok {
					return f, true
				}
			}
		}
		return savedFile{}, false
	}
	if v.kind == "" {
		return savedFile{}, false
	}
	if v.kind == "powershell" {
		if f, ok := shell.PowershellScript(v.args); ok {
			return match(f)
		}
		return savedFile{}, false
	}
	if code, inline := inlineCode(v); inline {
		// python -c "joblib.load('model.pkl')": unpickling runs the code
		// the file carries.
		if unpickles(code) {
			for _, f := range saved {
				if f.name != "" && unpickledFile(f.name) && strings.Contains(code, f.name) {
					return f, true
				}
			}
		}
		return savedFile{}, false
	}
	ops := operands(v.args, "oOWXIM", nil)
	if len(ops) > 0 {
		return match(ops[0])
	}
	return savedFile{}, false
}

// unpickles reports code that loads a pickle, which runs whatever code
// the file names: pickle, joblib, dill, cloudpickle, pandas, torch.load
// (without weights_only=True).
func unpickles(code string) bool {
	return strings.Contains(code, "pickle.load") || strings.Contains(code, "joblib.load") || strings.Contains(code, "dill.load") ||
		strings.Contains(code, "read_pickle") || strings.Contains(code, "torch.load") && !strings.Contains(code, "weights_only=True")
}

// unpickledFile reports a file name of a serialised Python object.
func unpickledFile(name string) bool {
	switch path.Ext(strings.ToLower(name)) {
	case ".pkl", ".pickle", ".joblib", ".pt", ".pth", ".ckpt", ".bin", ".dill":
		return true
	}
	return false
}

// copyFromHost returns, for scp or rsync, the path of the first source
// operand that names a file on another host (host:path, user@host:path,
// scp:// or rsync:// URLs) and the destination (the last operand); src
// is "" for a copy that fetches nothing.
func copyFromHost(v *cmdView) (src, dst string) {
	ops := operands(v.args, "cFiJloPS", []string{"--rsh", "--rsync-path", "--exclude", "--include", "--filter"})
	if len(ops) < 2 {
		return "", ""
	}
	dst = ops[len(ops)-1]
	for _, op := range ops[:len(ops)-1] {
		if strings.HasPrefix(op, "scp://") || strings.HasPrefix(op, "rsync://") {
			return op, dst
		}
		if i := strings.IndexByte(op, ':'); i > 0 && !strings.ContainsRune(op[:i], '/') {
			return op[i+1:], dst
		}
	}
	return "", ""
}
