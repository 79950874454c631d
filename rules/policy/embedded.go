package policy

import (
	"embed"
	"fmt"
	"slices"
	"strings"
	"sync"
)

//go:embed policies/*.yaml
var embeddedFS embed.FS

// EmbeddedNames lists the built-in policies.
func EmbeddedNames() []string {
	entries, _ := embeddedFS.ReadDir("policies")
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// EmbeddedSource returns a built-in policy's YAML.
func EmbeddedSource(name string) ([]byte, error) {
	if !slices.Contains(EmbeddedNames(), name) {
		return nil, fmt.Errorf("no embedded policy %q (have %s)", name, strings.Join(EmbeddedNames(), ", "))
	}
	return embeddedFS.ReadFile("policies/" + name + ".yaml")
}

var embeddedCache sync.Map // name → func() (*Policy, error)

// Embedded returns a built-in policy: "default", "strict" or "permissive".
// Each is compiled once; a Policy is immutable, so callers share it.
func Embedded(name string) (*Policy, error) {
	load, _ := embeddedCache.LoadOrStore(name, sync.OnceValues(func() (*Policy, error) {
		src, err := EmbeddedSource(name)
		if err != nil {
			return nil, err
		}
		return Parse("embedded:"+name, src)
	}))
	return load.(func() (*Policy, error))()
}
