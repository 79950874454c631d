package engine

import (
	"context"
	"errors"
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

// recordEvent writes what an event of a stored session says to the Store:
// tool calls, their verdicts, approvals, results and the turn's usage.
// Events of any other session (off the record, or not known to be stored)
// are never written. A database error is logged and counted; it neither
// stops the event nor changes any decision.
func (e *Engine) recordEvent(ev *pb.PipelineEvent) {
	switch ev.GetEventType() {
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTIONS_PLANNED, pb.PipelineEventType_PIPELINE_EVENT_TYPE_SHIELD_VERDICT,
		pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_NEEDED, pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_RESOLVED,
		pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_STARTED, pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_COMPLETED,
		pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE:
	default:
		return // tokens, errors, sub-agent news: not part of the record
	}
	if ev.GetSessionId() == "" || !e.isPersisted(ev.GetSessionId()) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	st := e.cfg.Store
	at := time.UnixMilli(ev.GetTimestampMs())
	key := func(callID string) store.CallKey {
		return store.CallKey{SessionID: ev.GetSessionId(), MessageID: ev.GetMessageId(), CallID: callID}
	}
	var err error
	switch ev.GetEventType() {
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTIONS_PLANNED:
		for _, a := range ev.GetActionsPlanned().GetActions() {
			err = errors.Join(err, st.RecordToolCall(ctx, store.ToolCall{CallKey: key(a.GetRequestId()),
				Tool: a.GetPayload()["tool_name"], Arguments: a.GetPayloadJson(), Proposed: at}))
		}
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_SHIELD_VERDICT:
		sv := ev.GetShieldVerdict()
		v := sv.GetVerdict()
		err = st.RecordVerdict(ctx, key(sv.GetCallId()), store.Verdict{
			Decision: strings.TrimPrefix(v.GetDecision().String(), "VERDICT_DECISION_"), Tier: int(v.GetTier()),
			Confidence: v.GetConfidence(), RuleIDs: v.GetRuleIds(), Reasoning: v.GetReasoning(), ActionType: v.GetActionType(),
			ActionHash: v.GetActionHash(), PolicyVersion: v.GetPolicyVersion(), FromCache: v.GetCacheHit(), Created: at})
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_NEEDED:
		n := ev.GetApprovalNeeded()
		err = st.RecordApprovalRequested(ctx, store.Approval{ID: n.GetApprovalId(), Call: key(n.GetCallId()),
			Requested: at, Deadline: time.Unix(n.GetTimeoutAt(), 0)})
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_RESOLVED:
		r := ev.GetApprovalResolved()
		err = st.RecordApprovalResolved(ctx, r.GetApprovalId(), r.GetOutcome(), r.GetResolvedBy(), at)
		if errors.Is(err, store.ErrNotFound) {
			// Never announced (the hourly limit denied it before anyone
			// was asked): the call's recorded result says so.
			err = nil
		}
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_STARTED:
		err = st.RecordToolStarted(ctx, key(ev.GetActionStarted().GetCallId()), at)
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_COMPLETED:
		c := ev.GetActionCompleted()
		r := c.GetResult()
		out := r.GetOutput()
		if out == "" {
			out = r.GetError()
		}
		err = st.RecordToolCompleted(ctx, key(c.GetCallId()), r.GetSuccess(), out, at)
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE:
		if u := ev.GetResponseComplete().GetUsage(); u != nil {
			err = st.RecordUsage(ctx, store.Usage{SessionID: ev.GetSessionId(), MessageID: ev.GetMessageId(),
				InputTokens: int64(u.GetInputTokens()), OutputTokens: int64(u.GetOutputTokens()),
				CacheReadTokens: int64(u.GetCacheReadTokens()), CacheWriteTokens: int64(u.GetCacheWriteTokens()),
				Provider: e.cfg.Provider, Model: e.cfg.Model, Created: at})
		}
	}
	if err != nil {
		e.storeFailed("record "+strings.TrimPrefix(ev.GetEventType().String(), "PIPELINE_EVENT_TYPE_"), err)
	}
}
