// Package tenant holds what shieldd keeps per tenant: policy files, rate
// limits and metric labels of bounded cardinality.
package tenant

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/parapet-dev/parapet/rules/policy"
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidName reports whether a tenant name can name a policy file.
func ValidName(name string) bool { return nameRE.MatchString(name) && !strings.Contains(name, "..") }

// LoadPolicyDir loads <tenant>.yaml (or .yml) from dir. Every file must
// load: one broken file fails the whole set, so a reload never leaves some
// tenants on a new policy and others silently on the old one.
func LoadPolicyDir(dir string) (map[string]*policy.Policy, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("tenant policy dir: %w", err)
	}
	out := map[string]*policy.Policy{}
	var problems []string
	for _, e := range ents {
		ext := filepath.Ext(e.Name())
		if e.IsDir() || (ext != ".yaml" && ext != ".yml") {
			continue
		}
		name := strings.TrimSuffix(e.Name(), ext)
		path := filepath.Join(dir, e.Name())
		if !ValidName(name) {
			problems = append(problems, fmt.Sprintf("%s: %q is not a tenant name (letters, digits, '.', '_', '-')", path, name))
			continue
		}
		if _, dup := out[name]; dup {
			problems = append(problems, fmt.Sprintf("%s: tenant %s has two policy files", path, name))
			continue
		}
		p, err := policy.LoadFile(path)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out[name] = p
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("tenant policies in %s:\n  %s", dir, strings.Join(problems, "\n  "))
	}
	return out, nil
}
