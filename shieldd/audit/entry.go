// Package audit is shieldd's append-only audit log: one JSON line per
// evaluation and per reported escalation outcome, chained by SHA-256 so
// that a changed, removed, inserted or reordered line is detected by
// Verify. The format is documented in docs/audit-log.md.
package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parapet-dev/parapet/internal/textcut"
	"github.com/parapet-dev/parapet/rules/action"
)

// FormatVersion is the "v" member of every line.
const FormatVersion = 1

// Genesis is the prev_hash of the first entry of a chain: 64 zeros.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// Kinds of entry.
const (
	KindEvaluation = "evaluation"
	KindOutcome    = "outcome"
)

// Caller is who asked, as the request (or the authenticated identity) says.
type Caller struct {
	Engine    string
	User      string
	Workspace string
	Agent     string
}

// Entry is one audit record. Append fills Seq, PrevHash and Hash (and Time
// when it is zero).
type Entry struct {
	Seq  uint64
	Time time.Time
	Kind string
	// Tenant is the tenant the request was judged as.
	Tenant string
	// Principal is the authenticated caller ("hmac:alice", "mtls:engine-1"),
	// empty when authentication is off.
	Principal  string
	Caller     Caller
	Session    string
	RequestID  string
	ActionType string
	ActionHash string

	// Evaluation entries.
	Decision string // "allow", "block", "escalate" or "error"
	Tier     int32
	RuleIDs  []string
	Latency  time.Duration // recorded in whole microseconds
	CacheHit bool
	Error    string // the status returned when Decision is "error"

	// Outcome entries.
	Outcome    string
	DecidedBy  string
	ApprovalID string
	Reason     string

	PrevHash string
	Hash     string
}

// Field length bounds applied by Append: caller-supplied strings must not
// make one line arbitrarily large.
const (
	maxField     = 512
	maxLongField = 2048
	maxRuleIDs   = 64
)

// normalize bounds and repairs caller-supplied strings so the line is
// valid UTF-8 of bounded size and encodes canonically.
func (e *Entry) normalize() {
	for _, s := range []*string{&e.Tenant, &e.Principal, &e.Caller.Engine, &e.Caller.User, &e.Caller.Workspace,
		&e.Caller.Agent, &e.Session, &e.RequestID, &e.ActionType, &e.ActionHash, &e.Decision,
		&e.Outcome, &e.DecidedBy, &e.ApprovalID} {
		*s = bound(*s, maxField)
	}
	e.Error = bound(e.Error, maxLongField)
	e.Reason = bound(e.Reason, maxLongField)
	if len(e.RuleIDs) > maxRuleIDs {
		e.RuleIDs = e.RuleIDs[:maxRuleIDs]
	}
	ids := make([]string, len(e.RuleIDs))
	for i, id := range e.RuleIDs {
		ids[i] = bound(id, maxField)
	}
	e.RuleIDs = ids
	if e.Latency < 0 {
		e.Latency = 0
	}
	e.Latency = e.Latency.Truncate(time.Microsecond)
	e.Time = e.Time.UTC()
}

// bound makes s valid UTF-8 and cuts it to at most n bytes on a rune boundary.
func bound(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return textcut.Cut(s, n)
}

// content appends the canonical content of e: every member except
// entry_hash, in a fixed order, without insignificant whitespace. Empty
// optional members are left out; tier, latency_us and cache_hit are present
// exactly when the kind is "evaluation".
func (e *Entry) content(b []byte) []byte {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, FormatVersion, 10)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = member(b, "time", e.Time.UTC().Format(time.RFC3339Nano), true)
	b = member(b, "kind", e.Kind, true)
	b = member(b, "tenant", e.Tenant, true)
	b = member(b, "principal", e.Principal, false)
	b = append(b, `,"caller":{`...)
	n := len(b)
	b = member(b, "engine", e.Caller.Engine, false)
	b = member(b, "user", e.Caller.User, false)
	b = member(b, "workspace", e.Caller.Workspace, false)
	b = member(b, "agent", e.Caller.Agent, false)
	if len(b) > n {
		b = append(b[:n], b[n+1:]...) // the first member's leading comma
	}
	b = append(b, '}')
	b = member(b, "session", e.Session, false)
	b = member(b, "request_id", e.RequestID, false)
	b = member(b, "action_type", e.ActionType, false)
	b = member(b, "action_hash", e.ActionHash, false)
	if e.Kind == KindEvaluation {
		b = member(b, "decision", e.Decision, true)
		b = append(b, `,"tier":`...)
		b = strconv.AppendInt(b, int64(e.Tier), 10)
		if len(e.RuleIDs) > 0 {
			b = append(b, `,"rule_ids":[`...)
			for i, id := range e.RuleIDs {
				if i > 0 {
					b = append(b, ',')
				}
				b = action.AppendJSONString(b, id)
			}
			b = append(b, ']')
		}
		b = append(b, `,"latency_us":`...)
		b = strconv.AppendInt(b, e.Latency.Microseconds(), 10)
		b = append(b, `,"cache_hit":`...)
		b = strconv.AppendBool(b, e.CacheHit)
		b = member(b, "error", e.Error, false)
	} else {
		b = member(b, "outcome", e.Outcome, false)
		b = member(b, "decided_by", e.DecidedBy, false)
		b = member(b, "approval_id", e.ApprovalID, false)
		b = member(b, "reason", e.Reason, false)
	}
	b = member(b, "prev_hash", e.PrevHash, true)
	return append(b, '}')
}

func member(b []byte, name, value string, always bool) []byte {
	if value == "" && !always {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return action.AppendJSONString(b, value)
}

// hashSuffix is how every line ends: the entry_hash member, then "}".
const (
	hashMember = `,"entry_hash":"`
	hashSuffix = len(hashMember) + 64 + 2 // member, 64 hex digits, `"}`
)

// encode returns the line (without the newline) and its entry hash:
// SHA-256 of the canonical content, which is the line with the entry_hash
// member removed.
func (e *Entry) encode(b []byte) ([]byte, string) {
	start := len(b)
	b = e.content(b)
	sum := sha256.Sum256(b[start:])
	h := hex.EncodeToString(sum[:])
	b = b[:len(b)-1] // reopen the object
	b = append(b, hashMember...)
	b = append(b, h...)
	b = append(b, '"', '}')
	return b, h
}

// wireEntry is the decoding shape of a line. Pointers tell a member that
// is absent from one that is zero.
type wireEntry struct {
	V          int         `json:"v"`
	Seq        uint64      `json:"seq"`
	Time       string      `json:"time"`
	Kind       string      `json:"kind"`
	Tenant     *string     `json:"tenant"`
	Principal  string      `json:"principal"`
	Caller     *wireCaller `json:"caller"`
	Session    string      `json:"session"`
	RequestID  string      `json:"request_id"`
	ActionType string      `json:"action_type"`
	ActionHash string      `json:"action_hash"`
	Decision   string      `json:"decision"`
	Tier       *int32      `json:"tier"`
	RuleIDs    []string    `json:"rule_ids"`
	LatencyUS  *int64      `json:"latency_us"`
	CacheHit   *bool       `json:"cache_hit"`
	Error      string      `json:"error"`
	Outcome    string      `json:"outcome"`
	DecidedBy  string      `json:"decided_by"`
	ApprovalID string      `json:"approval_id"`
	Reason     string      `json:"reason"`
	PrevHash   string      `json:"prev_hash"`
	EntryHash  string      `json:"entry_hash"`
}

type wireCaller struct {
	Engine    string `json:"engine"`
	User      string `json:"user"`
	Workspace string `json:"workspace"`
	Agent     string `json:"agent"`
}

// ParseLine reads one line (without its newline) and checks that it is a
// well-formed entry in canonical form whose entry_hash matches its
// content. It does not check the link to the previous entry.
func ParseLine(line []byte) (*Entry, error) {
	if len(line) < hashSuffix+2 || !bytes.HasPrefix(line[len(line)-hashSuffix:], []byte(hashMember)) ||
		!bytes.HasSuffix(line, []byte(`"}`)) {
		return nil, errors.New(`the line does not end with an "entry_hash" member`)
	}
	hash := string(line[len(line)-66 : len(line)-2])
	if !action.IsHexHash(hash) {
		return nil, errors.New("entry_hash is not 64 lower-case hex digits")
	}
	var w wireEntry
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("not a valid JSON entry: %v", err)
	}
	if dec.More() {
		return nil, errors.New("text after the JSON object")
	}
	if w.V != FormatVersion {
		return nil, fmt.Errorf("unsupported format version %d", w.V)
	}
	switch w.Kind {
	case KindEvaluation:
		if w.Tier == nil || w.LatencyUS == nil || w.CacheHit == nil {
			return nil, errors.New("an evaluation entry needs tier, latency_us and cache_hit")
		}
	case KindOutcome:
	default:
		return nil, fmt.Errorf("unknown kind %q", w.Kind)
	}
	if w.Tenant == nil || w.Caller == nil {
		return nil, errors.New("tenant or caller is missing")
	}
	if !action.IsHexHash(w.PrevHash) {
		return nil, errors.New("prev_hash is not 64 lower-case hex digits")
	}
	t, err := time.Parse(time.RFC3339Nano, w.Time)
	if err != nil {
		return nil, fmt.Errorf("time: %v", err)
	}
	e := &Entry{
		Seq: w.Seq, Time: t.UTC(), Kind: w.Kind, Tenant: *w.Tenant, Principal: w.Principal,
		Caller:  Caller{Engine: w.Caller.Engine, User: w.Caller.User, Workspace: w.Caller.Workspace, Agent: w.Caller.Agent},
		Session: w.Session, RequestID: w.RequestID, ActionType: w.ActionType, ActionHash: w.ActionHash,
		Decision: w.Decision, RuleIDs: w.RuleIDs, Error: w.Error,
		Outcome: w.Outcome, DecidedBy: w.DecidedBy, ApprovalID: w.ApprovalID, Reason: w.Reason,
		PrevHash: w.PrevHash,
	}
	if w.Tier != nil {
		e.Tier = *w.Tier
	}
	if w.CacheHit != nil {
		e.CacheHit = *w.CacheHit
	}
	if w.LatencyUS != nil {
		if *w.LatencyUS < 0 || *w.LatencyUS > int64(time.Duration(1<<62)/time.Microsecond) {
			return nil, errors.New("latency_us out of range")
		}
		e.Latency = time.Duration(*w.LatencyUS) * time.Microsecond
	}
	// One entry has one byte form: re-encoding must give the line back, so
	// reformatted, re-escaped or duplicated members are reported here
	// rather than silently read one way by us and another by a person.
	content := e.content(nil)
	if !bytes.Equal(content[:len(content)-1], line[:len(line)-hashSuffix]) {
		return nil, errors.New("the line is not in canonical form (re-encoded, reordered or edited by hand?)")
	}
	sum := sha256.Sum256(content)
	if hex.EncodeToString(sum[:]) != hash {
		return nil, errors.New("entry_hash does not match the line's content: the line was altered")
	}
	e.Hash = hash
	return e, nil
}
