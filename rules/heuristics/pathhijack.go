package heuristics

// A program of one's own ahead of the real one on PATH. ~/bin and
// ~/.local/bin come before /usr/bin on most PATHs, so a file named sudo
// written there is what runs the next time anyone types sudo: it asks for
// the password and keeps it. Tools of one's own there are everyday; the
// ones checked here are those that take passwords, keys or signatures.

// hijackedTools are the programs whose stand-in sees secrets.
var hijackedTools = setOf("sudo", "su", "doas", "pkexec", "ssh", "scp", "sftp", "ssh-add", "ssh-agent", "passwd", "gpg", "gpg2",
	"pinentry", "git", "kinit", "op", "aws", "gcloud", "kubectl", "vault")

// checkPathHijack judges files the line writes, copies or links into a
// user's command directory under such a name.
func (s *scan) checkPathHijack(cs *cmdScan) {
	if !s.enabled(rPersistPathHijack) {
		return
	}
	for i := range cs.views {
		v := &cs.views[i]
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
