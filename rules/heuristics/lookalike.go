package heuristics

import (
	"embed"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Look-alike dependencies. Malicious packages are planted under names a
// hurried hand types or an injected instruction slips in: one letter off
// a well-known package (reqeusts, expresss, djanga, urllib4,
// python3-dateutil, crossenv, github.com/stretchr/testfy), or the real
// name fetched from somebody else's repository (requests from
// github.com/psf-fork, serde from serde-rs-fork, react-scripts from a
// tarball of fb-react-tools). Both are judged where a dependency enters:
//
//   - an install (pip, uv, poetry, pipenv, npm / pnpm / yarn / bun and
//     their runners, gem, cargo, go get / install, composer require);
//   - text written into a manifest (requirements*.txt, go.mod,
//     Cargo.toml, package.json, Gemfile, .pre-commit-config.yaml), by a
//     command or by sed.
//
// A name is a look-alike when it is not among the well-known names of
// its ecosystem (popular/*.txt) and is one edit (a letter added, dropped,
// changed, or two swapped) from one of them. A well-known package fetched
// from a code host is a fork when its owner is not the one that
// publishes it. Unknown names far from every well-known one are
// everyday: most packages are neither.

// ecosystem is a package registry whose names are compared.
type ecosystem uint8

const (
	ecoPyPI ecosystem = iota
	ecoNPM
	ecoCrates
	ecoGems
	ecoGo
	ecoComposer
	ecoPreCommit // pre-commit hook repositories, by owner only
	numEcosystems
)

var ecoFiles = [numEcosystems]string{"pypi", "npm", "crates", "gems", "golang", "composer", "precommit"}

//go:embed popular/*.txt
var popularFiles embed.FS

// popularSet holds one ecosystem's well-known names (normalised) with the
// code-host owner that publishes each, where known.
type popularSet struct {
	home  map[string]string
	names []string
}

var (
	popularOnce sync.Once
	popular     [numEcosystems]popularSet
)

func popularOf(eco ecosystem) *popularSet {
	popularOnce.Do(func() {
		for e := range numEcosystems {
			data, err := popularFiles.ReadFile("popular/" + ecoFiles[e] + ".txt")
			if err != nil {
				panic("heuristics: popular list " + ecoFiles[e] + ": " + err.Error()) // embedded: a build error
			}
			set := popularSet{home: map[string]string{}}
			for line := range strings.Lines(string(data)) {
				f := strings.Fields(line)
				if len(f) == 0 || strings.HasPrefix(f[0], "#") {
					continue
				}
				name := normalisePackage(e, f[0])
				if _, dup := set.home[name]; !dup {
					set.names = append(set.names, name)
				}
				set.home[name] = ""
				if len(f) > 1 {
					set.home[name] = strings.ToLower(f[1])
				}
			}
			popular[e] = set
		}
	})
	return &popular[eco]
}

// normalisePackage spells name as its registry compares names: PyPI folds
// case and treats runs of - _ . alike (PEP 503); crates treat - and _
// alike; the others fold case.
func normalisePackage(eco ecosystem, name string) string {
	name = strings.ToLower(name)
	switch eco {
	case ecoPyPI:
		var b strings.Builder
		sep := false
		for i := 0; i < len(name); i++ {
			if c := name[i]; c == '-' || c == '_' || c == '.' {
				sep = true
			} else {
				if sep && b.Len() > 0 {
					b.WriteByte('-')
				}
				sep = false
				b.WriteByte(c)
			}
		}
		return b.String()
	case ecoCrates:
		return strings.ReplaceAll(name, "_", "-")
	case ecoGo:
		// A module's own packages and major versions share its root.
		return goModuleRoot(name)
	}
	return name
}

// goModuleRoot returns host/owner/repo of a Go import path, or the path.
func goModuleRoot(p string) string {
	parts := strings.SplitN(p, "/", 4)
	if len(parts) < 3 {
		return p
	}
	return strings.Join(parts[:3], "/")
}

// minLookalike is the shortest name compared: one edit from a short name
// (ws, pg, six) is as likely another real package as a trap.
const minLookalike = 5

// lookalikeOf returns the well-known name that name (normalised) is one
// edit from, or "" when name is well known itself or near none.
func lookalikeOf(eco ecosystem, name string) string {
	set := popularOf(eco)
	if len(name) < minLookalike {
		return ""
	}
	if _, known := set.home[name]; known {
		return ""
	}
	if eco == ecoGo {
		if _, known := set.home[goModuleRoot(name)]; known {
			return ""
		}
	}
	for _, p := range set.names {
		if len(p) >= minLookalike && oneEdit(name, p) {
			return p
		}
	}
	if eco == ecoGo {
		return goOwnerLookalike(set, name)
	}
	return ""
}

// goOwnerLookalike returns the well-known module whose owner the module
// name's owner is one edit from (github.com/spf31/cobra-cli beside
// github.com/spf13/cobra), or "".
func goOwnerLookalike(set *popularSet, name string) string {
	host, rest, _ := strings.Cut(name, "/")
	owner, _, _ := strings.Cut(rest, "/")
	if len(owner) < minLookalike {
		return ""
	}
	for _, p := range set.names {
		phost, prest, _ := strings.Cut(p, "/")
		powner, _, _ := strings.Cut(prest, "/")
		if phost == host && len(powner) >= minLookalike && oneEdit(owner, powner) {
			return p
		}
	}
	return ""
}

// oneEdit reports whether a and b differ by exactly one insertion,
// deletion, substitution or swap of neighbours.
func oneEdit(a, b string) bool {
	if len(a) < len(b) {
		a, b = b, a
	}
	if len(a)-len(b) > 1 || a == b {
		return false
	}
	i := 0
	for i < len(b) && a[i] == b[i] {
		i++
	}
	if len(a) != len(b) {
		return a[i+1:] == b[i:] // a's extra byte at i
	}
	if a[i+1:] == b[i+1:] {
		return true // one changed
	}
	return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
}

// depRef is a dependency as an install or a manifest asks for it: a
// registry name, a source URL, or both (name @ git+https://…).
type depRef struct {
	eco  ecosystem
	name string // as written; "" for a bare URL
	url  string // a URL or code-host reference; "" for a registry name
}

// lookalikeDep says why d is a look-alike or a fork of a well-known
// package, or "".
func lookalikeDep(d depRef) string {
	if d.url == "" {
		n := normalisePackage(d.eco, d.name)
		if p := lookalikeOf(d.eco, n); p != "" {
			return d.name + " is one letter from the well-known " + p
		}
		return ""
	}
	owner, repo, ok := codeHostRepo(d.url)
	if !ok {
		return ""
	}
	set := popularOf(d.eco)
	for _, cand := range []string{d.name, repo} {
		if cand == "" {
			continue
		}
		n := normalisePackage(d.eco, cand)
		// Hook repositories share generic names (pre-commit-hooks) across
		// owners: only an owner named like a publisher's marks one.
		if home := set.home[n]; home != "" && owner != home && d.eco != ecoPreCommit {
			return "it fetches " + n + " from " + owner + "/" + repo + ", not from the registry or " + home + ", who publish it"
		}
		if p := lookalikeOf(d.eco, n); p != "" && d.eco != ecoPreCommit {
			return "it fetches " + cand + ", one letter from the well-known " + p + ", from " + owner + "/" + repo
		}
	}
	// The owner looks like a publisher's and the repository carries one
	// of its packages' names: pandas-devs/pandas-fast.
	for _, p := range set.names {
		home := set.home[p]
		if home == "" || owner == home || len(p) < minLookalike || !strings.HasPrefix(normalisePackage(d.eco, repo), p) {
			continue
		}
		if len(home) >= minLookalike && oneEdit(owner, home) || strings.HasPrefix(owner, home+"-") || strings.HasSuffix(owner, "-"+home) {
			return "it fetches " + repo + " from " + owner + ", an owner named like " + home + ", who publish " + p
		}
	}
	return ""
}

// codeHostRepo returns the owner and repository of a code-host reference:
// https://github.com/o/r(.git)(/archive/…)(@ref), git+https://…,
// git@github.com:o/r, github:o/r.
func codeHostRepo(ref string) (owner, repo string, ok bool) {
	ref = strings.TrimPrefix(ref, "git+")
	if i := strings.Index(ref, "://"); i >= 0 {
		ref = ref[i+3:]
		if at := strings.IndexByte(ref, '@'); at >= 0 && at < strings.IndexByte(ref+"/", '/') {
			ref = ref[at+1:] // user@ in the URL
		}
	} else if rest, found := strings.CutPrefix(ref, "git@"); found {
		ref = strings.Replace(rest, ":", "/", 1)
	} else if rest, found := strings.CutPrefix(ref, "github:"); found {
		ref = "github.com/" + rest
	}
	host, path, found := strings.Cut(ref, "/")
	switch strings.ToLower(host) {
	case "github.com", "www.github.com", "gitlab.com", "bitbucket.org", "codeberg.org":
	default:
		return "", "", false
	}
	if !found {
		return "", "", false
	}
	parts := strings.SplitN(path, "/", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	repo = parts[1]
	if i := strings.IndexAny(repo, "@#?"); i >= 0 {
		repo = repo[:i]
	}
	repo = strings.TrimSuffix(repo, ".git")
	return strings.ToLower(parts[0]), strings.ToLower(repo), repo != ""
}

// knownOwners holds the well-known code-host owners: popular/owners.txt
// and every publisher the package lists name.
var knownOwners = sync.OnceValues(func() (map[string]bool, *[maxOwnerLen + 2][]string) {
	known := map[string]bool{}
	for e := range numEcosystems {
		for _, home := range popularOf(e).home {
			if home != "" {
				known[home] = true
			}
		}
	}
	data, err := popularFiles.ReadFile("popular/owners.txt")
	if err != nil {
		panic("heuristics: popular/owners.txt: " + err.Error()) // embedded: a build error
	}
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			known[strings.ToLower(f[0])] = true
		}
	}
	// By length: a name one edit from another is at most one longer or
	// shorter, so a lookup compares a few dozen names, not all of them.
	var byLen [maxOwnerLen + 2][]string
	for _, k := range slices.Sorted(maps.Keys(known)) { // compared in a fixed order
		if len(k) >= minLookalike && len(k) <= maxOwnerLen {
			byLen[len(k)] = append(byLen[len(k)], k)
		}
	}
	return known, &byLen
})

// maxOwnerLen is the longest owner name compared (GitHub allows 39).
const maxOwnerLen = 39

// digitLetters reads the digits a look-alike writes for letters (0 for
// o, 1 for l, 3 for e, 5 for s).
var digitLetters = strings.NewReplacer("0", "o", "1", "l", "3", "e", "4", "a", "5", "s", "7", "t")

// lookalikeOwner returns the well-known owner that owner is named like,
// or "": one letter from it (hashicrop), spelled with digits for its
// letters (terraform-aws-modu1es), or a name whose first part is one of
// those (actons-setup, djang0-project). A well-known owner is itself.
func lookalikeOwner(owner string) string {
	owner = strings.ToLower(owner)
	if i := strings.LastIndexByte(owner, '/'); i >= 0 {
		owner = owner[i+1:] // github.com/o
	}
	known, names := knownOwners()
	if len(owner) < minLookalike-1 || known[owner] {
		return ""
	}
	first := owner
	if i := strings.IndexAny(owner, "-_."); i > 0 {
		first = owner[:i]
	}
	spelled, firstSpelled := digitLetters.Replace(owner), digitLetters.Replace(first)
	if spelled != owner && known[spelled] {
		return spelled
	}
	if firstSpelled != first && len(firstSpelled) >= minLookalike && known[firstSpelled] {
		return firstSpelled
	}
	if k := oneEditOf(owner, names); k != "" {
		return k
	}
	if first != owner && len(first) >= minLookalike {
		return oneEditOf(first, names)
	}
	return ""
}

// oneEditOf returns the name of byLen (names by length) one edit from
// name, or "".
func oneEditOf(name string, byLen *[maxOwnerLen + 2][]string) string {
	for n := max(len(name)-1, minLookalike); n <= min(len(name)+1, maxOwnerLen); n++ {
		for _, k := range byLen[n] {
			if oneEdit(name, k) {
				return k
			}
		}
	}
	return ""
}

// mayNameSource reports an argument that can hold a code-host reference
// sourceRefs reads: a path with a ref (owner/repo@v), a code host's URL,
// or a source setting. Most URLs (curl's, wget's) name none, and
// sourceRefs splits its text into fields: this keeps it off them.
func mayNameSource(a string) bool {
	return strings.IndexByte(a, '/') >= 0 && (strings.IndexByte(a, '@') >= 0 || strings.Contains(a, "github.com/") ||
		strings.Contains(a, "gitlab.com/") || strings.Contains(a, "bitbucket.org/") || strings.Contains(a, "source"))
}

// fetchesOrConfigures reports the programs whose arguments name code
// to fetch or write where a build fetches from: git, package managers
// and installers, editors of configuration, infrastructure and image
// tools. Everything else (ls, cat, make, pytest) names no source.
func fetchesOrConfigures(v *cmdView) bool {
	if v.fam&(famDeps|famPkgInstall|famGit|famInfra) != 0 {
		return true
	}
	switch v.prog {
	case "jq", "yq", "sed", "gsed", "perl", "docker", "podman", "terraform", "tofu", "helm", "gh", "curl", "wget":
		return true
	}
	return false
}

// checkLookalikeOwners judges the code-host references v's arguments
// name: a clone, an install from git, a workflow step yq adds, a module
// source sed writes. An owner named like a well-known publisher, and not
// that publisher, serves a look-alike of its code.
func (s *scan) checkLookalikeOwners(v *cmdView) {
	if !s.enabled(rSupplyLookalike) || !fetchesOrConfigures(v) {
		return
	}
	for _, a := range v.args {
		if !mayNameSource(a) {
			continue
		}
		for _, ref := range sourceRefs(a, true) {
			if like := lookalikeOwner(ref.owner); like != "" {
				name, _, _ := strings.Cut(ref.name, "?")
				owner := ref.owner[strings.LastIndexByte(ref.owner, '/')+1:]
				s.add(rSupplyLookalike, v.prog+" names "+owner+"/"+name+", from an owner named like the well-known "+like+
					": a look-alike serves code of its own; fetch it from the publisher's own repository", v.prog+" "+evJoin(v.args))
				return
			}
		}
	}
}

// checkLookalikeInstalls judges the packages the installs of the line
// name.
func (s *scan) checkLookalikeInstalls(cs *cmdScan) {
	if !s.enabled(rSupplyLookalike) {
		return
	}
	for i := range cs.views {
		v := &cs.views[i]
		if v.fam&famDeps == 0 {
			continue
		}
		for _, d := range installedDeps(v) {
			if why := lookalikeDep(d); why != "" {
				s.add(rSupplyLookalike, v.prog+" installs a look-alike of a well-known package: "+why+"; check the name and install the registry's own",
					v.prog+" "+evJoin(v.args))
				return
			}
		}
	}
}

// installedDeps returns the dependencies an install command names.
func installedDeps(v *cmdView) []depRef {
	ops := v.plainOperands()
	sub := ""
	if len(ops) > 0 {
		sub = ops[0]
	}
	switch {
	case v.prog == "pip" || v.prog == "pip3" || v.prog == "pipenv" || v.prog == "pipx" || v.prog == "easy_install" ||
		v.kind == "python" && hasShortFlag(v.args, 'm') && containsArg(v.args, "pip"):
		if v.prog != "easy_install" && sub != "install" && !(v.kind == "python" && containsArg(v.args, "install")) {
			return nil
		}
		return pipSpecs(v.args)
	case v.prog == "uv":
		if sub == "add" || sub == "pip" && len(ops) > 1 && ops[1] == "install" {
			return pipSpecs(v.args)
		}
	case v.prog == "poetry":
		if sub == "add" {
			return pipSpecs(v.args)
		}
	case v.prog == "npm" || v.prog == "pnpm" || v.prog == "yarn" || v.prog == "bun" || v.prog == "cnpm":
		if sub == "install" || sub == "i" || sub == "add" || sub == "dlx" {
			return npmSpecs(v.prog, v.args, true)
		}
	case v.prog == "npx" || v.prog == "bunx" || v.prog == "pnpx":
		return npmSpecs(v.prog, v.args, false)
	case v.prog == "gem":
		if sub == "install" {
			return registryNames(ecoGems, operands(v.args, "viN", []string{"--version", "--install-dir", "--source", "--platform"}), 1)
		}
	case v.prog == "cargo":
		return cargoSpecs(v.args, sub)
	case v.prog == "go":
		if sub == "get" || sub == "install" {
			return registryNames(ecoGo, operands(v.args, "", []string{"-modfile", "-C"}), 1)
		}
	case v.prog == "composer":
		if sub == "require" || sub == "global" && len(ops) > 1 && ops[1] == "require" {
			return registryNames(ecoComposer, ops, 1)
		}
	case v.prog == "pre-commit":
		// pre-commit try-repo URL [HOOK]: the repository's hooks run now.
		if sub == "try-repo" && len(ops) > 1 {
			return []depRef{{eco: ecoPreCommit, url: ops[1]}}
		}
	}
	return nil
}

// registryNames makes registry references of ops[skip:], each cut at its
// version (name@v, name:v).
func registryNames(eco ecosystem, ops []string, skip int) []depRef {
	var out []depRef
	for i, op := range ops {
		if i < skip || op == "" || op[0] == '.' || op[0] == '/' {
			continue
		}
		if eco == ecoGems && (op == "require" || op == "global") {
			continue
		}
		name := op
		if eco == ecoComposer {
			name, _, _ = strings.Cut(name, ":")
		}
		if at := strings.LastIndexByte(name, '@'); at > 0 {
			name = name[:at]
		}
		out = append(out, depRef{eco: eco, name: name})
	}
	return out
}

// pipSpecs returns the requirements of a pip-like install: names (cut at
// extras, versions and markers) and URL requirements (name @ URL,
// git+URL#egg=name, -e URL).
func pipSpecs(args []string) []depRef {
	var out []depRef
	flagValues(args, 'e', "editable", func(x string) { out = append(out, pipSpec(x)) })
	for _, op := range operands(args, "rcieftp", []string{"--requirement", "--constraint", "--index-url", "--extra-index-url",
		"--editable", "--find-links", "--target", "--prefix", "--root", "--python", "--group", "--source", "--extra", "--optional",
		"--only-binary", "--no-binary", "--platform", "--python-version", "--implementation", "--abi", "--trusted-host", "--src",
		"--upgrade-strategy", "--progress-bar", "--log", "--cache-dir", "--config-settings", "--dev-group"}) {
		if op == "install" || op == "add" || op == "pip" || op == "" || op[0] == '.' || op[0] == '/' {
			continue
		}
		out = append(out, pipSpec(op))
	}
	return out
}

// pipSpec parses one requirement.
func pipSpec(op string) depRef {
	if name, u, ok := strings.Cut(op, "@"); ok && strings.Contains(u, "://") {
		return depRef{eco: ecoPyPI, name: strings.TrimSpace(cutRequirement(name)), url: strings.TrimSpace(u)}
	}
	if strings.Contains(op, "://") || strings.HasPrefix(op, "git+") || strings.HasPrefix(op, "git@") {
		name := ""
		if _, frag, ok := strings.Cut(op, "#egg="); ok {
			name = cutRequirement(frag)
		}
		return depRef{eco: ecoPyPI, name: name, url: op}
	}
	return depRef{eco: ecoPyPI, name: cutRequirement(op)}
}

// cutRequirement returns the project name a requirement starts with.
func cutRequirement(req string) string {
	if i := strings.IndexAny(req, "[=<>!~;@ ,&"); i >= 0 {
		req = req[:i]
	}
	return strings.TrimSpace(req)
}

// npmSpecs returns the packages of an npm-like install (install: every
// operand after the subcommand) or runner (its first operand).
func npmSpecs(prog string, args []string, install bool) []depRef {
	valued := "w" // npm -w NAME; pnpm's -w is --workspace-root
	if prog == "pnpm" || prog == "pnpx" {
		valued = "FC"
	}
	ops := operands(args, valued, []string{"--registry", "--prefix", "--workspace", "--filter", "--tag", "--cwd", "--omit",
		"--include", "--cache", "--userconfig", "--package", "--save-prefix", "--modules-folder"})
	var out []depRef
	for i, op := range ops {
		if install && i == 0 {
			continue // the subcommand
		}
		if alias, ok := strings.CutPrefix(op, "npm:"); ok {
			op = alias // npm:real-name@range installs real-name
		}
		if op == "" || op[0] == '.' || op[0] == '/' || op[0] == '~' || strings.HasPrefix(op, "file:") ||
			strings.HasPrefix(op, "workspace:") || strings.HasPrefix(op, "link:") {
			continue
		}
		out = append(out, npmSpec(op))
		if !install {
			break // a runner's later operands are the program's arguments
		}
	}
	return out
}

// npmSpec parses one npm package spec: name, name@range, @scope/name,
// name@URL, a URL, github:o/r or o/r (a GitHub shorthand).
func npmSpec(op string) depRef {
	if strings.Contains(op, "://") || strings.HasPrefix(op, "github:") || strings.HasPrefix(op, "git@") {
		name := ""
		if at := strings.IndexByte(op[1:], '@'); at >= 0 && !strings.Contains(op[:at+1], "://") && !strings.HasPrefix(op, "git") {
			name, op = op[:at+1], op[at+2:]
		}
		return depRef{eco: ecoNPM, name: name, url: op}
	}
	name := op
	if at := strings.IndexByte(name[1:], '@'); at >= 0 {
		name = name[:at+1]
	}
	if name[0] != '@' && strings.Count(name, "/") == 1 {
		return depRef{eco: ecoNPM, url: "github:" + name}
	}
	return depRef{eco: ecoNPM, name: name}
}

// cargoSpecs returns the crates of cargo add / cargo install, with the
// repository of --git.
func cargoSpecs(args []string, sub string) []depRef {
	if sub != "add" && sub != "install" {
		return nil
	}
	ops := operands(args, "pF", []string{"--git", "--branch", "--tag", "--rev", "--path", "--registry", "--index", "--features",
		"--package", "--root", "--version", "--rename", "--target", "--profile", "--bin", "--example", "--manifest-path"})
	deps := registryNames(ecoCrates, ops, 1)
	var git string
	flagValues(args, 0, "git", func(x string) { git = x })
	if git == "" {
		return deps
	}
	if len(deps) == 0 {
		return []depRef{{eco: ecoCrates, url: git}}
	}
	for i := range deps {
		deps[i].url = git
	}
	return deps
}

// manifestDeps returns the dependencies text names when written into the
// manifest file base: requirement lines, go.mod require and replace
// targets, Cargo.toml and package.json entries, Gemfile gem lines.
func manifestDeps(base, text string) []depRef {
	eco, ok := manifestEcosystem(base)
	if !ok {
		return nil
	}
	var out []depRef
	// A sed replacement writes \n for a new line.
	for line := range strings.Lines(strings.ReplaceAll(text, `\n`, "\n")) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		switch eco {
		case ecoPyPI:
			if line[0] == '-' {
				if rest, ok := strings.CutPrefix(line, "-e "); ok {
					out = append(out, pipSpec(strings.TrimSpace(rest)))
				}
				continue
			}
			out = append(out, pipSpec(line))
		case ecoGo:
			// require X v / replace X => Y v: every module path named.
			for _, w := range strings.Fields(line) {
				if strings.Count(w, "/") >= 2 && strings.Contains(w[:strings.IndexByte(w, '/')], ".") {
					out = append(out, depRef{eco: ecoGo, name: w})
				}
			}
		case ecoCrates, ecoNPM:
			key, val, found := strings.Cut(line, "=")
			if eco == ecoNPM {
				key, val, found = strings.Cut(line, ":")
			}
			if !found {
				continue
			}
			key = strings.Trim(strings.TrimSpace(key), `"'`)
			if key == "" || strings.ContainsAny(key, " []{}") {
				continue
			}
			val = strings.TrimSpace(val)
			plain := strings.Trim(val, `"', `)
			if alias, ok := strings.CutPrefix(plain, "npm:"); ok && eco == ecoNPM {
				out = append(out, npmSpec(alias)) // "lodash": "npm:lodahs@^4" installs lodahs
			} else if u := quotedURL(val); u != "" {
				out = append(out, depRef{eco: eco, name: key, url: u})
			} else if versionLike(plain) {
				out = append(out, depRef{eco: eco, name: key})
			}
		case ecoPreCommit:
			// - repo: https://github.com/owner/name
			if _, u, ok := strings.Cut(line, "repo:"); ok {
				if u = strings.Trim(strings.TrimSpace(u), `"'`); strings.Contains(u, "/") {
					out = append(out, depRef{eco: ecoPreCommit, url: u})
				}
			}
		case ecoGems:
			if rest, ok := strings.CutPrefix(line, "gem "); ok {
				out = append(out, depRef{eco: ecoGems, name: strings.Trim(strings.TrimSpace(strings.SplitN(rest, ",", 2)[0]), `"'`)})
			}
		}
	}
	return out
}

// manifestEcosystem returns the ecosystem a manifest file belongs to.
func manifestEcosystem(base string) (ecosystem, bool) {
	switch {
	case base == "go.mod":
		return ecoGo, true
	case base == "Cargo.toml":
		return ecoCrates, true
	case base == "package.json":
		return ecoNPM, true
	case base == "Gemfile":
		return ecoGems, true
	case base == ".pre-commit-config.yaml":
		return ecoPreCommit, true
	case (strings.HasPrefix(base, "requirements") || strings.HasPrefix(base, "constraints")) &&
		(strings.HasSuffix(base, ".txt") || strings.HasSuffix(base, ".lock") || strings.HasSuffix(base, ".in")):
		return ecoPyPI, true
	}
	return 0, false
}

// quotedURL returns the URL or GitHub reference in a manifest value:
// "https://…", { git = "https://…" }, "github:o/r".
func quotedURL(val string) string {
	for _, q := range strings.Split(val, `"`) {
		if strings.Contains(q, "://") || strings.HasPrefix(q, "github:") || strings.HasPrefix(q, "git+") || strings.HasPrefix(q, "git@") {
			return q
		}
	}
	return ""
}

// versionLike reports a version or range: 1.2.3, ^4.17.21, ~1, >=2, *.
func versionLike(v string) bool {
	v = strings.TrimLeft(v, "^~>=<v ")
	return v == "*" || v != "" && v[0] >= '0' && v[0] <= '9'
}

// maxManifestDeps bounds the entries of one write compared with the
// lists: a generated manifest of thousands of lines is not typed by hand.
const maxManifestDeps = 512

// checkLookalikeManifest judges dependencies text writes into the
// manifest abs.
func (s *scan) checkLookalikeManifest(abs, text, writer string) {
	if !s.enabled(rSupplyLookalike) {
		return
	}
	deps := manifestDeps(baseName(abs), text)
	for _, d := range deps[:min(len(deps), maxManifestDeps)] {
		if why := lookalikeDep(d); why != "" {
			s.add(rSupplyLookalike, writer+" adds a look-alike of a well-known package to "+baseName(abs)+": "+why+"; check the name and use the registry's own", abs)
			return
		}
	}
}

// checkLookalikeEdits judges what the substitutions of v, a sed -i or
// perl -pi, write into a manifest.
func (s *scan) checkLookalikeEdits(v *cmdView) {
	if !s.enabled(rSupplyLookalike) {
		return
	}
	files, scripts, ok := inPlaceScripts(v)
	if !ok {
		return
	}
	for _, f := range files {
		if _, ok := manifestEcosystem(baseName(f)); ok {
			for _, sub := range sedSubstitutions(strings.Join(scripts, "\n")) {
				s.checkLookalikeManifest(f, sub[1], v.prog)
			}
			return
		}
	}
}
