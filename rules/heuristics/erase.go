package heuristics

import (
	"path"
	"strings"

	"github.com/parapet-dev/parapet/rules/action"
)

// Erasing without -r. rm -f ~/*, shred -u ./* and truncate -s 0
// src/*.py leave directories standing but destroy every file a glob
// reaches, as surely as rm -rf. A glob of build output, logs or caches
// (rm -f *.pyc, truncate -s 0 logs/*.log) is housekeeping; what makes a
// glob ruinous is where it sweeps and what it matches:
//
//   - every name (*, .*, *.*) in a home, the workspace root or a user's
//     data directory (~/Documents, ~/.ssh, ~/projects);
//   - documents or source code there, or anywhere under the home, when
//     shredded or emptied (shred, truncate -s 0): no one empties code;
//   - anything in the filesystem root or a system directory.
//
// Listings piped into xargs reach here as their globs (rules/shell:
// ls | xargs rm is rm *).

// checkErase judges rm without -r, shred / wipe / srm, truncate -s 0
// and in-place edits that delete every line (sed -i d, perl -pi -e
// '$_=""').
// erasedOperands returns the files rm, unlink, shred, wipe, srm or
// truncate names, past the options' values.
func erasedOperands(v *cmdView) []string {
	switch v.prog {
	case "rm", "unlink":
		return v.plainOperands()
	case "shred", "wipe", "srm":
		return operands(v.args, diskToolValued("shred"), []string{"--iterations", "--size", "--random-source"})
	case "truncate":
		return operands(v.args, "sr", []string{"--size", "--reference"})
	}
	return nil
}

func (s *scan) checkErase(cs *cmdScan, v *cmdView) {
	if !s.enabled(rEraseMany) {
		return
	}
	var ops []string
	verb, empties := "deletes", false
	switch v.prog {
	case "rm", "unlink":
		if hasFlag(v.args, 'r', "recursive") || hasShortFlag(v.args, 'R') {
			return // checkRm's
		}
		ops = erasedOperands(v)
	case "shred", "wipe", "srm":
		ops, verb, empties = erasedOperands(v), "shreds", true
	case "truncate":
		if !truncatesToZero(v.args) {
			return
		}
		ops, verb, empties = erasedOperands(v), "empties", true
	case "sed", "gsed", "perl":
		files, scripts, ok := inPlaceScripts(v)
		if !ok || !emptiesEveryLine(v.prog, strings.Join(scripts, "\n")) {
			return
		}
		ops, verb, empties = files, "empties", true
		s.checkEmptiedFiles(cs, v, files)
	default:
		return
	}
	for _, op := range ops {
		if !strings.ContainsAny(op, "*?[") {
			continue
		}
		if where := erasedSweep(cs.resolveIn(v.c, op), cs.root, cs.home, empties); where != "" {
			s.add(rEraseMany, v.prog+" "+verb+" every file "+op+" matches in "+where+": nothing could be recovered; name the files you mean",
				v.prog+" "+evJoin(v.args))
			return
		}
	}
}

// checkRedirectErase judges an output redirection to a glob: for f in
// ~/src/*.go; do : > "$f"; done, or find's sh -c ': > "$1"' _ {}, writes
// over every file the glob matches, as truncate -s 0 would. (Written
// straight after >, a glob that matches several files is bash's error;
// as a loop's or find's value it is not.)
func (s *scan) checkRedirectErase(cs *cmdScan, v *cmdView) {
	if !s.enabled(rEraseMany) {
		return
	}
	for _, r := range v.c.Redirects {
		switch r.Op {
		case ">", ">|", "&>", ">&":
		default:
			continue // appends, reads, here-documents
		}
		if strings.HasPrefix(r.Target, "&") || !strings.ContainsAny(r.Target, "*?[") {
			continue
		}
		if where := erasedSweep(cs.resolveIn(v.c, r.Target), cs.root, cs.home, true); where != "" {
			s.add(rEraseMany, "> overwrites every file "+r.Target+" matches in "+where+": nothing could be recovered; name the files you mean",
				v.prog+" "+evJoin(v.args)+" "+r.Op+" "+r.Target)
			return
		}
	}
}

// emptiesEveryLine reports an in-place script that deletes every line:
// sed d, 1,$d, /./d, /.*/d; perl's $_ = "" or undef $_.
func emptiesEveryLine(prog, script string) bool {
	t := strings.Join(strings.Fields(script), "")
	if prog == "perl" {
		return t == `$_=""` || t == `$_="";` || t == `$_=''` || t == `$_='';` || t == "undef$_" || t == "undef$_;"
	}
	switch t {
	case "d", "1,$d", "/./d", "/.*/d", "/^/d", "1,$d;":
		return true
	}
	return false
}

// checkEmptiedFiles judges named files an in-place edit empties: keys
// and credentials, and the shell history.
func (s *scan) checkEmptiedFiles(cs *cmdScan, v *cmdView, files []string) {
	for _, f := range files {
		p := cs.resolveIn(v.c, f)
		if sens, label := classify(p.Abs, cs.home); sens == sensUserSecret || sens == sensPrivateKey || sens == sensSystemSecret || sens == sensBrowser {
			s.add(rDelCredential, v.prog+" empties "+label+" ("+f+"): keys and credentials cannot be recovered; refuse it", v.prog+" "+evJoin(v.args))
			return
		}
		if isHistoryFile(p.Abs, cs.home) {
			s.add(rDefHistory, v.prog+" empties the shell history "+f+": leave it as it is", v.prog+" "+evJoin(v.args))
			return
		}
		// The user's own configuration: a dotfile of the home, a file of
		// ~/.ssh, ~/.config and the other user directories.
		if k := criticalKind(action.Path{Abs: parentDir(p.Abs)}, cs.root, cs.home); k == critHome && strings.HasPrefix(baseName(p.Abs), ".") || k == critUserDir {
			s.add(rEraseMany, v.prog+" empties "+f+", the user's own configuration: nothing could be recovered; edit the lines you mean", v.prog+" "+evJoin(v.args))
			return
		}
	}
}

// erasedSweep says where the glob p sweeps when erasing what it matches
// is ruinous (see above), or "". empties: the files are shredded or
// emptied rather than deleted.
func erasedSweep(p action.Path, root, home string, empties bool) string {
	dir, pattern := path.Split(p.Abs)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "/"
	}
	if strings.ContainsAny(dir, "*?[") {
		return "" // a glob of directories: too loose to say
	}
	k, name := criticalClass(action.Path{Abs: dir}, root, home)
	everything := sweepsDir(pattern) || pattern == "*.*"
	switch k {
	case critRoot, critSystem, critHoldsHome, critHoldsWorkspace:
		return k.describe(name)
	case critHome, critWorkspace, critUserDir:
		if everything || workFile(pattern) {
			return k.describe(name)
		}
	case critNone:
		// Emptying code or documents anywhere in the home or workspace.
		if empties && workFile(pattern) && (home != "" && isBelow(dir, home) || root != "" && isBelow(dir, root)) {
			return dir
		}
	}
	return ""
}

// workFile reports a glob that matches someone's work by its extension:
// source code and documents (*.py, *.go, *.md, *.docx), not the build
// output, logs and caches that are deleted every day.
func workFile(pattern string) bool {
	ext, ok := strings.CutPrefix(path.Ext(pattern), ".")
	if !ok || strings.ContainsAny(ext, "*?[") {
		return false
	}
	switch strings.ToLower(ext) {
	case "py", "go", "js", "ts", "jsx", "tsx", "rb", "java", "kt", "c", "h", "cc", "cpp", "hpp", "rs", "php", "swift", "cs",
		"scala", "sh", "sql", "md", "txt", "rst", "tex", "doc", "docx", "odt", "pdf", "xls", "xlsx", "ods", "ppt", "pptx",
		"csv", "jpg", "jpeg", "png", "heic", "mov", "mp4", "pages", "numbers", "key", "ipynb":
		return true
	}
	return false
}

// truncatesToZero reports truncate -s 0 (--size=0, -s0, --size 0).
func truncatesToZero(args []string) bool {
	zero := false
	flagValues(args, 's', "size", func(v string) { zero = zero || v == "0" })
	return zero
}

// checkIndirectErases runs checkIndirectErase on the line's commands.
func (s *scan) checkIndirectErases(cs *cmdScan) {
	for i := range cs.views {
		switch v := &cs.views[i]; v.prog {
		case "ln", "cp", "rsync", "tar", "git":
			s.checkIndirectErase(cs, v)
		case "sed", "gsed", "perl":
			s.checkErase(cs, v) // in-place edits that delete every line
		}
	}
}

// checkIndirectErase judges commands that destroy files without naming
// a delete: ln -sf /dev/null FILE and cp /dev/null FILE replace a file
// with nothing; rsync --delete makes a directory the copy of another and
// deletes the rest; tar --remove-files into /dev/null archives files
// nowhere and deletes them; git clean -f in a work tree that is a home
// deletes everything git does not track there.
func (s *scan) checkIndirectErase(cs *cmdScan, v *cmdView) {
	ev := func() string { return v.prog + " " + evJoin(v.args) }
	switch v.prog {
	case "ln", "cp":
		ops := operands(v.args, "StT", []string{"--suffix", "--target-directory"})
		if len(ops) != 2 || ops[0] != "/dev/null" || v.prog == "ln" && !hasShortFlag(v.args, 'f') && !hasLongFlag(v.args, "force") {
			return
		}
		p := cs.resolveIn(v.c, ops[1])
		if sens, label := cs.classifyArg(v.c, ops[1]); sens == sensUserSecret || sens == sensPrivateKey || sens == sensSystemSecret || sens == sensBrowser {
			s.add(rDelCredential, v.prog+" replaces "+label+" ("+ops[1]+") with /dev/null: keys and credentials cannot be recovered; refuse it", ev())
		} else if isHistoryFile(p.Abs, cs.home) {
			s.add(rDefHistory, v.prog+" replaces the shell history "+ops[1]+" with /dev/null: leave it as it is", ev())
		}
	case "rsync":
		if !hasLongFlag(v.args, "delete") && !hasLongFlag(v.args, "del") && !hasLongFlag(v.args, "delete-before") &&
			!hasLongFlag(v.args, "delete-during") && !hasLongFlag(v.args, "delete-after") && !hasLongFlag(v.args, "delete-delay") {
			return
		}
		ops := operands(v.args, "eBfT", []string{"--rsh", "--filter", "--exclude", "--include", "--temp-dir", "--rsync-path", "--password-file"})
		if len(ops) < 2 || remoteHost(ops[len(ops)-1]) != "" {
			return
		}
		if why := criticalDir(cs.resolveIn(v.c, ops[len(ops)-1]), cs.root, cs.home); why != "" {
			s.add(rDelRecursive, "rsync --delete deletes whatever in "+why+" the source does not hold: delete only the specific subdirectory you mean", ev())
		}
	case "tar":
		archive := ""
		flagValues(v.args, 'f', "file", func(a string) { archive = a })
		if !hasLongFlag(v.args, "remove-files") || archive != "/dev/null" {
			return
		}
		// Whatever it names is deleted and kept nowhere.
		if ops := operands(v.args, "fCTX", []string{"--file", "--directory", "--files-from", "--exclude-from", "--exclude"}); len(ops) > 0 {
			s.add(rDelRecursive, "tar --remove-files archives into /dev/null and deletes "+strings.Join(ops, " ")+": nothing is kept", ev())
		}
	case "git":
		sub, rest := gitSubcommand(v.args)
		if sub != "clean" || !hasShortFlag(rest, 'f') && !hasLongFlag(rest, "force") || hasShortFlag(rest, 'n') || hasLongFlag(rest, "dry-run") {
			return
		}
		tree := ""
		flagValues(v.args, 0, "work-tree", func(t string) { tree = t })
		if tree == "" {
			return // the repository's own work tree: git clean's everyday use
		}
		if k, name := criticalClass(cs.resolveIn(v.c, tree), cs.root, cs.home); k != critNone && k != critWorkspace {
			s.add(rDelRecursive, "git clean with the work tree "+tree+" deletes every file git does not track in "+k.describe(name)+": nothing could be recovered", ev())
		}
	}
}
