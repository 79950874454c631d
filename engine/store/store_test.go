package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

func open(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// raw opens the file with the driver alone, to look at it from outside.
func raw(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func pragma(t testing.TB, db interface {
	QueryRow(string, ...any) *sql.Row
}, name string) string {
	t.Helper()
	var v string
	if err := db.QueryRow("PRAGMA " + name).Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

func TestOpenCreatesAPrivateMigratedWALDatabase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "sessions.db")
	s := open(t, path)
	if s.Path() != path {
		t.Fatalf("Path %q, want %q", s.Path(), path)
	}
	if _, err := s.CreateSession(context.Background(), Session{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, path: 0o600, path + "-wal": 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s has mode %v, want %v", p, fi.Mode(), want)
		}
	}
	db := raw(t, path)
	if v := pragma(t, db, "user_version"); v != fmt.Sprint(SchemaVersion()) || SchemaVersion() < 1 {
		t.Fatalf("user_version %s, want %d", v, SchemaVersion())
	}
	if m := pragma(t, db, "journal_mode"); m != "wal" {
		t.Fatalf("journal_mode %q", m)
	}
	// Per-connection settings, seen from the store's own pool.
	if fk := pragma(t, s.db, "foreign_keys"); fk != "1" {
		t.Fatalf("foreign_keys %s", fk)
	}
	if sync := pragma(t, s.db, "synchronous"); sync != "1" { // NORMAL
		t.Fatalf("synchronous %s", sync)
	}
	if bt := pragma(t, s.db, "busy_timeout"); bt != "5000" {
		t.Fatalf("busy_timeout %s", bt)
	}
	for _, table := range []string{"sessions", "messages", "tool_calls", "verdicts", "approvals", "usage"} {
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&n); err != nil || n != 1 {
			t.Errorf("table %s: %d, %v", table, n, err)
		}
	}
	// Re-opening a current database migrates nothing and keeps the data.
	s.Close()
	s2 := open(t, path)
	if ok, err := s2.SessionExists(context.Background(), "s1"); !ok || err != nil {
		t.Fatalf("after reopen: %v, %v", ok, err)
	}
}

func TestOpenRefusesANewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	open(t, path).Close()
	db := raw(t, path)
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion()+1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err := Open(path)
	if !errors.Is(err, ErrTooNew) {
		t.Fatalf("got %v, want ErrTooNew", err)
	}
	for _, want := range []string{path, fmt.Sprintf("version %d", SchemaVersion()+1), fmt.Sprintf("up to %d", SchemaVersion())} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestOpenRefusesFilesThatAreNotOurs(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(garbage); err == nil {
		t.Fatal("opened a file that is not SQLite")
	}
	other := filepath.Join(dir, "other.db")
	db := raw(t, other)
	if _, err := db.Exec(`PRAGMA application_id = 42; CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(other); err == nil || !strings.Contains(err.Error(), "not a Parapet sessions database") {
		t.Fatalf("opened another program's database: %v", err)
	}
	if _, err := Open(""); !errors.Is(err, ErrInvalid) {
		t.Fatalf("empty path: %v", err)
	}
}

func TestMigrationsApplyInOrderAndAFailedOneChangesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	s := open(t, path)
	ctx := context.Background()
	migs, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	n := len(migs)
	next := append(slices.Clone(migs), migration{version: n + 1, name: "next.sql", sql: `CREATE TABLE extra (x INTEGER); INSERT INTO extra VALUES (1);`})
	if err := s.migrate(ctx, next); err != nil {
		t.Fatal(err)
	}
	if v := pragma(t, s.db, "user_version"); v != fmt.Sprint(n+1) {
		t.Fatalf("user_version %s after migration %d", v, n+1)
	}
	broken := append(next, migration{version: n + 2, name: "broken.sql", sql: `CREATE TABLE half (x INTEGER); THIS IS NOT SQL;`})
	if err := s.migrate(ctx, broken); err == nil || !strings.Contains(err.Error(), "broken.sql") {
		t.Fatalf("broken migration: %v", err)
	}
	if v := pragma(t, s.db, "user_version"); v != fmt.Sprint(n+1) {
		t.Fatalf("user_version %s after a failed migration", v)
	}
	var tables int
	if err := s.db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name = 'half'`).Scan(&tables); err != nil || tables != 0 {
		t.Fatalf("a failed migration left table half behind (%d, %v)", tables, err)
	}
	// The binary's own migrations now see a newer database.
	s.Close()
	if _, err := Open(path); !errors.Is(err, ErrTooNew) {
		t.Fatalf("got %v, want ErrTooNew", err)
	}
}

func TestEmbeddedMigrationsAreNumberedWithoutGaps(t *testing.T) {
	migs, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range migs {
		if m.version != i+1 || strings.TrimSpace(m.sql) == "" {
			t.Errorf("migration %d: %+v", i, m.name)
		}
	}
}

// at is a fixed clock for ordering tests: t0 plus i seconds.
func at(i int) time.Time {
	return time.UnixMilli(1_700_000_000_000).Add(time.Duration(i) * time.Second)
}

func TestSessionsAndHistoryPage(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "sessions.db"))
	ctx := context.Background()
	for i := range 5 {
		id := fmt.Sprintf("s%d", i)
		msgs, err := s.CreateSession(ctx, Session{ID: id, Mode: 0, Created: at(i)},
			Message{Role: RoleUser, Content: "question " + id, MessageID: "m" + id, Created: at(i)})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 1 || msgs[0].Seq != 1 {
			t.Fatalf("created messages %+v", msgs)
		}
	}
	// s0 gets an answer last, so it is the most recently updated.
	m, err := s.AppendMessage(ctx, Message{SessionID: "s0", Role: RoleAssistant, Content: "answer", MessageID: "ms0", Created: at(10)})
	if err != nil || m.Seq != 2 {
		t.Fatalf("append: %+v, %v", m, err)
	}
	all, total, err := s.Sessions(ctx, 0, 0)
	if err != nil || total != 5 {
		t.Fatalf("Sessions: %d, %v", total, err)
	}
	var ids []string
	for _, sess := range all {
		ids = append(ids, sess.ID)
	}
	if want := []string{"s0", "s4", "s3", "s2", "s1"}; !slices.Equal(ids, want) {
		t.Fatalf("order %v, want %v", ids, want)
	}
	if all[0].Title != "question s0" || all[0].MessageCount != 2 || !all[0].Updated.Equal(at(10)) || !all[0].Created.Equal(at(0)) {
		t.Fatalf("s0: %+v", all[0])
	}
	var paged []string
	for off := 0; off < 6; off += 2 {
		page, total, err := s.Sessions(ctx, off, 2)
		if err != nil || total != 5 {
			t.Fatalf("page at %d: %d, %v", off, total, err)
		}
		for _, sess := range page {
			paged = append(paged, sess.ID)
		}
	}
	if !slices.Equal(paged, ids) {
		t.Fatalf("pages %v, all %v", paged, ids)
	}
	if page, total, err := s.Sessions(ctx, 99, 2); err != nil || len(page) != 0 || total != 5 {
		t.Fatalf("past the end: %v, %d, %v", page, total, err)
	}

	for i := range 8 {
		role := []string{RoleUser, RoleAssistant}[i%2]
		if _, err := s.AppendMessage(ctx, Message{SessionID: "s1", Role: role, Content: fmt.Sprint(i), MessageID: "t" + fmt.Sprint(i/2)}); err != nil {
			t.Fatal(err)
		}
	}
	hist, total, err := s.History(ctx, "s1", 3, 4)
	if err != nil || total != 9 || len(hist) != 4 {
		t.Fatalf("History page: %d messages, total %d, %v", len(hist), total, err)
	}
	var got []string
	for _, m := range hist {
		got = append(got, fmt.Sprintf("%d:%s:%s", m.Seq, m.Role, m.Content))
	}
	if want := []string{"4:user:2", "5:assistant:3", "6:user:4", "7:assistant:5"}; !slices.Equal(got, want) {
		t.Fatalf("history %v, want %v", got, want)
	}

	for name, err := range map[string]error{
		"negative session offset": third(s.Sessions(ctx, -1, 0)),
		"negative session limit":  third(s.Sessions(ctx, 0, -1)),
		"negative history offset": third(s.History(ctx, "s1", -1, 0)),
	} {
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, _, err := s.History(ctx, "nope", 0, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
	if _, err := s.Session(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
	if ok, err := s.SessionExists(ctx, "nope"); ok || err != nil {
		t.Fatalf("SessionExists(nope) = %v, %v", ok, err)
	}
	if _, err := s.AppendMessage(ctx, Message{SessionID: "nope", Role: RoleUser, Content: "x", MessageID: "m"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("append to an unknown session: %v", err)
	}
}

func second[A any](_ A, err error) error { return err }

func TestChatHistoryKeepsTheNewestWithinItsBudget(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "sessions.db"))
	ctx := context.Background()
	if _, err := s.CreateSession(ctx, Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	for i, c := range []string{"u1", "a1-long-answer", "u2", "a2"} {
		role := []string{RoleUser, RoleAssistant}[i%2]
		if _, err := s.AppendMessage(ctx, Message{SessionID: "s", Role: role, Content: c, MessageID: fmt.Sprint("m", i/2)}); err != nil {
			t.Fatal(err)
		}
	}
	contents := func(budget int) []string {
		msgs, err := s.ChatHistory(ctx, "s", budget)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range msgs {
			out = append(out, m.Content)
		}
		return out
	}
	if got := contents(0); !slices.Equal(got, []string{"u1", "a1-long-answer", "u2", "a2"}) {
		t.Fatalf("unbounded: %v", got)
	}
	// 4 bytes fit "u2" and "a2"; 10 would add no more because the long
	// answer does not fit and the history must start with the user.
	if got := contents(10); !slices.Equal(got, []string{"u2", "a2"}) {
		t.Fatalf("budget 10: %v", got)
	}
	if got := contents(3); len(got) != 0 {
		t.Fatalf("budget 3 (only an answer fits): %v", got)
	}
	if _, err := s.ChatHistory(ctx, "nope", 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
}

// recordTurn stores one turn with a tool call that was escalated,
// approved and run, as the engine records it.
func recordTurn(t testing.TB, s *Store, sid, mid, call string) {
	t.Helper()
	ctx := context.Background()
	k := CallKey{sid, mid, call}
	for _, err := range []error{
		s.RecordToolCall(ctx, ToolCall{CallKey: k, Tool: "write_file", Arguments: `{"path":"a"}`}),
		s.RecordVerdict(ctx, k, Verdict{Decision: "ESCALATE", Tier: 1, Confidence: 0.5, RuleIDs: []string{"r1", "r2"},
			Reasoning: "writes", ActionType: "write_file", ActionHash: "abc", PolicyVersion: "p1"}),
		s.RecordApprovalRequested(ctx, Approval{ID: "appr_" + call, Call: k, Deadline: at(300)}),
		s.RecordApprovalResolved(ctx, "appr_"+call, "approved", "grpc", at(5)),
		s.RecordToolStarted(ctx, k, at(6)),
		s.RecordToolCompleted(ctx, k, true, "wrote 1 byte", at(7)),
		s.RecordUsage(ctx, Usage{SessionID: sid, MessageID: mid, InputTokens: 10, OutputTokens: 3, Provider: "scripted", Model: "demo"}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	s := open(t, path)
	ctx := context.Background()
	if _, err := s.CreateSession(ctx, Session{ID: "s", Mode: 3}, Message{Role: RoleUser, Content: "write a", MessageID: "m1"}); err != nil {
		t.Fatal(err)
	}
	recordTurn(t, s, "s", "m1", "c1")
	if _, err := s.AppendMessage(ctx, Message{SessionID: "s", Role: RoleAssistant, Content: "done", MessageID: "m1"}); err != nil {
		t.Fatal(err)
	}
	// A second turn that ended without an answer, with a refused call.
	if _, err := s.AppendMessage(ctx, Message{SessionID: "s", Role: RoleUser, Content: "again", MessageID: "m2"}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordToolCall(ctx, ToolCall{CallKey: CallKey{"s", "m2", "c2"}, Tool: "shell", Arguments: "{}"}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordToolCompleted(ctx, CallKey{"s", "m2", "c2"}, false, "refused", at(9)); err != nil {
		t.Fatal(err)
	}
	before, _, err := s.History(ctx, "s", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2 := open(t, path)
	sess, err := s2.Session(ctx, "s")
	if err != nil || sess.Mode != 3 || sess.MessageCount != 3 || sess.Title != "write a" {
		t.Fatalf("session after reopen: %+v, %v", sess, err)
	}
	after, total, err := s2.History(ctx, "s", 0, 0)
	if err != nil || total != 3 {
		t.Fatalf("history after reopen: %d, %v", total, err)
	}
	if !reflect.DeepEqual(after, before) {
		t.Fatalf("history changed across reopen:\n%+v\n%+v", before, after)
	}
	if len(after[0].ToolCalls) != 0 || len(after[1].ToolCalls) != 1 || len(after[2].ToolCalls) != 1 {
		t.Fatalf("tool calls not on the turn's answer (or its question when unanswered): %+v", after)
	}
	c := after[1].ToolCalls[0]
	if c.CallID != "c1" || c.Tool != "write_file" || c.Arguments != `{"path":"a"}` || !c.Success || c.Output != "wrote 1 byte" ||
		!c.Started.Equal(at(6)) || !c.Completed.Equal(at(7)) {
		t.Fatalf("call %+v", c)
	}
	if v := c.Verdict; v == nil || v.Decision != "ESCALATE" || v.Tier != 1 || !slices.Equal(v.RuleIDs, []string{"r1", "r2"}) ||
		v.ActionHash != "abc" || v.PolicyVersion != "p1" || v.Reasoning != "writes" {
		t.Fatalf("verdict %+v", c.Verdict)
	}
	if a := c.Approval; a == nil || a.ID != "appr_c1" || a.Outcome != "approved" || a.DecidedBy != "grpc" ||
		!a.Resolved.Equal(at(5)) || !a.Deadline.Equal(at(300)) {
		t.Fatalf("approval %+v", c.Approval)
	}
	if r := after[2].ToolCalls[0]; r.CallID != "c2" || !r.Started.IsZero() || r.Success || r.Output != "refused" || r.Verdict != nil {
		t.Fatalf("refused call %+v", r)
	}
	u, err := s2.SessionUsage(ctx, "s")
	if err != nil || u.InputTokens != 10 || u.OutputTokens != 3 {
		t.Fatalf("usage %+v, %v", u, err)
	}
	// The first answer of an approval wins.
	if err := s2.RecordApprovalResolved(ctx, "appr_c1", "denied", "http", at(8)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second resolution: %v", err)
	}
}

func TestNothingHalfWritten(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "sessions.db"))
	ctx := context.Background()
	// The second message is invalid: neither the session nor the first
	// message may remain.
	_, err := s.CreateSession(ctx, Session{ID: "s"},
		Message{Role: RoleUser, Content: "hi", MessageID: "m1"},
		Message{Role: "system", Content: "x", MessageID: "m1"})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("got %v, want ErrInvalid", err)
	}
	var n int
	if err := s.db.QueryRow(`SELECT (SELECT COUNT(*) FROM sessions) + (SELECT COUNT(*) FROM messages)`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows left behind (%v)", n, err)
	}
	// A tool call for a session that does not exist is refused by the
	// foreign key.
	ghost := CallKey{"ghost", "m", "c"}
	if err := s.RecordToolCall(ctx, ToolCall{CallKey: ghost, Tool: "x"}); err == nil {
		t.Fatal("recorded a tool call of an unknown session")
	}
	if err := s.RecordVerdict(ctx, ghost, Verdict{Decision: "ALLOW"}); err == nil {
		t.Fatal("recorded a verdict of an unknown call")
	}
	if err := s.RecordToolStarted(ctx, ghost, time.Now()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("started an unknown call: %v", err)
	}
}

// A batch is one transaction; a record that fails in it is reported and
// undone alone.
func TestBatchIsolatesAFailedRecord(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "sessions.db"))
	ctx := context.Background()
	if _, err := s.CreateSession(ctx, Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	k := CallKey{"s", "m", "c1"}
	errs := s.Batch(ctx,
		func(t *Tx) error { return t.RecordToolCall(ToolCall{CallKey: k, Tool: "read_file"}) },
		func(t *Tx) error { return t.RecordToolCall(ToolCall{CallKey: CallKey{"ghost", "m", "c2"}, Tool: "x"}) },
		func(t *Tx) error { return t.RecordToolStarted(CallKey{"s", "m", "nope"}, time.Now()) },
		func(t *Tx) error { return t.RecordVerdict(k, Verdict{Decision: "ALLOW"}) },
	)
	if errs[0] != nil || errs[1] == nil || !errors.Is(errs[2], ErrNotFound) || errs[3] != nil {
		t.Fatalf("errors %v", errs)
	}
	hist, _, err := s.History(ctx, "s", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.db.QueryRow(`SELECT (SELECT COUNT(*) FROM tool_calls) * 10 + (SELECT COUNT(*) FROM verdicts)`).Scan(&n); err != nil || n != 11 {
		t.Fatalf("rows after the batch: %d (%v), history %+v", n, err, hist)
	}
	s.Close()
	for i, err := range s.Batch(ctx, func(*Tx) error { return nil }, func(*Tx) error { return nil }) {
		if err == nil {
			t.Errorf("record %d of a batch on a closed store: no error", i)
		}
	}
}

func TestBounds(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "sessions.db"))
	ctx := context.Background()
	if _, err := s.CreateSession(ctx, Session{ID: strings.Repeat("x", MaxIDBytes+1)}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("oversized id: %v", err)
	}
	if _, err := s.CreateSession(ctx, Session{ID: ""}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("empty id: %v", err)
	}
	huge := strings.Repeat("é", MaxContentBytes) // two bytes each
	msgs, err := s.CreateSession(ctx, Session{ID: "s"},
		Message{Role: RoleUser, Content: huge, MessageID: "m"},
		Message{Role: RoleAssistant, Content: "bad \xff utf-8", MessageID: "m"})
	if err != nil {
		t.Fatal(err)
	}
	hist, _, err := s.History(ctx, "s", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := hist[0].Content; len(got) > MaxContentBytes+len("…") || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Fatalf("stored %d bytes (valid UTF-8 %v) of a %d-byte message", len(got), utf8.ValidString(got), len(huge))
	}
	if msgs[0].Content != hist[0].Content {
		t.Fatal("CreateSession returned a different content than it stored")
	}
	if got := hist[1].Content; got != "bad \uFFFD utf-8" {
		t.Fatalf("invalid UTF-8 stored as %q", got)
	}
	sess, err := s.Session(ctx, "s")
	if err != nil || len(sess.Title) > TitleBytes+len("…") {
		t.Fatalf("title of %d bytes: %v", len(sess.Title), err)
	}
	if err := s.RecordToolCall(ctx, ToolCall{CallKey: CallKey{"s", "m", "c"}, Tool: "shell", Arguments: "{}"}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordToolCompleted(ctx, CallKey{"s", "m", "c"}, true, strings.Repeat("o", MaxOutputBytes+1), time.Now()); err != nil {
		t.Fatal(err)
	}
	hist, _, err = s.History(ctx, "s", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c := hist[1].ToolCalls[0]; !c.OutputTruncated || len(c.Output) > MaxOutputBytes+len("…") {
		t.Fatalf("output of %d bytes, truncated %v", len(c.Output), c.OutputTruncated)
	}
	for i := range MaxPage + 5 {
		if _, err := s.AppendMessage(ctx, Message{SessionID: "s", Role: RoleUser, Content: "x", MessageID: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if page, total, err := s.History(ctx, "s", 0, 0); err != nil || len(page) != MaxPage || total != MaxPage+7 {
		t.Fatalf("unbounded page: %d of %d, %v", len(page), total, err)
	}
}

func TestClosedStoreGivesErrors(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "sessions.db"))
	ctx := context.Background()
	if _, err := s.CreateSession(ctx, Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	k := CallKey{"s", "m", "c"}
	for name, err := range map[string]error{
		"CreateSession":   second(s.CreateSession(ctx, Session{ID: "t"})),
		"AppendMessage":   second(s.AppendMessage(ctx, Message{SessionID: "s", Role: RoleUser, Content: "x", MessageID: "m"})),
		"Session":         second(s.Session(ctx, "s")),
		"SessionExists":   second(s.SessionExists(ctx, "s")),
		"Sessions":        third(s.Sessions(ctx, 0, 0)),
		"History":         third(s.History(ctx, "s", 0, 0)),
		"ChatHistory":     second(s.ChatHistory(ctx, "s", 0)),
		"RecordToolCall":  s.RecordToolCall(ctx, ToolCall{CallKey: k}),
		"RecordStarted":   s.RecordToolStarted(ctx, k, time.Now()),
		"RecordCompleted": s.RecordToolCompleted(ctx, k, true, "", time.Now()),
		"RecordVerdict":   s.RecordVerdict(ctx, k, Verdict{}),
		"RecordApproval":  s.RecordApprovalRequested(ctx, Approval{ID: "a", Call: k}),
		"RecordResolved":  s.RecordApprovalResolved(ctx, "a", "denied", "x", time.Now()),
		"RecordUsage":     s.RecordUsage(ctx, Usage{SessionID: "s", MessageID: "m"}),
		"SessionUsage":    second(s.SessionUsage(ctx, "s")),
	} {
		if err == nil {
			t.Errorf("%s on a closed store: no error", name)
		}
	}
}

func third[A, B any](_ A, _ B, err error) error { return err }

// Many goroutines, and a second Store on the same file (as a second
// process would be), write at once; every write lands exactly once.
func TestConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	stores := []*Store{open(t, path), open(t, path)}
	ctx := context.Background()
	const writers, turns = 12, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*turns)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[w%2]
			sid := fmt.Sprintf("s%d", w)
			if _, err := s.CreateSession(ctx, Session{ID: sid}); err != nil {
				errs <- err
				return
			}
			for i := range turns {
				mid := fmt.Sprintf("m%d", i)
				for _, role := range []string{RoleUser, RoleAssistant} {
					if _, err := s.AppendMessage(ctx, Message{SessionID: sid, Role: role, Content: mid, MessageID: mid}); err != nil {
						errs <- err
					}
				}
				if err := s.RecordToolCall(ctx, ToolCall{CallKey: CallKey{sid, mid, "c"}, Tool: "t"}); err != nil {
					errs <- err
				}
				if _, _, err := s.History(ctx, sid, 0, 0); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	sessions, total, err := stores[0].Sessions(ctx, 0, 0)
	if err != nil || total != writers {
		t.Fatalf("%d sessions, %v", total, err)
	}
	for _, sess := range sessions {
		if sess.MessageCount != 2*turns {
			t.Errorf("session %s has %d messages, want %d", sess.ID, sess.MessageCount, 2*turns)
		}
		hist, _, err := stores[1].History(ctx, sess.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range hist {
			if m.Seq != int64(i+1) {
				t.Fatalf("session %s: message %d has seq %d", sess.ID, i, m.Seq)
			}
		}
	}
}

// FuzzMessageRoundTrip: whatever the agent or a tool sends is stored as
// valid, bounded UTF-8 and read back in order.
func FuzzMessageRoundTrip(f *testing.F) {
	f.Add("hello", "out", "call-1")
	f.Add("\xff\xfe", "\x00", "c")
	f.Add(strings.Repeat("日本", 10), "", strings.Repeat("x", 300))
	s := open(f, filepath.Join(f.TempDir(), "sessions.db"))
	ctx := context.Background()
	n := 0
	f.Fuzz(func(t *testing.T, content, output, callID string) {
		n++
		sid := fmt.Sprint("s", n)
		if _, err := s.CreateSession(ctx, Session{ID: sid}, Message{Role: RoleUser, Content: content, MessageID: "m"}); err != nil {
			t.Fatal(err)
		}
		k := CallKey{sid, "m", callID}
		callErr := s.RecordToolCall(ctx, ToolCall{CallKey: k, Tool: content, Arguments: content})
		if (callErr != nil) != (callID == "" || len(callID) > MaxIDBytes) {
			t.Fatalf("call id of %d bytes: %v", len(callID), callErr)
		}
		if callErr == nil {
			if err := s.RecordToolCompleted(ctx, k, false, output, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		hist, total, err := s.History(ctx, sid, 0, 0)
		if err != nil || total != 1 || len(hist) != 1 {
			t.Fatalf("history: %d, %v", total, err)
		}
		m := hist[0]
		if !utf8.ValidString(m.Content) || len(m.Content) > MaxContentBytes+len("…") {
			t.Fatalf("content stored as %q", m.Content)
		}
		if utf8.ValidString(content) && m.Content != content {
			t.Fatalf("valid content %q came back as %q", content, m.Content)
		}
		if callErr == nil {
			if len(m.ToolCalls) != 1 || !utf8.ValidString(m.ToolCalls[0].Output) || m.ToolCalls[0].CallID != callID {
				t.Fatalf("calls %+v", m.ToolCalls)
			}
		}
	})
}
