// Package store is the engine's embedded session database: sessions, their
// messages, and the tool calls, shield verdicts, approvals and token usage
// of every turn, in one SQLite file (WAL) through a pure-Go driver.
//
// Off-the-record sessions never reach it: the engine keeps those in memory.
// Every multi-row write is one transaction, so a failure leaves nothing
// half-written; a closed or broken database gives errors, never a panic.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// applicationID marks a file as a Parapet sessions database (PRAGMA
// application_id), so Open refuses some other program's SQLite file.
const applicationID = 0x50415250 // "PARP"

// busyTimeout is how long a write waits for another process holding the
// database's write lock before it fails.
const busyTimeout = 5 * time.Second

// Errors callers can test with errors.Is.
var (
	// ErrNotFound: no session with that id.
	ErrNotFound = errors.New("not found")
	// ErrTooNew: the database was migrated by a newer Parapet.
	ErrTooNew = errors.New("database schema is newer than this binary")
	// ErrInvalid: an argument is out of bounds (a negative offset, an
	// empty or oversized id, an unknown role).
	ErrInvalid = errors.New("invalid argument")
)

// Store is safe for concurrent use. Writes are serialised in the process
// (SQLite has one writer); reads run in parallel under WAL.
type Store struct {
	db      *sql.DB
	path    string
	writeMu sync.Mutex

	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt // the record statements, parsed once
}

// Open opens the database at path, creating it (mode 0600, its directory
// 0700) if it does not exist, and migrates it to the newest schema.
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("store: %w: empty database path", ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := createPrivate(abs); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	// The pragmas are applied to every pooled connection. _txlock=immediate
	// takes the write lock at BEGIN, so a transaction never fails half-way
	// on upgrading a read lock. SQLite's -wal and -shm files copy the
	// database file's permissions.
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	dsn := (&url.URL{Scheme: "file", Path: abs}).String() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", abs, err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	s := &Store{db: db, path: abs}
	if err := s.init(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: %s: %w", abs, err)
	}
	return s, nil
}

// createPrivate creates the database file and its directory, readable
// only by this user, unless the file exists.
func createPrivate(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database; later calls return errors.
func (s *Store) Close() error {
	s.stmtMu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = nil
	s.stmtMu.Unlock()
	return s.db.Close()
}

// stmt returns query prepared once: parsing is a good part of what a
// small write costs.
func (s *Store) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if st, ok := s.stmts[query]; ok {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if s.stmts == nil {
		s.stmts = map[string]*sql.Stmt{}
	}
	s.stmts[query] = st
	return st, nil
}

func (s *Store) init(ctx context.Context) error {
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("not a usable SQLite database: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %q, want WAL (is the file on a filesystem without shared memory?)", mode)
	}
	migs, err := migrations()
	if err != nil {
		return err
	}
	return s.migrate(ctx, migs)
}

// migration is one numbered file of migrations/.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations reads the embedded files NNNN_name.sql, which must be
// numbered 1, 2, 3... without gaps.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("migration file %q is not named NNNN_name.sql", e.Name())
		}
		b, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migrations are not numbered 1..%d without gaps: %s", len(out), m.name)
		}
	}
	return out, nil
}

// SchemaVersion is the newest schema this binary knows.
func SchemaVersion() int {
	migs, err := migrations()
	if err != nil {
		return 0
	}
	return len(migs)
}

// migrate applies each missing migration in its own transaction, which
// also sets PRAGMA user_version: a failed migration changes nothing.
// Another process migrating at the same time is safe, because each
// transaction re-reads the version under the write lock.
func (s *Store) migrate(ctx context.Context, migs []migration) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	// Each step checks the version, so a database that needs no migration
	// is still refused when it is newer or not ours.
	for _, m := range migs {
		if err := s.applyMigration(ctx, m, len(migs)); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) applyMigration(ctx context.Context, m migration, newest int) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		v, err := checkVersion(ctx, tx, newest)
		if err != nil || v >= m.version {
			return err
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
		// PRAGMA takes no bound parameters; both values are integers.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
		return nil
	})
}

// checkVersion returns the database's schema version and refuses a
// database that is newer than newest or belongs to another program.
func checkVersion(ctx context.Context, tx *sql.Tx, newest int) (int, error) {
	var v, app int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, err
	}
	if err := tx.QueryRowContext(ctx, "PRAGMA application_id").Scan(&app); err != nil {
		return 0, err
	}
	if v > newest {
		return v, fmt.Errorf("%w: the database is at schema version %d, this binary knows up to %d; use a newer parapet or another --db", ErrTooNew, v, newest)
	}
	if v > 0 && app != applicationID {
		return v, fmt.Errorf("not a Parapet sessions database (application_id %#x)", app)
	}
	if v == 0 && app != 0 && app != applicationID {
		return v, fmt.Errorf("not a Parapet sessions database (application_id %#x)", app)
	}
	return v, nil
}

// inTx runs fn in one write transaction: everything or nothing.
func (s *Store) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// write runs fn in one write transaction, one writer of this process at
// a time.
func (s *Store) write(ctx context.Context, fn func(*sql.Tx) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	return s.inTx(ctx, fn)
}

// read runs fn in one read-only transaction, so several queries see one
// snapshot.
func (s *Store) read(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	return fn(tx)
}
