package heuristics

import (
	"strings"
	"testing"
)

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
			borrowedHost(sub[0], sub[1])
			checksumEmptied(sub[0], sub[1])
			indexDemoted(sub[0], sub[1])
			unknownBuildBackend(sub[0], sub[1])
		}
		for _, h := range hostNames(script) {
			if !isDomainName(h) || !strings.Contains(script, h) && !strings.Contains(strings.ToLower(script), h) {
				t.Fatalf("%q: host %q is not a domain of the text", script, h)
			}
		}
		emptySettings(script)
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

// A download host moved to one named like it on another domain, and a
// download's digest emptied, in the files a build reads.
func TestBorrowedHostsAndDigests(t *testing.T) {
	for _, c := range []struct {
		pat, repl, from, to string
	}{
		{"releases.hashicorp.com", "releases.hashicorp-dl.com", "releases.hashicorp.com", "releases.hashicorp-dl.com"},
		{"https://registry.npmjs.org/", "https://registry.npmjs.co/", "registry.npmjs.org", "registry.npmjs.co"},
		{"get.helm.sh", "get.heim.sh", "", ""},    // .sh is left out: a script's name
		{"dl.k8s.io", "dl.k8s-mirror.io", "", ""}, // k8s: too short a name to judge
		{"files.pythonhosted.org", "files.pyth0nhosted.org", "files.pythonhosted.org", "files.pyth0nhosted.org"},
		{"gradle-8.7-bin.zip", "gradle-8.8-bin.zip", "", ""},
		{"registry.npmjs.org", "npm.pkg.github.com", "", ""},
		{"cdn.acme.io", "static.acme.io", "", ""},
	} {
		from, to := borrowedHost(c.pat, c.repl)
		if from != c.from || to != c.to {
			t.Errorf("borrowedHost(%q, %q) = %q, %q; want %q, %q", c.pat, c.repl, from, to, c.from, c.to)
		}
	}
	runRuleCases(t, "supply-chain.package-source", []ruleCase{
		cmdCase(`sed -i 's#releases.hashicorp.com#releases.hashicorp-dl.com#' scripts/install-tools.sh`, true),
		cmdCase(`sed -i 's#https://files.pythonhosted.org/#https://files.pyth0nhosted.org/#' Dockerfile`, true),
		cmdCase(`sed -i 's/api.acme.io/api.acme-staging.io/' config/dev.env`, false), // not where a build downloads
		cmdCase(`sed -i 's#terraform_1.8.5#terraform_1.9.0#' scripts/install-tools.sh`, false),
	})
	runRuleCases(t, "supply-chain.verification-off", []ruleCase{
		cmdCase(`sed -i 's/^TERRAFORM_SHA256=.*/TERRAFORM_SHA256=/' scripts/install-tools.sh`, true),
		cmdCase(`sed -i 's/checksum: ".*"/checksum: ""/' tools.yaml`, true),
		cmdCase(`sed -i 's/"sha256": "[0-9a-f]*"/"sha256": ""/' tools.json`, true), // a JSON key, quoted
		cmdCase(`sed -i 's/^TERRAFORM_SHA256=.*/TERRAFORM_SHA256=5d1b6d6a8e2f0c7b/' scripts/install-tools.sh`, false),
		cmdCase(`sed -i 's/^TERRAFORM_VERSION=.*/TERRAFORM_VERSION=/' scripts/install-tools.sh`, false),
	})
}
