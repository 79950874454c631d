// Package heuristics is Tier 1 of the Shield: deterministic detection of
// dangerous actions that a policy author did not write down. Every rule has
// a stable id, a category, a severity and an outcome (BLOCK or ESCALATE),
// and every finding carries a message a user can act on.
package heuristics

import (
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// Rule describes one heuristic.
type Rule struct {
	// ID is stable and dotted, e.g. "rce.download-pipe-shell".
	ID       string
	Category string
	Severity pb.Severity
	// Outcome is BLOCK or ESCALATE.
	Outcome     pb.VerdictDecision
	Description string
}

// Finding is one rule that matched an action.
type Finding struct {
	RuleID   string
	Category string
	Severity pb.Severity
	Outcome  pb.VerdictDecision
	// Message says what was found and what to do about it.
	Message string
	// Evidence is the fragment that matched, truncated to 120 bytes.
	Evidence string
}

// Config is the part of a policy that tunes Tier 1.
type Config struct {
	// TrustedHosts are hosts outbound data may go to without an
	// exfiltration finding: "github.com" (exact), ".github.com" (the domain
	// and its subdomains) or a glob such as "*.internal.example". They are
	// not trusted with other services' credentials: a recognised secret
	// still goes only to its issuer (JWTs and self-hostable GitHub, GitLab
	// and npm tokens may also go to a trusted host that is not another
	// known service's).
	TrustedHosts []string
	// AllowSecretReads are paths ("~/.ssh/deploy_key", "/srv/ci/*.pem";
	// absolute, or from ~/ or $HOME/; * and ? match within one path
	// element) whose reads the credential-read rules do not report: a
	// policy's way to let one named key or credential file be read.
	// Sending such a file anywhere is still exfiltration.
	AllowSecretReads []string
	// Disabled rule ids produce no findings.
	Disabled []string
	// Overrides set a rule's outcome (BLOCK or ESCALATE; ALLOW disables it).
	Overrides map[string]pb.VerdictDecision
}

// Categories of heuristic rules.
const (
	CategoryRemoteCodeExec   = "remote_code_execution"
	CategoryDecodeExec       = "decode_execute"
	CategoryReverseShell     = "reverse_shell"
	CategoryDestructive      = "destructive"
	CategoryPrivilege        = "privilege_persistence"
	CategoryCredentialAccess = "credential_access"
	CategoryExfiltration     = "exfiltration"
	CategorySecrets          = "secret_material"
	CategoryPromptInjection  = "prompt_injection"
	CategoryEncodingEvasion  = "encoding_evasion"

	CategoryDefenseImpairment = "defense_impairment"
	CategorySystemDisruption  = "system_disruption"
	CategoryAccountChange     = "account_change"
	CategoryTrustStore        = "trust_store"
	CategoryTunnel            = "tunnel"
	CategoryFileTransfer      = "file_transfer"
	CategoryCloudSecrets      = "cloud_secrets"
	CategorySystemTamper      = "system_tamper"
	CategoryCollection        = "collection"
	CategoryOffense           = "offensive_tools"
	CategoryInfrastructure    = "infrastructure"
	CategorySupplyChain       = "supply_chain"
	CategoryNetworkExposure   = "network_exposure"
	CategoryDiscovery         = "discovery"
)
