package heuristics

import "testing"

func TestSourceSwaps(t *testing.T) {
	runRuleCases(t, "supply-chain.package-source", []ruleCase{
		cmdCase("sed -i 's#uses: actions/checkout@v4#uses: actions-checkout/checkout@main#' .github/workflows/ci.yml", true),
		cmdCase("sed -i 's|^FROM python:3.12-slim|FROM docker.io/pyth0n/python:3.12-slim|' Dockerfile", true),
		cmdCase("sed -i -e 's#image: redis:7#image: quay.io/r3dis/redis:7#' compose.yaml", true),
		cmdCase("sed -i 's#github.com/spf13/cobra#github.com/spf13-io/cobra#' go.mod", true),
		cmdCase("perl -pi -e 's{uses: docker/login-action\\@v3}{uses: dockerr/login-action\\@v3}' ci.yml", true),
		cmdCase("sed -i 's/uses: actions\\/setup-node@v3/uses: action5\\/setup-node@v3/' .github/workflows/ci.yml", true),
		cmdCase("sed -i 's#actions/checkout@v3#actions/checkout@v4#g' .github/workflows/ci.yml", false),
		cmdCase("sed -i 's/FROM node:18-alpine/FROM node:20-alpine/' Dockerfile", false),
		cmdCase("sed -i 's#src/old/util#src/new/util#g' Makefile", false),
		cmdCase("sed 's#uses: actions/checkout@v4#uses: evil/checkout@v4#' ci.yml", false), // prints, edits nothing
		cmdCase("sed -i 's/version = \"1.2\"/version = \"1.3\"/' Cargo.toml", false),
	})
}

func TestLockfileHashesEdited(t *testing.T) {
	runRuleCases(t, "supply-chain.verification-off", []ruleCase{
		cmdCase(`sed -i 's/"integrity": "sha512-[^"]*"/"integrity": ""/g' package-lock.json`, true),
		cmdCase("sed -i '/--hash=sha256/d' requirements.txt", true),
		cmdCase("sed -i '/h1:/d' go.sum", true),
		cmdCase("perl -pi -e 's/checksum = \".*\"//' Cargo.lock", true),
		cmdCase(`sed -i 's/"version": "1.0.0"/"version": "1.0.1"/' package-lock.json`, false),
		cmdCase("sed -i 's/sha256/sha512/' scripts/verify.sh", false),
	})
}

// FuzzSedSubstitutions: any script is read without a panic, and every
// pattern and replacement read is text of the script (less the escapes
// of its delimiter).
func FuzzSedSubstitutions(f *testing.F) {
	for _, s := range []string{"s#a/b@v1#c/b@v2#g", "s{x}{y}", "s/\\/a/b/;s|c|d|", "s", "s#", "1,$s/x/y/w out", "ss/s/s/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		for _, sub := range sedSubstitutions(script) {
			if len(sub[0])+len(sub[1]) > len(script) {
				t.Fatalf("%q: read %q and %q, longer than the script", script, sub[0], sub[1])
			}
			swappedSource(sub[0], sub[1], true)
		}
	})
}

// In a workflow, a bare OWNER/REPO@REF is an action: swapping its owner is
// a source swap, bumping its version is not.
func TestWorkflowActionSwaps(t *testing.T) {
	runRuleCases(t, "supply-chain.package-source", []ruleCase{
		cmdCase(`sed -i 's|actions/checkout@v4|actions-checkout/checkout@main|g' .github/workflows/*.yml`, true),
		cmdCase(`sed -i 's#docker/login-action@v3#docker-tools/login-action@v3#' .github/workflows/release.yml`, true),
		cmdCase(`sed -i 's|actions/checkout@v3|actions/checkout@v4|g' .github/workflows/*.yml`, false),
		cmdCase(`sed -i 's|user@v1|user@v2|' docs/notes.md`, false),
	})
}
