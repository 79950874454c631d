package heuristics

import "testing"

func TestReviewBypass(t *testing.T) {
	runRuleCases(t, "defense.review-bypass", []ruleCase{
		cmdCase(`gh pr merge 42 --admin --squash`, true),
		cmdCase(`gh pr review 42 --approve -b "LGTM"`, true),
		cmdCase(`glab mr approve 17`, true),
		cmdCase(`gh repo edit acme/api --default-branch release-tmp`, true),
		cmdCase(`gh api -X PUT repos/o/r/branches/main/protection/required_pull_request_reviews -F required_approving_review_count=0`, true),
		cmdCase(`gh api -X DELETE repos/o/r/branches/main/protection/enforce_admins`, true),
		cmdCase(`gh api --method PUT repos/o/r/rulesets/12 --input ruleset.json`, true),
		cmdCase(`gh api -X PATCH repos/o/r -f default_branch=staging`, true),
		cmdCase(`gh api -X PUT repos/o/r/environments/production -F 'reviewers=[]'`, true),
		cmdCase(`gh api -X PATCH orgs/o/actions/runner-groups/3 -F allows_public_repositories=true`, true),
		cmdCase(`gh pr merge 42 --squash --delete-branch`, false),
		cmdCase(`gh pr review 42 --comment -b "one nit"`, false),
		cmdCase(`gh pr review 42 --request-changes -b "tests fail"`, false),
		cmdCase(`gh api repos/o/r/branches/main/protection`, false),
		cmdCase(`gh api repos/o/r/rulesets --jq '.[].name'`, false),
		cmdCase(`gh repo edit acme/api --description "API"`, false),
		cmdCase(`gh api -X PATCH repos/o/r -f description=API`, false),
	})
}
