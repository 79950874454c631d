package shell

import "testing"

func TestInlineProgram(t *testing.T) {
	tests := []struct {
		lang string
		args []string
		want string
		ok   bool
	}{
		{"python", []string{"-c", "x"}, "x", true},
		{"python", []string{"-Ic", "x"}, "x", true},
		{"python", []string{"-cx"}, "x", true},
		{"python", []string{"-Bucx=1"}, "x=1", true},
		{"python", []string{"-Wignore", "s.py"}, "", false},
		{"python", []string{"-m", "http.server"}, "", false},
		{"python", []string{"-c"}, "", false},
		{"perl", []string{"-we", "x"}, "x", true},
		{"perl", []string{"-E", "say 1"}, "say 1", true},
		{"perl", []string{"-lnE", "x"}, "x", true},
		{"perl", []string{"-lnex"}, "x", true},
		{"perl", []string{"-pie", "s/a/b/", "f"}, "", false}, // -p -i with the backup suffix "e"
		{"perl", []string{"-MLWP::Simple", "-e", "x"}, "x", true},
		{"ruby", []string{"-rsocket", "-e", "x"}, "x", true},
		{"ruby", []string{"-rsocket"}, "", false},
		{"ruby", []string{"-nex"}, "x", true},
		{"php", []string{"-rx;"}, "x;", true},
		{"lua", []string{"-ex"}, "x", true},
		{"js", []string{"-pe", "1"}, "1", true},
		{"js", []string{"--eval=x"}, "x", true},
		{"js", []string{"-ex"}, "", false}, // node: "bad option"
		{"julia", []string{"--eval", "x"}, "x", true},
	}
	for _, tt := range tests {
		got, ok := InlineProgram(tt.lang, tt.args)
		if got != tt.want || ok != tt.ok {
			t.Errorf("InlineProgram(%s, %q) = %q, %v; want %q, %v", tt.lang, tt.args, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFoldCode(t *testing.T) {
	tests := []struct{ code, want string }{
		// home expressions, whatever the language
		{`require('fs').rmSync(require('os').homedir(), {recursive: true})`, `require('fs').rmSync("$HOME", {recursive: true})`},
		{`fs.readFileSync(os.homedir() + '/.ssh/id_rsa')`, `fs.readFileSync("$HOME/.ssh/id_rsa")`},
		{`x = process.env.HOME + "/.aws/credentials"`, `x = "$HOME/.aws/credentials"`},
		{`process.env.HOMEBREW_PREFIX`, `process.env.HOMEBREW_PREFIX`},
		{`path.join(os.homedir(), '.ssh', 'id_ed25519')`, `"$HOME/.ssh/id_ed25519"`},
		{`require('path').join(require('os').homedir(), '.kube')`, `"$HOME/.kube"`},
		{`remove_tree($ENV{HOME})`, `remove_tree("$HOME")`},
		{`open F, ">>$ENV{HOME}/.bashrc"`, `open F, ">>$HOME/.bashrc"`},
		{`print ` + "`cat $ENV{HOME}/.ssh/id_rsa`", `print ` + "`cat $HOME/.ssh/id_rsa`"},
		{`unlink($ENV{'HOME'} . "/.ssh/id_rsa")`, `unlink("$HOME/.ssh/id_rsa")`},
		{`FileUtils.rm_rf(Dir.home)`, `FileUtils.rm_rf("$HOME")`},
		{`File.join(Dir.home, ".ssh")`, `"$HOME/.ssh"`},
		{`File.read(ENV['HOME'] + "/.netrc")`, `File.read("$HOME/.netrc")`},
		{`File.read("#{Dir.home}/.netrc")`, `File.read("$HOME/.netrc")`},
		{`File.read("#{ENV["HOME"]}/.netrc")`, `File.read("$HOME/.netrc")`},
		// a member named by a joined literal is a member
		{`require('child_'+'process')['ex'+'ec']('id')`, `require("child_process").exec('id')`},
		{`o["a b"] + x['k'] + 'c'`, `o["a b"] + x.k + 'c'`},
		{`File.truncate(File.expand_path("~/.bash_history"), 0)`, `File.truncate("~/.bash_history", 0)`},
		{`File.expand_path(".ssh", "~")`, `"~/.ssh"`},
		{`echo file_get_contents(getenv("HOME")."/.aws/credentials");`, `echo file_get_contents("$HOME/.aws/credentials");`},
		{`unlink($_SERVER['HOME'] . '/.ssh/id_rsa');`, `unlink("$HOME/.ssh/id_rsa");`},
		{`echo "{$_SERVER['HOME']}/x";`, `echo "$HOME/x";`},
		{`await Deno.remove(Deno.env.get('HOME'), {recursive: true})`, `await Deno.remove("$HOME", {recursive: true})`},
		{"Deno.writeTextFile(`${Deno.env.get('HOME')}/.bashrc`, x)", "Deno.writeTextFile(`$HOME/.bashrc`, x)"},
		{`open(os.environ['HOME'] + '/.bashrc', 'a')`, `open("$HOME/.bashrc", 'a')`},
		{`open(os.path.join(os.getenv("HOME", "/root"), ".pypirc"))`, `open("$HOME/.pypirc")`},
		{`(pathlib.Path.home() / '.ssh' / 'id_rsa').read_text()`, `("$HOME/.ssh/id_rsa").read_text()`},
		{`Path.home().joinpath('.docker', 'config.json')`, `"$HOME/.docker/config.json"`},
		{`open(f"{os.environ['HOME']}/.netrc")`, `open(f"$HOME/.netrc")`},
		{`os.system("rm -rf " + os.path.expanduser("~"))`, `os.system("rm -rf ~")`},
		{`Paths.get(System.getProperty("user.home"), ".m2", "settings.xml")`, `"$HOME/.m2/settings.xml"`},
		{`join("/", $ENV{HOME}, ".ssh")`, `"$HOME/.ssh"`},
		{`io.open(os.getenv("HOME") .. "/.netrc")`, `io.open("$HOME/.netrc")`},
		{`unlink(file.path(Sys.getenv("HOME"), ".ssh"), recursive=TRUE)`, `unlink("$HOME/.ssh", recursive=TRUE)`},
		{`rm(joinpath(homedir(), ".ssh"), recursive=true)`, `rm("$HOME/.ssh", recursive=true)`},
		// names assigned the home
		{`const h = require('os').homedir(); fs.rmSync(h + '/.ssh', {recursive: true})`, `const h = "$HOME"; fs.rmSync("$HOME/.ssh", {recursive: true})`},
		{`my $h = $ENV{HOME}; unlink "$h/.ssh/id_rsa"`, `my $h = "$HOME"; unlink "$HOME/.ssh/id_rsa"`},
		{`$h = getenv("HOME"); echo file_get_contents("$h/.netrc");`, `$h = "$HOME"; echo file_get_contents("$HOME/.netrc");`},
		{`h = Dir.home; FileUtils.rm_rf("#{h}/.ssh")`, `h = "$HOME"; FileUtils.rm_rf("$HOME/.ssh")`},
		{`home = os.path.expanduser('~'); open(f"{home}/.bashrc", "a")`, `home = "~"; open(f"~/.bashrc", "a")`},
		{`h = os.homedir(); h = 'dist'; rm(h)`, `h = "$HOME"; h = 'dist'; rm(h)`},
		{`h = os.homedir(); x.h = 1; print(x.h)`, `h = "$HOME"; x.h = 1; print(x.h)`},
		{`if (h == os.homedir()) {}`, `if (h == "$HOME") {}`},
		// left alone
		{`print(", ".join(["a", "b"]))`, `print(", ".join(["a", "b"]))`},
		{`console.log(require('./package.json').version)`, `console.log(require('./package.json').version)`},
		{`print('it\'s' + x)`, `print('it\'s' + x)`},
		{`"a".length + 'b'`, `"a".length + 'b'`},
	}
	for _, tt := range tests {
		if got := FoldCode(tt.code); got != tt.want {
			t.Errorf("FoldCode(%s)\n got %s\nwant %s", tt.code, got, tt.want)
		}
	}
}

func TestCodeEffects(t *testing.T) {
	type e = CodeEffect
	tests := []struct {
		code string
		want []CodeEffect
	}{
		{`require('fs').rmSync("$HOME/.ssh", {recursive: true})`, []e{{CodeDelete, "$HOME/.ssh"}}},
		{`fs.rmdirSync('/home/dev', {recursive:true})`, []e{{CodeDelete, "/home/dev"}}},
		{`fs.truncateSync('/etc/passwd', 0)`, []e{{CodeWrite, "/etc/passwd"}}},
		{`fs.writeFileSync("$HOME/.bashrc", 'x'); fs.unlinkSync('a.txt')`, []e{{CodeDelete, "a.txt"}, {CodeWrite, "$HOME/.bashrc"}}},
		{`remove_tree("$HOME")`, []e{{CodeDelete, "$HOME"}}},
		{`unlink glob("$HOME/.ssh/*")`, []e{{CodeDelete, "$HOME/.ssh/*"}}},
		{`open F, ">>$HOME/.bashrc"; print F "x"`, []e{{CodeWrite, "$HOME/.bashrc"}}},
		{`open(my $fh, '>', "$HOME/.ssh/authorized_keys")`, []e{{CodeWrite, "$HOME/.ssh/authorized_keys"}}},
		{`open(F, "<$HOME/.aws/credentials")`, nil},
		{`open('/etc/hosts', 'a').write(x)`, []e{{CodeWrite, "/etc/hosts"}}},
		{`open('/etc/hosts').read()`, nil},
		{`open(p, mode="w")`, []e{{CodeWrite, ""}}},
		{`open(my $fh, '>', $out)`, []e{{CodeWrite, ""}}},
		{`unlink $f for @old`, []e{{CodeDelete, ""}}},
		{`p.unlink(); q.write_text("x")`, []e{{CodeDelete, ""}, {CodeWrite, ""}}},
		{`fopen("/var/log/auth.log", "w")`, []e{{CodeWrite, "/var/log/auth.log"}}},
		{`File.truncate("~/.bash_history", 0)`, []e{{CodeWrite, "~/.bash_history"}}},
		{`File.write("$HOME/.zshrc", x, mode: "a")`, []e{{CodeWrite, "$HOME/.zshrc"}}},
		{`FileUtils.rm_rf(Dir.glob("$HOME/*"))`, []e{{CodeDelete, "$HOME/*"}}},
		{`file_put_contents("$HOME/.bashrc", "x", FILE_APPEND);`, []e{{CodeWrite, "$HOME/.bashrc"}}},
		{`await Deno.writeTextFile("$HOME/.profile", s, {append: true})`, []e{{CodeWrite, "$HOME/.profile"}}},
		{`fs.copyFileSync('evil.sh', "$HOME/.bashrc")`, []e{{CodeWrite, "$HOME/.bashrc"}}},
		{`"$HOME/.ssh/id_rsa".unlink()`, []e{{CodeDelete, "$HOME/.ssh/id_rsa"}}},
		{`("$HOME/.ssh/id_rsa").unlink()`, []e{{CodeDelete, ""}, {CodeDelete, "$HOME/.ssh/id_rsa"}}},
		{`fs.rmSync('dist', {recursive: true, force: true})`, []e{{CodeDelete, "dist"}}},
		{`print("hello")`, nil},
		{`fs.rmSync(dir); arr.remove(x)`, []e{{CodeDelete, ""}, {CodeDelete, ""}}},
	}
	for _, tt := range tests {
		got := CodeEffects(tt.code)
		if len(got) != len(tt.want) {
			t.Errorf("CodeEffects(%s) = %v, want %v", tt.code, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("CodeEffects(%s) = %v, want %v", tt.code, got, tt.want)
				break
			}
		}
	}
}

func TestHostedCode(t *testing.T) {
	tests := []struct {
		program string
		args    []string
		stdin   string
		lang    string
		code    string
	}{
		{"gdb", []string{"-batch", "-ex", `python import os; os.system("id")`}, "", "python", "import os; os.system(\"id\")\n"},
		{"gdb", []string{"-q", "-ex", "py print(1)", "-ex", "bt"}, "", "python", "print(1)\n"},
		{"gdb", []string{"-batch"}, "python\nimport os\nos.system('id')\nend\nbt\n", "python", "import os\nos.system('id')\n"},
		{"gdb", []string{"-batch", "-ex", "bt", "./app", "core"}, "", "", ""},
		{"lldb", []string{"-o", "script import os; os.system('id')"}, "", "python", "import os; os.system('id')\n"},
		{"vim", []string{"-c", ":py3 import os; os.system('id')", "-c", "q"}, "", "python", "import os; os.system('id')\n"},
		{"nvim", []string{"--headless", "+lua os.execute('id')", "+q"}, "", "lua", "os.execute('id')\n"},
		{"deno", []string{"eval", "-p", "Deno.version"}, "", "js", "Deno.version"},
		{"deno", []string{"run", "-A", "-"}, "console.log(1)", "js", "console.log(1)"},
		{"deno", []string{"run", "main.ts"}, "", "js", ""},
		{"jshell", []string{"-q"}, "System.out.println(1)", "java", "System.out.println(1)"},
	}
	for _, tt := range tests {
		var redirs []Redirect
		if tt.stdin != "" {
			redirs = []Redirect{{Op: "<<<", Target: tt.stdin}}
		}
		lang, code, _ := InterpreterProgram(tt.program, tt.args, redirs)
		if lang != tt.lang && tt.lang != "" || code != tt.code {
			t.Errorf("InterpreterProgram(%s %q) = %q, %q; want %q, %q", tt.program, tt.args, lang, code, tt.lang, tt.code)
		}
	}
}

// Commands code runs on another host (paramiko, pywinrm, node-ssh) are
// followed as the local process calls are.
func TestRemoteExecCalls(t *testing.T) {
	for lang, tc := range map[string]struct{ code, want string }{
		"python": {`c.connect('h'); c.exec_command('cat /etc/shadow')`, "cat /etc/shadow"},
		"js":     {`s.connect({host:'h'}).then(()=>s.execCommand('id; uname -a'))`, "id; uname -a"},
	} {
		cmds, _ := embeddedCommands(lang, tc.code)
		if len(cmds) != 1 || cmds[0] != tc.want {
			t.Errorf("%s: %q, want [%q]", lang, cmds, tc.want)
		}
	}
}
