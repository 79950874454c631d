// Package child is the hidden processes agentctl starts: internal-engine
// (the engine that agentctl start supervises), internal-agent and
// internal-subagent (the sandboxed agent processes the engine spawns) and
// internal-probe (the agent's sandbox without the agent, for doctor). None
// is run by hand; each reads what its parent passed and nothing else.
package child

import "github.com/urfave/cli/v2"

// Commands are the hidden commands, for agentctl's CLI to register.
func Commands() []*cli.Command {
	return []*cli.Command{
		internalEngineCommand(),
		internalAgentCommand(),
		internalSubAgentCommand(),
		internalProbeCommand(),
	}
}
