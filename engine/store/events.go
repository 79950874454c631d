package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// CallKey names a tool call: the agent's call id within one turn
// (MessageID) of one session.
type CallKey struct{ SessionID, MessageID, CallID string }

func (k CallKey) check() error { return checkIDs(k.SessionID, k.MessageID, k.CallID) }

// ToolCall is a tool call the agent proposed, and what became of it.
type ToolCall struct {
	CallKey
	Tool      string
	Arguments string
	Proposed  time.Time
	// Started is zero when the call never ran (refused, blocked, denied).
	Started time.Time
	// Completed is zero until the call has a result.
	Completed       time.Time
	Success         bool
	Output          string
	OutputTruncated bool
	// Verdict and Approval are filled by History when recorded.
	Verdict  *Verdict
	Approval *Approval
}

// Verdict is the shield's decision on a tool call.
type Verdict struct {
	// Decision is the verdict's name: ALLOW, BLOCK or ESCALATE.
	Decision      string
	Tier          int
	Confidence    float64
	RuleIDs       []string
	Reasoning     string
	ActionType    string
	ActionHash    string
	PolicyVersion string
	FromCache     bool
	Created       time.Time
}

// Approval is an escalation put to a human.
type Approval struct {
	ID        string
	Call      CallKey
	Requested time.Time
	Deadline  time.Time
	// Outcome is empty while the approval is pending.
	Outcome   string
	DecidedBy string
	Resolved  time.Time
}

// Usage is the LLM tokens spent on one turn.
type Usage struct {
	SessionID, MessageID              string
	InputTokens, OutputTokens         int64
	CacheReadTokens, CacheWriteTokens int64
	Provider, Model                   string
	Created                           time.Time
}

// RecordToolCall records a proposed tool call. A call id already recorded
// for the message is left as it is.
func (t *Tx) RecordToolCall(c ToolCall) error {
	if err := c.check(); err != nil {
		return err
	}
	if c.Proposed.IsZero() {
		c.Proposed = time.Now()
	}
	return t.exec(`INSERT INTO tool_calls (session_id, message_id, call_id, tool, arguments, proposed_ms)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		c.SessionID, c.MessageID, c.CallID, cut(c.Tool, MaxTextBytes), cut(c.Arguments, MaxArgumentsBytes), ms(c.Proposed))
}

// RecordToolStarted records that an allowed call began executing.
func (t *Tx) RecordToolStarted(k CallKey, at time.Time) error {
	return t.update("tool call "+k.CallID, `UPDATE tool_calls SET started_ms = ?
		WHERE session_id = ? AND message_id = ? AND call_id = ?`, ms(at), k.SessionID, k.MessageID, k.CallID)
}

// RecordToolCompleted records a call's result (or why it did not run);
// output longer than MaxOutputBytes is cut and marked truncated.
func (t *Tx) RecordToolCompleted(k CallKey, success bool, output string, at time.Time) error {
	stored := cut(output, MaxOutputBytes)
	return t.update("tool call "+k.CallID, `UPDATE tool_calls SET completed_ms = ?, success = ?, output = ?, output_truncated = ?
		WHERE session_id = ? AND message_id = ? AND call_id = ?`,
		ms(at), success, stored, len(output) > MaxOutputBytes, k.SessionID, k.MessageID, k.CallID)
}

// RecordVerdict records the shield's verdict on a recorded tool call.
func (t *Tx) RecordVerdict(k CallKey, v Verdict) error {
	if err := k.check(); err != nil {
		return err
	}
	if v.Created.IsZero() {
		v.Created = time.Now()
	}
	ruleIDs, err := json.Marshal(boundedStrings(v.RuleIDs))
	if err != nil {
		return err
	}
	return t.exec(`INSERT INTO verdicts (session_id, message_id, call_id, decision, tier, confidence, rule_ids,
		reasoning, action_type, action_hash, policy_version, from_cache, created_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		k.SessionID, k.MessageID, k.CallID, cut(v.Decision, 64), v.Tier, v.Confidence, string(ruleIDs), cut(v.Reasoning, MaxTextBytes),
		cut(v.ActionType, 256), cut(v.ActionHash, 256), cut(v.PolicyVersion, 256), v.FromCache, ms(v.Created))
}

// RecordApprovalRequested records an escalation of a recorded tool call.
func (t *Tx) RecordApprovalRequested(a Approval) error {
	if err := checkID("approval id", a.ID); err != nil {
		return err
	}
	if err := a.Call.check(); err != nil {
		return err
	}
	if a.Requested.IsZero() {
		a.Requested = time.Now()
	}
	return t.exec(`INSERT INTO approvals (id, session_id, message_id, call_id, requested_ms, deadline_ms)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		a.ID, a.Call.SessionID, a.Call.MessageID, a.Call.CallID, ms(a.Requested), ms(a.Deadline))
}

// RecordApprovalResolved records the first outcome of a pending approval.
func (t *Tx) RecordApprovalResolved(id, outcome, decidedBy string, at time.Time) error {
	return t.update("approval "+id, `UPDATE approvals SET outcome = ?, decided_by = ?, resolved_ms = ?
		WHERE id = ? AND outcome IS NULL`, cut(outcome, 64), cut(decidedBy, 256), ms(at), id)
}

// RecordUsage records a turn's token usage (once per turn).
func (t *Tx) RecordUsage(u Usage) error {
	if err := checkIDs(u.SessionID, u.MessageID); err != nil {
		return err
	}
	if u.Created.IsZero() {
		u.Created = time.Now()
	}
	return t.exec(`INSERT INTO usage (message_id, session_id, input_tokens, output_tokens, cache_read_tokens,
		cache_write_tokens, provider, model, created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		u.MessageID, u.SessionID, u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens,
		cut(u.Provider, 256), cut(u.Model, 256), ms(u.Created))
}

// RecordToolCall records one proposed tool call (see Tx.RecordToolCall).
func (s *Store) RecordToolCall(ctx context.Context, c ToolCall) error {
	return s.Batch(ctx, func(t *Tx) error { return t.RecordToolCall(c) })[0]
}

// RecordToolStarted records that a call began executing (see Tx.RecordToolStarted).
func (s *Store) RecordToolStarted(ctx context.Context, k CallKey, at time.Time) error {
	return s.Batch(ctx, func(t *Tx) error { return t.RecordToolStarted(k, at) })[0]
}

// RecordToolCompleted records a call's result (see Tx.RecordToolCompleted).
func (s *Store) RecordToolCompleted(ctx context.Context, k CallKey, success bool, output string, at time.Time) error {
	return s.Batch(ctx, func(t *Tx) error { return t.RecordToolCompleted(k, success, output, at) })[0]
}

// RecordVerdict records a verdict (see Tx.RecordVerdict).
func (s *Store) RecordVerdict(ctx context.Context, k CallKey, v Verdict) error {
	return s.Batch(ctx, func(t *Tx) error { return t.RecordVerdict(k, v) })[0]
}

// RecordApprovalRequested records an escalation (see Tx.RecordApprovalRequested).
func (s *Store) RecordApprovalRequested(ctx context.Context, a Approval) error {
	return s.Batch(ctx, func(t *Tx) error { return t.RecordApprovalRequested(a) })[0]
}

// RecordApprovalResolved records an approval's outcome (see Tx.RecordApprovalResolved).
func (s *Store) RecordApprovalResolved(ctx context.Context, id, outcome, decidedBy string, at time.Time) error {
	return s.Batch(ctx, func(t *Tx) error { return t.RecordApprovalResolved(id, outcome, decidedBy, at) })[0]
}

// RecordUsage records a turn's usage (see Tx.RecordUsage).
func (s *Store) RecordUsage(ctx context.Context, u Usage) error {
	return s.Batch(ctx, func(t *Tx) error { return t.RecordUsage(u) })[0]
}

// SessionUsage sums a session's recorded token usage.
func (s *Store) SessionUsage(ctx context.Context, sessionID string) (Usage, error) {
	u := Usage{SessionID: sessionID}
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0),
		COALESCE(SUM(cache_read_tokens), 0), COALESCE(SUM(cache_write_tokens), 0) FROM usage WHERE session_id = ?`, sessionID).
		Scan(&u.InputTokens, &u.OutputTokens, &u.CacheReadTokens, &u.CacheWriteTokens)
	return u, err
}

// Tx is one write transaction of Batch. Each Record method is a single
// statement: one that fails changes nothing and leaves the transaction
// usable.
type Tx struct {
	ctx context.Context
	tx  *sql.Tx
	s   *Store
}

func (t *Tx) run(query string, args ...any) (sql.Result, error) {
	st, err := t.s.stmt(t.ctx, query)
	if err != nil {
		return nil, err
	}
	return t.tx.StmtContext(t.ctx, st).ExecContext(t.ctx, args...)
}

func (t *Tx) exec(query string, args ...any) error {
	_, err := t.run(query, args...)
	return err
}

// update runs one UPDATE and reports ErrNotFound when it matched nothing.
func (t *Tx) update(what, query string, args ...any) error {
	res, err := t.run(query, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return nil
}

// Batch runs records in one transaction, so many cost one commit. Each
// record's error is returned at its index; a failed record changes
// nothing and the others stay. If the transaction cannot begin or commit,
// every record reports that error.
func (s *Store) Batch(ctx context.Context, records ...func(*Tx) error) []error {
	errs := make([]error, len(records))
	fail := func(err error) []error {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	t := &Tx{ctx: ctx, tx: tx, s: s}
	for i, rec := range records {
		errs[i] = rec(t)
	}
	if err := tx.Commit(); err != nil {
		_ = tx.Rollback()
		return fail(err)
	}
	return errs
}

// attachToolCalls fills ToolCalls of msgs (one session's page) with their
// turns' calls: on the turn's answer, or on its user message when the
// turn has no answer.
func attachToolCalls(ctx context.Context, tx *sql.Tx, sessionID string, msgs []Message) error {
	if len(msgs) == 0 {
		return nil
	}
	turns := map[string]bool{}
	var ids []any
	for _, m := range msgs {
		if !turns[m.MessageID] {
			turns[m.MessageID] = true
			ids = append(ids, m.MessageID)
		}
	}
	in := strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")
	args := append([]any{sessionID}, ids...)

	answered := map[string]bool{}
	rows, err := tx.QueryContext(ctx, `SELECT message_id FROM messages WHERE session_id = ? AND role = 'assistant'
		AND message_id IN (`+in+`)`, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		answered[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}

	rows, err = tx.QueryContext(ctx, `SELECT c.session_id, c.message_id, c.call_id, c.tool, c.arguments, c.proposed_ms, c.started_ms,
		c.completed_ms, c.success, c.output, c.output_truncated,
		v.decision, v.tier, v.confidence, v.rule_ids, v.reasoning, v.action_type, v.action_hash, v.policy_version,
		v.from_cache, v.created_ms,
		a.id, a.requested_ms, a.deadline_ms, a.outcome, a.decided_by, a.resolved_ms
		FROM tool_calls c
		LEFT JOIN verdicts v ON v.session_id = c.session_id AND v.message_id = c.message_id AND v.call_id = c.call_id
		LEFT JOIN approvals a ON a.session_id = c.session_id AND a.message_id = c.message_id AND a.call_id = c.call_id
		WHERE c.session_id = ? AND c.message_id IN (`+in+`)
		ORDER BY c.proposed_ms, c.rowid, a.requested_ms`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	calls := map[string][]ToolCall{}
	for rows.Next() {
		c, err := scanToolCall(rows)
		if err != nil {
			return err
		}
		list := calls[c.MessageID]
		if n := len(list); n > 0 && list[n-1].CallID == c.CallID {
			list[n-1] = c // a later approval of the same call
			continue
		}
		calls[c.MessageID] = append(list, c)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range msgs {
		m := &msgs[i]
		if (m.Role == RoleAssistant) == answered[m.MessageID] {
			m.ToolCalls = calls[m.MessageID]
		}
	}
	return nil
}

func scanToolCall(rows *sql.Rows) (ToolCall, error) {
	var c ToolCall
	var proposed int64
	var started, completed, vTier, vCreated, aRequested, aDeadline, aResolved sql.NullInt64
	var success, truncated, vCache sql.NullBool
	var output, vDecision, vRules, vReason, vType, vHash, vPolicy, aID, aOutcome, aBy sql.NullString
	var vConf sql.NullFloat64
	err := rows.Scan(&c.SessionID, &c.MessageID, &c.CallID, &c.Tool, &c.Arguments, &proposed, &started, &completed, &success, &output, &truncated,
		&vDecision, &vTier, &vConf, &vRules, &vReason, &vType, &vHash, &vPolicy, &vCache, &vCreated,
		&aID, &aRequested, &aDeadline, &aOutcome, &aBy, &aResolved)
	if err != nil {
		return c, err
	}
	c.Proposed = time.UnixMilli(proposed)
	c.Started, c.Completed = optTime(started), optTime(completed)
	c.Success, c.Output, c.OutputTruncated = success.Bool, output.String, truncated.Bool
	if vDecision.Valid {
		c.Verdict = &Verdict{Decision: vDecision.String, Tier: int(vTier.Int64), Confidence: vConf.Float64,
			Reasoning: vReason.String, ActionType: vType.String, ActionHash: vHash.String, PolicyVersion: vPolicy.String,
			FromCache: vCache.Bool, Created: optTime(vCreated)}
		if err := json.Unmarshal([]byte(vRules.String), &c.Verdict.RuleIDs); err != nil {
			return c, fmt.Errorf("verdict of call %q: rule ids: %w", c.CallID, err)
		}
	}
	if aID.Valid {
		c.Approval = &Approval{ID: aID.String, Call: c.CallKey, Requested: optTime(aRequested),
			Deadline: optTime(aDeadline), Outcome: aOutcome.String, DecidedBy: aBy.String, Resolved: optTime(aResolved)}
	}
	return c, nil
}

func optTime(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64)
}

func checkIDs(ids ...string) error {
	for _, id := range ids {
		if err := checkID("id", id); err != nil {
			return err
		}
	}
	return nil
}

// boundedStrings keeps list within MaxTextBytes in all, each valid UTF-8.
func boundedStrings(list []string) []string {
	out := []string{}
	used := 0
	for _, s := range list {
		s = cut(s, 256)
		if used+len(s) > MaxTextBytes {
			break
		}
		used += len(s)
		out = append(out, s)
	}
	return out
}
