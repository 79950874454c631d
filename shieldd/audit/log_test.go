package audit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func openLog(t *testing.T, cfg Config) *Log {
	t.Helper()
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func evalEntry(i int) *Entry {
	return &Entry{Kind: KindEvaluation, Tenant: "acme", RequestID: fmt.Sprintf("r%d", i), ActionType: "read_file",
		ActionHash: strings.Repeat("0a", 32), Decision: "allow", RuleIDs: []string{"allow-workspace-files"}}
}

func appendN(t *testing.T, l *Log, n int) []string {
	t.Helper()
	var hashes []string
	for i := range n {
		h, err := l.Append(evalEntry(i))
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, h)
	}
	return hashes
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitAfter(string(b), "\n")[:bytes.Count(b, []byte("\n"))]
}

func TestModesWriteAVerifiableChain(t *testing.T) {
	for _, mode := range []Mode{ModeAlways, ModeBatch} {
		t.Run(mode.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			l := openLog(t, Config{Path: path, Mode: mode, BatchWindow: time.Millisecond})
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 25 {
						if _, err := l.Append(evalEntry(g*100 + i)); err != nil {
							t.Error(err)
						}
					}
				}()
			}
			wg.Wait()
			head, seq := l.Head()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			res, err := Verify([]string{path}, "")
			if err != nil {
				t.Fatal(err)
			}
			if res.Entries != 100 || res.Head != head || seq != 100 {
				t.Fatalf("verified %+v; log head %s seq %d", res, head, seq)
			}
			if _, err := l.Append(evalEntry(0)); !errors.Is(err, ErrClosed) {
				t.Fatalf("append after close: %v", err)
			}
		})
	}
}

func TestResumeContinuesTheChainAndDropsATornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openLog(t, Config{Path: path})
	first := appendN(t, l, 3)
	l.Close()

	// A crash in the middle of a write leaves part of a line.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"v":1,"seq":4,"time":"2026-`)
	f.Close()
	if res, err := Verify([]string{path}, ""); err != nil || res.Entries != 3 || res.TornBytes == 0 {
		t.Fatalf("verify with a torn tail: %+v %v", res, err)
	}

	var logBuf bytes.Buffer
	l2 := openLog(t, Config{Path: path, Logger: newTextLogger(&logBuf)})
	if head, seq := l2.Head(); head != first[2] || seq != 3 {
		t.Fatalf("resumed at %s/%d, want %s/3", head, seq, first[2])
	}
	if !strings.Contains(logBuf.String(), "interrupted final line") {
		t.Errorf("torn line not logged: %s", logBuf.String())
	}
	appendN(t, l2, 2)
	l2.Close()
	res, err := Verify([]string{path}, "")
	if err != nil || res.Entries != 5 || res.TornBytes != 0 {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestResumeRefusesAnUnreadableLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	os.WriteFile(path, []byte("this is not an audit entry\n"), 0o600)
	if _, err := Open(Config{Path: path}); err == nil || !strings.Contains(err.Error(), "not a valid audit entry") {
		t.Fatalf("got %v", err)
	}
}

func TestRotationContinuesTheChainAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l := openLog(t, Config{Path: path, MaxBytes: 2000})
	appendN(t, l, 20)
	l.Close()
	rotated, err := RotatedFiles(path)
	if err != nil || len(rotated) < 2 {
		t.Fatalf("rotated files %v %v", rotated, err)
	}
	for _, f := range append(rotated, path) {
		if st, _ := os.Stat(f); st.Size() > 2000 {
			t.Errorf("%s is %d bytes, over the limit", f, st.Size())
		}
	}
	all := append(rotated, path)
	res, err := Verify(all, "")
	if err != nil || res.Entries != 20 {
		t.Fatalf("%+v %v", res, err)
	}
	// Verifying the active file alone needs the previous file's head.
	prev, err := Verify(rotated, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify([]string{path}, ""); err == nil || !strings.Contains(err.Error(), "earlier file is missing") {
		t.Fatalf("active file alone from genesis: %v", err)
	}
	if r, err := Verify([]string{path}, prev.Head); err != nil || r.Entries+prev.Entries != 20 {
		t.Fatalf("active file from the rotated head: %+v %v", r, err)
	}

	// A crash between renaming the active file and creating the next one
	// leaves no active file: the chain resumes from the newest rotated file.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	l2 := openLog(t, Config{Path: path, MaxBytes: 2000})
	head, _ := l2.Head()
	if head != prev.Head {
		t.Fatalf("resumed at %s, want the rotated head %s", head, prev.Head)
	}
	appendN(t, l2, 1)
	l2.Close()
	if _, err := Verify(append(rotated, path), ""); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyNamesTheFirstBrokenLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l := openLog(t, Config{Path: path})
	appendN(t, l, 5)
	l.Append(&Entry{Kind: KindOutcome, ActionHash: strings.Repeat("0a", 32), Outcome: "denied", DecidedBy: "bob"})
	l.Close()
	orig := lines(t, path)

	write := func(ls []string) string {
		p := filepath.Join(dir, "tampered.jsonl")
		os.WriteFile(p, []byte(strings.Join(ls, "")), 0o600)
		return p
	}
	changed := append([]string(nil), orig...)
	changed[2] = strings.Replace(changed[2], `"decision":"allow"`, `"decision":"block"`, 1)
	changedOutcome := append([]string(nil), orig...)
	changedOutcome[5] = strings.Replace(changedOutcome[5], `"denied"`, `"approved"`, 1)
	deleted := append(append([]string(nil), orig[:3]...), orig[4:]...)
	reordered := append([]string(nil), orig...)
	reordered[1], reordered[2] = reordered[2], reordered[1]
	for name, tc := range map[string]struct {
		lines []string
		at    string
		why   string
	}{
		"changed field":   {changed, ":3: ", "entry_hash does not match"},
		"changed outcome": {changedOutcome, ":6: ", "entry_hash does not match"},
		"deleted line":    {deleted, ":4: ", "seq 5 where 4 was expected"},
		"reordered lines": {reordered, ":2: ", "prev_hash does not match"},
		"first line gone": {orig[1:], ":1: ", "earlier file is missing"},
	} {
		_, err := Verify([]string{write(tc.lines)}, "")
		var ve *VerifyError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), "tampered.jsonl"+tc.at) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%s: got %v; want line%s and %q", name, err, tc.at, tc.why)
		}
	}
}

func TestWriteFailureIsStickyAndReported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	failed := make(chan error, 1)
	l := openLog(t, Config{Path: path, OnFailure: func(err error) { failed <- err }})
	appendN(t, l, 1)
	// Break the file under the writer, as a vanished disk would.
	l.f.Close()
	if _, err := l.Append(evalEntry(1)); err == nil {
		t.Fatal("append on a broken file succeeded")
	}
	if err := <-failed; err == nil {
		t.Fatal("OnFailure got nil")
	}
	if _, err := l.Append(evalEntry(2)); err == nil || !strings.Contains(err.Error(), "failed earlier") {
		t.Fatalf("append after a failure: %v", err)
	}
	if l.Err() == nil {
		t.Fatal("Err is nil after a failure")
	}
}
