package heuristics

import (
	"strings"
	"testing"
)

// The readers of this session's edit and manifest formats take text an
// agent writes: they must not panic, and what they return must come from
// the text.
func FuzzEditReaders(f *testing.F) {
	f.Add("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n")
	f.Add("command: [\"sh\", \"-c\", \"id\"]\nargs:\n  - x\nscript: |\n  echo hi\n")
	f.Add(`.a.b = "v" | .c += [{"remote": "https://x"}] | del(.jobs.scan)`)
	f.Add("[testenv]\ncommands =\n  pytest\n")
	f.Add("<executable>sh</executable><arguments><argument>-c</argument><argument>id &amp;&amp; ls</argument></arguments>")
	f.Add("g/re/s//new/\n/x/s//y/g\n")
	f.Add(`verify = True, "secure": false, 'k' => 1, f(true)`)
	f.Add(`@Roles('a', "b") :sym permit(:x)`)
	f.Add("generator x {\n  provider = \"sh -c 'id'\"\n}\n\\! date\nshell id\n!ls\n")
	f.Add("ALTER TABLE IF EXISTS audit_log DISABLE TRIGGER ALL; SET pgaudit.log = 'none'; LOAD DATA LOCAL INFILE '/x'")
	f.Add("pytest {env:HOME}/x {homedir} {env:A:b} {\n-agentlib:jdwp=server=y,address=*:5005\nAddType php .jpg\nadmin 0.0.0.0:2019\nmy_hdr Bcc: a@b")
	f.Fuzz(func(t *testing.T, text string) {
		for _, p := range unifiedDiff(text) {
			for _, line := range strings.Split(strings.TrimSuffix(p.added, "\n"), "\n") {
				if line != "" && !strings.Contains(text, "+"+line) {
					t.Fatalf("added line %q is not in the diff", line)
				}
			}
		}
		for _, c := range workloadCommands(text) {
			_ = c
		}
		for _, kv := range filterAssignments(text) {
			if !strings.Contains(text, kv[1]) {
				t.Fatalf("value %q is not in the filter", kv[1])
			}
		}
		for _, d := range filterDeletions(text) {
			if !strings.Contains(text, d) {
				t.Fatalf("deletion %q is not in the filter", d)
			}
		}
		toxCommands(text)
		mavenCommands(text)
		addressPatterns(text)
		for k := range boolAssignments(text) {
			if k == "" {
				t.Fatal("empty key")
			}
		}
		quotedWords(text)
		looseningEdit(text, strings.ToUpper(text))
		guardBypass(strings.ToLower(text), strings.ToLower(unescapeRegex(text)))
		securityFlagFlipped(text, text+" = false")
		topLevelValue(text)
		numbersIn(text)
		for _, c := range append(prismaGenerators(text), toolRCCommands(text)...) {
			if !strings.Contains(text, strings.TrimSpace(c)) {
				t.Fatalf("command %q is not in the file", c)
			}
		}
		sqlProtectionOff(text)
		auditTableTriggersOff(strings.ToUpper(text))
		toxSubstitutions(text)
		jdwpListen(text)
		uploadsRunAsCode(".htaccess", text)
		caddyAdminOpen("Caddyfile", text)
		mailCopies(".forward", text)
		mailCopies(".muttrc", text)
		mailcapRunsAttachments(".mailcap", text)
		devcontainerHostAccess(text)
		scannerSuppressions(".trivyignore", text)
		buildTestsOff("build.gradle.kts", text)
		if d := lifecycleExpiryDays(text); d < -1 {
			t.Fatalf("lifecycleExpiryDays = %d", d)
		}
	})
}
