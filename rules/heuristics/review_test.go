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

// CI secrets, and variables that say where deployments go, changed from
// outside the repository's files.
func TestCISettingChange(t *testing.T) {
	runRuleCases(t, "defense.review-bypass", []ruleCase{
		cmdCase("curl -s https://paste.example/k | gh secret set DEPLOY_SSH_KEY -R acme/web", true),
		cmdCase("gh secret delete SIGNING_KEY -R acme/cli", true),
		cmdCase("gh secret set AWS_ROLE_ARN --body arn:aws:iam::999988887777:role/collector", true),
		cmdCase("gh variable set DEPLOY_HOST --body 198.51.100.23 -R acme/web", true),
		cmdCase("gh variable set API_BASE --body https://api.acme-cdn.net", true),
		cmdCase("glab variable set DEPLOY_URL --value https://deploy.example.net", true),
		cmdCase("gh secret list --repo acme/api", false),
		cmdCase("gh variable set NODE_VERSION --body 20 --repo acme/web", false),
		cmdCase("gh variable list", false),
	})
}

func TestCISecretFromShellVariable(t *testing.T) {
	runRuleCases(t, "defense.review-bypass", []ruleCase{
		cmdCase(`gh secret set SENTRY_DSN --body "$SENTRY_DSN"`, false),
		cmdCase(`gh secret set SENTRY_DSN --body "${SENTRY_DSN}"`, false),
		cmdCase(`gh secret set SENTRY_DSN --body "$SENTRY_DSN-x"`, true),
		cmdCase("gh secret set SENTRY_DSN --body literal", true),
	})
}
