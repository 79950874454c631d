package heuristics

import (
	"net/netip"
	"strings"
)

// Review bypass. A repository's review rules are how a change reaches
// the default branch only after a person has read it. An agent that
// merges with admin rights, approves a pull request itself, rewrites a
// branch's protection or rulesets, moves the default branch, or strips a
// deployment environment's protection lands code no person reviewed.
// Each escalates: a maintainer may mean it, the agent should not decide.

// checkReviewBypass judges a forge CLI command (gh, glab).
func (s *scan) checkReviewBypass(v *cmdView) {
	if v.prog != "gh" && v.prog != "glab" {
		if s.enabled(rDefReviewBypass) && configEditor(v.prog) && namesRenovate(v.args) {
			if what := renovateMergesAll(strings.Join(v.args, " ")); what != "" {
				s.add(rDefReviewBypass, v.prog+" sets Renovate to "+what+": dependency updates would reach the branch with no one reading them; keep automerge to what the tests gate, or let a maintainer decide",
					v.prog+" "+evJoin(v.args))
			}
		}
		return
	}
	s.checkPipelineSettings(v)
	if !s.enabled(rDefReviewBypass) {
		return
	}
	if what := reviewBypass(v); what != "" {
		s.add(rDefReviewBypass, v.prog+" "+what+": code would reach the branch without the review it requires; a maintainer should do this",
			v.prog+" "+evJoin(v.args))
	}
}

// reviewBypass says how v gets around a repository's review rules, or "".
func reviewBypass(v *cmdView) string {
	ops := infraOperands(v)
	switch {
	case (opAt(ops, 0) == "pr" || opAt(ops, 0) == "mr") && opAt(ops, 1) == "merge" && hasLongFlag(v.args, "admin"):
		return "merges with administrator rights, past required reviews and checks (pr merge --admin)"
	case opAt(ops, 0) == "pr" && opAt(ops, 1) == "review" && (hasLongFlag(v.args, "approve") || hasShortFlag(v.args, 'a')),
		opAt(ops, 0) == "mr" && opAt(ops, 1) == "approve":
		return "approves a pull request in your name: the approval is the agent's, not a reviewer's"
	case opAt(ops, 0) == "repo" && opAt(ops, 1) == "edit" && hasLongFlag(v.args, "default-branch"):
		return "changes the repository's default branch (repo edit --default-branch)"
	case opAt(ops, 0) == "api":
		return apiReviewBypass(v, opAt(ops, 1))
	}
	return ""
}

// apiReviewBypass says how a gh api call changes a repository's review
// rules, or "": a write to a branch's protection or the rulesets, the
// default branch moved, a deployment environment's protection changed,
// self-hosted runners opened to public repositories.
func apiReviewBypass(v *cmdView, path string) string {
	method := apiMethod(v.args)
	if method == "" || method == "GET" || method == "HEAD" {
		return ""
	}
	p := strings.Trim(path, "/")
	switch {
	case strings.Contains(p, "/protection") || strings.HasSuffix(p, "/rulesets") || strings.Contains(p, "/rulesets/"):
		return "changes the rules that guard a branch through the API (" + method + " " + path + ")"
	case strings.Contains(p, "/environments/"):
		return "changes a deployment environment's protection through the API (" + method + " " + path + ")"
	case apiFieldNamed(v.args, "default_branch"):
		return "moves the repository's default branch through the API"
	case apiFieldSet(v.args, "allows_public_repositories", "true"):
		return "lets public repositories' workflows run on the organization's self-hosted runners"
	}
	return ""
}

// checkOwnersWrite judges a command line's write to CODEOWNERS, the file
// that says who must review each path. Replacing it, or appending a
// catch-all rule (the last matching rule wins, so "* @someone" at the
// end owns every path), changes who reviews everything.
func (s *scan) checkOwnersWrite(cs *cmdScan, v *cmdView) {
	if !s.enabled(rDefReviewBypass) {
		return
	}
	replaced, appended := "", ""
	for _, r := range v.c.Redirects {
		if baseName(r.Target) != "CODEOWNERS" || r.FD != "" && r.FD != "1" {
			continue
		}
		switch r.Op {
		case ">", ">|", "&>":
			replaced = r.Target
		case ">>":
			appended = r.Target
		}
	}
	if v.prog == "tee" {
		for _, op := range v.plainOperands() {
			if baseName(op) == "CODEOWNERS" {
				if hasShortFlag(v.args, 'a') || hasLongFlag(v.args, "append") {
					appended = op
				} else {
					replaced = op
				}
			}
		}
	}
	switch {
	case replaced != "":
		s.add(rDefReviewBypass, "replaces "+replaced+", which says who must review each path: a maintainer should change it",
			v.prog+" > "+replaced)
	case appended != "":
		text, ok := cs.producedText(v)
		if v.prog == "tee" {
			text, ok = cs.stdinText(v)
		}
		if ok && catchAllOwner(text) {
			s.add(rDefReviewBypass, "appends a catch-all rule to "+appended+": the last matching rule wins, so its owner now reviews every path; a maintainer should change it",
				v.prog+" >> "+appended)
		}
	}
}

// catchAllOwner reports a CODEOWNERS text with a rule for every path (*
// or /** followed by owners).
func catchAllOwner(text string) bool {
	for line := range strings.SplitSeq(text, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && (f[0] == "*" || f[0] == "/*" || f[0] == "/**" || f[0] == "**") {
			return true
		}
	}
	return false
}

// checkPipelineSettings judges what gh / glab change in a repository's
// pipeline from outside its files: a scanning workflow disabled (gh
// workflow disable codeql.yml), and a CI variable that names where
// packages come from set to a host that is not trusted (gh variable set
// NPM_REGISTRY_URL --body https://…).
func (s *scan) checkPipelineSettings(v *cmdView) {
	ops := infraOperands(v)
	s.checkCISettingChange(v, ops)
	switch {
	case opAt(ops, 0) == "workflow" && opAt(ops, 1) == "disable" && s.enabled(rDefWeakeningEdit):
		if name := opAt(ops, 2); workflowScanNames.in(name) || securityChecks.in(name) {
			s.add(rDefWeakeningEdit, v.prog+" disables the workflow "+name+", which runs a security check: changes stop being scanned; a maintainer should decide",
				v.prog+" "+evJoin(v.args))
		}
	case (opAt(ops, 0) == "variable" || opAt(ops, 0) == "secret") && opAt(ops, 1) == "set" && s.enabled(rSupplySource):
		name := strings.ToLower(opAt(ops, 2))
		if !containsAnyOf(name, []string{"registry", "index_url", "mirror", "proxy", "repo_url", "repository_url"}) {
			return
		}
		val := ""
		flagValues(v.args, 'b', "body", func(b string) { val = b })
		h := urlHost(val)
		if h != "" && !s.vouchedSource(h) && !privateHost(h) {
			s.add(rSupplySource, v.prog+" sets the CI variable "+opAt(ops, 2)+" to "+h+", which is not trusted: every pipeline that installs from it takes code from that host",
				v.prog+" "+evJoin(v.args))
		}
	}
}

// checkCISettingChange judges a CI secret set, replaced or deleted from
// outside the repository's files (gh secret set, glab variable update of
// a masked one is alike), or a CI variable pointed at a host, address or
// cloud role (gh variable set DEPLOY_HOST --body 198.51.100.23): every
// pipeline run after it deploys with a value no review saw. A secret set
// from a variable of the user's shell, a variable such as NODE_VERSION,
// and listing either are everyday.
func (s *scan) checkCISettingChange(v *cmdView, ops []string) {
	kind, verb := opAt(ops, 0), opAt(ops, 1)
	if kind != "secret" && kind != "variable" || !s.enabled(rDefReviewBypass) {
		return
	}
	switch verb {
	case "set", "update", "delete", "remove", "import":
	default:
		return
	}
	val, given := "", false
	flagValues(v.args, 'b', "body", func(b string) { val, given = b, true })
	flagValues(v.args, 'v', "value", func(b string) { val, given = b, true }) // glab
	if name := strings.ToUpper(opAt(ops, 2)); kind == "variable" && (verb == "set" || verb == "update") && (name == "CI_DEBUG_TRACE" || name == "CI_DEBUG_SERVICES") && !strings.EqualFold(val, "false") {
		// GitLab's job trace then prints every variable, masked ones too.
		s.add(rDefReviewBypass, v.prog+" variable "+verb+" "+name+": every job's log then shows the project's variables, masked secrets included, to whoever can read the logs; a maintainer should decide",
			v.prog+" "+evJoin(v.args))
		return
	}
	switch {
	case kind == "variable" && !pointsSomewhere(val):
		return
	case kind == "secret" && verb == "set" && given && isVariableRef(val):
		return // gh secret set SENTRY_DSN --body "$SENTRY_DSN": the user's own value carried over
	}
	s.add(rDefReviewBypass, v.prog+" "+kind+" "+verb+" changes a value the repository's pipelines run with ("+opAt(ops, 2)+"): deployments would use it without any review seeing it; a maintainer should do this",
		v.prog+" "+evJoin(v.args))
}

// isVariableRef reports a word that is one variable's value and nothing
// else ($NAME, ${NAME}).
func isVariableRef(w string) bool {
	name, ok := variableRefName(w)
	return ok && name != "" && strings.IndexFunc(name, func(r rune) bool {
		return !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) < 0
}

// variableRefName returns what follows the $ of a word written as one
// variable's value ($NAME gives NAME, ${NAME} gives NAME); ok is false
// for any other word.
func variableRefName(w string) (string, bool) {
	name, ok := strings.CutPrefix(w, "$")
	if !ok {
		return "", false
	}
	if inner, ok := strings.CutPrefix(name, "{"); ok {
		return strings.CutSuffix(inner, "}")
	}
	return name, true
}

// pointsSomewhere reports a value that says where something goes or who
// it acts as: a URL, an IP address, a domain name, a cloud ARN.
func pointsSomewhere(val string) bool {
	if _, err := netip.ParseAddr(val); err == nil {
		return true
	}
	return strings.Contains(val, "://") || strings.HasPrefix(val, "arn:") || isDomainName(strings.ToLower(val))
}

// configEditor reports the programs that edit a JSON or YAML
// configuration in place or through a temporary file.
func configEditor(prog string) bool {
	switch prog {
	case "jq", "yq", "sed", "gsed", "perl":
		return true
	}
	return false
}

// namesRenovate reports arguments that name Renovate's configuration
// (renovate.json, .renovaterc, renovate.json5): the file a jq, yq or sed
// edits, or writes through a temporary file.
func namesRenovate(args []string) bool {
	for _, a := range args {
		if strings.Contains(a, "renovate.json") || strings.Contains(a, ".renovaterc") {
			return true
		}
	}
	return false
}

// renovateMergesAll says what a Renovate setting in text merges unread,
// or "": automerge with the tests ignored, or automerge for every package
// or for major updates.
func renovateMergesAll(text string) string {
	flat := flatSetting(text)
	if !strings.Contains(flat, "automerge:true") && !strings.Contains(flat, "automerge=true") {
		return ""
	}
	switch {
	case strings.Contains(flat, "ignoretests:true") || strings.Contains(flat, "ignoretests=true"):
		return "merge updates whether their tests pass or not (ignoreTests)"
	case strings.Contains(flat, "matchpackagepatterns:[*]") || strings.Contains(flat, "matchpackagenames:[*]") ||
		strings.Contains(flat, "matchdepnames:[*]") || strings.Contains(flat, "matchupdatetypes:[major"):
		return "merge every update, majors included, by itself (automerge)"
	}
	return ""
}
