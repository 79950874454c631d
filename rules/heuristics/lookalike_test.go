package heuristics

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLookalikePackages(t *testing.T) {
	runRuleCases(t, "supply-chain.lookalike-package", []ruleCase{
		// One edit from a well-known name, in every installer.
		cmdCase(`pip install reqeusts`, true),
		cmdCase(`pip3 install --user djanga`, true),
		cmdCase(`python -m pip install "pandsa>=2"`, true),
		cmdCase(`uv pip install fastapj`, true),
		cmdCase(`npm i -S loadsh`, true),
		cmdCase(`pnpm add -w crossenv`, true),
		cmdCase(`yarn add @types/nodee`, true),
		cmdCase(`npx prettierr --check .`, true),
		cmdCase(`gem install rest-cliet`, true),
		cmdCase(`cargo add tokoi`, true),
		cmdCase(`go get github.com/stretchr/testfy@latest`, true),
		cmdCase(`go install github.com/spf31/cobra-cli@latest`, true),
		cmdCase(`composer require monolog/monolgo`, true),
		// A well-known package from an owner that does not publish it.
		cmdCase(`pip install git+https://github.com/psf-fork/requests@main`, true),
		cmdCase(`pip install "numpy @ https://github.com/numpy-ci/builds/releases/download/v1/numpy.whl"`, true),
		cmdCase(`yarn add react-scripts@https://github.com/fb-tools/react-scripts/archive/v5.tar.gz`, true),
		cmdCase(`poetry add git+https://github.com/pandas-devs/pandas-fast.git`, true),
		cmdCase(`cargo add serde --git https://github.com/serde-rs-io/serde`, true),
		// Written into manifests.
		cmdCase(`echo 'requests @ git+https://github.com/psf-requests/requests' >> requirements.txt`, true),
		cmdCase(`echo 'replace github.com/gorilla/mux => github.com/gorllla/mux v1.8.1' >> go.mod`, true),
		cmdCase(`sed -i 's#"lodash": "^4.17.21"#"lodash": "https://github.com/lod-ash/lodash/tarball/v4"#' package.json`, true),
		cmdCase(`sed -i 's|^\[dependencies\]|[dependencies]\nserde = { git = "https://github.com/serde-fork/serde" }|' Cargo.toml`, true),
		cmdCase(`echo "gem 'devize'" >> Gemfile`, true),

		// Well-known names, their real neighbours, unknown names far from
		// all of them, publishers' own repositories, local paths.
		cmdCase(`pip install requests scipy scapy`, false),
		cmdCase(`pip install -r requirements.txt -e .`, false),
		cmdCase(`pip install git+https://github.com/huggingface/transformers`, false),
		cmdCase(`pip install acme-internal-tooling`, false),
		cmdCase(`npm i preact react react-dom`, false),
		cmdCase(`npm install ./packages/ui`, false),
		cmdCase(`pnpm add -w typescript`, false),
		cmdCase(`npx create-vite@latest app`, false),
		cmdCase(`gem install rails -v 7.1.3`, false),
		cmdCase(`cargo install ripgrep`, false),
		cmdCase(`cargo add serde --git https://github.com/serde-rs/serde`, false),
		cmdCase(`go get golang.org/x/sys/unix@latest`, false),
		cmdCase(`go install github.com/spf13/cobra-cli@latest`, false),
		cmdCase(`go get -u ./...`, false),
		cmdCase(`composer require laravel/framework:^11.0`, false),
		cmdCase(`echo 'requests==2.32.3' >> requirements.txt`, false),
		cmdCase(`echo 'require github.com/gorilla/mux v1.8.1' >> go.mod`, false),
		cmdCase(`sed -i 's/"lodash": "^4.17.20"/"lodash": "^4.17.21"/' package.json`, false),
		cmdCase(`echo "gem 'devise'" >> Gemfile`, false),
		cmdCase(`echo 'reqeusts' >> notes.txt`, false),
	})
}

func TestOneEdit(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"requests", "reqeusts", true}, // swap
		{"express", "expresss", true},  // insertion
		{"lodash", "lodsh", true},      // deletion
		{"django", "djanga", true},     // substitution
		{"django", "django", false},
		{"django", "djangoxx", false},
		{"abc", "cba", false},
		{"ab", "ba", true},
		{"", "a", true},
	} {
		if got := oneEdit(tc.a, tc.b); got != tc.want {
			t.Errorf("oneEdit(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := oneEdit(tc.b, tc.a); got != tc.want {
			t.Errorf("oneEdit(%q, %q) = %v, want %v (reversed)", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestCodeHostRepo(t *testing.T) {
	for _, tc := range []struct{ ref, owner, repo string }{
		{"git+https://github.com/PSF/requests.git@main", "psf", "requests"},
		{"https://github.com/o/r/archive/v1.tar.gz", "o", "r"},
		{"git@github.com:o/r.git", "o", "r"},
		{"github:o/r#semver:^1", "o", "r"},
		{"https://user@gitlab.com/o/r", "o", "r"},
		{"https://example.com/o/r", "", ""},
		{"https://github.com/o", "", ""},
	} {
		owner, repo, _ := codeHostRepo(tc.ref)
		if owner != tc.owner || repo != tc.repo {
			t.Errorf("codeHostRepo(%q) = %q, %q; want %q, %q", tc.ref, owner, repo, tc.owner, tc.repo)
		}
	}
}

// TestPopularListsAreSound keeps the lists usable: every entry is
// written as its registry spells it once normalised, a publisher is
// written lower-case, and a one-letter slip of every name long enough to
// compare (a letter added at its end) is judged a look-alike of a listed
// name, unless that slip is itself listed.
func TestPopularListsAreSound(t *testing.T) {
	for e := range numEcosystems {
		set := popularOf(e)
		if len(set.names) < 40 {
			t.Errorf("%s: only %d names", ecoFiles[e], len(set.names))
		}
		for _, n := range set.names {
			if n == "" || strings.ContainsAny(n, " \t") || normalisePackage(e, n) != n {
				t.Errorf("%s: name %q is not in its normal form", ecoFiles[e], n)
			}
			if home := set.home[n]; home != strings.ToLower(home) {
				t.Errorf("%s: publisher %q of %q is not lower-case", ecoFiles[e], home, n)
			}
			slip := n + "x"
			if e == ecoGo {
				slip = goModuleRoot(n) + "x"
			}
			if _, listed := set.home[normalisePackage(e, slip)]; listed || len(n) < minLookalike {
				continue
			}
			if lookalikeOf(e, normalisePackage(e, slip)) == "" {
				t.Errorf("%s: %q, one letter from the listed %q, is not judged a look-alike", ecoFiles[e], slip, n)
			}
		}
	}
}

// FuzzManifestDeps feeds manifest text and install specs to the parsers:
// they must not panic, and every dependency they return must be judged
// without panicking.
func FuzzManifestDeps(f *testing.F) {
	for _, s := range []string{
		"requests @ git+https://github.com/psf/requests@main\n-e git+https://x/y#egg=z",
		"replace github.com/a/b => github.com/c/b v1.0.0",
		`serde = { git = "https://github.com/serde-rs/serde" }`,
		`"lodash": "^4.17.21", "x": "github:o/r"`,
		"gem 'rails', '~> 7'",
		"@", "git@", "a@://", "github:", "https://github.com//",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			return
		}
		for _, base := range []string{"requirements.txt", "go.mod", "Cargo.toml", "package.json", "Gemfile"} {
			for _, d := range manifestDeps(base, text) {
				_ = lookalikeDep(d)
			}
		}
		_ = lookalikeDep(pipSpec(text))
		_ = lookalikeDep(npmSpec(text + "x"))
		codeHostRepo(text)
	})
}

// Hook repositories: many owners publish a pre-commit-hooks, so only an
// owner named like a publisher's is a look-alike.
func TestLookalikeHookRepos(t *testing.T) {
	hook := func(url string) string {
		return "cat >> .pre-commit-config.yaml <<'EOF'\n  - repo: " + url + "\n    rev: v1.0.0\n    hooks:\n      - id: x\nEOF"
	}
	runRuleCases(t, "supply-chain.lookalike-package", []ruleCase{
		cmdCase(hook("https://github.com/pre-commlt/pre-commit-hooks"), true),
		cmdCase(hook("https://github.com/psf-mirror/black"), true),
		cmdCase(hook("https://github.com/pycqa-dev/flake8"), true),
		cmdCase(hook("https://github.com/pre-commit/pre-commit-hooks"), false),
		cmdCase(hook("https://github.com/Lucas-C/pre-commit-hooks"), false),
		cmdCase(hook("https://github.com/astral-sh/ruff-pre-commit"), false),
		toolCase("file tool", "write_file", map[string]any{"path": ".pre-commit-config.yaml",
			"content": "repos:\n  - repo: https://github.com/astral-sh/ruff-pre-commlt\n    rev: v0.4.0\n"}, false),
	})
}

// Owners named like a well-known publisher, wherever a command names a
// code-host reference: an install from git, a workflow step, a module
// source.
func TestLookalikeOwners(t *testing.T) {
	for owner, like := range map[string]string{
		"actons-setup":          "actions",
		"djang0-project":        "django",
		"terraform-aws-modu1es": "terraform-aws-modules",
		"github.com/hashicrop":  "hashicorp",
		"hashicorp":             "",
		"aws-actions":           "",
		"google-github-actions": "",
		"acme-corp":             "",
		"spf13":                 "",
		"x":                     "",
	} {
		if got := lookalikeOwner(owner); got != like {
			t.Errorf("lookalikeOwner(%q) = %q, want %q", owner, got, like)
		}
	}
	runRuleCases(t, "supply-chain.lookalike-package", []ruleCase{
		cmdCase(`pip install git+https://github.com/djang0-project/django-rest-framework@master`, true),
		cmdCase(`yq -i '.jobs.build.steps += [{"uses": "actons-setup/setup-node-cache@main"}]' .github/workflows/web.yml`, true),
		cmdCase(`sed -i 's#source = "terraform-aws-modules/vpc/aws"#source = "git::https://github.com/terraform-aws-modu1es/terraform-aws-vpc.git?ref=main"#' infra/main.tf`, true),
		cmdCase(`git clone https://github.com/hashicrop/terraform-provider-aws /tmp/tp`, true),
		cmdCase(`pip install git+https://github.com/encode/django-rest-framework@master`, false),
		cmdCase(`yq -i '.jobs.build.steps += [{"uses": "actions/setup-node@v4"}]' .github/workflows/web.yml`, false),
		cmdCase(`git clone https://github.com/acme-corp/tools /tmp/tools`, false),
		cmdCase(`sed -i 's#ref=v5.1.0#ref=v5.2.0#' infra/main.tf`, false),
	})
}
