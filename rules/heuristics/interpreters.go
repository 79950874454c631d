package heuristics

import (
	"strings"

	"github.com/parapet-dev/parapet/rules/shell"
)

// Code handed to another interpreter (python -c, node -e, ruby -e, perl -e,
// php -r, lua -e, awk, python - <<EOF, …) is judged by its effects on
// files: the paths it names as string literals are judged as a command
// naming them would be, by what the code does — reads of credentials,
// writes to startup files and persistence locations, recursive deletes.
// (The commands it starts are parsed by rules/shell as nested scripts;
// sockets and downloads are the revshell and rce rules.)

// codeWriteMarkers show code that writes or appends to a file.
var codeWriteMarkers = []string{"'w'", "\"w\"", "'a'", "\"a\"", "'wb'", "'ab'", "\"wb\"", "\"ab\"", "'w+'", "'a+'",
	"write_text", "write_bytes", "writefile", "appendfile", "file.write", "file.open", "file_put_contents",
	"fwrite", "io.open", ">>", "openfile", "createwritestream", "spurt", "writelines", "write(", "o_wronly", "o_append"}

// codeDeleteMarkers show code that deletes files or trees.
var codeDeleteMarkers = []string{"rmtree", "rm_rf", "rm_r", "rmsync", "rmdirsync", "unlink", "remove(", "removedirs",
	"rmdir", "rimraf", "remove_tree", "delete(", "rm(", "rmpath", "fileutils.rm", "os.remove", "truncate"}

// The marker sets search code once for all their markers, not once per
// marker (a one-liner is searched for both sets at most once).
var (
	codeWriteSet  = newFoldSet(codeWriteMarkers...)
	codeDeleteSet = newFoldSet(codeDeleteMarkers...)
)

func (s *scan) checkInterpreterCode(cs *cmdScan) {
	for i := range cs.views {
		v := &cs.views[i]
		if v.prog == "" {
			continue
		}
		lang, code, ok := shell.InterpreterProgram(v.prog, v.args, v.c.Redirects)
		if !ok && lang != "" && v.c.PipedProgram != "" {
			code, ok = v.c.PipedProgram, true
		}
		if !ok || code == "" || lang == "" {
			continue
		}
		// The markers are searched only once a literal names a path
		// (most one-liners name none): 0 unknown, 1 no, 2 yes.
		var writes, deletes uint8
		has := func(memo *uint8, markers *foldSet) bool {
			if *memo == 0 {
				*memo = 1
				if markers.in(code) {
					*memo = 2
				}
			}
			return *memo == 2
		}
		// HOME + '/.bashrc', path.join(os.homedir(), '.ssh', …): a dotfile
		// name joined to the home is a path in the home.
		homeJoin := strings.Contains(code, "home") || strings.Contains(code, "HOME") || strings.Contains(code, "expanduser")
		shell.CodeLiterals(code, func(lit string) {
			if homeJoin && len(lit) > 1 && (lit[0] == '.' || strings.HasPrefix(lit, "/.")) && !strings.HasPrefix(lit, "./") && !strings.HasPrefix(lit, "..") {
				lit = "~/" + strings.TrimPrefix(lit, "/")
			}
			if !looksLikeCodePath(lit) {
				return
			}
			p := cs.resolveIn(v.c, lit)
			if has(&writes, codeWriteSet) {
				if r, what, ok := persistTarget(p, cs.home); ok {
					s.add(r, persistMessage(r, what)+" (from "+v.prog+" code)", lit)
				}
				if isSystemFile(p.Abs) && !strings.HasPrefix(p.Abs, "/dev/") {
					if sens, _ := classify(p.Abs, cs.home); sens == sensSystemSecret || isAccountFile(p.Abs) {
						s.add(rPrivAccount, "writes "+p.Abs+" from "+v.prog+" code: this changes who can log in or become root; refuse it", lit)
					}
				}
			}
			if has(&deletes, codeDeleteSet) {
				if why := criticalDir(p, cs.root, cs.home); why != "" {
					s.add(rDelRecursive, v.prog+" code deletes "+why+": nothing could be recovered; delete only the specific path you mean", lit)
				}
			}
			if sens, label := classify(p.Abs, cs.home); sens != sensNone && sens != sensAccountList {
				s.add(credentialRule(sens), credentialMessage(sens, label, lit)+" (from "+v.prog+" code)", lit)
			}
		})
	}
}

// looksLikeCodePath reports whether a string literal of code names a file
// worth judging: an absolute or home path, or a dotfile.
func looksLikeCodePath(lit string) bool {
	if lit == "" || len(lit) > 4096 || strings.ContainsAny(lit, "\n\x00") || strings.Contains(lit, "://") {
		return false
	}
	return lit[0] == '/' || lit[0] == '~' || strings.HasPrefix(lit, "$HOME") || strings.HasPrefix(lit, ".env") ||
		strings.HasPrefix(lit, ".ssh") || strings.HasPrefix(lit, ".aws")
}
