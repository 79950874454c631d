package hook

import (
	"encoding/json"
	"fmt"
	"strings"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// Decision is what the hook tells the agent, in both agents' words.
type Decision string

const (
	Allow Decision = "allow"
	Deny  Decision = "deny"
	Ask   Decision = "ask"
)

// ParseFallback reads --on-error / --on-escalate: deny or ask.
func ParseFallback(s string) (Decision, error) {
	switch Decision(s) {
	case Deny, Ask:
		return Decision(s), nil
	}
	return "", fmt.Errorf("%q: want deny or ask", s)
}

// Answer is the hook's reply: the decision and the reason the agent shows
// (to the model for deny, to the user for ask).
type Answer struct {
	Decision Decision
	Reason   string
}

// FromVerdict turns the shield's verdict into an answer. ESCALATE asks
// (or, with onEscalate = deny, denies: for agents whose hook cannot ask).
// A verdict without a known decision is a deny: it must never read as
// an allow.
func FromVerdict(v *pb.Verdict, onEscalate Decision) Answer {
	detail := verdictDetail(v)
	switch v.GetDecision() {
	case pb.VerdictDecision_VERDICT_DECISION_ALLOW:
		return Answer{Decision: Allow, Reason: "Parapet allowed this action" + detail}
	case pb.VerdictDecision_VERDICT_DECISION_BLOCK:
		return Answer{Decision: Deny, Reason: "Parapet blocked this action" + detail}
	case pb.VerdictDecision_VERDICT_DECISION_ESCALATE:
		if onEscalate == Deny {
			return Answer{Decision: Deny, Reason: "Parapet needs a human to approve this action, and this hook cannot ask" + detail}
		}
		return Answer{Decision: Ask, Reason: "Parapet asks you to approve this action" + detail}
	}
	return Answer{Decision: Deny, Reason: fmt.Sprintf("Parapet denied this action: the shield answered an unknown decision (%v)", v.GetDecision())}
}

// FromError is the fail-closed answer: the action could not be judged.
func FromError(err error, onError Decision) Answer {
	what := "denied"
	if onError == Ask {
		what = "asking you instead"
	}
	return Answer{Decision: onError, Reason: fmt.Sprintf("Parapet could not judge this action (%v); %s", err, what)}
}

// verdictDetail is " (tier N, rule ids): reasoning".
func verdictDetail(v *pb.Verdict) string {
	var b strings.Builder
	fmt.Fprintf(&b, " (tier %d", v.GetTier())
	if ids := v.GetRuleIds(); len(ids) > 0 {
		b.WriteString(", " + strings.Join(ids, ", "))
	}
	b.WriteString(")")
	if r := strings.TrimSpace(v.GetReasoning()); r != "" {
		b.WriteString(": " + r)
	}
	return b.String()
}

// Render writes the answer as the agent reads it on stdout (exit code 0).
//
// Claude Code: hookSpecificOutput.permissionDecision allow|deny|ask with
// permissionDecisionReason (shown to the model on deny, to the user on ask).
// Gemini CLI: decision allow|deny|ask with reason (sent to the model on
// deny); systemMessage is shown to the user, and is what the confirmation
// prompt shows on ask.
func Render(agent Agent, a Answer) []byte {
	var out any
	switch agent {
	case GeminiCLI:
		g := geminiOutput{Decision: string(a.Decision), Reason: a.Reason}
		if a.Decision != Allow {
			g.SystemMessage = a.Reason
		}
		out = g
	default:
		out = claudeOutput{HookSpecificOutput: claudeDecision{
			HookEventName: "PreToolUse", PermissionDecision: string(a.Decision), PermissionDecisionReason: a.Reason,
		}}
	}
	b, _ := json.Marshal(out) // plain strings: cannot fail
	return append(b, '\n')
}

type claudeOutput struct {
	HookSpecificOutput claudeDecision `json:"hookSpecificOutput"`
}

type claudeDecision struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

type geminiOutput struct {
	Decision      string `json:"decision"`
	Reason        string `json:"reason,omitempty"`
	SystemMessage string `json:"systemMessage,omitempty"`
}
