package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/parapet-dev/parapet/internal/textcut"
)

// Bounds on what one row may hold. Longer text is cut (on a character
// boundary, marked with "…"); longer ids are refused.
const (
	MaxIDBytes        = 256
	MaxContentBytes   = 1 << 20
	MaxArgumentsBytes = 64 << 10
	MaxOutputBytes    = 64 << 10
	MaxTextBytes      = 16 << 10 // reasoning, rule ids, names
	TitleBytes        = 60
	// MaxPage bounds one page of Sessions or History; a limit of 0 means
	// MaxPage.
	MaxPage = 500
)

// Message roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Session is one persisted conversation.
type Session struct {
	ID string
	// Mode is the pb.SessionMode number the session was created with.
	Mode         int32
	Title        string
	Created      time.Time
	Updated      time.Time
	MessageCount int
}

// Message is a user message or an assistant answer.
type Message struct {
	SessionID string
	// Seq numbers a session's messages from 1; AppendMessage assigns it.
	Seq     int64
	Role    string
	Content string
	// MessageID is the engine's id of the turn (a user message and its
	// answer share it).
	MessageID string
	Created   time.Time
	// ToolCalls are the turn's tool calls, filled by History on the turn's
	// answer (or on its user message when the turn ended without one).
	ToolCalls []ToolCall
}

// CreateSession creates a session and appends msgs to it, all in one
// transaction. The title defaults to the start of the first user message.
func (s *Store) CreateSession(ctx context.Context, sess Session, msgs ...Message) ([]Message, error) {
	if err := checkID("session id", sess.ID); err != nil {
		return nil, err
	}
	if sess.Created.IsZero() {
		sess.Created = time.Now()
	}
	if sess.Updated.Before(sess.Created) {
		sess.Updated = sess.Created
	}
	var out []Message
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, mode, title, created_ms, updated_ms) VALUES (?, ?, ?, ?, ?)`,
			sess.ID, sess.Mode, cut(sess.Title, TitleBytes), ms(sess.Created), ms(sess.Updated))
		if err != nil {
			return fmt.Errorf("create session %q: %w", sess.ID, err)
		}
		for _, m := range msgs {
			m.SessionID = sess.ID
			m, err := appendMessage(ctx, tx, m)
			if err != nil {
				return err
			}
			out = append(out, m)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AppendMessage adds m to the end of its session (which must exist) and
// returns it with Seq and Created set.
func (s *Store) AppendMessage(ctx context.Context, m Message) (Message, error) {
	var out Message
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = appendMessage(ctx, tx, m)
		return err
	})
	return out, err
}

func appendMessage(ctx context.Context, tx *sql.Tx, m Message) (Message, error) {
	if err := checkID("session id", m.SessionID); err != nil {
		return m, err
	}
	if err := checkID("message id", m.MessageID); err != nil {
		return m, err
	}
	if m.Role != RoleUser && m.Role != RoleAssistant {
		return m, fmt.Errorf("%w: role %q (want %q or %q)", ErrInvalid, m.Role, RoleUser, RoleAssistant)
	}
	if m.Created.IsZero() {
		m.Created = time.Now()
	}
	m.Content = cut(m.Content, MaxContentBytes)
	var count int64
	var title string
	err := tx.QueryRowContext(ctx, `SELECT message_count, title FROM sessions WHERE id = ?`, m.SessionID).Scan(&count, &title)
	if errors.Is(err, sql.ErrNoRows) {
		return m, fmt.Errorf("session %q: %w", m.SessionID, ErrNotFound)
	}
	if err != nil {
		return m, err
	}
	m.Seq = count + 1
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages (session_id, seq, role, content, message_id, created_ms) VALUES (?, ?, ?, ?, ?, ?)`,
		m.SessionID, m.Seq, m.Role, m.Content, m.MessageID, ms(m.Created)); err != nil {
		return m, fmt.Errorf("append message to %q: %w", m.SessionID, err)
	}
	if title == "" && m.Role == RoleUser {
		title = cut(strings.TrimSpace(m.Content), TitleBytes)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET message_count = ?, title = ?, updated_ms = MAX(updated_ms, ?) WHERE id = ?`,
		m.Seq, title, ms(m.Created), m.SessionID); err != nil {
		return m, err
	}
	return m, nil
}

// Session returns one session, or ErrNotFound.
func (s *Store) Session(ctx context.Context, id string) (Session, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = ?`, id)
	sess, err := scanSession(row)
	if errors.Is(err, sql.ErrNoRows) {
		return sess, fmt.Errorf("session %q: %w", id, ErrNotFound)
	}
	return sess, err
}

// SessionExists reports whether a session is stored.
func (s *Store) SessionExists(ctx context.Context, id string) (bool, error) {
	_, err := s.Session(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Sessions returns a page of sessions, most recently updated first, and
// how many there are in all.
func (s *Store) Sessions(ctx context.Context, offset, limit int) ([]Session, int, error) {
	limit, err := pageBounds(offset, limit)
	if err != nil {
		return nil, 0, err
	}
	var out []Session
	var total int
	err = s.read(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions`).Scan(&total); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+sessionColumns+` FROM sessions ORDER BY updated_ms DESC, id LIMIT ? OFFSET ?`, limit, offset)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			sess, err := scanSession(rows)
			if err != nil {
				return err
			}
			out = append(out, sess)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// CountSessions is how many sessions are stored.
func (s *Store) CountSessions(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions`).Scan(&n)
	return n, err
}

const sessionColumns = `id, mode, title, created_ms, updated_ms, message_count`

func scanSession(row interface{ Scan(...any) error }) (Session, error) {
	var sess Session
	var created, updated int64
	if err := row.Scan(&sess.ID, &sess.Mode, &sess.Title, &created, &updated, &sess.MessageCount); err != nil {
		return Session{}, err
	}
	sess.Created, sess.Updated = time.UnixMilli(created), time.UnixMilli(updated)
	return sess, nil
}

// History returns a page of a session's messages, oldest first, with the
// tool calls of each turn, and how many messages the session has.
func (s *Store) History(ctx context.Context, sessionID string, offset, limit int) ([]Message, int, error) {
	limit, err := pageBounds(offset, limit)
	if err != nil {
		return nil, 0, err
	}
	var out []Message
	var total int
	err = s.read(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT message_count FROM sessions WHERE id = ?`, sessionID).Scan(&total)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("session %q: %w", sessionID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT seq, role, content, message_id, created_ms FROM messages
			WHERE session_id = ? ORDER BY seq LIMIT ? OFFSET ?`, sessionID, limit, offset)
		if err != nil {
			return err
		}
		out, err = scanMessages(rows, sessionID)
		if err != nil {
			return err
		}
		return attachToolCalls(ctx, tx, sessionID, out)
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// ChatHistory returns the newest messages of a session whose contents
// add up to at most maxBytes (0: no bound), oldest first, for the agent's
// context. ToolCalls are not filled.
func (s *Store) ChatHistory(ctx context.Context, sessionID string, maxBytes int) ([]Message, error) {
	var out []Message
	err := s.read(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE id = ?`, sessionID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("session %q: %w", sessionID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT seq, role, content, message_id, created_ms FROM messages
			WHERE session_id = ? ORDER BY seq DESC`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		used := 0
		for rows.Next() {
			m, err := scanMessage(rows, sessionID)
			if err != nil {
				return err
			}
			if maxBytes > 0 && used+len(m.Content) > maxBytes {
				break
			}
			used += len(m.Content)
			out = append(out, m)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	// A conversation handed to a model starts with the user: an answer
	// whose question fell outside the budget goes too.
	for len(out) > 0 && out[0].Role != RoleUser {
		out = out[1:]
	}
	return out, nil
}

func scanMessages(rows *sql.Rows, sessionID string) ([]Message, error) {
	defer rows.Close()
	var out []Message
	for rows.Next() {
		m, err := scanMessage(rows, sessionID)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func scanMessage(rows *sql.Rows, sessionID string) (Message, error) {
	m := Message{SessionID: sessionID}
	var created int64
	if err := rows.Scan(&m.Seq, &m.Role, &m.Content, &m.MessageID, &created); err != nil {
		return m, err
	}
	m.Created = time.UnixMilli(created)
	return m, nil
}

func pageBounds(offset, limit int) (int, error) {
	if offset < 0 || limit < 0 {
		return 0, fmt.Errorf("%w: offset %d and limit %d must not be negative", ErrInvalid, offset, limit)
	}
	if limit == 0 || limit > MaxPage {
		limit = MaxPage
	}
	return limit, nil
}

func checkID(what, id string) error {
	if id == "" || len(id) > MaxIDBytes {
		return fmt.Errorf("%w: %s must be 1 to %d bytes, got %d", ErrInvalid, what, MaxIDBytes, len(id))
	}
	return nil
}

// cut makes s valid UTF-8 (a protobuf string field must be) and at most n
// bytes plus the "…" marker.
func cut(s string, n int) string { return textcut.Truncate(strings.ToValidUTF8(s, "\uFFFD"), n) }

func ms(t time.Time) int64 { return t.UnixMilli() }
