package engine_test

import (
	"context"
	"io"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/parapet-dev/parapet/engine"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// recvAll reads a SendMessage stream to its end.
func recvAll(t testing.TB, s pb.ClientService_SendMessageClient) []*pb.PipelineEvent {
	t.Helper()
	var evs []*pb.PipelineEvent
	for {
		ev, err := s.Recv()
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatalf("SendMessage stream: %v", err)
		}
		evs = append(evs, ev)
	}
}

// chat sends one message over ClientService and plays the agent's part:
// one token and the answer.
func chat(t testing.TB, h *harness, a *testAgent, sessionID, content, answer string) []*pb.PipelineEvent {
	t.Helper()
	s, err := h.client().SendMessage(context.Background(), &pb.ClientMessageRequest{Content: content, SessionId: sessionID, Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	p := a.process(t)
	if p.GetContent() != content || p.GetSource() != "test" || (sessionID != "" && p.GetSessionId() != sessionID) {
		t.Fatalf("ProcessRequest %+v", p)
	}
	a.send(t, &pb.AgentEvent{Event: &pb.AgentEvent_LlmTokenEmitted{LlmTokenEmitted: &pb.LLMTokenEmitted{
		SessionId: p.GetSessionId(), MessageId: p.GetMessageId(), Text: answer}}})
	a.complete(t, p, answer, &pb.TokenUsage{InputTokens: 10, OutputTokens: 2})
	evs := recvAll(t, s)
	for _, ev := range evs {
		if ev.GetSessionId() != p.GetSessionId() || ev.GetMessageId() != p.GetMessageId() {
			t.Fatalf("event %v of %s/%s", ev.GetEventType(), ev.GetSessionId(), ev.GetMessageId())
		}
	}
	return evs
}

func TestSendMessageStreamsUntilResponseComplete(t *testing.T) {
	h := newHarness(t, nil)
	a := h.connect(t)
	evs := chat(t, h, a, "", "hi there", "hello")
	wantTypes(t, evs, evToken, evComplete)
	rc := evs[1].GetResponseComplete()
	if rc.GetContent() != "hello" || !proto.Equal(rc.GetUsage(), &pb.TokenUsage{InputTokens: 10, OutputTokens: 2}) {
		t.Fatalf("RESPONSE_COMPLETE %+v", rc)
	}
	// Tool calls arrive on the same stream.
	s, err := h.client().SendMessage(context.Background(), &pb.ClientMessageRequest{Content: "touch it", SessionId: evs[0].GetSessionId()})
	if err != nil {
		t.Fatal(err)
	}
	p := a.process(t)
	a.loadTools(t, "shell")
	a.call(t, p.GetSessionId(), p.GetMessageId(), "c1", "execute_command", `{"command":"touch x.txt"}`)
	a.complete(t, p, "touched", nil)
	wantTypes(t, recvAll(t, s), evPlanned, evVerdict, evStarted, evCompleted, evComplete)
}

func TestSendMessageWithoutAnAgent(t *testing.T) {
	h := newHarness(t, nil)
	s, err := h.client().SendMessage(context.Background(), &pb.ClientMessageRequest{Content: "anyone?"})
	if err != nil {
		t.Fatal(err)
	}
	evs := recvAll(t, s)
	wantTypes(t, evs, evError)
	if e := evs[0].GetPipelineError(); e.GetCode() != "AGENT_UNAVAILABLE" || !e.GetRecoverable() || e.GetMessage() == "" {
		t.Fatalf("error %+v", e)
	}
}

func TestSendMessageRefusalsAreErrorEvents(t *testing.T) {
	h := newHarness(t, nil)
	a := h.connect(t)
	// (Invalid UTF-8 cannot cross gRPC: proto3 strings are checked on
	// marshalling. Submit's own check is tested in TestSubmitRefusals.)
	for content, code := range map[string]string{"": "INVALID_MESSAGE"} {
		s, err := h.client().SendMessage(context.Background(), &pb.ClientMessageRequest{Content: content})
		if err != nil {
			t.Fatal(err)
		}
		evs := recvAll(t, s)
		wantTypes(t, evs, evError)
		if got := evs[0].GetPipelineError().GetCode(); got != code {
			t.Fatalf("%q: code %s, want %s", content, got, code)
		}
	}
	// Busy: one message in flight, a second is refused.
	first, err := h.client().SendMessage(context.Background(), &pb.ClientMessageRequest{Content: "first"})
	if err != nil {
		t.Fatal(err)
	}
	p := a.process(t)
	second, err := h.client().SendMessage(context.Background(), &pb.ClientMessageRequest{Content: "second"})
	if err != nil {
		t.Fatal(err)
	}
	evs := recvAll(t, second)
	wantTypes(t, evs, evError)
	if e := evs[0].GetPipelineError(); e.GetCode() != "AGENT_BUSY" || !e.GetRecoverable() {
		t.Fatalf("error %+v", e)
	}
	a.complete(t, p, "done", nil)
	wantTypes(t, recvAll(t, first), evComplete)
}

func TestGetStatus(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Provider, c.Model = "scripted", "demo" })
	c := h.client()
	st, err := c.GetStatus(context.Background(), &pb.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.GetAgentConnected() || st.GetSandboxStatus() != "" || st.GetWorkspace() != h.ws || st.GetAgentName() != "atlas" ||
		st.GetVersion() != "test" || st.GetProvider() != "scripted" || st.GetModel() != "demo" || st.GetEnginePid() == 0 {
		t.Fatalf("status before the agent: %+v", st)
	}
	h.eng.SetAddresses(h.addr, "http://127.0.0.1:1")
	h.eng.SetAgentPID(4242)
	h.eng.CountAgentRestart()
	a := h.connect(t)
	chat(t, h, a, "", "hi", "hello")
	st, err = c.GetStatus(context.Background(), &pb.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !st.GetAgentConnected() || st.GetSandboxStatus() != "sandboxed" || st.GetWorkspace() != h.ws || st.GetActiveSessions() != 1 ||
		st.GetGrpcAddress() != h.addr || st.GetAgentPid() != 4242 || st.GetAgentRestarts() != 1 || st.GetShieldMode() != "embedded" {
		t.Fatalf("status with the agent: %+v", st)
	}
	h.disconnect(t, a)
	st, err = c.GetStatus(context.Background(), &pb.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.GetAgentConnected() {
		t.Fatal("agent_connected after the agent left")
	}
}

func TestListSessionsAndHistoryPaginate(t *testing.T) {
	h := newHarness(t, nil)
	a := h.connect(t)
	c := h.client()
	ctx := context.Background()

	var ids []string
	for _, msg := range []string{"one", "two", "three"} {
		evs := chat(t, h, a, "", msg, "re: "+msg)
		ids = append(ids, evs[0].GetSessionId())
	}
	// A second exchange in the first session.
	chat(t, h, a, ids[0], "one more", "re: one more")

	all, err := c.ListSessions(ctx, &pb.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if all.GetTotal() != 3 || len(all.GetSessions()) != 3 {
		t.Fatalf("ListSessions: %+v", all)
	}
	var paged []string
	for offset := int32(0); offset < 4; offset += 2 {
		r, err := c.ListSessions(ctx, &pb.ListSessionsRequest{Limit: 2, Offset: offset})
		if err != nil {
			t.Fatal(err)
		}
		if r.GetTotal() != 3 {
			t.Fatalf("total %d", r.GetTotal())
		}
		for _, s := range r.GetSessions() {
			paged = append(paged, s.GetId())
		}
	}
	var listed []string
	for _, s := range all.GetSessions() {
		listed = append(listed, s.GetId())
		want := map[string]int32{ids[0]: 4, ids[1]: 2, ids[2]: 2}[s.GetId()]
		if s.GetMessageCount() != want || s.GetTitle() == "" || s.GetCreatedAt() == 0 {
			t.Errorf("session %+v", s)
		}
	}
	if !slices.Equal(paged, listed) {
		t.Fatalf("pages %v, all %v", paged, listed)
	}
	sorted := slices.Clone(listed)
	slices.Sort(sorted)
	want := slices.Clone(ids)
	slices.Sort(want)
	if !slices.Equal(sorted, want) {
		t.Fatalf("sessions %v, want %v", listed, ids)
	}
	if r, err := c.ListSessions(ctx, &pb.ListSessionsRequest{Offset: 3}); err != nil || len(r.GetSessions()) != 0 || r.GetTotal() != 3 {
		t.Fatalf("past the end: %+v, %v", r, err)
	}
	if _, err := c.ListSessions(ctx, &pb.ListSessionsRequest{Limit: -1}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("negative limit: %v", err)
	}

	hist, err := c.GetHistory(ctx, &pb.GetHistoryRequest{SessionId: ids[0]})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range hist.GetMessages() {
		got = append(got, m.GetRole()+":"+m.GetContent())
	}
	if wantH := []string{"user:one", "assistant:re: one", "user:one more", "assistant:re: one more"}; !slices.Equal(got, wantH) || hist.GetTotal() != 4 {
		t.Fatalf("history %v (total %d), want %v", got, hist.GetTotal(), wantH)
	}
	page, err := c.GetHistory(ctx, &pb.GetHistoryRequest{SessionId: ids[0], Limit: 2, Offset: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.GetMessages()) != 2 || page.GetMessages()[0].GetContent() != "re: one" || page.GetMessages()[1].GetContent() != "one more" || page.GetTotal() != 4 {
		t.Fatalf("history page %+v", page)
	}
	if page.GetMessages()[0].GetId() == page.GetMessages()[1].GetId() {
		t.Fatal("history messages share an id")
	}
	if r, err := c.GetHistory(ctx, &pb.GetHistoryRequest{SessionId: ids[0], Offset: 10}); err != nil || len(r.GetMessages()) != 0 {
		t.Fatalf("history past the end: %+v, %v", r, err)
	}
	if _, err := c.GetHistory(ctx, &pb.GetHistoryRequest{SessionId: "sess_nope"}); status.Code(err) != codes.NotFound {
		t.Fatalf("unknown session: %v", err)
	}
	if _, err := c.GetHistory(ctx, &pb.GetHistoryRequest{SessionId: ids[0], Offset: -1}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("negative offset: %v", err)
	}
}

func TestShutdownRPC(t *testing.T) {
	for _, restart := range []bool{false, true} {
		h := newHarness(t, nil)
		resp, err := h.client().Shutdown(context.Background(), &pb.ShutdownRequest{Reason: "test", Restart: restart})
		if err != nil || !resp.GetAccepted() {
			t.Fatalf("Shutdown: %+v, %v", resp, err)
		}
		select {
		case <-h.eng.ShutdownRequested():
		default:
			t.Fatal("ShutdownRequested not closed after the RPC returned")
		}
		if h.eng.RestartRequested() != restart {
			t.Fatalf("RestartRequested = %v, want %v", h.eng.RestartRequested(), restart)
		}
	}
}

func TestWatchUnknownSession(t *testing.T) {
	h := newHarness(t, nil)
	s, err := h.client().WatchSession(context.Background(), &pb.WatchSessionRequest{SessionId: "sess_nope"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); status.Code(err) != codes.NotFound {
		t.Fatalf("watching an unknown session: %v", err)
	}
}
