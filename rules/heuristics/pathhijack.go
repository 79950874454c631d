package heuristics

import "strings"

// A program of one's own ahead of the real one on PATH. ~/bin and
// ~/.local/bin come before /usr/bin on most PATHs, so a file named sudo
// written there is what runs the next time anyone types sudo: it asks for
// the password and keeps it. Tools of one's own there are everyday; the
// ones checked here are those that take passwords, keys or signatures.

// hijackedTools are the programs whose stand-in sees secrets.
var hijackedTools = setOf("sudo", "su", "doas", "pkexec", "ssh", "scp", "sftp", "ssh-add", "ssh-agent", "passwd", "gpg", "gpg2",
	"pinentry", "git", "kinit", "op", "aws", "gcloud", "kubectl", "vault")

// scriptTools are programs that system and maintenance scripts call by
// name, beyond those the rules already know.
var scriptTools = setOf("tar", "gzip", "gunzip", "zip", "unzip", "cp", "mv", "rm", "mkdir", "chmod", "chown", "date", "id",
	"whoami", "hostname", "uname", "ps", "service", "systemctl", "mount", "umount", "find", "sed", "awk", "sort", "uniq",
	"cut", "tr", "xargs", "python", "python3", "perl", "bash", "sh", "rsync", "mysqldump", "pg_dump", "mysql", "psql",
	"logger", "mail", "sendmail", "ip", "ifconfig", "netstat", "ss", "kill", "pkill", "sleep", "basename", "dirname")

// checkPathHijack judges files the line writes, copies or links into a
// user's command directory under such a name.
func (s *scan) checkPathHijack(cs *cmdScan) {
	if !s.enabled(rPersistPathHijack) {
		return
	}
	// A PATH put ahead of what the line wrote: followed only when some
	// command sets PATH, as few do.
	setsPath := false
	for i := range cs.views {
		setsPath = setsPath || len(pathSettings(&cs.views[i])) > 0 || len(cs.ciPathDirs(&cs.views[i])) > 0
	}
	var written []string // what the line wrote by name so far
	for i := range cs.views {
		v := &cs.views[i]
		if setsPath {
			if dir, name := cs.pathAheadOfWritten(v, written); dir != "" {
				s.add(rPersistPathHijack, "puts "+dir+", where the line just wrote "+name+", ahead of the system's programs on PATH: a program run from here that calls "+name+" runs the line's file instead; refuse it",
					v.c.Name+" "+evJoin(v.c.Args))
				return
			}
			if len(v.c.Redirects) > 0 || v.prog == "cp" || v.prog == "mv" || v.prog == "ln" || v.prog == "install" || v.prog == "tee" {
				for _, t := range cs.writeTargets(v) {
					if len(written) < 16 {
						written = append(written, cs.resolveIn(v.c, t).Abs)
					}
				}
			}
		}
		switch v.prog {
		case "cp", "mv", "ln", "install", "tee":
		default:
			if len(v.c.Redirects) == 0 {
				continue // writes nothing by name
			}
		}
		for _, t := range cs.writeTargets(v) {
			abs := cs.resolveIn(v.c, t).Abs
			name := baseName(abs)
			if isCommandDir(abs, cs.home) {
				// cp SRC… ~/bin/: each source keeps its name there.
				name = ""
				for _, src := range v.plainOperands() {
					if hijackedTools[baseName(src)] {
						name, abs = baseName(src), abs+"/"+baseName(src)
					}
				}
			}
			if dir := commandDir(abs, cs.home); dir != "" && hijackedTools[name] {
				s.add(rPersistPathHijack, "puts a "+name+" of its own into "+dir+", ahead of the real one on PATH: it would run instead and see what is typed into it; refuse it",
					v.prog+" "+evJoin(v.args))
				return
			}
		}
	}
}

// pathSettings returns the PATH values v sets: by a prefix assignment
// (PATH=/tmp:$PATH ./run), or as env, export and the other builtins that
// set variables do (export PATH=/tmp:$PATH).
func pathSettings(v *cmdView) []string {
	var out []string
	collect := func(words []string) {
		for _, a := range words {
			if val, ok := strings.CutPrefix(a, "PATH="); ok {
				out = append(out, val)
			}
		}
	}
	collect(v.c.Assigns)
	if v.prog == "env" || setsVariables(v.prog) {
		collect(v.args)
	}
	return out
}

// pathAheadOfWritten returns a directory v's PATH setting (a prefix
// assignment or an export) puts first, where a file of written lies, and
// that file's name: printf … > /tmp/curl; PATH=/tmp:$PATH ./backup.sh
// makes every curl the script runs the line's file.
func (cs *cmdScan) pathAheadOfWritten(v *cmdView, written []string) (string, string) {
	if len(written) == 0 {
		return "", ""
	}
	for _, val := range append(pathSettings(v), cs.ciPathDirs(v)...) {
		first, _, _ := strings.Cut(val, ":")
		if first == "" || strings.HasPrefix(first, "$") {
			continue
		}
		dir := cs.resolveIn(v.c, first).Abs
		for _, w := range written {
			// Named like a program the system has (curl, tar, cat), not a
			// project's own wrapper (./bin/gow).
			if name := baseName(w); parentDir(w) == dir && (knownPrograms[name] != 0 || progFamily(name) != 0 || hijackedTools[name] || scriptTools[name]) {
				return dir, name
			}
		}
	}
	return "", ""
}

// ciPathDirs returns the directories v writes to $GITHUB_PATH (echo DIR
// >> "$GITHUB_PATH"), which every later step of the job puts first on
// PATH.
func (cs *cmdScan) ciPathDirs(v *cmdView) []string {
	if len(v.c.Redirects) == 0 || !strings.Contains(cs.act.Command, "GITHUB_PATH") {
		return nil
	}
	var out []string
	for _, r := range v.c.Redirects {
		if isOutputRedirect(r.Op) && namesVariable(r.Target, "GITHUB_PATH") {
			if text, ok := cs.producedText(v); ok {
				for line := range strings.Lines(text) {
					if line = strings.TrimSpace(line); line != "" {
						out = append(out, line)
					}
				}
			}
		}
	}
	return out
}
