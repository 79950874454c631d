package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/engine/store"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// openStore opens (or creates) the session database at path.
func openStore(t testing.TB, path string) *store.Store {
	t.Helper()
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// storedHarness is a harness whose engine keeps sessions in st.
func storedHarness(t testing.TB, st *store.Store, mod func(*engine.Config)) *harness {
	t.Helper()
	return newHarness(t, func(c *engine.Config) {
		c.Store = st
		if mod != nil {
			mod(c)
		}
	})
}

// rowCounts counts the rows of every table in the database file, looked
// at from outside the store.
func rowCounts(t testing.TB, path string) map[string]int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	if len(tables) < 6 {
		t.Fatalf("only tables %v", tables)
	}
	counts := map[string]int{}
	for _, table := range tables {
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM "` + table + `"`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		counts[table] = n
	}
	return counts
}

// recvUntil reads a SendMessage stream up to the first event of type typ.
func recvUntil(t testing.TB, s pb.ClientService_SendMessageClient, typ pb.PipelineEventType) *pb.PipelineEvent {
	t.Helper()
	for {
		ev, err := s.Recv()
		if err != nil {
			t.Fatalf("SendMessage stream ended before %v: %v", typ, err)
		}
		if ev.GetEventType() == typ {
			return ev
		}
	}
}

// toolTurn sends a message over gRPC in session sid; the agent reads a
// file, proposes a command the shield escalates, which a second client
// approves, and answers. It returns the ProcessRequest and the events.
func toolTurn(t testing.TB, h *harness, a *testAgent, sid string) (*pb.ProcessRequest, []*pb.PipelineEvent) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(h.ws, "notes.txt"), []byte("remember the milk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := h.client().SendMessage(context.Background(), &pb.ClientMessageRequest{SessionId: sid, Content: "read my notes, then push", Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	p := a.process(t)
	a.loadTools(t, "files", "shell")
	if r := a.call(t, p.GetSessionId(), p.GetMessageId(), "c-read", "read_file", `{"path":"notes.txt"}`); r.GetIsError() {
		t.Fatalf("read_file: %+v", r)
	}
	a.send(t, proposal(p.GetSessionId(), p.GetMessageId(), "c-push", "execute_command", escalating("pushed.txt")))
	needed := recvUntil(t, s, evNeeded).GetApprovalNeeded()

	second, err := grpc.NewClient(h.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(engine.ClientCredentials(h.eng.ClientToken())))
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if _, err := pb.NewClientServiceClient(second).ResolveApproval(context.Background(),
		&pb.ApprovalResponse{ApprovalId: needed.GetApprovalId(), SessionId: p.GetSessionId(), Approved: true}); err != nil {
		t.Fatal(err)
	}
	// It ran (the push itself fails: the workspace is no repository).
	if r := a.next(t).GetToolResult(); r.GetCallId() != "c-push" || !exists(t, filepath.Join(h.ws, "pushed.txt")) {
		t.Fatalf("approved call: %+v", r)
	}
	a.complete(t, p, "Read them and pushed.", &pb.TokenUsage{InputTokens: 300, OutputTokens: 12})
	return p, recvAll(t, s)
}

func chatTurns(h []*pb.ChatTurn) []string {
	var out []string
	for _, c := range h {
		out = append(out, c.GetRole()+":"+c.GetContent())
	}
	return out
}

// History and sessions survive an engine restart: a second engine on the
// same database file serves the same ListSessions and GetHistory over
// gRPC, and a new message in the old session carries the stored history.
func TestSessionsSurviveAnEngineRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "sessions.db")
	st1 := openStore(t, path)
	h1 := storedHarness(t, st1, nil)
	a1 := h1.connect(t)
	sid := chat(t, h1, a1, "", "hello", "hi, how can I help?")[0].GetSessionId()
	p, _ := toolTurn(t, h1, a1, sid)
	if got := chatTurns(p.GetHistory()); !slices.Equal(got, []string{"user:hello", "assistant:hi, how can I help?"}) {
		t.Fatalf("second message's history %v", got)
	}
	ctx := context.Background()
	list1, err := h1.client().ListSessions(ctx, &pb.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	hist1, err := h1.client().GetHistory(ctx, &pb.GetHistoryRequest{SessionId: sid})
	if err != nil {
		t.Fatal(err)
	}
	if list1.GetTotal() != 1 || list1.GetSessions()[0].GetMessageCount() != 4 || list1.GetSessions()[0].GetTitle() != "hello" {
		t.Fatalf("sessions before the restart: %v", list1)
	}
	var roles []string
	for _, m := range hist1.GetMessages() {
		roles = append(roles, m.GetRole()+":"+m.GetContent())
	}
	if want := []string{"user:hello", "assistant:hi, how can I help?", "user:read my notes, then push", "assistant:Read them and pushed."}; !slices.Equal(roles, want) {
		t.Fatalf("history %v, want %v", roles, want)
	}
	calls := hist1.GetMessages()[3].GetToolCalls()
	if len(calls) != 2 || len(hist1.GetMessages()[2].GetToolCalls()) != 0 {
		t.Fatalf("tool calls are not on the turn's answer: %v", hist1.GetMessages())
	}
	read, push := calls[0], calls[1]
	if read.GetCallId() != "c-read" || read.GetToolName() != "read_file" || read.GetIsError() || read.GetOutput() == "" ||
		read.GetVerdict().GetDecision() != pb.VerdictDecision_VERDICT_DECISION_ALLOW || read.GetApproval() != "" {
		t.Fatalf("read call %v", read)
	}
	if push.GetCallId() != "c-push" || push.GetVerdict().GetDecision() != pb.VerdictDecision_VERDICT_DECISION_ESCALATE ||
		push.GetVerdict().GetActionHash() == "" || len(push.GetVerdict().GetRuleIds()) == 0 || push.GetApproval() != pb.OutcomeApproved ||
		!strings.Contains(push.GetOutput(), "not a git repository") {
		t.Fatalf("escalated call %v", push)
	}

	// Stop the first engine: its agent leaves and its database closes.
	h1.disconnect(t, a1)
	if err := st1.Close(); err != nil {
		t.Fatal(err)
	}

	h2 := storedHarness(t, openStore(t, path), nil)
	c2 := h2.client()
	if st, err := c2.GetStatus(ctx, &pb.StatusRequest{}); err != nil || st.GetActiveSessions() != 0 {
		t.Fatalf("active sessions of a fresh engine: %v, %v", st, err)
	}
	list2, err := c2.ListSessions(ctx, &pb.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(list1, list2) {
		t.Fatalf("sessions changed across the restart:\n%v\n%v", list1, list2)
	}
	hist2, err := c2.GetHistory(ctx, &pb.GetHistoryRequest{SessionId: sid})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(hist1, hist2) {
		t.Fatalf("history changed across the restart:\n%v\n%v", hist1, hist2)
	}

	a2 := h2.connect(t)
	s, err := c2.SendMessage(ctx, &pb.ClientMessageRequest{SessionId: sid, Content: "and now?", Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	p2 := a2.process(t)
	if want := append(roles, "user:and now?")[:4]; p2.GetSessionId() != sid || !slices.Equal(chatTurns(p2.GetHistory()), want) {
		t.Fatalf("ProcessRequest after the restart: session %s, history %v, want %v", p2.GetSessionId(), chatTurns(p2.GetHistory()), want)
	}
	a2.complete(t, p2, "all done", nil)
	recvAll(t, s)
	hist3, err := c2.GetHistory(ctx, &pb.GetHistoryRequest{SessionId: sid, Offset: 4})
	if err != nil || hist3.GetTotal() != 6 || len(hist3.GetMessages()) != 2 || hist3.GetMessages()[1].GetContent() != "all done" {
		t.Fatalf("history after the restart's message: %v, %v", hist3, err)
	}
	if st, err := c2.GetStatus(ctx, &pb.StatusRequest{}); err != nil || st.GetActiveSessions() != 1 {
		t.Fatalf("active sessions: %v, %v", st, err)
	}
	if n := h2.eng.StoreErrors(); n != 0 {
		t.Fatalf("%d store errors", n)
	}
}

// An off-the-record session leaves no row in any table, however many
// tool calls, verdicts, approvals and tokens it had; a normal session in
// the same engine is recorded.
func TestOffTheRecordLeavesNoRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	st := openStore(t, path)
	h := storedHarness(t, st, func(c *engine.Config) { c.Approver = engine.FixedApprover{} })
	ctx := context.Background()
	a, tr, p := h.startTurn(t, ctx, engine.Message{Content: "secret plans", Mode: pb.SessionMode_SESSION_MODE_OTR})
	sid, mid := p.GetSessionId(), p.GetMessageId()
	if err := os.WriteFile(filepath.Join(h.ws, "plans.txt"), []byte("plans"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := a.call(t, sid, mid, "c1", "read_file", `{"path":"plans.txt"}`); r.GetIsError() {
		t.Fatalf("read in OTR: %+v", r)
	}
	wantTypes(t, callEvents(t, tr, "c1"), evPlanned, evVerdict, evStarted, evCompleted)
	a.call(t, sid, mid, "c2", "write_file", `{"path":"out.txt","content":"x"}`)
	wantTypes(t, callEvents(t, tr, "c2"), evPlanned, evOTR, evCompleted)
	// A read outside the workspace is escalated (and denied here).
	a.call(t, sid, mid, "c3", "read_file", `{"path":"/etc/hostname"}`)
	wantTypes(t, callEvents(t, tr, "c3"), evPlanned, evVerdict, evNeeded, evResolved, evCompleted)
	a.complete(t, p, "kept quiet", &pb.TokenUsage{InputTokens: 50, OutputTokens: 5})
	endEvent(t, tr)
	// A follow-up in the same OTR session.
	tr2, err := h.eng.Submit(ctx, engine.Message{SessionID: sid, Content: "more secrets"})
	if err != nil {
		t.Fatal(err)
	}
	p2 := a.process(t)
	if got := chatTurns(p2.GetHistory()); !slices.Equal(got, []string{"user:secret plans", "assistant:kept quiet"}) {
		t.Fatalf("OTR follow-up history %v", got)
	}
	a.complete(t, p2, "still quiet", &pb.TokenUsage{InputTokens: 60, OutputTokens: 5})
	endEvent(t, tr2)

	for table, n := range rowCounts(t, path) {
		if n != 0 {
			t.Errorf("table %s has %d rows after an off-the-record session", table, n)
		}
	}
	// The OTR session is still visible while this engine runs.
	hist, err := h.client().GetHistory(ctx, &pb.GetHistoryRequest{SessionId: sid})
	if err != nil || hist.GetTotal() != 4 {
		t.Fatalf("OTR history in memory: %v, %v", hist, err)
	}

	// The same engine records a normal session.
	tr3, err := h.eng.Submit(ctx, engine.Message{Content: "on the record"})
	if err != nil {
		t.Fatal(err)
	}
	p3 := a.process(t)
	a.call(t, p3.GetSessionId(), p3.GetMessageId(), "c1", "read_file", `{"path":"plans.txt"}`)
	a.complete(t, p3, "noted", &pb.TokenUsage{InputTokens: 1, OutputTokens: 1})
	endEvent(t, tr3)
	counts := rowCounts(t, path)
	for table, want := range map[string]int{"sessions": 1, "messages": 2, "tool_calls": 1, "verdicts": 1, "approvals": 0, "usage": 1} {
		if counts[table] != want {
			t.Errorf("table %s has %d rows, want %d", table, counts[table], want)
		}
	}
	list, err := h.client().ListSessions(ctx, &pb.ListSessionsRequest{})
	if err != nil || list.GetTotal() != 2 || list.GetSessions()[0].GetId() != sid || list.GetSessions()[0].GetMode() != pb.SessionMode_SESSION_MODE_OTR {
		t.Fatalf("sessions (OTR first): %v, %v", list, err)
	}
}

// Sessions and history page through the in-memory (OTR) sessions and then
// the stored ones; bad pages and unknown sessions are clear errors.
func TestStoredSessionsPage(t *testing.T) {
	h := storedHarness(t, openStore(t, filepath.Join(t.TempDir(), "sessions.db")), nil)
	a := h.connect(t)
	ctx := context.Background()
	var stored []string
	for i := range 3 {
		sid := chat(t, h, a, "", fmt.Sprint("stored ", i), "ok")[0].GetSessionId()
		stored = append(stored, sid)
	}
	s, err := h.client().SendMessage(ctx, &pb.ClientMessageRequest{Content: "otr", Mode: pb.SessionMode_SESSION_MODE_OTR})
	if err != nil {
		t.Fatal(err)
	}
	p := a.process(t)
	a.complete(t, p, "ok", nil)
	recvAll(t, s)

	all, total, err := h.eng.Sessions(ctx, 0, 0)
	if err != nil || total != 4 || len(all) != 4 || all[0].GetId() != p.GetSessionId() {
		t.Fatalf("Sessions: %v, %d, %v", all, total, err)
	}
	var listed, paged []string
	for _, s := range all {
		listed = append(listed, s.GetId())
	}
	for off := int32(0); off < 5; off += 2 {
		r, err := h.client().ListSessions(ctx, &pb.ListSessionsRequest{Offset: off, Limit: 2})
		if err != nil || r.GetTotal() != 4 {
			t.Fatalf("page at %d: %v, %v", off, r, err)
		}
		for _, s := range r.GetSessions() {
			paged = append(paged, s.GetId())
		}
	}
	if !slices.Equal(paged, listed) {
		t.Fatalf("pages %v, all %v", paged, listed)
	}
	if got := slices.Sorted(slices.Values(listed[1:])); !slices.Equal(got, slices.Sorted(slices.Values(stored))) {
		t.Fatalf("stored sessions %v, want %v", got, stored)
	}
	hist, total, err := h.eng.History(ctx, stored[0], 1, 1)
	if err != nil || total != 2 || len(hist) != 1 || hist[0].GetRole() != "assistant" || hist[0].GetId() != stored[0]+"/2" || hist[0].GetCreatedAt() == 0 {
		t.Fatalf("History page: %v, %d, %v", hist, total, err)
	}
	for name, err := range map[string]error{
		"negative limit":        second(h.client().ListSessions(ctx, &pb.ListSessionsRequest{Limit: -1})),
		"negative offset":       second(h.client().GetHistory(ctx, &pb.GetHistoryRequest{SessionId: stored[0], Offset: -1})),
		"unknown session":       second(h.client().GetHistory(ctx, &pb.GetHistoryRequest{SessionId: "sess_nope"})),
		"message to an unknown": second(h.eng.Submit(ctx, engine.Message{SessionID: "sess_nope", Content: "hi"})),
	} {
		want := map[string]codes.Code{"negative limit": codes.InvalidArgument, "negative offset": codes.InvalidArgument, "unknown session": codes.NotFound}[name]
		if name == "message to an unknown" {
			wantCoded(t, err, "SESSION_NOT_FOUND")
			continue
		}
		wantCode(t, err, want)
	}
}

func second[A any](_ A, err error) error { return err }

// A database that fails mid-session loses records, never the turn: the
// tool call runs and the answer arrives; errors are counted. A stored
// session that cannot be read refuses the next message instead of
// sending it without its history.
func TestStoreFailureDoesNotStopTheTurn(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "sessions.db"))
	h := storedHarness(t, st, nil)
	ctx := context.Background()
	a, tr, p := h.startTurn(t, ctx, engine.Message{Content: "write something"})
	st.Close()
	r := a.call(t, p.GetSessionId(), p.GetMessageId(), "c1", "write_file", `{"path":"kept.txt","content":"x"}`)
	if r.GetIsError() || !exists(t, filepath.Join(h.ws, "kept.txt")) {
		t.Fatalf("write with a closed database: %+v", r)
	}
	wantTypes(t, callEvents(t, tr, "c1"), evPlanned, evVerdict, evStarted, evCompleted)
	a.complete(t, p, "done", &pb.TokenUsage{InputTokens: 1})
	if end := endEvent(t, tr); end.GetEventType() != evComplete {
		t.Fatalf("terminal event %v", end)
	}
	if n := h.eng.StoreErrors(); n < 5 {
		t.Fatalf("%d store errors counted, want one per lost record", n)
	}
	_, err := h.eng.Submit(ctx, engine.Message{SessionID: p.GetSessionId(), Content: "again"})
	wantCoded(t, err, "STORE_UNAVAILABLE")
	_, err = h.client().GetHistory(ctx, &pb.GetHistoryRequest{SessionId: p.GetSessionId()})
	wantCode(t, err, codes.Unavailable)
	_, err = h.client().ListSessions(ctx, &pb.ListSessionsRequest{})
	wantCode(t, err, codes.Unavailable)
}

// Clients list and read history while messages in many sessions are
// recorded (run with -race).
func TestManySessionsWithConcurrentReaders(t *testing.T) {
	h := storedHarness(t, openStore(t, filepath.Join(t.TempDir(), "sessions.db")), nil)
	a := h.connect(t)
	ctx := context.Background()
	first := chat(t, h, a, "", "first", "ok")[0].GetSessionId()
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := h.client()
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := c.ListSessions(ctx, &pb.ListSessionsRequest{Limit: 5}); err != nil {
					errs <- err
					return
				}
				if _, err := c.GetHistory(ctx, &pb.GetHistoryRequest{SessionId: first}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	const sessions = 15
	for i := 1; i < sessions; i++ {
		sid := chat(t, h, a, "", fmt.Sprint("message ", i), "ok")[0].GetSessionId()
		chat(t, h, a, sid, "follow-up", "ok")
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	list, err := h.client().ListSessions(ctx, &pb.ListSessionsRequest{})
	if err != nil || list.GetTotal() != sessions {
		t.Fatalf("sessions: %d, %v", list.GetTotal(), err)
	}
	for _, s := range list.GetSessions() {
		if want := int32(4); s.GetId() != first && s.GetMessageCount() != want {
			t.Errorf("session %s has %d messages, want %d", s.GetId(), s.GetMessageCount(), want)
		}
	}
}
