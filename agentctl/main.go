// Command agentctl runs LLM agents behind the Parapet security gate.
package main

import "github.com/parapet-dev/parapet/agentctl/cmd"

func main() { cmd.Main() }
