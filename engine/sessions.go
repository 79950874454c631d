package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parapet-dev/parapet/engine/store"
	"github.com/parapet-dev/parapet/internal/textcut"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// Sessions live in one of two places. With a Config.Store, normal
// sessions are created in and read from the database, and only
// off-the-record ones stay in e.sessions, gone when the engine stops.
// Without a Store every session is in memory.

// historyBudget bounds the history one ProcessRequest carries (the newest
// messages that fit): with the message itself it stays well under the
// agent's 4 MiB gRPC receive limit.
const historyBudget = 2 << 20

// storeTimeout bounds one database operation of a turn: a stuck database
// may lose a record, never hold up the agent.
const storeTimeout = 10 * time.Second

// Errors of Sessions and History.
var (
	ErrSessionNotFound = errors.New("no such session")
	ErrBadPage         = errors.New("limit and offset must not be negative")
)

// Sessions returns a page of sessions and how many there are: in-memory
// (off-the-record) sessions first, then stored ones, each most recently
// updated first. A limit of 0, or above store.MaxPage, means store.MaxPage.
func (e *Engine) Sessions(ctx context.Context, offset, limit int) ([]*pb.SessionInfo, int, error) {
	if offset < 0 || limit < 0 {
		return nil, 0, ErrBadPage
	}
	if limit == 0 || limit > store.MaxPage {
		limit = store.MaxPage
	}
	mem := e.memorySessions()
	out := page(mem, offset, limit)
	total := len(mem)
	if st := e.cfg.Store; st != nil {
		// The stored part of the page starts where the in-memory one ends.
		dbOffset, dbLimit := max(0, offset-len(mem)), limit-len(out)
		if dbLimit == 0 {
			n, err := st.CountSessions(ctx)
			if err != nil {
				return nil, 0, e.storeReadError(ctx, "count sessions", err)
			}
			return out, total + n, nil
		}
		list, n, err := st.Sessions(ctx, dbOffset, dbLimit)
		if err != nil {
			return nil, 0, e.storeReadError(ctx, "list sessions", err)
		}
		for _, s := range list {
			out = append(out, &pb.SessionInfo{Id: s.ID, Title: s.Title, Mode: pb.SessionMode(s.Mode),
				CreatedAt: s.Created.Unix(), UpdatedAt: s.Updated.Unix(), MessageCount: int32(s.MessageCount)})
		}
		total += n
	}
	return out, total, nil
}

// memorySessions lists the in-memory sessions, most recently updated first.
func (e *Engine) memorySessions() []*pb.SessionInfo {
	e.mu.Lock()
	all := make([]*pb.SessionInfo, 0, len(e.sessions))
	for _, s := range e.sessions {
		all = append(all, &pb.SessionInfo{Id: s.id, Mode: s.mode, CreatedAt: s.created.Unix(), UpdatedAt: s.updated.Unix(),
			MessageCount: int32(len(s.history)), Title: sessionTitle(s)})
	}
	e.mu.Unlock()
	sort.Slice(all, func(i, j int) bool {
		return all[i].UpdatedAt > all[j].UpdatedAt || (all[i].UpdatedAt == all[j].UpdatedAt && all[i].Id < all[j].Id)
	})
	return all
}

// History returns a page of a session's messages, oldest first, and how
// many it has. Stored sessions carry each turn's tool calls with their
// verdicts and approval outcomes; in-memory ones only the conversation.
func (e *Engine) History(ctx context.Context, sessionID string, offset, limit int) ([]*pb.HistoryMessage, int, error) {
	if offset < 0 || limit < 0 {
		return nil, 0, ErrBadPage
	}
	if limit == 0 || limit > store.MaxPage {
		limit = store.MaxPage
	}
	e.mu.Lock()
	s, inMemory := e.sessions[sessionID]
	var msgs []*pb.HistoryMessage
	if inMemory {
		for i, h := range s.history {
			msgs = append(msgs, &pb.HistoryMessage{Id: s.id + "/" + strconv.Itoa(i+1), Role: h.Role, Content: h.Content})
		}
	}
	e.mu.Unlock()
	if inMemory {
		return page(msgs, offset, limit), len(msgs), nil
	}
	if e.cfg.Store == nil {
		return nil, 0, fmt.Errorf("%w: %q", ErrSessionNotFound, sessionID)
	}
	list, total, err := e.cfg.Store.History(ctx, sessionID, offset, limit)
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, fmt.Errorf("%w: %q", ErrSessionNotFound, sessionID)
	}
	if err != nil {
		return nil, 0, e.storeReadError(ctx, "read history", err)
	}
	out := make([]*pb.HistoryMessage, 0, len(list))
	for _, m := range list {
		hm := &pb.HistoryMessage{Id: sessionID + "/" + strconv.FormatInt(m.Seq, 10), Role: m.Role, Content: m.Content,
			CreatedAt: m.Created.Unix()}
		for _, c := range m.ToolCalls {
			hm.ToolCalls = append(hm.ToolCalls, historyToolCall(c))
		}
		out = append(out, hm)
	}
	return out, total, nil
}

func historyToolCall(c store.ToolCall) *pb.HistoryToolCall {
	h := &pb.HistoryToolCall{CallId: c.CallID, ToolName: c.Tool, ArgumentsJson: c.Arguments, Output: c.Output, IsError: !c.Success}
	if v := c.Verdict; v != nil {
		decision, _ := pb.ParseDecision(v.Decision) // a stored "UNSPECIFIED" stays unset
		h.Verdict = &pb.Verdict{
			Decision: decision,
			Tier:     int32(v.Tier), Confidence: v.Confidence, Reasoning: v.Reasoning, ActionHash: v.ActionHash,
			RuleIds: v.RuleIDs, PolicyVersion: v.PolicyVersion, CacheHit: v.FromCache, ActionType: v.ActionType,
			EvaluatedAt: v.Created.Unix(),
		}
	}
	if a := c.Approval; a != nil {
		h.Approval = a.Outcome
		if h.Approval == "" {
			h.Approval = "pending"
		}
	}
	return h
}

// sessionStatus turns an error of Sessions or History into a gRPC status.
func sessionStatus(err error) error {
	switch {
	case errors.Is(err, ErrBadPage):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, ErrSessionNotFound):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	}
	return status.Error(codes.Unavailable, err.Error())
}

// storeReadError reports a failed read: the caller's own cancellation as
// itself, anything else logged and counted.
func (e *Engine) storeReadError(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	e.storeFailed(what, err)
	return fmt.Errorf("session store: %s: %w", what, err)
}

// hasSession reports whether a session exists in memory or in the store.
func (e *Engine) hasSession(id string) bool {
	e.mu.Lock()
	_, ok := e.sessions[id]
	e.mu.Unlock()
	if ok || e.cfg.Store == nil {
		return ok
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	ok, err := e.cfg.Store.SessionExists(ctx, id)
	if err != nil {
		e.log.Error("session store: look up a session failed", "session", id, "error", err)
	}
	return ok
}

func sessionTitle(s *session) string {
	for _, h := range s.history {
		if h.Role == "user" {
			return textcut.Truncate(strings.TrimSpace(h.Content), store.TitleBytes)
		}
	}
	return ""
}

// sessionLocked finds the session a message goes to, or makes a new one:
// in the store unless it is off the record or there is no store. A new
// stored session is written with its first message (recordUserLocked).
func (e *Engine) sessionLocked(ctx context.Context, id string, mode pb.SessionMode, createNamed bool) (*session, error) {
	if id == "" {
		return e.newSessionLocked("sess_"+randomID(), mode), nil
	}
	if s, ok := e.sessions[id]; ok {
		return s, nil
	}
	notFound := &CodedError{Code: "SESSION_NOT_FOUND", Msg: fmt.Sprintf("no session %q", textcut.Truncate(id, 80))}
	if createNamed {
		if err := checkSessionName(id); err != nil {
			return nil, err
		}
		notFound = nil
	}
	if e.cfg.Store == nil {
		if notFound == nil {
			return e.newSessionLocked(id, mode), nil
		}
		return nil, notFound
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	stored, err := e.cfg.Store.Session(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		if notFound == nil {
			return e.newSessionLocked(id, mode), nil
		}
		return nil, notFound
	}
	var msgs []store.Message
	if err == nil {
		msgs, err = e.cfg.Store.ChatHistory(ctx, id, historyBudget)
	}
	if err != nil {
		e.storeFailed("load session "+id, err)
		return nil, &CodedError{Code: "STORE_UNAVAILABLE", Msg: "could not read the session's history: " + err.Error()}
	}
	s := &session{id: id, mode: pb.SessionMode(stored.Mode), created: stored.Created, updated: stored.Updated, persisted: true}
	for _, m := range msgs {
		s.history = append(s.history, &pb.ChatTurn{Role: m.Role, Content: m.Content})
	}
	return s, nil
}

// newSessionLocked makes a session that is written with its first
// message (recordUserLocked), or kept in memory when off the record or
// without a store.
func (e *Engine) newSessionLocked(id string, mode pb.SessionMode) *session {
	now := time.Now()
	s := &session{id: id, mode: mode, created: now, updated: now, isNew: true,
		persisted: e.cfg.Store != nil && mode != pb.SessionMode_SESSION_MODE_OTR}
	if !s.persisted {
		e.sessions[s.id] = s
	}
	return s
}

// maxSessionName bounds a session id a client chooses.
const maxSessionName = 128

// checkSessionName accepts a client's session id: short and plain, as it
// ends up in events, logs and the database.
func checkSessionName(id string) error {
	bad := &CodedError{Code: "INVALID_SESSION_ID", Msg: fmt.Sprintf("session id %q: want 1 to %d of the characters A-Z a-z 0-9 . _ : -", textcut.Truncate(id, 80), maxSessionName)}
	if len(id) > maxSessionName {
		return bad
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return bad
		}
	}
	return nil
}

// recordUserLocked records a message the agent accepted: in the store
// (creating a new session with it, in one transaction) or in memory.
func (e *Engine) recordUserLocked(ctx context.Context, s *session, t *turn) {
	if !s.persisted {
		s.history = append(s.history, &pb.ChatTurn{Role: "user", Content: t.content})
		s.updated = time.Now()
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	msg := store.Message{SessionID: s.id, Role: store.RoleUser, Content: t.content, MessageID: t.messageID}
	var err error
	if s.isNew {
		_, err = e.cfg.Store.CreateSession(ctx, store.Session{ID: s.id, Mode: int32(s.mode), Created: s.created}, msg)
	} else {
		_, err = e.cfg.Store.AppendMessage(ctx, msg)
	}
	if err != nil {
		e.storeFailed("record the user's message", err)
	}
}

// recordAnswerLocked records the agent's answer at the end of a turn.
func (e *Engine) recordAnswerLocked(t *turn, answer string) {
	if !t.persisted {
		if s := e.sessions[t.sessionID]; s != nil {
			s.history = append(s.history, &pb.ChatTurn{Role: "assistant", Content: answer})
			s.updated = time.Now()
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	_, err := e.cfg.Store.AppendMessage(ctx, store.Message{SessionID: t.sessionID, Role: store.RoleAssistant, Content: answer, MessageID: t.messageID})
	if err != nil {
		e.storeFailed("record the answer", err)
	}
}

// markPersisted notes that a stored session is in use: only such
// sessions' events are recorded, so an event of any other session
// (off the record, or unknown) never reaches the database.
func (e *Engine) markPersisted(id string) {
	e.recMu.Lock()
	defer e.recMu.Unlock()
	e.persisted[id] = struct{}{}
}

func (e *Engine) isPersisted(id string) bool {
	e.recMu.Lock()
	defer e.recMu.Unlock()
	_, ok := e.persisted[id]
	return ok
}

// activeSessionsLocked counts the sessions used since the engine started.
func (e *Engine) activeSessionsLocked() int {
	e.recMu.Lock()
	defer e.recMu.Unlock()
	return len(e.sessions) + len(e.persisted)
}

// storeFailed logs and counts a database error. Turns go on: what the
// agent is told and what runs never depends on the database.
func (e *Engine) storeFailed(what string, err error) {
	e.storeErrors.Add(1)
	e.log.Error("session store: "+what+" failed", "error", err)
}

// StoreErrors counts database errors since the engine started.
func (e *Engine) StoreErrors() int64 { return e.storeErrors.Load() }

// trimHistory keeps the newest turns whose contents fit in budget bytes,
// starting with a user message.
func trimHistory(h []*pb.ChatTurn, budget int) []*pb.ChatTurn {
	used, start := 0, len(h)
	for start > 0 && used+len(h[start-1].GetContent()) <= budget {
		start--
		used += len(h[start].GetContent())
	}
	for start < len(h) && h[start].GetRole() != "user" {
		start++
	}
	return h[start:]
}
