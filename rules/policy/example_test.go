package policy_test

import (
	"fmt"

	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/policy"
)

// A policy parsed from YAML judges canonical actions: deny, then verify,
// then allow, then the defaults.
func Example() {
	p, err := policy.Parse("team.yaml", []byte(`
version: 1
deny:
  - id: no-shadow
    reason: Reading /etc/shadow exposes password hashes.
    match:
      path: [/etc/shadow]
allow:
  - id: workspace-reads
    match:
      action: [read_file]
      path: [$WORKSPACE/**]
`))
	if err != nil {
		fmt.Println(err) // one "file:line: message" per problem
		return
	}
	for _, path := range []string{"/etc/shadow", "src/main.go", "/var/log/syslog"} {
		act, err := action.Canonicalize(action.Request{
			Type:    "read_file",
			Payload: []byte(fmt.Sprintf(`{"path":%q}`, path)),
			Caller:  action.Caller{WorkspaceRoot: "/work/repo", Home: "/home/dev"},
		}, action.Limits{})
		if err != nil {
			fmt.Println(err)
			return
		}
		d := p.Evaluate(act)
		fmt.Printf("%-16s %-8s %s\n", path, d.Outcome.Label(), d.RuleID)
	}
	// Output:
	// /etc/shadow      BLOCK    no-shadow
	// src/main.go      ALLOW    workspace-reads
	// /var/log/syslog  ESCALATE policy.no-match
}

// A policy that does not compile names every problem with its line.
func ExampleParse_errors() {
	_, err := policy.Parse("broken.yaml", []byte(`
version: 1
deny:
  - id: x
    match:
      action: [read_file]
      colour: blue
`))
	fmt.Println(err)
	// Output:
	// broken.yaml:7: rule x: unknown key "colour" in match (allowed: action, path, path_not, access, command, url, fields, when)
}
