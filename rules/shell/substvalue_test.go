package shell

import (
	"slices"
	"testing"
)

// A substitution the line fixes is worked out, through text filters too;
// decoding a literal records a decoded-word evasion.
func TestSubstValuePipelines(t *testing.T) {
	tests := []struct {
		src     string
		arg     string // the first command's first argument
		decoded bool
	}{
		{"cat ~/$(echo LnNzaC9pZF9yc2E= | base64 -d)", "~/.ssh/id_rsa", true},
		{"cat ~/$(base64 --decode <<< LnNzaC9pZF9yc2E=)", "~/.ssh/id_rsa", true},
		{"cat $(printf %s 2F6574632F736861646F77 | xxd -r -p)", "/etc/shadow", true},
		{"cat $(echo wodahs/cte/ | rev)", "/etc/shadow", true},
		{"cat $(echo /rgp/funqbj | tr a-z n-za-m)", "/etc/shadow", true},
		{"cat $(echo src | cat)", "src", false},
		{"cat $(echo SRC | tr A-Z a-z)", "src", false}, // a case change hides nothing
		{"ls $(dirname /a/b/c)", "/a/b", false},
		{"cat $(echo notbase64! | base64 -d)", "$(echo notbase64! | base64 -d)", false}, // not base64: unknown
		{"cat $(echo AAEC | base64 -d)", "$(echo AAEC | base64 -d)", false},             // binary: unknown
		{"cat $(curl -s x | base64 -d)", "$(curl -s x | base64 -d)", false},
		{"cat $(echo a | base64)", "$(echo a | base64)", false}, // encoding is not known here
	}
	for _, tt := range tests {
		s := Parse(tt.src)
		if len(s.Commands) == 0 || len(s.Commands[0].Args) == 0 {
			t.Errorf("%q: no command", tt.src)
			continue
		}
		if got := s.Commands[0].Args[0]; got != tt.arg {
			t.Errorf("%q: arg %q, want %q", tt.src, got, tt.arg)
		}
		got := slices.ContainsFunc(s.Evasions, func(e Evasion) bool { return e.Kind == "decoded-word" })
		if got != tt.decoded {
			t.Errorf("%q: decoded-word evasion %v, want %v (%v)", tt.src, got, tt.decoded, s.Evasions)
		}
		s.Release()
	}
}
