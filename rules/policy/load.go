package policy

import (
	"fmt"
	"os"
	"strings"
)

// Load resolves a policy reference: the name of an embedded policy
// ("default", "strict", "permissive", optionally written "embedded:NAME"),
// or else a file path. Embedded names come first: agentctl and the MCP
// proxy run in a directory the agent can write, and a file planted there
// under the name "default" must not replace the default policy (a file of
// that name is still reachable as ./default). Empty means "default".
func Load(ref string) (*Policy, error) {
	if ref == "" {
		ref = "default"
	}
	name := strings.TrimPrefix(ref, "embedded:")
	for _, n := range EmbeddedNames() {
		if name == n {
			return Embedded(n)
		}
	}
	if strings.HasPrefix(ref, "embedded:") {
		return nil, fmt.Errorf("policy %q: no embedded policy of that name (%s)", ref, strings.Join(EmbeddedNames(), ", "))
	}
	if _, err := os.Stat(ref); err != nil {
		return nil, fmt.Errorf("policy %q: no such file, and not an embedded policy (%s)", ref, strings.Join(EmbeddedNames(), ", "))
	}
	return LoadFile(ref)
}
