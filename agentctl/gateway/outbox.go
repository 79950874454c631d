package gateway

import (
	"sync"

	gwpb "github.com/parapet-dev/parapet/proto/parallax/gateway"
)

// maxOutbox bounds the messages waiting for a stream to the control plane.
const maxOutbox = 1 << 16

// outbox holds everything but heartbeats on its way to the control plane,
// in order, across reconnects: a message leaves it only once a stream
// took it, so what is produced while the stream is down (thread events,
// task results) is sent on the next one in the order it was produced.
type outbox struct {
	mu    sync.Mutex
	q     []*gwpb.AgentToControlPlane
	ready chan struct{} // has a token while q is not empty
}

func newOutbox() *outbox { return &outbox{ready: make(chan struct{}, 1)} }

// push appends m; it reports false when the outbox is full and m is lost.
func (o *outbox) push(m *gwpb.AgentToControlPlane) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.q) >= maxOutbox {
		return false
	}
	o.q = append(o.q, m)
	select {
	case o.ready <- struct{}{}:
	default:
	}
	return true
}

// peek returns the oldest message, or nil.
func (o *outbox) peek() *gwpb.AgentToControlPlane {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.q) == 0 {
		return nil
	}
	return o.q[0]
}

// pop removes the oldest message (the one peek returned, once sent).
func (o *outbox) pop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.q) > 0 {
		o.q[0] = nil
		o.q = o.q[1:]
	}
}

// wake puts the ready token back after a stream failed mid-queue.
func (o *outbox) wake() {
	select {
	case o.ready <- struct{}{}:
	default:
	}
}
