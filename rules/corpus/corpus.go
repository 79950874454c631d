// Package corpus embeds the built-in labelled corpus of agent actions: attacks
// the Shield must not allow and everyday actions it should allow. The case
// files (format: rules/policytest/README.md) are the shared specification
// for Tier 0 policy and Tier 1 heuristics; run them with
// policytest.LoadFS(corpus.FS, ".").
package corpus

import "embed"

// FS holds the case files, one per category.
//
//go:embed *.yaml
var FS embed.FS
