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

func TestPublish(t *testing.T) {
	runRuleCases(t, "supply-chain.publish", []ruleCase{
		cmdCase(`npm publish --access public`, true),
		cmdCase(`yarn npm publish --tag next`, true),
		cmdCase(`twine upload --repository-url https://upload.pypi.org/legacy/ dist/*`, true),
		cmdCase(`python3 -m twine upload dist/*`, true),
		cmdCase(`uv publish`, true),
		cmdCase(`cargo publish --allow-dirty`, true),
		cmdCase(`gem push pkg/tool-1.2.0.gem`, true),
		cmdCase(`mvn -B deploy -DskipTests`, true),
		cmdCase(`./gradlew publish`, true),
		cmdCase(`dotnet nuget push bin/Release/x.nupkg --source https://api.nuget.org/v3/index.json`, true),
		cmdCase(`gh release create v2.0.0 dist/*.tar.gz`, true),
		cmdCase(`npm publish --dry-run`, false),
		cmdCase(`cargo publish --dry-run`, false),
		cmdCase(`./gradlew publishToMavenLocal`, false),
		cmdCase(`mvn -B verify`, false),
		cmdCase(`gh release create v2.0.0 --draft`, false),
		cmdCase(`npm pack`, false),
		cmdCase(`poetry build`, false),
	})
}

func TestReleaseAssetDeleted(t *testing.T) {
	runRuleCases(t, "supply-chain.tamper", []ruleCase{
		cmdCase("gh release delete-asset v1.8.0 checksums.txt -R acme/cli -y", true),
		cmdCase("gh release upload v1.8.0 dist/cli.tar.gz --clobber", true),
		cmdCase("gh release upload v1.9.0 dist/cli.tar.gz", false),
		cmdCase("gh release download v1.8.0 -p '*.tar.gz'", false),
	})
}
