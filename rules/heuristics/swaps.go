package heuristics

import (
	"slices"
	"strings"
)

// Source swaps. An in-place edit that keeps a dependency's name and
// changes whose it is — sed 's#uses: actions/checkout@v4#uses:
// actions-checkout/checkout@main#' in a workflow, sed 's#FROM
// python:3.12#FROM docker.io/pyth0n/python:3.12#' in a Dockerfile, a git
// URL's owner in go.mod or .gitmodules — makes the next build fetch the
// look-alike. A version bump keeps the owner and is everyday.

// checkSourceSwaps judges the substitutions of v, a sed -i or perl -pi.
func (s *scan) checkSourceSwaps(v *cmdView) {
	if !s.enabled(rSupplySource) {
		return
	}
	files, scripts, ok := inPlaceScripts(v)
	if !ok {
		return
	}
	script := strings.Join(scripts, "\n")
	if lock := editedLockfile(files); lock != "" && s.enabled(rSupplyVerifyOff) && touchesHashes(script) {
		s.add(rSupplyVerifyOff, v.prog+" edits the hashes "+lock+" pins: installs would no longer be checked against what was locked; regenerate the lockfile with the package manager instead",
			v.prog+" "+evJoin(v.args))
		return
	}
	build := buildInputs(files)
	for _, sub := range sedSubstitutions(script) {
		if from, to := borrowedHost(sub[0], sub[1]); to != "" && build {
			s.add(rSupplySource, v.prog+" moves "+from+" to "+to+", a host named like it on another domain: every later download comes from the look-alike; keep the original host",
				v.prog+" "+evJoin(v.args))
			return
		}
		if demoted, primary := indexDemoted(unescapeRegex(sub[0]), unescapeRegex(sub[1])); demoted != "" {
			s.add(rSupplySource, v.prog+" makes "+demoted+" an extra index beside "+primary+": pip takes each package from whichever index offers the highest version, so whoever publishes the private names there wins (dependency confusion); keep the private index primary",
				v.prog+" "+evJoin(v.args))
			return
		}
		if backend := unknownBuildBackend(sub[0], sub[1]); backend != "" && s.enabled(rSupplyTamper) {
			s.add(rSupplyTamper, v.prog+" makes "+backend+" the package's build backend: it is none of the well-known ones, and a backend runs its own code at every build and install; keep the backend you had",
				v.prog+" "+evJoin(v.args))
			return
		}
		if key := checksumEmptied(sub[0], sub[1]); key != "" && s.enabled(rSupplyVerifyOff) {
			s.add(rSupplyVerifyOff, v.prog+" empties "+key+", the digest a download is checked against: whatever the host serves is then taken; update the digest to the new release's instead",
				v.prog+" "+evJoin(v.args))
			return
		}
	}
	if !strings.ContainsAny(script, "/:") {
		return
	}
	actions := workflowFiles(files)
	for _, sub := range sedSubstitutions(script) {
		if name, from, to, ok := swappedSource(sub[0], sub[1], actions); ok {
			s.add(rSupplySource, v.prog+" swaps where "+name+" comes from, "+from+" for "+to+": the next build fetches the look-alike; keep the original source",
				v.prog+" "+evJoin(v.args))
			return
		}
		if from, to := s.swappedHost(sub[0], sub[1], files); to != "" {
			s.add(rSupplySource, v.prog+" makes the build fetch from "+to+" instead of "+from+": every later install or build takes code from it; keep the original source, or add the host to trusted_hosts",
				v.prog+" "+evJoin(v.args))
			return
		}
	}
}

// swappedHost reports a substitution that moves a build's downloads to a
// host that is not trusted: an official registry's URL replaced by one
// on another host, or, in a build's own settings (a wrapper's
// distributionUrl, a repository URL), a source key set to such a host.
// It returns the host replaced ("its source" when the pattern names
// none) and the new host, or "".
func (s *scan) swappedHost(pat, repl string, files []string) (from, to string) {
	newHosts := urlHosts(unescapeRegex(repl))
	if len(newHosts) == 0 {
		return "", ""
	}
	for _, h := range urlHosts(unescapeRegex(pat)) {
		if officialSource(h) {
			from = h
		}
	}
	if from == "" {
		if !buildSettingsFile(files) || !sourceKeyWords.in(pat+" "+repl) {
			return "", ""
		}
		from = "its source"
	}
	for _, h := range newHosts {
		if h != from && !s.vouchedSource(h) && !privateHost(h) {
			return from, h
		}
	}
	return "", ""
}

// borrowedHost reports a substitution that replaces a host with one on
// another domain named like it: its name with more added
// (releases.hashicorp.com → releases.hashicorp-dl.com), one letter off,
// or spelled with digits. It returns both hosts, or "".
func borrowedHost(pat, repl string) (from, to string) {
	if !strings.Contains(repl, ".") {
		return "", ""
	}
	olds := hostNames(unescapeRegex(pat))
	for _, h2 := range hostNames(unescapeRegex(repl)) {
		if slices.Contains(olds, h2) {
			continue
		}
		label2, site2 := siteOf(h2)
		for _, h1 := range olds {
			label1, site1 := siteOf(h1)
			if site1 == site2 || len(label1) < 4 || label1 == "example" {
				continue
			}
			if strings.Contains(label2, label1) || oneEdit(label1, label2) || digitLetters.Replace(label2) == label1 {
				return h1, h2
			}
		}
	}
	return "", ""
}

// hostNames returns the domain names written in text, URLs or bare
// (releases.hashicorp.com): runs of letters, digits, dots and hyphens
// with two labels or more, the last all letters.
func hostNames(text string) []string {
	var out []string
	text = strings.ToLower(text)
	for i := 0; i < len(text); {
		j := i
		for j < len(text) && isHostByte(text[j]) {
			j++
		}
		if j == i {
			i++
			continue
		}
		if h := strings.Trim(text[i:j], ".-"); isDomainName(h) && !slices.Contains(out, h) {
			out = append(out, h)
		}
		i = j
	}
	return out
}

// isDomainName reports a name of two labels or more, none empty, under
// a common top-level domain: a file name (gradle-8.8-bin.zip, setup.py)
// ends in an extension instead.
func isDomainName(h string) bool {
	dot := strings.LastIndexByte(h, '.')
	return dot > 0 && !strings.Contains(h, "..") && commonTLDs[h[dot+1:]]
}

// commonTLDs are the top-level domains hosts are mostly found under; the
// ones that are also file extensions (.zip, .sh, .py) are left out.
var commonTLDs = map[string]bool{"com": true, "net": true, "org": true, "io": true, "dev": true, "app": true, "co": true, "ai": true,
	"cloud": true, "xyz": true, "site": true, "online": true, "info": true, "biz": true, "me": true, "us": true, "uk": true, "de": true,
	"fr": true, "eu": true, "ru": true, "cn": true, "jp": true, "br": true, "au": true, "ca": true, "nl": true, "tech": true,
	"top": true, "cc": true, "tk": true, "ws": true, "ly": true, "gg": true, "to": true, "run": true, "page": true, "pub": true}

// siteOf returns the label of host that names its owner and the domain
// it registered: hashicorp and hashicorp.com of releases.hashicorp.com,
// acme and acme.co.uk of cdn.acme.co.uk.
func siteOf(host string) (label, site string) {
	labels := strings.Split(host, ".")
	n := 2
	if len(labels) > 2 && secondLevelSuffix(labels[len(labels)-2]) && len(labels[len(labels)-1]) == 2 {
		n = 3 // co.uk, com.au
	}
	if len(labels) < n {
		return host, host
	}
	return labels[len(labels)-n], strings.Join(labels[len(labels)-n:], ".")
}

// secondLevelSuffix reports the labels countries register names under
// (acme.co.uk, acme.com.au).
func secondLevelSuffix(l string) bool {
	switch l {
	case "co", "com", "org", "net", "ac", "gov", "edu", "ne", "or":
		return true
	}
	return false
}

// indexDemoted reports a substitution that moves the primary package
// index of the pattern (--index-url URL, index-url = URL) to an extra
// index of the replacement, beside a new primary: the demoted URL and
// the new primary, or "".
func indexDemoted(pat, repl string) (demoted, primary string) {
	if !strings.Contains(repl, "extra") {
		return "", ""
	}
	old, _ := indexURLs(pat)
	now, extras := indexURLs(repl)
	for _, u := range old {
		if slices.Contains(extras, u) && len(now) > 0 && !slices.Contains(now, u) {
			return u, now[0]
		}
	}
	return "", ""
}

// indexURLs returns the URLs text gives as pip's primary index
// (--index-url, index-url =, index_url:) and as extra indexes.
func indexURLs(text string) (primary, extra []string) {
	lower := strings.ToLower(text)
	eachURL(text, func(u string) bool {
		i := strings.Index(text, u)
		before := strings.TrimRight(lower[max(0, i-24):i], " =:\"'")
		switch {
		case strings.HasSuffix(before, "extra-index-url") || strings.HasSuffix(before, "extra_index_url"):
			extra = append(extra, u)
		case strings.HasSuffix(before, "index-url") || strings.HasSuffix(before, "index_url"):
			primary = append(primary, u)
		}
		return true
	})
	return primary, extra
}

// buildBackends are the well-known Python build backends (PEP 517).
var buildBackends = []string{"setuptools.build_meta", "hatchling.build", "poetry.core.masonry.api", "poetry.masonry.api", "flit_core.buildapi",
	"pdm.backend", "pdm.pep517.api", "maturin", "scikit_build_core.build", "mesonpy", "sipbuild.api", "uv_build", "whey", "enscons.api",
	"pbr.build", "setuptools.build_meta:__legacy__"}

// unknownBuildBackend returns the build backend a substitution writes in
// place of another when it is none of the well-known ones, or "".
func unknownBuildBackend(pat, repl string) string {
	if !strings.Contains(pat, "build-backend") || !strings.Contains(repl, "build-backend") {
		return ""
	}
	_, rest, _ := strings.Cut(unescapeRegex(repl), "build-backend")
	rest = strings.TrimLeft(rest, " =\t")
	if len(rest) == 0 || rest[0] != '"' && rest[0] != '\'' {
		return ""
	}
	end := strings.IndexByte(rest[1:], rest[0])
	if end < 0 {
		return ""
	}
	backend := rest[1 : 1+end]
	if backend == "" || slices.Contains(buildBackends, backend) || strings.Contains(pat, backend) {
		return ""
	}
	return backend
}

// checksumKeys name the digest a download is checked against.
var checksumKeys = newFoldSet("sha256", "sha512", "sha384", "sha1", "checksum", "digest", "integrity")

// checksumEmptied returns the setting a substitution keeps but empties
// whose name is a checksum's (TERRAFORM_SHA256=…  → TERRAFORM_SHA256=,
// checksum: "…" → checksum: ""), or "".
func checksumEmptied(pat, repl string) string {
	if !checksumKeys.in(repl) {
		return ""
	}
	for _, st := range emptySettings(unescapeRegex(repl)) {
		if checksumKeys.in(st) && strings.Contains(pat, st) {
			return st
		}
	}
	return ""
}

// emptySettings returns the names text sets to nothing: NAME= or NAME:
// at the end of a line, NAME="" and NAME: "".
func emptySettings(text string) []string {
	var out []string
	eachSetting(text, func(key, rest string) {
		rest = strings.TrimLeft(rest, " \t")
		if rest == "" || rest[0] == '\n' || strings.HasPrefix(rest, `""`) || strings.HasPrefix(rest, "''") {
			out = append(out, key)
		}
	})
	return out
}

// sourceKeyWords mark a setting that says where a build downloads from.
var sourceKeyWords = newFoldSet("distributionurl", "wrapperurl", "registry", "index-url", "index_url", "mirror", "<url>", "repository", "maven {", "maven(")

// buildSettingsFile reports files that set where a build downloads its
// tools and dependencies: build manifests, wrapper properties, package
// manager settings.
func buildSettingsFile(files []string) bool {
	for _, f := range files {
		switch b := baseName(f); b {
		case "pom.xml", "settings.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts",
			"gradle-wrapper.properties", "maven-wrapper.properties", "gradle.properties", ".npmrc", ".yarnrc", ".yarnrc.yml",
			"pip.conf", "pyproject.toml", "setup.cfg", "Pipfile", "Cargo.toml", "config.toml", "Gemfile", "composer.json", "build.sbt":
			return true
		}
	}
	return false
}

// urlHosts returns the hosts of the URLs in text.
func urlHosts(text string) []string {
	var out []string
	eachURL(text, func(u string) bool {
		if h := urlHost(u); h != "" {
			out = append(out, strings.ToLower(h))
		}
		return true
	})
	return out
}

// eachURL calls fn with each URL of text — its scheme (git+ssh, s3),
// "://", and the rest up to a blank, a quote (a backtick too), a comma,
// a closing parenthesis or a # — until fn returns false.
func eachURL(text string, fn func(u string) bool) {
	for rest := text; ; {
		i := strings.Index(rest, "://")
		if i < 0 {
			return
		}
		start := i
		for start > 0 && (isAlnumByte(rest[start-1]) || rest[start-1] == '+') {
			start--
		}
		end := i + 3 + strings.IndexAny(rest[i+3:]+" ", " \t\n\"'`,#)")
		if !fn(rest[start:end]) {
			return
		}
		rest = rest[end:]
	}
}

// editedLockfile returns the lockfile among files, or "".
func editedLockfile(files []string) string {
	for _, f := range files {
		if b := baseName(f); lockFile(b) || b == "requirements.txt" {
			return b
		}
	}
	return ""
}

// touchesHashes reports a script that names a lockfile's hashes
// (integrity, checksum, sha512-, --hash=, go.sum's h1:).
func touchesHashes(script string) bool {
	l := strings.ToLower(script)
	for _, m := range []string{"integrity", "checksum", "sha512-", "sha256", "sha1-", "--hash", "h1:"} {
		if strings.Contains(l, m) {
			return true
		}
	}
	return false
}

// sedSubstitutions returns the pattern and replacement of each s command
// of script (the pattern as written: a literal one is the text it
// replaces).
func sedSubstitutions(script string) [][2]string {
	var out [][2]string
	for i := 0; i < len(script); i++ {
		if script[i] != 's' || i+1 >= len(script) || !isSubstDelim(script[i+1]) || i > 0 && isWordByte(script[i-1]) {
			continue
		}
		d := script[i+1]
		closeCh := map[byte]byte{'{': '}', '(': ')', '[': ']', '<': '>'}[d]
		if closeCh == 0 {
			closeCh = d
		}
		pat, j := sedDelimited(script, i+2, closeCh)
		if closeCh != d { // perl's s{…}{…}: the replacement opens its own pair
			for j < len(script) && (script[j] == ' ' || script[j] == '\t') {
				j++
			}
			if j >= len(script) || script[j] != d {
				continue
			}
			j++
		}
		repl, k := sedDelimited(script, j, closeCh)
		out = append(out, [2]string{unescapeDelim(pat, closeCh), unescapeDelim(repl, closeCh)})
		i = k - 1
	}
	return out
}

// swappedSource reports a source named in pattern whose name stays in
// replacement with another owner: the name and both owners.
func swappedSource(pattern, replacement string, actions bool) (name, from, to string, ok bool) {
	olds := sourceRefs(pattern, actions)
	if len(olds) == 0 {
		return "", "", "", false
	}
	for _, n := range sourceRefs(replacement, actions) {
		for _, o := range olds {
			if o.name == n.name && o.owner != n.owner {
				return n.name, o.owner, n.owner, true
			}
		}
	}
	return "", "", "", false
}

type sourceRef struct{ owner, name string }

// sourceRefs returns the dependencies text names where a build fetches
// them: after uses:, FROM, image: or --from=, and git URLs of a code
// host; in a workflow (actions), also a bare OWNER/REPO@REF. Plain paths
// (src/old/util) are not sources.
func sourceRefs(text string, actions bool) []sourceRef {
	var out []sourceRef
	// The fields of text split at blanks, quotes, ^ and $, read in place
	// with the two before each (no slice of them is made).
	var prev1, prev2 string
	for rest := text; ; {
		start := strings.IndexFunc(rest, notSourceSep)
		if start < 0 {
			break
		}
		rest = rest[start:]
		end := strings.IndexFunc(rest, isSourceSep)
		if end < 0 {
			end = len(rest)
		}
		f := rest[:end]
		rest = rest[end:]
		p1, p2 := prev1, prev2
		prev1, prev2 = f, prev1
		ref, image := "", false
		switch {
		case p1 != "" && (p1 == "uses:" || strings.EqualFold(p1, "FROM") || p1 == "image:"):
			ref, image = f, p1 != "uses:"
		case p2 == "source" && p1 == "=" && strings.Count(f, "/") == 1:
			ref = f // a Terraform provider's source = "namespace/name"
		case strings.HasPrefix(f, "uses:") && len(f) > 5:
			ref = f[5:]
		case strings.HasPrefix(f, "--from="):
			ref, image = f[7:], true
		case strings.Contains(f, "github.com/") || strings.Contains(f, "gitlab.com/") || strings.Contains(f, "bitbucket.org/"):
			ref = f
		case actions && actionRef(f):
			ref = f
		default:
			continue
		}
		if r, ok := parseSourceRef(ref, image); ok {
			out = append(out, r)
		}
	}
	return out
}

// isSourceSep and notSourceSep tell the separators of sourceRefs's
// fields.
func isSourceSep(r rune) bool {
	return r == ' ' || r == '\t' || r == '"' || r == '\'' || r == '^' || r == '$'
}

func notSourceSep(r rune) bool { return !isSourceSep(r) }

// parseSourceRef splits an action, image or repository reference into
// owner and name: actions/checkout@v4 (actions, checkout), python:3.12
// (library, python), docker.io/x/python (x, python),
// https://github.com/o/r.git (github.com/o, r).
func parseSourceRef(ref string, image bool) (sourceRef, bool) {
	ref = strings.ReplaceAll(ref, "\\", "") // perl's \@, sed's \/
	ref = strings.TrimPrefix(strings.TrimPrefix(ref, "git+"), "docker://")
	if i := strings.Index(ref, "://"); i >= 0 {
		ref = ref[i+3:]
	}
	ref, _, _ = strings.Cut(ref, "@")
	if slash := strings.LastIndexByte(ref, '/'); strings.LastIndexByte(ref, ':') > slash {
		ref = ref[:strings.LastIndexByte(ref, ':')] // a tag, not a registry's port
	}
	ref = strings.TrimSuffix(strings.TrimSuffix(ref, "/"), ".git")
	if ref == "" || strings.ContainsAny(ref, "*\\()[]{}") {
		return sourceRef{}, false
	}
	owner, name := "", ref
	if i := strings.LastIndexByte(ref, '/'); i >= 0 {
		owner, name = ref[:i], ref[i+1:]
	}
	if image {
		owner = strings.TrimPrefix(strings.TrimPrefix(owner, "docker.io"), "index.docker.io")
		owner = strings.TrimPrefix(owner, "/")
		if owner == "" {
			owner = "library"
		}
	}
	if name == "" || owner == "" && !image {
		return sourceRef{}, false
	}
	return sourceRef{owner: strings.ToLower(owner), name: strings.ToLower(name)}, true
}

// buildInputs reports files a build or an install reads where to
// download from: scripts, Dockerfiles, Makefiles, CI workflows, build
// settings, manifests, lockfiles, Terraform, git's module and LFS
// settings.
func buildInputs(files []string) bool {
	if workflowFiles(files) || buildSettingsFile(files) || editedLockfile(files) != "" {
		return true
	}
	for _, f := range files {
		b := baseName(f)
		if _, ok := manifestEcosystem(b); ok {
			return true
		}
		switch {
		case strings.HasSuffix(b, ".sh"), strings.HasSuffix(b, ".bash"), strings.HasPrefix(b, "Dockerfile"), strings.HasPrefix(b, "Containerfile"),
			b == "Makefile", strings.HasSuffix(b, ".mk"), strings.HasSuffix(b, ".tf"), b == ".gitlab-ci.yml", b == "Jenkinsfile",
			b == ".gitmodules", b == ".lfsconfig", b == ".tool-versions", strings.HasSuffix(b, ".nix"):
			return true
		}
	}
	return false
}

// workflowFiles reports a CI workflow or action definition among files,
// where OWNER/REPO@REF names an action.
func workflowFiles(files []string) bool {
	for _, f := range files {
		if strings.Contains(f, ".github/workflows/") || baseName(f) == "action.yml" || baseName(f) == "action.yaml" {
			return true
		}
	}
	return false
}

// actionRef reports an action reference: OWNER/REPO[/PATH]@REF.
func actionRef(f string) bool {
	f = strings.ReplaceAll(f, "\\", "")
	ref, at, ok := strings.Cut(f, "@")
	if !ok || at == "" || strings.Count(ref, "/") < 1 || strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, ".") {
		return false
	}
	for i := 0; i < len(ref); i++ {
		if c := ref[i]; !(c == '-' || c == '_' || c == '.' || c == '/' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
