package policy

import (
	"fmt"
	"os"
	"strings"
)

// Load resolves a policy reference: a file path, or the name of an
// embedded policy ("default", "strict", "permissive", optionally written
// "embedded:NAME"). Empty means "default".
func Load(ref string) (*Policy, error) {
	if ref == "" {
		ref = "default"
	}
	if _, err := os.Stat(ref); err == nil {
		return LoadFile(ref)
	}
	name := strings.TrimPrefix(ref, "embedded:")
	for _, n := range EmbeddedNames() {
		if name == n {
			return Embedded(n)
		}
	}
	return nil, fmt.Errorf("policy %q: no such file, and not an embedded policy (%s)", ref, strings.Join(EmbeddedNames(), ", "))
}
