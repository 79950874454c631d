package heuristics

import "testing"

func TestInterpreterKind(t *testing.T) {
	for prog, want := range map[string]string{
		"bash": "shell", "yash": "shell", "python": "python", "python3": "python", "python3.12": "python", "python2.7": "python",
		"pypy3": "python", "python-config": "", "pythonw": "", "perl": "perl", "perl5.36": "perl", "perlbrew": "",
		"ruby": "ruby", "irb": "ruby", "node": "node", "bun": "node", "php": "php", "php8": "php", "php8.1": "php",
		"php8.12": "", "phpunit": "", "php-cgi": "", "lua": "lua", "lua5.4": "lua", "luajit": "lua", "luarocks": "",
		"pwsh": "powershell", "powershell.exe": "powershell", "expect": "other", "curl": "", "": "", "p": "", "l": "",
	} {
		if got := interpreterKind(prog); got != want {
			t.Errorf("interpreterKind(%q) = %q, want %q", prog, got, want)
		}
	}
}
