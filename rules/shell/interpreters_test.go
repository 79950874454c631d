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
