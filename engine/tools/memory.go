package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/parapet-dev/parapet/engine/store"
)

// Memory is where the memory tools keep entries: the engine's session
// database (engine/store), which the crawbl door's Memory service shares.
type Memory interface {
	PutMemory(ctx context.Context, m store.Memory) (store.Memory, error)
	GetMemory(ctx context.Context, workspace, category, key string) (store.Memory, error)
	Memories(ctx context.Context, workspace, category string, offset, limit int) ([]store.Memory, error)
}

// memoryWorkspaceKey carries a turn's memory workspace in its context.
type memoryWorkspaceKey struct{}

// WithMemoryWorkspace makes the memory tools called with ctx use the
// memory of workspace instead of Options.MemoryWorkspace: a turn that
// came through a door with workspaces of its own (crawbl) sees that
// workspace's notes, the ones its Memory service shows.
func WithMemoryWorkspace(ctx context.Context, workspace string) context.Context {
	return context.WithValue(ctx, memoryWorkspaceKey{}, workspace)
}

// memoryWorkspace is the memory workspace of a call.
func (r *Registry) memoryWorkspace(ctx context.Context) string {
	if ws, ok := ctx.Value(memoryWorkspaceKey{}).(string); ok && ws != "" {
		return ws
	}
	return r.opts.MemoryWorkspace
}

// memoryTimeout bounds one memory tool's database call.
const memoryTimeout = 10 * time.Second

// registerMemory adds the memory group when Options.Memory is set. A
// memory write is an action like any other: the shield judges its
// content, since what is planted there steers every later turn.
func (r *Registry) registerMemory(add func(name, group, desc string, write bool, props []prop, run func(context.Context, args) Result)) {
	if r.opts.Memory == nil {
		return
	}
	cat := prop{name: "category", kind: kString, desc: "Category, e.g. core, daily, conversation (default: none)."}
	add("memory_write", "memory",
		fmt.Sprintf("Save a note in the workspace's long-term memory under key (and category), replacing an entry with the same key; at most %d bytes.", store.MaxMemoryContentBytes),
		true, []prop{
			{name: "key", kind: kString, desc: "Stable name of the note.", required: true, nonEmpty: true},
			{name: "content", kind: kString, desc: "The note.", required: true},
			cat,
		}, r.memoryWrite)
	add("memory_read", "memory", "Read one note of the workspace's long-term memory by key (and category).",
		false, []prop{{name: "key", kind: kString, desc: "The note's key.", required: true, nonEmpty: true}, cat}, r.memoryRead)
	add("memory_list", "memory",
		fmt.Sprintf("List notes of the workspace's long-term memory, newest first: key, category and the start of each (limit default %d).", store.DefaultMemoryPage),
		false, []prop{
			{name: "category", kind: kString, desc: "Only this category (default: all)."},
			{name: "limit", kind: kInteger, desc: "Maximum number of notes.", min: 1, hasMin: true, max: store.MaxPage, hasMax: true},
			{name: "offset", kind: kInteger, desc: "Notes to skip.", min: 0, hasMin: true},
		}, r.memoryList)
}

func (r *Registry) memoryWrite(ctx context.Context, a args) Result {
	ctx, cancel := context.WithTimeout(ctx, memoryTimeout)
	defer cancel()
	m, err := r.opts.Memory.PutMemory(ctx, store.Memory{Workspace: r.memoryWorkspace(ctx), Category: a.str("category"), Key: a.str("key"), Content: a.str("content")})
	if err != nil {
		return errResult(fmt.Errorf("memory_write: %w", err))
	}
	return okResult(fmt.Sprintf("saved %q (%d bytes)", m.Key, len(m.Content)), false)
}

func (r *Registry) memoryRead(ctx context.Context, a args) Result {
	ctx, cancel := context.WithTimeout(ctx, memoryTimeout)
	defer cancel()
	m, err := r.opts.Memory.GetMemory(ctx, r.memoryWorkspace(ctx), a.str("category"), a.str("key"))
	if errors.Is(err, store.ErrNotFound) {
		return errResult(fmt.Errorf("memory_read: no note %q in category %q", a.str("key"), a.str("category")))
	}
	if err != nil {
		return errResult(fmt.Errorf("memory_read: %w", err))
	}
	out, cut := capString(m.Content, r.opts.OutputLimit)
	return okResult(out, cut)
}

func (r *Registry) memoryList(ctx context.Context, a args) Result {
	ctx, cancel := context.WithTimeout(ctx, memoryTimeout)
	defer cancel()
	list, err := r.opts.Memory.Memories(ctx, r.memoryWorkspace(ctx), a.str("category"), int(a.integer("offset", 0)), int(a.integer("limit", 0)))
	if err != nil {
		return errResult(fmt.Errorf("memory_list: %w", err))
	}
	if len(list) == 0 {
		return okResult("[no notes]", false)
	}
	var b strings.Builder
	for _, m := range list {
		first, _, _ := strings.Cut(m.Content, "\n")
		fmt.Fprintf(&b, "%s [%s] %s: %s\n", m.Updated.UTC().Format(time.RFC3339), m.Category, m.Key, truncateRunes(first, 120))
	}
	out, cut := capString(b.String(), r.opts.OutputLimit)
	return okResult(out, cut)
}

// truncateRunes cuts s to at most n bytes on a character boundary.
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
