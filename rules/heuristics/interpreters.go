package heuristics

import (
	"strings"

	"github.com/parapet-dev/parapet/rules/shell"
)

// Code handed to another interpreter (python -c, node -e, ruby -e, perl -e,
// php -r, lua -e, awk, python - <<EOF, deno eval, gdb -ex 'python …', …)
// is judged by its effects on files: the paths it names as string
// literals are judged as a command naming them would be, by what the code
// does — reads of credentials, writes to startup files and persistence
// locations, recursive deletes. The code is folded first
// (shell.FoldCode): the home named through the language (os.homedir(),
// $ENV{HOME}, Dir.home, getenv("HOME"), …) is "$HOME", and literals
// joined to it are one path. The paths its delete calls are given are
// judged as rm's operands (judgeCodeDelete); those its write, truncate
// and open-for-writing calls are given are among the command's write
// targets (forEachWriteTarget). (The commands it starts are parsed by
// rules/shell as nested scripts; sockets and downloads are the revshell
// and rce rules.)

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
		hc := v.hostedProgram()
		code := hc.code
		if code == "" {
			continue
		}
		// A path the code names is taken for the one it writes or
		// deletes when the code does so to a path the calls do not show
		// (h = os.homedir(); fs.rmSync(h)): markers of writing or
		// deleting, and no call given only literal paths. The markers
		// are searched only once a literal names a path (most one-liners
		// name none): 0 unknown, 1 no, 2 yes.
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
		// h = os.homedir(); h + '/.bashrc': a dotfile name in code that
		// names the home is taken for a path in the home (the folded code
		// has joined the literals it could).
		homeJoin := strings.Contains(code, "home") || strings.Contains(code, "HOME") || strings.Contains(code, "expanduser")
		shell.CodeLiterals(code, func(lit string) {
			// perl's open(F, ">>~/.bashrc"), open(F, "<~/.netrc"): the
			// mode is not part of the path.
			if mode, path := shell.OpenMode(lit); mode != "" {
				lit = path
			}
			if homeJoin && len(lit) > 1 && (lit[0] == '.' || strings.HasPrefix(lit, "/.")) && !strings.HasPrefix(lit, "./") && !strings.HasPrefix(lit, "..") {
				lit = "~/" + strings.TrimPrefix(lit, "/")
			}
			if !looksLikeCodePath(lit) {
				return
			}
			p := cs.resolveIn(v.c, lit)
			if has(&writes, codeWriteSet) && hc.unknown(shell.CodeWrite) {
				if r, what, ok := persistTarget(p, cs.home); ok {
					s.add(r, persistMessage(r, what)+" (from "+v.prog+" code)", lit)
				}
				if isSystemFile(p.Abs) && !strings.HasPrefix(p.Abs, "/dev/") {
					if sens, _ := classify(p.Abs, cs.home); sens == sensSystemSecret || isAccountFile(p.Abs) {
						s.add(rPrivAccount, "writes "+p.Abs+" from "+v.prog+" code: this changes who can log in or become root; refuse it", lit)
					}
				}
			}
			if has(&deletes, codeDeleteSet) && hc.unknown(shell.CodeDelete) {
				if why := criticalDir(p, cs.root, cs.home); why != "" {
					s.add(rDelRecursive, v.prog+" code deletes "+why+": nothing could be recovered; delete only the specific path you mean", lit)
				}
			}
			if what := captureDevice(p.Abs); what != "" {
				s.add(rCollectCapture, v.prog+" code opens "+what+" "+lit+": nothing in a coding task needs it, and it records the user; a human should approve it", lit)
			}
			if strings.HasPrefix(p.Abs, "/proc/") && strings.HasSuffix(p.Abs, "/mem") {
				s.add(rCredProcessMemory, v.prog+" code reads process memory ("+lit+"), where the keys, passwords and tokens a program uses sit in the clear; refuse it", lit)
			}
			if sens, label := classify(p.Abs, cs.home); sens != sensNone && sens != sensLeakOnly {
				s.add(credentialRule(sens), credentialMessage(sens, label, lit)+" (from "+v.prog+" code)", lit)
			}
		})
		if m := browserStoreLibrary(code); m != "" {
			s.add(rCredBrowser, v.prog+" code uses "+m+", a library that decrypts browsers' saved cookies and passwords: refuse it", m)
		}
		for _, e := range hc.effects {
			if e.Op == shell.CodeDelete && e.Path != "" {
				s.judgeCodeDelete(cs, v, e.Path)
			}
		}
	}
}

// judgeCodeDelete judges a path interpreter code hands to a delete call
// (fs.rmSync, shutil.rmtree, unlink, File.delete, Deno.remove, …) as rm
// would be judged deleting it: a critical directory, keys and
// credentials, the shell history, system logs and files. (What the code
// writes and truncates is among the command's write targets, judged by
// every rule that judges writes.)
func (s *scan) judgeCodeDelete(cs *cmdScan, v *cmdView, path string) {
	p := cs.resolveIn(v.c, path)
	from := " (from " + v.prog + " code)"
	if why := criticalDir(p, cs.root, cs.home); why != "" {
		s.add(rDelRecursive, v.prog+" code deletes "+why+": nothing could be recovered; delete only the specific path you mean", path)
	}
	if baseName(strings.TrimSuffix(p.Abs, "/")) == ".git" {
		s.add(rDelGitHistory, v.prog+" code deletes "+path+": the repository's history cannot be recovered unless it was pushed; confirm this is intended", path)
	}
	switch sens, label := classify(p.Abs, cs.home); {
	case sens == sensUserSecret || sens == sensPrivateKey || sens == sensSystemSecret || sens == sensBrowser:
		s.add(rDelCredential, "deletes "+label+" ("+path+")"+from+": keys and credentials cannot be recovered; refuse it unless the user asked for exactly this", path)
	case isHistoryFile(p.Abs, cs.home):
		s.add(rDefHistory, "erases the shell history file "+path+from+": leave it as it is", path)
	case isLogPath(p.Abs):
		s.add(rDefLogTamper, "erases the system log "+path+from+": logs are how anyone finds out what happened; refuse it", path)
	default:
		s.judgeSystemWrite(cs, v, path, "deletes")
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

// browserStoreLibrary returns the library code loads whose purpose is
// decrypting a browser's cookie or password store (browser_cookie3,
// pycookiecheat, chrome-cookies-secure, LaZagne), or "".
func browserStoreLibrary(code string) string {
	if !strings.Contains(code, "ookie") && !strings.Contains(code, "azagne") {
		return ""
	}
	for _, m := range []string{"browser_cookie3", "browser_cookie", "pycookiecheat", "chrome-cookies-secure", "chrome_cookies",
		"browser-cookies", "lazagne", "laZagne"} {
		if strings.Contains(code, m) {
			return m
		}
	}
	return ""
}
