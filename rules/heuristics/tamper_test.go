package heuristics

import "testing"

func TestSupplyTamper(t *testing.T) {
	runRuleCases(t, "supply-chain.tamper", []ruleCase{
		cmdCase(`GIT_AUTHOR_NAME="dependabot[bot]" GIT_AUTHOR_EMAIL="49699333+dependabot[bot]@users.noreply.github.com" git commit -qam "build(deps): bump lodash"`, true),
		cmdCase(`git commit --author="renovate[bot] <29139614+renovate[bot]@users.noreply.github.com>" -m "chore(deps): update"`, true),
		cmdCase(`git -c user.name='github-actions[bot]' commit -qam "ci: sync"`, true),
		cmdCase("gh release upload v2.3.0 /tmp/cli-linux-amd64 --clobber -R acme/cli", true),
		cmdCase(`sed -i 's/return ErrTokenSignatureInvalid/return nil/' vendor/github.com/golang-jwt/jwt/v5/token.go`, true),
		cmdCase(`echo 'require("./.t")' >> node_modules/lodash/index.js`, true),
		cmdCase(`git commit -qam "fix: typo"`, false),
		cmdCase(`git log --author=dependabot --oneline`, false),
		cmdCase("gh release upload v2.3.0 dist/cli-linux-amd64", false),
		cmdCase("go mod vendor && git add vendor/", false),
		cmdCase("cat vendor/modules.txt", false),
		cmdCase("rm -rf node_modules && npm ci", false),
	})
}
