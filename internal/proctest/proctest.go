// Package proctest holds the helpers that tests watching other processes
// and goroutines share: a buffer one side writes while the test reads, and
// polling until something is observed. Test code only.
package proctest

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// Buffer is a bytes.Buffer that a child process, a logger or a draining
// goroutine writes while the test reads it. The zero value is ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// WriteString appends s.
func (b *Buffer) WriteString(s string) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.WriteString(s)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// pollEvery is how often Eventually looks again.
const pollEvery = 20 * time.Millisecond

// Eventually polls cond until it reports true, and fails the test with
// what and cond's last state once limit has passed. limit is a deadlock
// guard, never a timing assertion: choose it far above how long the thing
// takes when the code is right.
func Eventually(t testing.TB, what string, limit time.Duration, cond func() (ok bool, state string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			if state != "" {
				t.Fatalf("gave up waiting for %s after %v; last state: %s", what, limit, state)
			}
			t.Fatalf("gave up waiting for %s after %v", what, limit)
		}
		time.Sleep(pollEvery)
	}
}

// Until is Eventually for a condition without a state to report.
func Until(t testing.TB, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	Eventually(t, what, limit, func() (bool, string) { return cond(), "" })
}
