// Package policytest loads labelled action cases from YAML files and runs
// them against a Shield evaluator. It is the engine behind
// `shieldd policy test DIR` and the regression suite for the built-in
// corpus (package rules/corpus). The case-file format is described in
// README.md next to this file.
package policytest
