package proctest

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestBufferConcurrentWritesAndReads(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				fmt.Fprintf(&b, "%d-%d\n", i, j)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if _, err := b.WriteString("end"); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if n := len(s) - len("end"); n < 800*4 || s[len(s)-3:] != "end" {
		t.Fatalf("buffer lost writes: %d bytes", n)
	}
}

func TestEventuallySeesTheCondition(t *testing.T) {
	start := time.Now()
	Until(t, "a tenth of a second", time.Minute, func() bool { return time.Since(start) > 100*time.Millisecond })
}

// failRecorder is a testing.TB whose Fatalf records instead of stopping.
type failRecorder struct {
	testing.TB
	msg string
}

func (f *failRecorder) Helper() {}
func (f *failRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f)
}

func TestEventuallyGivesUpWithTheLastState(t *testing.T) {
	rec := &failRecorder{TB: t}
	func() {
		defer func() {
			if r := recover(); r != rec {
				t.Fatalf("recovered %v", r)
			}
		}()
		Eventually(rec, "never", 50*time.Millisecond, func() (bool, string) { return false, "still 3" })
	}()
	if want := "gave up waiting for never after 50ms; last state: still 3"; rec.msg != want {
		t.Fatalf("message %q, want %q", rec.msg, want)
	}
}
