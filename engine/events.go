package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/parapet-dev/parapet/engine/store"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// subscriberBuffer bounds how far a subscriber may fall behind before it
// is dropped; the engine never blocks on a slow client.
const subscriberBuffer = 4096

// bus fans pipeline events out to every subscriber of a session, and of
// all sessions ("" subscribes to everything).
type bus struct {
	mu   sync.Mutex
	subs map[string]map[*Subscription]struct{}
	// record, if set, sees every event before any subscriber does, so what
	// the database holds does not depend on a client keeping up.
	record func(*pb.PipelineEvent)
}

// Subscription receives a session's events until Close, or until it falls
// too far behind (then Events is closed and Dropped reports true).
type Subscription struct {
	Events  <-chan *pb.PipelineEvent
	ch      chan *pb.PipelineEvent
	session string
	b       *bus
	once    sync.Once
	dropped bool
}

func newBus() *bus { return &bus{subs: map[string]map[*Subscription]struct{}{}} }

func (b *bus) subscribe(session string) *Subscription {
	ch := make(chan *pb.PipelineEvent, subscriberBuffer)
	s := &Subscription{Events: ch, ch: ch, session: session, b: b}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs[session] == nil {
		b.subs[session] = map[*Subscription]struct{}{}
	}
	b.subs[session][s] = struct{}{}
	return s
}

// Close stops delivery and closes Events.
func (s *Subscription) Close() {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.closeLocked()
}

func (s *Subscription) closeLocked() {
	s.once.Do(func() {
		delete(s.b.subs[s.session], s)
		if len(s.b.subs[s.session]) == 0 {
			delete(s.b.subs, s.session)
		}
		close(s.ch)
	})
}

// Dropped reports whether the subscription was closed for falling behind.
func (s *Subscription) Dropped() bool {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.dropped
}

func (b *bus) publish(ev *pb.PipelineEvent) {
	if ev.TimestampMs == 0 {
		ev.TimestampMs = time.Now().UnixMilli()
	}
	if b.record != nil {
		b.record(ev)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, key := range [2]string{ev.SessionId, ""} {
		for s := range b.subs[key] {
			select {
			case s.ch <- ev:
			default:
				s.dropped = true
				s.closeLocked()
			}
		}
		if ev.SessionId == "" {
			break
		}
	}
}

// maxQueuedRecords bounds the records waiting for the database writer;
// past it a record is dropped and counted, and the turn goes on.
const maxQueuedRecords = 10000

var errRecordQueueFull = errors.New("too many records waiting for the database; dropped")

// recorder writes stored sessions' records from one goroutine at a time,
// each batch in one transaction: a tool call costs its turn a queue append
// instead of four commits on its path. The goroutine runs only while there
// is work.
type recorder struct {
	st   *store.Store
	fail func(what string, err error)

	mu      sync.Mutex
	queue   []queuedRecord
	running bool
}

type queuedRecord struct {
	what string
	rec  func(*store.Tx) error // nil for a flush marker
	done chan struct{}         // a flush marker's: closed once all before it is written
}

// recordTo returns the bus's recorder for a Store.
func (e *Engine) recordTo(st *store.Store) func(*pb.PipelineEvent) {
	r := &recorder{st: st, fail: e.storeFailed}
	return func(ev *pb.PipelineEvent) { e.recordEvent(r, ev) }
}

func (r *recorder) add(what string, rec func(*store.Tx) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.queue) >= maxQueuedRecords {
		r.fail("record "+what, errRecordQueueFull)
		return
	}
	r.queue = append(r.queue, queuedRecord{what: what, rec: rec})
	r.startLocked()
}

// flush waits until every record added before it is written (or failed),
// at most timeout; it reports whether that happened in time.
func (r *recorder) flush(timeout time.Duration) bool {
	done := make(chan struct{})
	r.mu.Lock()
	r.queue = append(r.queue, queuedRecord{done: done})
	r.startLocked()
	r.mu.Unlock()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

func (r *recorder) startLocked() {
	if !r.running {
		r.running = true
		go r.run()
	}
}

func (r *recorder) run() {
	for {
		r.mu.Lock()
		batch := r.queue
		r.queue = nil
		if len(batch) == 0 {
			r.running = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		r.write(batch)
	}
}

func (r *recorder) write(batch []queuedRecord) {
	var recs []func(*store.Tx) error
	var whats []string
	for _, q := range batch {
		if q.rec != nil {
			recs = append(recs, q.rec)
			whats = append(whats, q.what)
		}
	}
	if len(recs) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		for i, err := range r.st.Batch(ctx, recs...) {
			if err != nil {
				r.fail("record "+whats[i], err)
			}
		}
		cancel()
	}
	for _, q := range batch {
		if q.done != nil {
			close(q.done)
		}
	}
}

// recordEvent queues what an event of a stored session says for the
// Store: tool calls, their verdicts, approvals, results and the turn's
// usage. Events of any other session (off the record, or not known to be
// stored) are never written. A turn's terminal event waits (bounded) until
// the turn's records are written, so a client that sees it reads a
// complete history. A database error is logged and counted; it neither
// stops the event nor changes any decision.
func (e *Engine) recordEvent(r *recorder, ev *pb.PipelineEvent) {
	typ := ev.GetEventType()
	switch typ {
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTIONS_PLANNED, pb.PipelineEventType_PIPELINE_EVENT_TYPE_SHIELD_VERDICT,
		pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_NEEDED, pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_RESOLVED,
		pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_STARTED, pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_COMPLETED,
		pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE, pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR:
	default:
		return // tokens, sub-agent news: not part of the record
	}
	if ev.GetSessionId() == "" || !e.isPersisted(ev.GetSessionId()) {
		return
	}
	what := strings.TrimPrefix(typ.String(), "PIPELINE_EVENT_TYPE_")
	at := time.UnixMilli(ev.GetTimestampMs())
	key := func(callID string) store.CallKey {
		return store.CallKey{SessionID: ev.GetSessionId(), MessageID: ev.GetMessageId(), CallID: callID}
	}
	switch typ {
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTIONS_PLANNED:
		for _, a := range ev.GetActionsPlanned().GetActions() {
			c := store.ToolCall{CallKey: key(a.GetRequestId()), Tool: a.GetPayload()["tool_name"], Arguments: a.GetPayloadJson(), Proposed: at}
			r.add(what, func(tx *store.Tx) error { return tx.RecordToolCall(c) })
		}
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_SHIELD_VERDICT:
		sv := ev.GetShieldVerdict()
		v := sv.GetVerdict()
		k, rv := key(sv.GetCallId()), store.Verdict{
			Decision: v.GetDecision().Label(), Tier: int(v.GetTier()),
			Confidence: v.GetConfidence(), RuleIDs: v.GetRuleIds(), Reasoning: v.GetReasoning(), ActionType: v.GetActionType(),
			ActionHash: v.GetActionHash(), PolicyVersion: v.GetPolicyVersion(), FromCache: v.GetCacheHit(), Created: at}
		r.add(what, func(tx *store.Tx) error { return tx.RecordVerdict(k, rv) })
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_NEEDED:
		n := ev.GetApprovalNeeded()
		a := store.Approval{ID: n.GetApprovalId(), Call: key(n.GetCallId()), Requested: at, Deadline: time.Unix(n.GetTimeoutAt(), 0)}
		r.add(what, func(tx *store.Tx) error { return tx.RecordApprovalRequested(a) })
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_RESOLVED:
		res := ev.GetApprovalResolved()
		r.add(what, func(tx *store.Tx) error {
			err := tx.RecordApprovalResolved(res.GetApprovalId(), res.GetOutcome(), res.GetResolvedBy(), at)
			if errors.Is(err, store.ErrNotFound) {
				// Never announced (the hourly limit denied it before anyone
				// was asked): the call's recorded result says so.
				return nil
			}
			return err
		})
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_STARTED:
		k := key(ev.GetActionStarted().GetCallId())
		r.add(what, func(tx *store.Tx) error { return tx.RecordToolStarted(k, at) })
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_COMPLETED:
		c := ev.GetActionCompleted()
		res := c.GetResult()
		out := res.GetOutput()
		if out == "" {
			out = res.GetError()
		}
		k, ok := key(c.GetCallId()), res.GetSuccess()
		r.add(what, func(tx *store.Tx) error { return tx.RecordToolCompleted(k, ok, out, at) })
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE, pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR:
		if u := ev.GetResponseComplete().GetUsage(); u != nil {
			rec := store.Usage{SessionID: ev.GetSessionId(), MessageID: ev.GetMessageId(),
				InputTokens: int64(u.GetInputTokens()), OutputTokens: int64(u.GetOutputTokens()),
				CacheReadTokens: int64(u.GetCacheReadTokens()), CacheWriteTokens: int64(u.GetCacheWriteTokens()),
				Provider: e.cfg.Provider, Model: e.cfg.Model, Created: at}
			r.add(what, func(tx *store.Tx) error { return tx.RecordUsage(rec) })
		}
		if !r.flush(storeTimeout) {
			e.storeFailed("write the turn's records", fmt.Errorf("not done within %s", storeTimeout))
		}
	}
}
