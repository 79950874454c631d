package heuristics

import (
	"path"
	"slices"
	"strings"
)

// Tampering with what others receive as trusted: a commit written in the
// name of a bot whose changes are merged on sight (dependabot[bot],
// renovate[bot], github-actions[bot]), a published release's asset
// replaced under the same name (gh release upload --clobber), and
// third-party code edited in place where the package manager put it
// (vendor/, node_modules/). Each changes code that reviewers, users or
// the build take from a trusted hand. Findings escalate.

// botAuthors are the identities of the bots whose commits are merged
// with less review.
var botAuthors = newFoldSet("dependabot", "renovate[bot]", "renovate-bot", "github-actions[bot]", "greenkeeper", "snyk-bot",
	"pre-commit-ci", "mergify")

// checkTamper judges one command for supply-chain tampering.
func (s *scan) checkTamper(cs *cmdScan, v *cmdView) {
	if !s.enabled(rSupplyTamper) && !s.enabled(rSupplyPublish) {
		return
	}
	ev := func() string { return v.c.Name + " " + evJoin(v.args) }
	if who := botIdentity(v); who != "" && s.enabled(rSupplyTamper) {
		s.add(rSupplyTamper, "writes a commit in the name of "+who+": reviewers merge such commits on sight; commit as yourself", ev())
		return
	}
	if (v.prog == "gh" || v.prog == "glab") && releaseAssetReplaced(v) && s.enabled(rSupplyTamper) {
		s.add(rSupplyTamper, v.prog+" replaces or deletes an asset of a published release: everyone who downloads it gets the new file; publish a new release instead", ev())
		return
	}
	if what := publishes(v); what != "" && s.enabled(rSupplyPublish) {
		s.add(rSupplyPublish, v.prog+" "+what+": what is published reaches everyone who installs it and cannot be taken back (its version is spent); a maintainer should publish",
			ev())
		return
	}
	for _, t := range cs.writeTargets(v) {
		if p := cs.resolveIn(v.c, t).Abs; thirdPartyCode(p) && s.enabled(rSupplyTamper) {
			s.add(rSupplyTamper, "changes third-party code in place ("+t+"): the build runs it as the package's own; patch it with the package manager (patch-package, a replace directive) so the change shows", ev())
			return
		}
	}
}

// botIdentity returns the bot a git command writes a commit as
// (GIT_AUTHOR_NAME=dependabot[bot] git commit, git commit --author=…,
// git -c user.name=…), or "".
func botIdentity(v *cmdView) string {
	if v.prog != "git" {
		return ""
	}
	switch sub, _ := gitSubcommand(v.args); sub {
	case "commit", "merge", "rebase", "cherry-pick", "am", "revert", "pull", "tag", "commit-tree":
	default:
		return "" // git log --author=dependabot reads
	}
	for _, a := range v.c.Assigns {
		if name, value, ok := strings.Cut(a, "="); ok && strings.HasPrefix(name, "GIT_") && (strings.HasSuffix(name, "_NAME") || strings.HasSuffix(name, "_EMAIL")) && botAuthors.in(value) {
			return value
		}
	}
	for i, a := range v.args {
		switch {
		case strings.HasPrefix(a, "--author=") && botAuthors.in(a):
			return a[len("--author="):]
		case a == "--author" && i+1 < len(v.args) && botAuthors.in(v.args[i+1]):
			return v.args[i+1]
		case a == "-c" && i+1 < len(v.args) && (strings.HasPrefix(v.args[i+1], "user.name=") || strings.HasPrefix(v.args[i+1], "user.email=")) && botAuthors.in(v.args[i+1]):
			return v.args[i+1]
		}
	}
	return ""
}

// releaseAssetReplaced reports gh release upload --clobber, and gh
// release delete-asset (the first half of a replacement: an upload of
// the same name follows).
func releaseAssetReplaced(v *cmdView) bool {
	ops := v.plainOperands()
	return len(ops) > 1 && ops[0] == "release" && (ops[1] == "upload" && hasLongFlag(v.args, "clobber") || ops[1] == "delete-asset")
}

// thirdPartyCode reports a source file under vendor/ or node_modules/:
// code a package manager placed.
func thirdPartyCode(abs string) bool {
	if !strings.Contains(abs, "/vendor/") && !strings.Contains(abs, "/node_modules/") && !dependencyCache(abs) {
		return false
	}
	if strings.HasSuffix(abs, ".zip") && strings.Contains(abs, "/pkg/mod/cache/download/") {
		return true // a module's zip, from which the cache is filled
	}
	switch path.Ext(abs) {
	case ".go", ".js", ".cjs", ".mjs", ".ts", ".py", ".rb", ".php", ".rs", ".java", ".c", ".h":
		return true
	}
	return false
}

// dependencyCache reports a path in a package manager's shared cache of
// downloaded dependencies (Go's module cache, Cargo's registry sources,
// the extensions of VS Code and its forks): every build or editor on
// the machine runs what is there as the package's own code.
func dependencyCache(abs string) bool {
	return strings.Contains(abs, "/go/pkg/mod/") || strings.Contains(abs, "/.cargo/registry/src/") ||
		strings.Contains(abs, "/.vscode/extensions/") || strings.Contains(abs, "/.vscode-server/extensions/") ||
		strings.Contains(abs, "/.cursor/extensions/")
}

// publishes says what v publishes to a registry or as a release, or "":
// npm / pnpm / yarn / bun publish, twine upload, poetry / uv / flit /
// hatch / pdm publish, cargo publish, gem push, mvn deploy, gradle
// publish, dotnet nuget push, vsce / ovsx publish, helm push, gh release
// create. A dry run publishes nothing.
func publishes(v *cmdView) string {
	switch v.prog {
	case "npm", "pnpm", "bun", "cnpm", "yarn", "twine", "poetry", "uv", "flit", "hatch", "pdm", "cargo", "gem", "mvn", "mvnw",
		"./mvnw", "gradle", "gradlew", "./gradlew", "dotnet", "nuget", "vsce", "ovsx", "helm", "gh":
	default:
		if v.kind != "python" {
			return "" // most commands: no operands worked out
		}
	}
	if dryRun(v.args) {
		return ""
	}
	ops := v.plainOperands()
	switch v.prog {
	case "npm", "pnpm", "bun", "cnpm":
		if opAt(ops, 0) == "publish" {
			return "publishes a package to the registry"
		}
		if opAt(ops, 0) == "dist-tag" && (opAt(ops, 1) == "add" || opAt(ops, 1) == "rm") {
			return "moves a dist-tag that installs resolve by (dist-tag " + opAt(ops, 1) + ")"
		}
	case "yarn":
		if opAt(ops, 0) == "publish" || opAt(ops, 0) == "npm" && opAt(ops, 1) == "publish" {
			return "publishes a package to the registry"
		}
	case "twine":
		if opAt(ops, 0) == "upload" {
			return "uploads distributions to a package index"
		}
	case "poetry", "uv", "flit", "hatch", "pdm":
		if opAt(ops, 0) == "publish" {
			return "publishes a package to a package index"
		}
	case "cargo":
		if opAt(ops, 0) == "publish" {
			return "publishes a crate to the registry"
		}
	case "gem":
		if opAt(ops, 0) == "push" {
			return "pushes a gem to the registry"
		}
	case "mvn", "mvnw", "./mvnw":
		if slices.Contains(ops, "deploy") {
			return "deploys artifacts to a Maven repository"
		}
	case "gradle", "gradlew", "./gradlew":
		for _, o := range ops {
			if o == "publish" || strings.HasPrefix(o, "publishTo") && o != "publishToMavenLocal" || strings.HasSuffix(o, ":publish") {
				return "publishes artifacts (" + o + ")"
			}
		}
	case "dotnet", "nuget":
		if opAt(ops, 0) == "nuget" && opAt(ops, 1) == "push" || v.prog == "nuget" && opAt(ops, 0) == "push" {
			return "pushes a package to a NuGet feed"
		}
	case "vsce", "ovsx":
		if opAt(ops, 0) == "publish" {
			return "publishes an editor extension to the marketplace"
		}
	case "helm":
		if opAt(ops, 0) == "push" {
			return "pushes a chart to a registry"
		}
	case "gh":
		if opAt(ops, 0) == "release" && opAt(ops, 1) == "create" && !hasLongFlag(v.args, "draft") && !hasShortFlag(v.args, 'd') {
			return "publishes a release (release create)"
		}
	}
	if v.kind == "python" && hasShortFlag(v.args, 'm') && containsArg(v.args, "twine") && containsArg(v.args, "upload") {
		return "uploads distributions to a package index"
	}
	return ""
}
