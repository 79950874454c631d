package audit

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Mode is when a record is made durable.
type Mode int

const (
	// ModeAlways: Append returns only after the record is fsynced. Records
	// that arrive while an fsync is in progress share the next one.
	ModeAlways Mode = iota
	// ModeBatch: Append returns at once; a writer fsyncs the records that
	// arrived within BatchWindow (or BatchMaxRecords of them) together. A
	// crash can lose the records of the last window.
	ModeBatch
)

func (m Mode) String() string {
	if m == ModeBatch {
		return "batch"
	}
	return "always"
}

// ParseMode reads "always" or "batch".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "always", "":
		return ModeAlways, nil
	case "batch":
		return ModeBatch, nil
	}
	return 0, fmt.Errorf("audit mode %q: want always or batch", s)
}

// Config configures a Log.
type Config struct {
	// Path is the active file, e.g. /var/lib/shieldd/audit.jsonl. Rotated
	// files are named audit-000001.jsonl, audit-000002.jsonl, … beside it.
	Path string
	Mode Mode
	// MaxBytes rotates the active file before a line would take it past
	// this size; 0 never rotates.
	MaxBytes int64
	// BatchWindow is how long a record may wait for its fsync in batch
	// mode (default 10 ms).
	BatchWindow time.Duration
	// BatchMaxRecords starts the fsync early once this many records wait
	// (default 512). Appends block when four times as many are pending.
	BatchMaxRecords int
	Logger          *slog.Logger
	// Now is the clock for entries without a time (tests).
	Now func() time.Time
	// OnFailure is called once, from the writer, when a write, fsync or
	// rotation fails. From then on every Append fails: the chain on disk is
	// in an unknown state until shieldd restarts and resumes from it.
	OnFailure func(error)
}

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("audit log is closed")

// Log is an open audit log. Append is safe for concurrent use; the chain
// order is the order in which Append calls take the lock, and lines are
// written in that order.
type Log struct {
	cfg Config
	log *slog.Logger

	mu      sync.Mutex
	seq     uint64
	last    string
	cur     *batch
	failed  error
	closed  bool
	wake    chan struct{}
	stopped chan struct{}

	// Owned by the writer goroutine.
	f      *os.File
	size   int64
	rotSeq int
}

// batch is the records waiting for one write and fsync.
type batch struct {
	buf  []byte
	ends []int // end offset of each line in buf, for rotation between lines
	done chan struct{}
	err  error
}

func newBatch() *batch { return &batch{done: make(chan struct{})} }

// Open opens or creates the log and resumes its chain: from the last line
// of the active file, or of the newest rotated file when the active one
// is empty. A final line without its newline (a write interrupted by a
// crash) is truncated away and logged. A last line that is complete but
// not a valid entry is an error: shieldd will not extend a chain it cannot
// read.
func Open(cfg Config) (*Log, error) {
	if cfg.Path == "" {
		return nil, errors.New("audit: no file given")
	}
	if cfg.BatchWindow <= 0 {
		cfg.BatchWindow = 10 * time.Millisecond
	}
	if cfg.BatchMaxRecords <= 0 {
		cfg.BatchMaxRecords = 512
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	l := &Log{cfg: cfg, log: cfg.Logger, cur: newBatch(), wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	if err := os.MkdirAll(filepath.Dir(cfg.Path), 0o700); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	rotated, err := rotatedFiles(cfg.Path)
	if err != nil {
		return nil, err
	}
	if len(rotated) > 0 {
		l.rotSeq = rotated[len(rotated)-1].seq
	}
	_, statErr := os.Stat(cfg.Path)
	f, err := os.OpenFile(cfg.Path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if errors.Is(statErr, os.ErrNotExist) {
		if err := syncDir(cfg.Path); err != nil {
			f.Close()
			return nil, err
		}
	}
	l.f = f
	if err := l.resume(rotated); err != nil {
		f.Close()
		return nil, err
	}
	go l.writer()
	return l, nil
}

func (l *Log) resume(rotated []rotatedFile) error {
	st, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	line, complete, err := lastLine(l.f, st.Size())
	if err != nil {
		return fmt.Errorf("audit file %s: %w", l.cfg.Path, err)
	}
	if torn := st.Size() - complete; torn > 0 {
		if err := l.f.Truncate(complete); err != nil {
			return fmt.Errorf("audit file %s: removing an interrupted final line: %w", l.cfg.Path, err)
		}
		if err := l.f.Sync(); err != nil {
			return fmt.Errorf("audit file %s: %w", l.cfg.Path, err)
		}
		l.log.Warn("audit log: removed an interrupted final line (a crash during a write)",
			"file", l.cfg.Path, "bytes", torn, "kept_bytes", complete)
	}
	l.size = complete
	src := l.cfg.Path
	if line == nil && len(rotated) > 0 {
		src = rotated[len(rotated)-1].path
		if line, err = lastLineOfFile(src); err != nil {
			return err
		}
	}
	if line == nil {
		l.seq, l.last = 0, Genesis
		return nil
	}
	e, err := ParseLine(line)
	if err != nil {
		return fmt.Errorf("audit file %s: the last line is not a valid audit entry (%v); "+
			"run `shieldd audit verify` and move the file aside to start a new chain", src, err)
	}
	l.seq, l.last = e.Seq, e.Hash
	l.log.Info("audit log: chain resumed", "file", src, "seq", e.Seq, "head", e.Hash)
	return nil
}

// Head is the hash and sequence number of the newest entry (Genesis and 0
// for an empty chain).
func (l *Log) Head() (string, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last, l.seq
}

// Err is the failure that stopped the log, or nil.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// Append chains e and queues its line; it returns the entry's hash. In
// ModeAlways it returns after the line is fsynced, and an error means the
// record may not be durable: the caller must not act on the verdict.
func (l *Log) Append(e *Entry) (string, error) {
	e.normalize()
	l.mu.Lock()
	if l.failed != nil {
		l.mu.Unlock()
		return "", fmt.Errorf("audit log failed earlier: %w", l.failed)
	}
	if l.closed {
		l.mu.Unlock()
		return "", ErrClosed
	}
	if e.Time.IsZero() {
		e.Time = l.cfg.Now().UTC()
	}
	e.Seq, e.PrevHash = l.seq+1, l.last
	b := l.cur
	var h string
	b.buf, h = e.encode(b.buf)
	b.buf = append(b.buf, '\n')
	b.ends = append(b.ends, len(b.buf))
	e.Hash = h
	l.seq, l.last = e.Seq, h
	wait := l.cfg.Mode == ModeAlways || len(b.ends) >= 4*l.cfg.BatchMaxRecords
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	if !wait {
		return h, nil
	}
	<-b.done
	if b.err != nil {
		return "", b.err
	}
	return h, nil
}

// Close writes and fsyncs what is pending and closes the file.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		<-l.stopped
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	<-l.stopped
	err := l.f.Close()
	if f := l.Err(); f != nil {
		return f
	}
	return err
}

// writer writes and fsyncs batches until the log is closed.
func (l *Log) writer() {
	defer close(l.stopped)
	for {
		<-l.wake
		if l.cfg.Mode == ModeBatch {
			l.gather()
		}
		l.mu.Lock()
		b, closing := l.cur, l.closed
		l.cur = newBatch()
		failed := l.failed
		l.mu.Unlock()
		if len(b.ends) > 0 {
			if failed != nil {
				b.err = fmt.Errorf("audit log failed earlier: %w", failed)
			} else if err := l.write(b); err != nil {
				b.err = fmt.Errorf("audit log write: %w", err)
				l.mu.Lock()
				l.failed = err
				l.mu.Unlock()
				l.log.Error("audit log failed; every further evaluation is refused", "file", l.cfg.Path, "err", err)
				if l.cfg.OnFailure != nil {
					l.cfg.OnFailure(err)
				}
			}
			close(b.done)
		}
		if closing {
			return
		}
	}
}

// gather waits, in batch mode, until the batch window has passed since
// the first waiting record, enough records wait, or the log closes.
func (l *Log) gather() {
	t := time.NewTimer(l.cfg.BatchWindow)
	defer t.Stop()
	for {
		l.mu.Lock()
		full, closing := len(l.cur.ends) >= l.cfg.BatchMaxRecords, l.closed
		l.mu.Unlock()
		if full || closing {
			return
		}
		select {
		case <-t.C:
			return
		case <-l.wake:
		}
	}
}

// write appends b's lines, rotating between lines when MaxBytes would be
// exceeded, and fsyncs once per file touched.
func (l *Log) write(b *batch) error {
	start := 0
	for i, end := range b.ends {
		lineStart := 0
		if i > 0 {
			lineStart = b.ends[i-1]
		}
		if l.cfg.MaxBytes > 0 && l.size+int64(end-start) > l.cfg.MaxBytes && l.size+int64(lineStart-start) > 0 {
			if err := l.flush(b.buf[start:lineStart]); err != nil {
				return err
			}
			if err := l.rotate(); err != nil {
				return err
			}
			start = lineStart
		}
	}
	return l.flush(b.buf[start:])
}

func (l *Log) flush(p []byte) error {
	if len(p) > 0 {
		n, err := l.f.Write(p)
		l.size += int64(n)
		if err != nil {
			return err
		}
	}
	return l.f.Sync()
}

// rotate renames the active file to the next numbered name and starts a
// new one. The chain continues: the next line links to the last line of
// the renamed file.
func (l *Log) rotate() error {
	next := rotatedName(l.cfg.Path, l.rotSeq+1)
	if _, err := os.Lstat(next); err == nil {
		return fmt.Errorf("rotating: %s already exists; refusing to overwrite audit history", next)
	}
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("rotating: %w", err)
	}
	if err := os.Rename(l.cfg.Path, next); err != nil {
		return fmt.Errorf("rotating: %w", err)
	}
	f, err := os.OpenFile(l.cfg.Path, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("rotating: %w", err)
	}
	l.f, l.size = f, 0
	l.rotSeq++
	if err := syncDir(l.cfg.Path); err != nil {
		return err
	}
	l.log.Info("audit log rotated", "file", next)
	return nil
}

// syncDir makes a created or renamed file's directory entry durable.
func syncDir(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("audit: syncing directory: %w", err)
	}
	return nil
}

type rotatedFile struct {
	path string
	seq  int
}

// rotatedName is audit-000007.jsonl for audit.jsonl: zero-padded so that
// `audit-*.jsonl audit.jsonl` lists the files in chain order.
func rotatedName(path string, seq int) string {
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s-%06d%s", strings.TrimSuffix(path, ext), seq, ext)
}

// RotatedFiles lists the rotated files of the log at path, oldest first.
func RotatedFiles(path string) ([]string, error) {
	rs, err := rotatedFiles(path)
	var out []string
	for _, r := range rs {
		out = append(out, r.path)
	}
	return out, err
}

func rotatedFiles(path string) ([]rotatedFile, error) {
	ext := filepath.Ext(path)
	prefix := strings.TrimSuffix(filepath.Base(path), ext) + "-"
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("audit: %w", err)
	}
	var out []rotatedFile
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, ext) {
			continue
		}
		num := strings.TrimSuffix(strings.TrimPrefix(name, prefix), ext)
		n, err := strconv.Atoi(num)
		if err != nil || n <= 0 || num != fmt.Sprintf("%06d", n) {
			continue
		}
		out = append(out, rotatedFile{path: filepath.Join(filepath.Dir(path), name), seq: n})
	}
	slices.SortFunc(out, func(a, b rotatedFile) int { return a.seq - b.seq })
	return out, nil
}

// maxLine bounds a line read back from disk; Append never writes one
// near it (fields are bounded).
const maxLine = 1 << 20

// lastLine finds the last newline-terminated line of f (nil when there is
// none) and the length of the prefix made of whole lines.
func lastLine(f io.ReaderAt, size int64) (line []byte, complete int64, err error) {
	var tail []byte // f's bytes from off to size
	off := size
	nl := -1 // index in tail of the last newline
	for {
		if nl < 0 {
			nl = lastIndexByte(tail, '\n')
		}
		if nl >= 0 {
			complete = off + int64(nl) + 1
			if prev := lastIndexByte(tail[:nl], '\n'); prev >= 0 {
				return tail[prev+1 : nl], complete, nil
			}
			if off == 0 {
				return tail[:nl], complete, nil
			}
		} else if off == 0 {
			return nil, 0, nil
		}
		if int64(len(tail)) > 2*maxLine {
			return nil, 0, fmt.Errorf("the last line is longer than %d bytes", maxLine)
		}
		step := min(off, 64<<10)
		chunk := make([]byte, step, int64(len(tail))+step)
		if _, err := f.ReadAt(chunk, off-step); err != nil {
			return nil, 0, err
		}
		off -= step
		if nl >= 0 {
			nl += int(step)
		}
		tail = append(chunk, tail...)
	}
}

func lastIndexByte(b []byte, c byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == c {
			return i
		}
	}
	return -1
}

// lastLineOfFile reads the last line of a rotated file, which must end
// in a whole line: it was fsynced before it was renamed.
func lastLineOfFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	line, complete, err := lastLine(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("audit file %s: %w", path, err)
	}
	if complete != st.Size() {
		return nil, fmt.Errorf("audit file %s ends in an incomplete line; rotated files must not", path)
	}
	return line, nil
}
