package shell

import (
	"reflect"
	"strings"
	"testing"
)

// codeEffectsByName is CodeEffects as it was written first: a scan of
// the code per call name. CodeEffects finds every name in one pass
// (callSites) and must answer exactly as this does.
func codeEffectsByName(code string) []CodeEffect {
	if len(code) > maxCodeScan {
		code = code[:maxCodeScan]
	}
	var out []CodeEffect
	for _, call := range effectCalls {
		forEachCall(code, call.name, call.op == CodeDelete, func(rest string) {
			if strings.HasPrefix(strings.TrimLeft(rest, " \t"), ")") {
				return
			}
			p, _ := nthLiteralArg(rest, call.arg)
			out = append(out, CodeEffect{call.op, p})
		})
	}
	for _, name := range openCalls {
		forEachCall(code, name, name == "open", func(rest string) {
			if p, ok := openedForWriting(rest); ok {
				out = append(out, CodeEffect{CodeWrite, p})
			}
		})
	}
	return append(out, receiverEffects(code)...)
}

// forEachCall calls fn with the text after each call of name in code
// (after its "(", or after the space of perl's and ruby's unlink "x").
// A call without parentheses must go on with a literal or a glob, unless
// bare says it may go on with anything (perl's open F, ">x", unlink $f).
func forEachCall(code, name string, bare bool, fn func(rest string)) {
	afterKeywords(code, []string{name}, func(before byte, rest string) {
		if isIdentByte(before) || rest != "" && isIdentByte(rest[0]) {
			return
		}
		switch {
		case strings.HasPrefix(rest, "("):
			fn(rest[1:])
		case strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, "\t"):
			if r := strings.TrimLeft(rest, " \t"); r != "" && (bare || r[0] == '"' || r[0] == '\'' || r[0] == '(' || hasWrapper(r)) {
				fn(strings.TrimPrefix(r, "("))
			}
		}
	})
}

var codeEffectsSamples = []string{
	`import os; os.remove("/home/dev/.ssh/id_rsa"); shutil.rmtree('/home/dev/project')`,
	`require('fs').rmSync('/home/dev', {recursive: true}); fs.writeFileSync("/etc/passwd", "x")`,
	`File.write("/home/dev/.bashrc", "x"); IO.write('a', 'b'); MyFile.write("no")`,
	`unlink "/home/dev/.netrc"; open(F, ">>/home/dev/.profile"); open my $f, '<', 'x'`,
	`Path("/home/dev/.aws/credentials").unlink(); new File("/tmp/x").delete()`,
	`$rm("/x"); rmrm("/y"); x.rm("/z"); copy2("a", "/home/dev/.ssh/authorized_keys")`,
	`FileUtils.rm_rf(Dir.glob("/home/dev/*")); fopen("/etc/hosts", "w"); openSync('/tmp/a', 'a')`,
	`Files.write(Paths.get("/home/dev/x"), b); Files.writeString(p, s); spurt "/etc/x", "y"`,
	"perl -e 'unlink glob(\"/home/dev/*\")'", `open ("x", "w")`, "rm\t'/x'", `remove  ( "/a" )`,
}

func TestCodeEffectsOnePassMatchesByName(t *testing.T) {
	for _, code := range codeEffectsSamples {
		if got, want := CodeEffects(code), codeEffectsByName(code); !reflect.DeepEqual(got, want) {
			t.Errorf("CodeEffects(%q)\n got %+v\nwant %+v", code, got, want)
		}
	}
}

func FuzzCodeEffectsOnePass(f *testing.F) {
	for _, code := range codeEffectsSamples {
		f.Add(code)
	}
	f.Fuzz(func(t *testing.T, code string) {
		if got, want := CodeEffects(code), codeEffectsByName(code); !reflect.DeepEqual(got, want) {
			t.Errorf("CodeEffects(%q)\n got %+v\nwant %+v", code, got, want)
		}
	})
}

func BenchmarkCodeEffects(b *testing.B) {
	for _, impl := range []struct {
		name string
		fn   func(string) []CodeEffect
	}{{"one-pass", CodeEffects}, {"by-name", codeEffectsByName}} {
		b.Run(impl.name, func(b *testing.B) {
			for b.Loop() {
				for _, code := range codeEffectsSamples {
					impl.fn(code)
				}
			}
		})
	}
}

func FuzzCopyProgram(f *testing.F) {
	for _, s := range []string{"COPY t TO PROGRAM 'id'", "copy (select 1) from program 'a''b'", "COPY x PROGRAM", "COPY t TO PROGRAM '"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stmt string) {
		if c, ok := copyProgram(stmt); ok && len(c) >= len(stmt) {
			t.Errorf("copyProgram(%q) = %q: longer than the statement", stmt, c)
		}
	})
}
