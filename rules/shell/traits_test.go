package shell

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// TestProgramTraits checks that every program name the follow-ups of
// emitCall test for has the trait that lets emitCall call them: a name
// added to one of their switches without a trait would be skipped.
func TestProgramTraits(t *testing.T) {
	want := map[string]uint16{
		"nestedScript": ptNested, "runsCode": ptRuns | ptInterp, "interpreterLang": ptInterp, "escapes": ptRuns,
		"unwrap": ptWrap, "track": ptTrack, "commandDir": ptDir, "checkBashSettings": ptSettings,
	}
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, f := range pkgs["shell"].Files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || want[fn.Name.Name] == 0 {
				continue
			}
			bits := want[fn.Name.Name]
			check := func(lit ast.Expr, suffix string) {
				b, ok := lit.(*ast.BasicLit)
				if !ok || b.Kind != token.STRING {
					return
				}
				name, _ := strconv.Unquote(b.Value)
				seen[fn.Name.Name]++
				if traitsOf(name+suffix)&bits == 0 {
					t.Errorf("%s tests for %q, which has no trait %b", fn.Name.Name, name+suffix, bits)
				}
			}
			isProgram := func(e ast.Expr) bool {
				id, ok := e.(*ast.Ident)
				return ok && id.Name == "program"
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.SwitchStmt:
					if x.Tag != nil && isProgram(x.Tag) {
						for _, c := range x.Body.List {
							for _, e := range c.(*ast.CaseClause).List {
								check(e, "")
							}
						}
					}
				case *ast.BinaryExpr:
					if x.Op == token.EQL && isProgram(x.X) {
						check(x.Y, "")
					}
				case *ast.CallExpr:
					if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "HasPrefix" &&
						len(x.Args) == 2 && isProgram(x.Args[0]) {
						check(x.Args[1], "1")
					}
				}
				return true
			})
		}
	}
	for name := range want {
		if seen[name] == 0 && name != "unwrap" {
			t.Errorf("found no program names in %s", name)
		}
	}
	for _, tt := range []struct {
		program string
		traits  uint16
	}{
		{"ls", 0}, {"go", 0}, {"", 0}, {"p", 0}, {"pythonista", 0}, {"bash", ptNested}, {"sudo", ptWrap},
		{"python3.12", ptInterp}, {"busybox", ptNested | ptRuns}, {"git", ptRuns | ptDir},
	} {
		if got := traitsOf(tt.program); got != tt.traits {
			t.Errorf("traitsOf(%q) = %b, want %b", tt.program, got, tt.traits)
		}
	}
}
