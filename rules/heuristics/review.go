package heuristics

import "strings"

// Review bypass. A repository's review rules are how a change reaches
// the default branch only after a person has read it. An agent that
// merges with admin rights, approves a pull request itself, rewrites a
// branch's protection or rulesets, moves the default branch, or strips a
// deployment environment's protection lands code no person reviewed.
// Each escalates: a maintainer may mean it, the agent should not decide.

// checkReviewBypass judges a forge CLI command (gh, glab).
func (s *scan) checkReviewBypass(v *cmdView) {
	if v.prog != "gh" && v.prog != "glab" || !s.enabled(rDefReviewBypass) {
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
