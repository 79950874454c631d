package engine

import (
	"sync"
	"time"

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
