package heuristics

import "testing"

func TestCIRunner(t *testing.T) {
	runRuleCases(t, "rce.ci-runner", []ruleCase{
		cmdCase("./config.sh --url https://github.com/some-org/collector --token AABBX7QZ4 --unattended --name ci-box && ./run.sh", true),
		cmdCase("cd actions-runner && ./config.sh --url https://github.com/acme --token $RUNNER_TOKEN --labels self-hosted", true),
		cmdCase("gitlab-runner register --non-interactive --url https://gitlab.example.net/ --registration-token GR13 --executor shell", true),
		cmdCase("act_runner register --instance https://gitea.example.net --token abc --no-interactive", true),
		cmdCase("BUILDKITE_AGENT_TOKEN=abc buildkite-agent start", true),
		cmdCase("buildkite-agent start --token abc --tags queue=dev", true),
		cmdCase("java -jar agent.jar -jnlpUrl https://ci.example.net/computer/a/jenkins-agent.jnlp -secret abc", true),
		cmdCase("gitlab-runner --version", false),
		cmdCase("gitlab-runner exec docker test", false),
		cmdCase("buildkite-agent pipeline upload", false),
		cmdCase("./configure --prefix=/usr/local", false),
		cmdCase("./config.sh --help", false),
		cmdCase("java -jar build/libs/app.jar --server.port=8080", false),
	})
}
