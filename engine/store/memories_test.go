package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/engine/store"
)

func TestMemories(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	t0 := time.UnixMilli(1_700_000_000_000)
	put := func(ws, cat, key, content string, at time.Time) store.Memory {
		t.Helper()
		m, err := st.PutMemory(ctx, store.Memory{Workspace: ws, Category: cat, Key: key, Content: content, Updated: at})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	put("w1", "core", "a", "one", t0)
	put("w1", "daily", "b", "two", t0.Add(time.Second))
	put("w2", "core", "a", "other workspace", t0.Add(2*time.Second))
	m := put("w1", "core", "a", "one, updated", t0.Add(3*time.Second))
	if !m.Created.Equal(t0) || !m.Updated.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("upsert did not keep created: %+v", m)
	}
	list, err := st.Memories(ctx, "w1", "", 0, 0)
	if err != nil || len(list) != 2 || list[0].Key != "a" || list[0].Content != "one, updated" || list[1].Key != "b" {
		t.Fatalf("newest first: %+v %v", list, err)
	}
	if list, _ := st.Memories(ctx, "w1", "daily", 0, 0); len(list) != 1 || list[0].Key != "b" {
		t.Fatalf("category filter: %+v", list)
	}
	if list, _ := st.Memories(ctx, "w1", "", 1, 1); len(list) != 1 || list[0].Key != "b" {
		t.Fatalf("offset 1 limit 1: %+v", list)
	}
	for i := range 120 {
		put("w3", "bulk", strings.Repeat("k", 1+i%5)+string(rune('a'+i%26))+string(rune('a'+i/26)), "x", t0.Add(time.Duration(i)*time.Millisecond))
	}
	if list, _ := st.Memories(ctx, "w3", "", 0, 0); len(list) != store.DefaultMemoryPage {
		t.Fatalf("default page: %d entries", len(list))
	}
	if err := st.DeleteMemory(ctx, "w1", "a"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteMemory(ctx, "w1", "a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleting a missing key: %v", err)
	}
	if list, _ := st.Memories(ctx, "w2", "", 0, 0); len(list) != 1 {
		t.Fatal("deleting in w1 touched w2")
	}
	for _, bad := range []store.Memory{{Key: "k"}, {Workspace: "w"}, {Workspace: "w", Key: "k", Content: strings.Repeat("x", store.MaxMemoryContentBytes+1)}} {
		if _, err := st.PutMemory(ctx, bad); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("%+v: %v", bad.Key, err)
		}
	}
	if _, err := st.Memories(ctx, "w1", "", -1, 0); !errors.Is(err, store.ErrInvalid) {
		t.Fatal("negative offset accepted")
	}
}
