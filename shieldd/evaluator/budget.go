package evaluator

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
)

// Budget refusals; the evaluator answers both with its on_unavailable
// outcome.
var (
	errBudgetSpent = errors.New("the daily call budget is spent")
	errBudgetSave  = errors.New("the call budget could not be saved")
)

// budget counts model calls per UTC day against a limit and keeps the
// count in a small JSON file, so a restart does not hand out a fresh
// budget. The count is saved before each call: a call that cannot be
// recorded is not made.
type budget struct {
	limit int // 0: unlimited, nothing saved
	path  string
	now   func() time.Time
	log   *slog.Logger

	mu    sync.Mutex
	day   string // UTC date of calls, "2006-01-02"
	calls int
}

// budgetState is the state file.
type budgetState struct {
	Day   string `json:"day"`
	Calls int    `json:"calls"`
}

const dayLayout = "2006-01-02"

// maxStateBytes bounds what we read of the state file.
const maxStateBytes = 4 << 10

// openBudget loads the state file. A missing file is a first start: it is
// created now, so an unwritable location fails at startup rather than
// at the first call. A file that can't be read or parsed is logged and
// today's budget counts as spent (fail closed); the next UTC day starts
// afresh and rewrites it.
func openBudget(limit int, path string, now func() time.Time, log *slog.Logger) (*budget, error) {
	b := &budget{limit: limit, path: path, now: now, log: log}
	if limit == 0 {
		return b, nil
	}
	today := now().UTC().Format(dayLayout)
	st, err := readState(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		b.day = today
		if err := writeState(path, budgetState{Day: today}); err != nil {
			return nil, fmt.Errorf("evaluator budget state file: %w", err)
		}
	case err != nil:
		log.Error("tier 2 budget state file is unreadable; no model calls until the next UTC day (delete the file to reset)",
			"file", path, "err", err)
		b.day, b.calls = today, limit
	case st.Day == today:
		b.day, b.calls = today, st.Calls
	default:
		b.day = today // another day's count
	}
	return b, nil
}

func readState(path string) (budgetState, error) {
	f, err := os.Open(path)
	if err != nil {
		return budgetState{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxStateBytes+1))
	if err != nil {
		return budgetState{}, err
	}
	if len(data) > maxStateBytes {
		return budgetState{}, fmt.Errorf("%s: larger than %d bytes", path, maxStateBytes)
	}
	var st budgetState
	if err := json.Unmarshal(data, &st, json.RejectUnknownMembers(true)); err != nil {
		return budgetState{}, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := time.Parse(dayLayout, st.Day); err != nil {
		return budgetState{}, fmt.Errorf("%s: day %q is not a date", path, st.Day)
	}
	if st.Calls < 0 {
		return budgetState{}, fmt.Errorf("%s: negative call count %d", path, st.Calls)
	}
	return st, nil
}

// writeState replaces the state file atomically: a temporary file in the
// same directory, synced, renamed over it, and the directory synced, so a
// crash leaves the old count or the new one, never a torn file.
func writeState(path string, st budgetState) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// reserve counts one call, or says why it may not be made.
func (b *budget) reserve() error {
	if b.limit == 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if today := b.now().UTC().Format(dayLayout); today != b.day {
		b.day, b.calls = today, 0
	}
	if b.calls >= b.limit {
		return errBudgetSpent
	}
	if err := writeState(b.path, budgetState{Day: b.day, Calls: b.calls + 1}); err != nil {
		b.log.Error("tier 2 budget state file could not be written; the call is not made", "file", b.path, "err", err)
		return errBudgetSave
	}
	b.calls++
	return nil
}

// used is today's count.
func (b *budget) used() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.day != b.now().UTC().Format(dayLayout) {
		return 0
	}
	return b.calls
}
