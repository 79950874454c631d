package heuristics

import "strings"

// CI runners. A machine registered as a CI server's runner takes jobs
// from that server and runs them with the user's rights: whoever can
// push a workflow or start a job there runs commands here, and none of
// them passes through this judge. A coding task does not enrol the
// developer's machine in someone's CI; a human should approve it.

// checkCIRunner judges a runner or agent of a CI server being
// registered or started against a server.
func (s *scan) checkCIRunner(v *cmdView) {
	if !s.enabled(rRCECIRunner) {
		return
	}
	if what := ciRunnerEnrolment(v); what != "" {
		s.add(rRCECIRunner, what+": whoever can start a job on that server runs commands on this machine, past this judge; a human should approve it",
			v.prog+" "+evJoin(v.args))
	}
}

// ciRunnerEnrolment says how v enrols this machine in a CI server, or "".
func ciRunnerEnrolment(v *cmdView) string {
	switch v.prog {
	case "config.sh", "config.cmd":
		// actions/runner and the Azure Pipelines agent: ./config.sh --url
		// https://github.com/org --token T (or --auth pat --token T).
		if hasLongFlag(v.args, "url") && hasLongFlag(v.args, "token") {
			return v.prog + " registers this machine as a CI runner of " + longFlagValue(v.args, "url")
		}
	case "gitlab-runner", "gitlab-ci-multi-runner", "act_runner", "forgejo-runner", "gitea-runner":
		if opAt(v.plainOperands(), 0) == "register" {
			server := longFlagValue(v.args, "url")
			if server == "" {
				server = longFlagValue(v.args, "instance") // act_runner
			}
			if server == "" {
				server = "a CI server"
			}
			return v.prog + " register makes this machine a runner of " + server
		}
	case "buildkite-agent":
		if opAt(v.plainOperands(), 0) == "start" && (hasLongFlag(v.args, "token") || assigns(v, "BUILDKITE_AGENT_TOKEN=")) {
			return "buildkite-agent start makes this machine an agent of the token's Buildkite organization"
		}
	case "java":
		// java -jar agent.jar -url https://jenkins… -secret S: an inbound
		// Jenkins agent.
		for i, a := range v.args {
			if a == "-jar" && i+1 < len(v.args) && (strings.HasSuffix(v.args[i+1], "agent.jar") || strings.HasSuffix(v.args[i+1], "slave.jar")) &&
				(containsArg(v.args, "-secret") || containsArg(v.args, "-jnlpUrl")) {
				return "java runs a Jenkins agent that takes jobs from its controller"
			}
		}
	}
	return ""
}

// longFlagValue returns the value of --name (--name V or --name=V), or "".
func longFlagValue(args []string, name string) string {
	val := ""
	flagValues(args, 0, name, func(s string) {
		if val == "" {
			val = s
		}
	})
	return val
}

// assigns reports an assignment before v's command that starts with
// prefix (NAME=).
func assigns(v *cmdView, prefix string) bool {
	for _, a := range v.c.Assigns {
		if strings.HasPrefix(a, prefix) {
			return true
		}
	}
	return false
}
