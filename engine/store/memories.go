package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Memory bounds: a memory is a short note, not a file store.
const (
	MaxMemoryContentBytes = 64 << 10
	// DefaultMemoryPage is a page of ListMemories when limit is 0.
	DefaultMemoryPage = 100
)

// Memory is one workspace memory entry.
type Memory struct {
	Workspace, Category, Key string
	Content                  string
	Created, Updated         time.Time
}

func checkMemoryIDs(workspace, key string) error {
	if err := checkID("workspace id", workspace); err != nil {
		return err
	}
	return checkID("memory key", key)
}

// PutMemory creates or replaces the entry (workspace, category, key); a
// replaced entry keeps its creation time. It returns the entry as stored.
func (s *Store) PutMemory(ctx context.Context, m Memory) (Memory, error) {
	if err := checkMemoryIDs(m.Workspace, m.Key); err != nil {
		return Memory{}, err
	}
	if len(m.Category) > MaxIDBytes {
		return Memory{}, fmt.Errorf("%w: category must be at most %d bytes", ErrInvalid, MaxIDBytes)
	}
	if len(m.Content) > MaxMemoryContentBytes {
		return Memory{}, fmt.Errorf("%w: memory content is %d bytes, limit %d", ErrInvalid, len(m.Content), MaxMemoryContentBytes)
	}
	m.Content = cut(m.Content, MaxMemoryContentBytes)
	if m.Updated.IsZero() {
		m.Updated = time.Now()
	}
	var created int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `INSERT INTO memories (workspace_id, category, key, content, created_ms, updated_ms)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (workspace_id, category, key) DO UPDATE SET content = excluded.content, updated_ms = excluded.updated_ms
			RETURNING created_ms`, m.Workspace, m.Category, m.Key, m.Content, ms(m.Updated), ms(m.Updated)).Scan(&created)
	})
	if err != nil {
		return Memory{}, err
	}
	m.Created = time.UnixMilli(created)
	m.Updated = time.UnixMilli(ms(m.Updated))
	return m, nil
}

// Memories returns a page of a workspace's entries, of one category or
// ("") of all, most recently updated first. A limit of 0 means
// DefaultMemoryPage; more than MaxPage means MaxPage.
func (s *Store) Memories(ctx context.Context, workspace, category string, offset, limit int) ([]Memory, error) {
	if err := checkID("workspace id", workspace); err != nil {
		return nil, err
	}
	if offset < 0 || limit < 0 {
		return nil, fmt.Errorf("%w: offset %d and limit %d must not be negative", ErrInvalid, offset, limit)
	}
	if limit == 0 {
		limit = DefaultMemoryPage
	}
	limit = min(limit, MaxPage)
	rows, err := s.db.QueryContext(ctx, `SELECT category, key, content, created_ms, updated_ms FROM memories
		WHERE workspace_id = ? AND (? = '' OR category = ?)
		ORDER BY updated_ms DESC, category, key LIMIT ? OFFSET ?`, workspace, category, category, limit, offset)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Memory
	for rows.Next() {
		m := Memory{Workspace: workspace}
		var created, updated int64
		if err := rows.Scan(&m.Category, &m.Key, &m.Content, &created, &updated); err != nil {
			return nil, err
		}
		m.Created, m.Updated = time.UnixMilli(created), time.UnixMilli(updated)
		out = append(out, m)
	}
	return out, rows.Err()
}

// DeleteMemory deletes the workspace's entries named key (in every
// category); ErrNotFound when there is none.
func (s *Store) DeleteMemory(ctx context.Context, workspace, key string) error {
	if err := checkMemoryIDs(workspace, key); err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM memories WHERE workspace_id = ? AND key = ?`, workspace, key)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err == nil {
				err = fmt.Errorf("memory %q: %w", key, ErrNotFound)
			}
			return err
		}
		return nil
	})
}

// GetMemory returns one entry, or ErrNotFound.
func (s *Store) GetMemory(ctx context.Context, workspace, category, key string) (Memory, error) {
	if err := checkMemoryIDs(workspace, key); err != nil {
		return Memory{}, err
	}
	m := Memory{Workspace: workspace, Category: category, Key: key}
	var created, updated int64
	err := s.db.QueryRowContext(ctx, `SELECT content, created_ms, updated_ms FROM memories
		WHERE workspace_id = ? AND category = ? AND key = ?`, workspace, category, key).Scan(&m.Content, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return Memory{}, fmt.Errorf("memory %q: %w", key, ErrNotFound)
	}
	if err != nil {
		return Memory{}, err
	}
	m.Created, m.Updated = time.UnixMilli(created), time.UnixMilli(updated)
	return m, nil
}
