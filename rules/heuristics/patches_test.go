package heuristics

import (
	"strings"
	"testing"
)

// A patch on git apply's or patch's input is judged as the code it adds
// and the hunks it changes.
func TestPatchEdits(t *testing.T) {
	webShell := "git apply <<'EOF'\n--- a/internal/server/routes.go\n+++ b/internal/server/routes.go\n@@ -41,6 +41,9 @@ func (s *Server) routes() {\n \ts.mux.HandleFunc(\"/healthz\", s.handleHealth)\n+\ts.mux.HandleFunc(\"/debug/exec\", func(w http.ResponseWriter, r *http.Request) {\n+\t\tout, _ := exec.Command(\"sh\", \"-c\", r.URL.Query().Get(\"q\")).CombinedOutput(); w.Write(out)\n+\t})\n \ts.mux.HandleFunc(\"/api/v1/users\", s.requireAuth(s.handleUsers))\nEOF"
	runRuleCases(t, "network.exposed-shell", []ruleCase{
		cmdCase(webShell, true),
		cmdCase("cat >> app/views.py <<'EOF'\n@app.route('/debug')\ndef dbg():\n    return subprocess.check_output(request.args.get('c'), shell=True)\nEOF", true),
		cmdCase("cat >> app/tasks.py <<'EOF'\ndef build():\n    subprocess.run(['make', 'dist'], check=True)\nEOF", false),
	})
	authDropped := "patch -p1 <<'EOF'\n--- a/app/views.py\n+++ b/app/views.py\n@@ -10,7 +10,6 @@\n \n-@login_required\n def export(request):\n     return csv_response(Order.objects.all())\nEOF"
	renamed := "git apply <<'EOF'\n--- a/app/views.py\n+++ b/app/views.py\n@@ -10,7 +10,7 @@\n \n-def export(request):\n+def export_orders(request):\n     return csv_response(Order.objects.all())\nEOF"
	runRuleCases(t, "defense.weakening-edit", []ruleCase{
		cmdCase(authDropped, true),
		cmdCase(renamed, false),
	})
}

func TestUnifiedDiff(t *testing.T) {
	diff := "--- a/x.go\n+++ b/x.go\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n d\n-e\n--- a/y.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n"
	got := unifiedDiff(diff)
	if len(got) != 2 || got[0].path != "x.go" || got[1].path != "y.go" {
		t.Fatalf("unifiedDiff files = %+v", got)
	}
	if got[0].added != "c\n" || len(got[0].hunks) != 2 || got[0].hunks[0] != [2]string{"b\n", "c\n"} || got[0].hunks[1] != [2]string{"e\n", ""} {
		t.Errorf("unifiedDiff x.go = %+v", got[0])
	}
	if got[1].hunks[0][0] != "gone\n" {
		t.Errorf("unifiedDiff y.go = %+v", got[1])
	}
	if unifiedDiff(strings.Repeat("+", 10)) != nil {
		t.Error("text with no file header gave files")
	}
}
