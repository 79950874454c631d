package heuristics

import (
	"regexp"
	"slices"
	"strings"

	"github.com/parapet-dev/parapet/rules/shell"
)

// Destructive commands: irreversible loss of the system, a home directory,
// the whole workspace or a disk. Deleting build output inside the
// workspace (rm -rf node_modules, find . -name '*.o' -delete) is ordinary.

// findForkBomb finds "f(){ f|f& }" with any function name f, or "".
func findForkBomb(src string) string {
	for off := 0; ; {
		i := strings.Index(src[off:], "()")
		if i < 0 {
			return ""
		}
		i += off
		off = i + 2
		// The function name ends right before "()", maybe after spaces.
		end := i
		for end > 0 && src[end-1] == ' ' {
			end--
		}
		start := end
		for start > 0 && isFuncNameByte(src[start-1]) {
			start--
		}
		name := src[start:end]
		if name == "" {
			continue
		}
		rest := strings.TrimLeft(src[i+2:], " \t")
		if !strings.HasPrefix(rest, "{") {
			continue
		}
		body, _, _ := strings.Cut(rest[1:], "}")
		body = strings.ReplaceAll(body, " ", "")
		if strings.Contains(body, name+"|"+name+"&") {
			return src[start:min(len(src), start+60)]
		}
	}
}

// leavesLoop reports code whose endless loop has a way out: it breaks,
// exits, returns, or waits for its children (a pre-forking server).
func leavesLoop(code string) bool {
	return loopExits.in(code)
}

var loopExits = newFoldSet("break", "exit", "return", "wait", "last;", "last ", "accept(")

// hogsMemory reports code that grows a collection (append, push, +=,
// <<) by blocks of tens of megabytes or more (10**8, 1<<28, a number of
// eight digits) in its endless loop, which nothing leaves.
func hogsMemory(code string) bool {
	return memoryGrowth.in(code) && largeSize.MatchString(code) && !leavesLoop(code)
}

var (
	memoryGrowth = newFoldSet(".append(", ".push(", "+=", ".extend(", "<<", "push @", "push(@")
	largeSize    = regexp.MustCompile(`10\s*\*\*\s*(?:[7-9]|[1-9]\d)\b|1\s*<<\s*(?:2[4-9]|[3-6]\d)\b|\d{8,}|\de[7-9]\b`)
)

func isFuncNameByte(c byte) bool {
	return isWordByte(c) || c == ':'
}

func (s *scan) checkDestructive(cs *cmdScan, src string) {
	// The byte tests first: most lines hold no '&' or '|', and a byte
	// search is cheaper than a substring search.
	if s.enabled(rForkBomb) && strings.IndexByte(src, '&') >= 0 && strings.IndexByte(src, '|') >= 0 && strings.Contains(src, "()") {
		if m := findForkBomb(src); m != "" {
			s.add(rForkBomb, "defines a function that forks itself without limit (a fork bomb): it would freeze the machine; refuse it", m)
		}
	}
	for i := range cs.views {
		v := &cs.views[i]
		if len(v.c.Redirects) > 0 {
			s.checkRedirectErase(cs, v)
		}
		if v.codeAny(traitEndless) {
			switch {
			case v.codeAny(traitFork) && s.enabled(rForkBomb) && !leavesLoop(v.code):
				s.add(rForkBomb, v.prog+"'s code forks in a loop that never ends (a fork bomb): it would freeze the machine; refuse it", v.prog+" "+evJoin(v.args))
			case s.enabled(rDisruptMemoryHog) && hogsMemory(v.code):
				s.add(rDisruptMemoryHog, v.prog+"'s code adds large blocks to memory in a loop that never ends: the machine swaps, then the kernel kills whatever it picks; a human should approve it",
					v.prog+" "+evJoin(v.args))
			}
		}
		if v.fam&famDestroy != 0 { // the programs below
			switch v.prog {
			case "rm", "srm", "shred", "wipe", "unlink", "mv":
				s.checkCredentialDestroy(cs, v)
			case "gpg", "gpg2":
				if s.enabled(rDelCredential) && (hasLongFlag(v.args, "delete-secret-keys") || hasLongFlag(v.args, "delete-secret-and-public-keys") ||
					hasLongFlag(v.args, "delete-secret-key")) {
					s.add(rDelCredential, v.prog+" deletes secret keys from the keyring: keys cannot be recovered; refuse it unless the user asked for exactly this",
						v.prog+" "+evJoin(v.args))
				}
			case "ssh-keygen":
				if key := cs.keyOverwritten(v); key != "" && s.enabled(rDelCredential) {
					s.add(rDelCredential, "ssh-keygen writes a new key over "+key+" and the line answers yes to its question: the key it holds, and every server and account it opens, is lost; refuse it unless the user asked for exactly this",
						v.prog+" "+evJoin(v.args))
				}
			}
			switch v.prog {
			case "rm", "srm", "unlink", "shred", "wipe", "truncate":
				s.checkErase(cs, v)
				s.checkGitStoreErase(cs, v)
			}
			switch v.prog {
			case "git":
				s.checkGitClean(cs, v)
			case "rm", "srm":
				s.checkRm(cs, v)
			case "mv":
				s.checkMoveToNull(cs, v)
			case "find":
				s.checkFindDelete(cs, v)
			case "chmod", "chown", "chgrp":
				if hasFlag(v.args, 'R', "recursive") {
					s.checkRecursivePerms(cs, v)
				}
			case "dd":
				for _, a := range v.args {
					if strings.HasPrefix(a, "of=") && isDiskDevice(a[3:]) {
						s.add(rDiskWipe, "dd writes straight onto the disk device "+a[3:]+": this destroys its file systems; refuse it", "dd "+evJoin(v.args))
					}
				}
			case "diskutil":
				// macOS: erasing, reformatting or deleting a disk,
				// volume or APFS container destroys its data.
				ops := v.plainOperands()
				verb := strings.ToLower(opAt(ops, 0))
				if verb == "apfs" {
					verb = strings.ToLower(opAt(ops, 1))
				}
				switch verb {
				case "erasedisk", "erasevolume", "reformat", "zerodisk", "randomdisk", "secureerase", "partitiondisk",
					"deletevolume", "deletecontainer", "erasecontainer":
					s.add(rDiskWipe, "diskutil "+verb+" destroys the data of a disk or volume: refuse it", "diskutil "+evJoin(v.args))
				}
			case "wipefs", "blkdiscard", "sgdisk", "shred", "mkswap":
				if diskToolReadOnly(v) {
					break
				}
				for _, op := range operands(v.args, diskToolValued(v.prog), nil) {
					if isDiskDevice(op) || (v.prog != "shred" && strings.HasPrefix(op, "/dev/")) {
						s.add(rDiskWipe, v.prog+" erases the device "+op+": this destroys its data; refuse it", v.prog+" "+evJoin(v.args))
						break
					}
				}
			case "crontab":
				// -r removes the whole table (-ri asks first, but an agent
				// answers for the user); -l lists it, -e and a file install.
				if s.enabled(rDelCrontab) && hasShortFlag(v.args, 'r') {
					s.add(rDelCrontab, "crontab -r removes every scheduled job of the user and keeps no copy: save it first (crontab -l > crontab.bak) and remove only the lines you mean with crontab -e, or let a human confirm",
						"crontab "+evJoin(v.args))
				}
			case "truncate":
				for _, op := range operands(v.args, "sr", []string{"--size", "--reference"}) {
					if p := cs.resolveIn(v.c, op); isSystemFile(p.Abs) {
						s.add(rTruncateSystem, "truncates the system file "+p.Abs+": this breaks the system or erases its logs; refuse it", "truncate "+evJoin(v.args))
						break
					}
				}
			}
			if (strings.HasPrefix(v.prog, "mkfs") || v.prog == "mke2fs" || v.prog == "newfs") && !cs.formatsImageFile(v) {
				s.add(rDiskWipe, v.prog+" formats a file system, erasing everything on the device; refuse it unless a human runs it", v.prog+" "+evJoin(v.args))
			}
		}
		for _, r := range v.c.Redirects {
			if !isOutputRedirect(r.Op) {
				continue
			}
			if isDiskDevice(r.Target) {
				s.add(rDiskWipe, "redirects output onto the disk device "+r.Target+": this overwrites it; refuse it", r.Op+" "+r.Target)
			} else if r.Op != ">>" && r.Op != "&>>" {
				if p := cs.resolveIn(v.c, r.Target); isSystemFile(p.Abs) && !strings.HasPrefix(p.Abs, "/dev/") {
					s.add(rTruncateSystem, "overwrites the system file "+p.Abs+" with a redirection: this erases its contents; refuse it", r.Op+" "+r.Target)
				}
			}
		}
	}
}

// checkGitStoreErase judges a delete, shred or truncation of what a
// repository keeps its history in: its objects and packs, its refs. Git
// itself never needs a hand there (git gc and git prune do it), and what
// goes cannot be recovered unless it was pushed. rm -r of .git itself is
// checkRm's.
func (s *scan) checkGitStoreErase(cs *cmdScan, v *cmdView) {
	if !s.enabled(rDelGitHistory) {
		return
	}
	inGitDir := strings.Contains(v.c.Dir, "/.git")
	for _, op := range erasedOperands(v) {
		if !inGitDir && !strings.Contains(op, ".git") {
			continue // resolving every operand costs more than this test
		}
		if p := cs.resolveIn(v.c, op); gitStorePath(p.Abs) {
			s.add(rDelGitHistory, v.prog+" erases "+op+", where the repository keeps its history: it cannot be recovered unless it was pushed; let git gc or git prune tidy the store",
				v.prog+" "+evJoin(v.args))
			return
		}
	}
}

// gitStorePath reports a path in a repository's object store or refs
// (.git/objects, .git/refs, .git/packed-refs).
func gitStorePath(abs string) bool {
	for _, part := range []string{"/.git/objects", "/.git/refs", "/.git/packed-refs"} {
		if i := strings.Index(abs, part); i >= 0 && (len(abs) == i+len(part) || abs[i+len(part)] == '/') {
			return true
		}
	}
	return false
}

// checkGitClean judges git clean -f with -d, -x or -X, which deletes
// every untracked (or ignored) file and directory of the work tree it
// runs in. In the project that is build output; run in the home or
// outside the project (cd ~ && git init && git clean -ffdx), it deletes
// whatever is there.
func (s *scan) checkGitClean(cs *cmdScan, v *cmdView) {
	sub, rest := gitSubcommand(v.args)
	if sub != "clean" || !hasFlag(rest, 'f', "force") || hasFlag(rest, 'n', "dry-run") ||
		!hasShortFlag(rest, 'd') && !hasShortFlag(rest, 'x') && !hasShortFlag(rest, 'X') {
		return
	}
	dir := "."
	for i := 0; i+1 < len(v.args)-len(rest); i++ {
		if v.args[i] == "-C" {
			dir = v.args[i+1]
		}
	}
	p := cs.resolveIn(v.c, dir)
	if p.Abs == "" || p.Abs == cs.root || isBelow(p.Abs, cs.root) {
		return
	}
	if why := criticalDir(p, cs.root, cs.home); why != "" {
		s.add(rDelRecursive, "git clean deletes every untracked file of "+why+": nothing could be recovered; run it in the project",
			"git "+evJoin(v.args))
	} else if cs.outsideProject(v, p.Abs) {
		s.add(rDelOutside, "git clean deletes every untracked file of "+p.Abs+", outside the project and the home: a human should approve it",
			"git "+evJoin(v.args))
	}
}

// keyOverwritten returns the private key ssh-keygen -f writes over when
// the line answers its "Overwrite (y/n)?" for it (yes y |, echo y |,
// <<< y), or "". Without an answer ssh-keygen asks, and a new key's
// name is everyday.
func (cs *cmdScan) keyOverwritten(v *cmdView) string {
	file := ""
	flagValues(v.args, 'f', "", func(f string) { file = f })
	if file == "" || hasShortFlag(v.args, 'y') || hasShortFlag(v.args, 'l') || hasShortFlag(v.args, 'p') || hasShortFlag(v.args, 'R') {
		return "" // -y prints the public key, -l a fingerprint, -p changes the passphrase, -R edits known_hosts
	}
	if sens, _ := cs.classifyArg(v.c, file); sens != sensPrivateKey {
		return ""
	}
	answered := false
	if text, ok := cs.stdinText(v); ok {
		answered = strings.HasPrefix(strings.TrimSpace(strings.ToLower(text)), "y")
	}
	if b := cs.before(v); len(b) > 0 {
		if u := cs.view(b[len(b)-1]); u != nil && u.prog == "yes" {
			answered = true
		}
	}
	if !answered {
		return ""
	}
	return file
}

// checkCredentialDestroy flags deleting, shredding or moving away keys
// and credential stores (not .env files, which projects recreate).
func (s *scan) checkCredentialDestroy(cs *cmdScan, v *cmdView) {
	if !s.enabled(rDelCredential) {
		return
	}
	ops := operands(v.args, "ns", []string{"--iterations", "--size"})
	if v.prog == "mv" {
		if len(ops) < 2 {
			return
		}
		// mv new.txt ~/.config/sops/age/keys.txt: the key it replaces is
		// gone.
		if dst := ops[len(ops)-1]; dst != "/dev/null" {
			switch baseName(dst) { // the names a key of its own is kept under
			case "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", "keys.txt", "credentials", "credentials.json":
			default:
				return
			}
			if sens, label := cs.classifyArg(v.c, dst); len(ops) == 2 && sens == sensPrivateKey {
				s.add(rDelCredential, "mv replaces "+label+" ("+dst+"): the key it held cannot be recovered; refuse it unless the user asked for exactly this",
					v.prog+" "+evJoin(v.args))
			}
			return
		}
		ops = ops[:len(ops)-1]
	}
	for _, op := range ops {
		if sens, label := cs.classifyArg(v.c, op); sens == sensUserSecret || sens == sensPrivateKey || sens == sensSystemSecret || sens == sensBrowser {
			s.add(rDelCredential, v.prog+" destroys "+label+" ("+op+"): keys and credentials cannot be recovered; refuse it unless the user asked for exactly this",
				v.prog+" "+evJoin(v.args))
			return
		}
	}
}

// checkMoveToNull judges mv SRC… /dev/null, a delete written as a move:
// a source that is the home, the workspace or a system directory is lost
// as rm -r would lose it. (Keys and credentials are checkCredentialDestroy's.)
func (s *scan) checkMoveToNull(cs *cmdScan, v *cmdView) {
	ops := operands(v.args, "tS", []string{"--target-directory", "--suffix", "--backup"})
	if len(ops) < 2 || ops[len(ops)-1] != "/dev/null" || !s.enabled(rDelRecursive) {
		return
	}
	for _, op := range ops[:len(ops)-1] {
		if why := criticalDir(cs.resolveIn(v.c, op), cs.root, cs.home); why != "" {
			s.add(rDelRecursive, "mv moves "+why+" onto /dev/null, which deletes it: nothing could be recovered; delete only the specific path you mean",
				"mv "+evJoin(v.args))
			return
		}
	}
}

func isOutputRedirect(op string) bool {
	switch op {
	case ">", ">>", ">|", "&>", "&>>", "<>", ">&":
		return true
	}
	return false
}

func (s *scan) checkRm(cs *cmdScan, v *cmdView) {
	if !hasFlag(v.args, 'r', "recursive") && !hasShortFlag(v.args, 'R') {
		return
	}
	ops := v.plainOperands()
	if len(ops) == 0 && v.c.Program == "xargs" {
		// echo ~ | xargs rm -rf: the operands come from the pipe.
		for _, i := range cs.before(v) {
			if u := cs.view(i); u != nil && (u.prog == "echo" || u.prog == "printf") {
				ops = u.args
			}
		}
	}
	for _, op := range ops {
		p := cs.resolveIn(v.c, op)
		if moved := cs.movedFrom(v, p.Abs); moved != "" {
			// mv ~/Documents /tmp/d && rm -rf /tmp/d deletes ~/Documents.
			op, p = moved, cs.resolveIn(nil, moved)
		}
		if base := baseName(strings.TrimSuffix(op, "/")); base == ".git" {
			s.add(rDelGitHistory, "recursively deletes "+op+": the repository's history cannot be recovered unless it was pushed; confirm this is intended", "rm "+evJoin(v.args))
		}
		if why := criticalDir(p, cs.root, cs.home); why != "" {
			s.add(rDelRecursive, "recursively deletes "+why+": nothing could be recovered; delete only the specific subdirectory you mean",
				"rm "+evJoin(v.args))
			return
		}
		if store := dataStoreDir(p.Abs); store != "" {
			// Here or on a remote host (ssh, ansible): the database's files.
			s.add(rInfraDestroy, "recursively deletes "+p.Abs+", "+store+"'s stored data: nothing brings it back; a human should approve it",
				"rm "+evJoin(v.args))
		} else if cs.outsideProject(v, p.Abs) {
			s.add(rDelOutside, "recursively deletes "+p.Abs+", outside the project and the home: a human should approve deleting a service's or a volume's files",
				"rm "+evJoin(v.args))
		}
		if isUnsetVarRisk(op) {
			s.add(rDelUnsetVar, "recursively deletes "+op+": if the variable is empty this deletes from /; check the variable is set (use ${VAR:?}) and name the path",
				"rm "+evJoin(v.args))
			continue
		}
		if dir := cdToVariable(cs, v); dir != "" && sweepsDir(op) {
			s.add(rDelUnsetVar, "recursively deletes "+op+" in "+dir+": if that is empty, cd goes to your home (or stays here) and this deletes everything in it; use cd \"${VAR:?}\" and name the path",
				"rm "+evJoin(v.args))
			return
		}
		// A value only known at run time is unknown, not empty: if it
		// turns out empty, ~/"$(x)" is the home.
		if emptied := withoutUnknown(op); emptied != op && emptied != "" {
			if why := criticalDir(cs.resolveIn(v.c, emptied), cs.root, cs.home); why != "" {
				s.add(rDelUnsetVar, "recursively deletes "+op+": if what it computes is empty this deletes "+why+"; name the path",
					"rm "+evJoin(v.args))
			}
		}
	}
}

// outsideProject reports whether abs, a directory v deletes below, lies
// outside the project, the user's home and the temporary directories: a
// service's data (/srv, /data, /var/www, /opt), a mounted volume. The
// home's own directories are the user's (a scratch checkout, an old
// download) and its critical ones are destructive.recursive-delete. A
// command run on another host (ssh, pdsh) has no project there and is not
// judged by it.
func (cs *cmdScan) outsideProject(v *cmdView, abs string) bool {
	if abs == "" || abs[0] != '/' || strings.HasPrefix(v.c.Dir, shell.UnknownDir) || strings.HasPrefix(abs, shell.UnknownDir) {
		return false
	}
	if abs == cs.root || isBelow(abs, cs.root) {
		return false
	}
	for _, tmp := range []string{"/tmp", "/var/tmp", "/dev/shm", "/private/tmp", "/private/var/folders", "/var/folders", "/run/user"} {
		if abs == tmp || isBelow(abs, tmp) {
			return false
		}
	}
	_, _, inHome := homeRel(abs, cs.home)
	return !inHome
}

// dataStoreDirs are where database and queue servers keep their data
// under /var/lib (and /var/opt for SQL Server).
var dataStoreDirs = map[string]string{
	"postgresql": "PostgreSQL", "pgsql": "PostgreSQL", "mysql": "MySQL", "mariadb": "MariaDB", "mongodb": "MongoDB",
	"redis": "Redis", "elasticsearch": "Elasticsearch", "opensearch": "OpenSearch", "cassandra": "Cassandra",
	"etcd": "etcd", "clickhouse": "ClickHouse", "influxdb": "InfluxDB", "rabbitmq": "RabbitMQ", "kafka": "Kafka",
	"zookeeper": "ZooKeeper", "neo4j": "Neo4j", "couchdb": "CouchDB", "minio": "MinIO", "mssql": "SQL Server",
}

// dataStoreDir names the server whose data directory abs is or lies in
// (/var/lib/postgresql/14/main), or returns "".
func dataStoreDir(abs string) string {
	rest, ok := strings.CutPrefix(abs, "/var/lib/")
	if !ok {
		rest, ok = strings.CutPrefix(abs, "/var/opt/")
	}
	if !ok {
		return ""
	}
	dir, _, _ := strings.Cut(rest, "/")
	return dataStoreDirs[dir]
}

// movedFrom returns the absolute path an earlier mv of the line moved to
// abs (or to a directory abs lies in), as it was before the move, or "".
func (cs *cmdScan) movedFrom(v *cmdView, abs string) string {
	for i := v.idx - 1; i >= 0; i-- {
		u := &cs.views[i]
		if u.prog != "mv" {
			continue
		}
		ops := operands(u.args, "tS", []string{"--target-directory", "--suffix"})
		if len(ops) != 2 {
			continue
		}
		dst := cs.resolveIn(u.c, ops[1]).Abs
		src := cs.resolveIn(u.c, ops[0]).Abs
		switch {
		case abs == dst:
			return src
		case isBelow(abs, dst):
			return src + abs[len(dst):]
		}
	}
	return ""
}

// cdToVariable returns the operand of the cd (or pushd) that set v's
// directory when that operand is only a variable or substitution
// (cd $DEPLOY_DIR), else "".
func cdToVariable(cs *cmdScan, v *cmdView) string {
	if !strings.HasPrefix(v.c.Dir, shell.UnknownDir) {
		return ""
	}
	dir := ""
	for i := range cs.views {
		u := &cs.views[i]
		if u.idx >= v.idx {
			break
		}
		if u.prog != "cd" && u.prog != "pushd" {
			continue
		}
		dir = ""
		// ${VAR:?} stops the shell when VAR is empty.
		if ops := u.plainOperands(); len(ops) == 1 && ops[0] != withoutUnknown(ops[0]) && withoutUnknown(ops[0]) == "" && !strings.Contains(ops[0], ":?") {
			dir = ops[0]
		}
	}
	return dir
}

// sweepsDir reports an rm operand that takes in everything of the
// current directory: ., ./, *, ./*, .[!.]*.
func sweepsDir(op string) bool {
	switch strings.TrimPrefix(op, "./") {
	case "", ".", "*", ".*", ".[!.]*", "{*,.*}":
		return true
	}
	return false
}

// withoutUnknown removes the parts of a word only known at run time
// ($(…), `…`, $NAME, ${…}; $HOME stays), as if each were empty.
func withoutUnknown(w string) string {
	if !strings.ContainsAny(w, "$`") {
		return w
	}
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c == '`':
			if j := strings.IndexByte(w[i+1:], '`'); j >= 0 {
				i += j + 1
				continue
			}
		case c == '$' && strings.HasPrefix(w[i:], "$HOME") || strings.HasPrefix(w[i:], "${HOME}"):
		case c == '$' && i+1 < len(w) && (w[i+1] == '(' || w[i+1] == '{'):
			open, close := w[i+1], byte(')')
			if open == '{' {
				close = '}'
			}
			depth := 0
			j := i + 1
			for ; j < len(w); j++ {
				if w[j] == open {
					depth++
				} else if w[j] == close {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if open == '{' && j < len(w) && strings.IndexByte(w[i:j], '?') >= 0 {
				b.WriteString(w[i : j+1]) // ${X:?}: the shell stops if it is empty
			}
			i = j
			continue
		case c == '$' && i+1 < len(w) && (w[i+1] == '_' || isAlnumByte(w[i+1])):
			j := i + 1
			for j < len(w) && (w[j] == '_' || isAlnumByte(w[j])) {
				j++
			}
			i = j - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isAlnumByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isUnsetVarRisk matches "$VAR/", "$VAR/*", "${VAR}/…" where the variable
// is not HOME (which the path resolver already expands).
func isUnsetVarRisk(op string) bool {
	if !strings.HasPrefix(op, "$") || strings.HasPrefix(op, "$HOME") || strings.HasPrefix(op, "${HOME}") || strings.Contains(op, ":?") {
		return false
	}
	i := strings.IndexByte(op, '/')
	if i < 0 {
		return false
	}
	rest := op[i:]
	return rest == "/" || rest == "/*" || rest == "/.*"
}

// findFilters are predicates that narrow what find touches to some
// files: by name, or to empty ones. Age, type, owner or mode do not:
// find . -type f -mtime +30 -delete takes most of a project.
var findFilters = []string{"-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-empty", "-wholename", "-iwholename"}

// findDeleters are the programs find's -exec runs to delete what it
// matches (truncate -s 0 empties each file).
var findDeleters = []string{"rm", "shred", "srm", "unlink", "wipe", "truncate"}

// findRemoves reports a find that deletes what it matches: -delete, or
// -exec / -execdir / -ok of a findDeleters program or one of extra.
func findRemoves(args []string, extra ...string) bool {
	for i, a := range args {
		switch {
		case a == "-delete":
			return true
		case (a == "-exec" || a == "-execdir" || a == "-ok") && i+1 < len(args):
			if p := baseName(args[i+1]); slices.Contains(findDeleters, p) || slices.Contains(extra, p) {
				return true
			}
		}
	}
	return false
}

func (s *scan) checkFindDelete(cs *cmdScan, v *cmdView) {
	if !findRemoves(v.args) {
		return
	}
	filtered := false
	for _, a := range v.args {
		filtered = filtered || slices.Contains(findFilters, a)
	}
	// Starting points come before the first expression word.
	for _, a := range v.args {
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
			if a == "-H" || a == "-L" || a == "-P" {
				continue
			}
			break
		}
		p := cs.resolveIn(v.c, a)
		if s.enabled(rDelGitHistory) && (strings.HasSuffix(p.Abs, "/.git") || gitStorePath(p.Abs)) && !filtered {
			// find .git -exec shred {} +: the history, as rm -rf .git.
			s.add(rDelGitHistory, "find erases everything under "+a+", where the repository keeps its history: it cannot be recovered unless it was pushed",
				"find "+evJoin(v.args))
			return
		}
		k, name := criticalClass(p, cs.root, cs.home)
		if k == critNone {
			if cs.outsideProject(v, p.Abs) {
				s.add(rDelOutside, "find deletes files in "+p.Abs+", outside the project and the home: a human should approve deleting a service's or a volume's files",
					"find "+evJoin(v.args))
				return
			}
			continue
		}
		// A filtered find inside the workspace is housekeeping; over the
		// whole system or a home it is not.
		if filtered && k == critWorkspace {
			continue
		}
		s.add(rFindDelete, "find deletes files across "+k.describe(name)+": limit it to a project subdirectory and a narrow -name",
			"find "+evJoin(v.args))
		return
	}
}

func (s *scan) checkRecursivePerms(cs *cmdScan, v *cmdView) {
	for i, op := range operands(v.args, "", []string{"--reference", "--from"}) {
		if i == 0 {
			continue // the mode or owner
		}
		if k, name := criticalClass(cs.resolveIn(v.c, op), cs.root, cs.home); k != critNone && k != critWorkspace {
			s.add(rRecursivePerms, v.prog+" -R changes ownership or permissions of "+k.describe(name)+": this can break the system and its security; target a specific directory",
				v.prog+" "+evJoin(v.args))
			return
		}
	}
}

// diskToolValued lists the short options of a disk tool that take a value.
func diskToolValued(prog string) string {
	switch prog {
	case "wipefs":
		return "otp"
	case "sgdisk":
		return "AbcdEfFinrtuRT"
	case "shred":
		return "ns" // -u is "remove", not a value
	case "blkdiscard":
		return "olp"
	}
	return "L"
}

// diskToolReadOnly reports the options of wipefs and sgdisk that only
// print: wipefs without --all / --offset (or with --no-act) lists the
// signatures; sgdisk with only print, verify and info options (or
// --pretend) changes nothing.
func diskToolReadOnly(v *cmdView) bool {
	switch v.prog {
	case "wipefs":
		if hasFlag(v.args, 'n', "no-act") {
			return true
		}
		return !hasFlag(v.args, 'a', "all") && !hasFlag(v.args, 'o', "offset") && !hasFlag(v.args, 't', "types")
	case "sgdisk":
		if hasFlag(v.args, 'P', "pretend") {
			return true
		}
		for i := 0; i < len(v.args); i++ {
			a := v.args[i]
			if a == "" || a[0] != '-' {
				continue
			}
			name, _, _ := strings.Cut(a, "=")
			switch name {
			case "-p", "--print", "-v", "--verify", "-O", "--print-mbr", "-L", "--list-types", "-D", "--display-alignment",
				"-V", "--version", "-?", "--help", "--usage", "-a", "--set-alignment":
			case "-i", "--info", "-b", "--backup":
				if !strings.Contains(a, "=") {
					i++ // the partition number / backup file
				}
			default:
				if len(a) > 2 && a[1] != '-' && strings.Trim(a[1:], "pvOLD") == "" {
					continue // grouped print options: -pv
				}
				return false
			}
		}
		return true
	}
	return false
}

// formatsImageFile reports mkfs writing a regular file inside the
// workspace or /tmp (a disk image), not a device: its target, the last
// operand that is not a block count, names no /dev path and nothing
// computed at run time.
func (cs *cmdScan) formatsImageFile(v *cmdView) bool {
	ops := operands(v.args, mkfsValued(v.prog), []string{"--type", "--label"})
	for len(ops) > 1 && isDigits(ops[len(ops)-1]) {
		ops = ops[:len(ops)-1] // mkfs.ext4 disk.img 1024 (block count)
	}
	if len(ops) == 0 {
		return false
	}
	target := ops[len(ops)-1]
	if strings.ContainsAny(target, "$`*?") || strings.HasPrefix(target, "/dev/") {
		return false
	}
	p := cs.resolveIn(v.c, target)
	if strings.HasPrefix(p.Abs, "/dev/") {
		return false
	}
	return underOrAt(p.Abs, "/tmp") || cs.root != "" && isBelow(p.Abs, cs.root)
}

// mkfsValued lists the short options of a mkfs family that take a value
// (-F is "force" for ext*, the FAT size for vfat).
func mkfsValued(prog string) string {
	switch prog {
	case "mkfs.ext2", "mkfs.ext3", "mkfs.ext4", "mke2fs":
		return "bCdeEgGiIJLmMNoOrtTUz"
	case "mkfs.vfat", "mkfs.fat", "mkfs.msdos", "mkdosfs":
		return "bDfFhilmMnrRsS"
	case "mkfs.xfs":
		return "bdilnprsLm"
	case "mkfs.btrfs":
		return "LdmnsOUrR"
	}
	return "tL"
}
