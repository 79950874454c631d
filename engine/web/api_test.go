package web_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/engine/web"
	"github.com/parapet-dev/parapet/llm"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

func TestChatStatusSessionsHistory(t *testing.T) {
	s := newStack(t, stackOptions{replies: []llm.Response{text("Hello from the scripted model."), text("Second answer.")}})

	resp := s.do(t, request{method: "POST", path: "/api/sessions/new/messages", body: `{"content":"hi there"}`})
	sid := resp.Header.Get(web.SessionIDHeader)
	if sid == "" || resp.Header.Get(web.MessageIDHeader) == "" {
		t.Fatalf("stream headers %v", resp.Header)
	}
	evs := openSSE(t, resp).rest()
	var streamed strings.Builder
	for _, ev := range evs {
		if ev.GetSessionId() != sid {
			t.Fatalf("event for session %q in a stream of %q", ev.GetSessionId(), sid)
		}
		if ev.GetEventType() == evToken {
			streamed.WriteString(ev.GetLlmToken().GetText())
		}
	}
	done := evs[len(evs)-1]
	if done.GetEventType() != evComplete || done.GetResponseComplete().GetContent() != "Hello from the scripted model." ||
		streamed.String() != "Hello from the scripted model." {
		t.Fatalf("events %s, streamed %q, last %v", typeNames(evs), streamed.String(), done)
	}

	resp = s.do(t, request{method: "POST", path: "/api/sessions/" + sid + "/messages", body: `{"content":"and again"}`})
	if got := resp.Header.Get(web.SessionIDHeader); got != sid {
		t.Fatalf("second message went to session %q, want %q", got, sid)
	}
	if evs := openSSE(t, resp).rest(); evs[len(evs)-1].GetResponseComplete().GetContent() != "Second answer." {
		t.Fatalf("second answer: %s", typeNames(evs))
	}

	var sessions pb.ListSessionsResponse
	readProto(t, s.do(t, request{method: "GET", path: "/api/sessions"}), http.StatusOK, &sessions)
	if sessions.GetTotal() != 1 || len(sessions.GetSessions()) != 1 || sessions.GetSessions()[0].GetId() != sid ||
		sessions.GetSessions()[0].GetMessageCount() != 4 || sessions.GetSessions()[0].GetTitle() != "hi there" {
		t.Fatalf("sessions %v", &sessions)
	}
	var none pb.ListSessionsResponse
	readProto(t, s.do(t, request{method: "GET", path: "/api/sessions?limit=1&offset=1"}), http.StatusOK, &none)
	if none.GetTotal() != 1 || len(none.GetSessions()) != 0 {
		t.Fatalf("offset past the end: %v", &none)
	}

	var hist pb.GetHistoryResponse
	readProto(t, s.do(t, request{method: "GET", path: "/api/sessions/" + sid + "/history"}), http.StatusOK, &hist)
	var roles []string
	for _, m := range hist.GetMessages() {
		roles = append(roles, m.GetRole()+":"+m.GetContent())
	}
	if want := "user:hi there|assistant:Hello from the scripted model.|user:and again|assistant:Second answer."; strings.Join(roles, "|") != want || hist.GetTotal() != 4 {
		t.Fatalf("history %q (total %d), want %q", roles, hist.GetTotal(), want)
	}
	var page pb.GetHistoryResponse
	readProto(t, s.do(t, request{method: "GET", path: "/api/sessions/" + sid + "/history?limit=1&offset=1"}), http.StatusOK, &page)
	if len(page.GetMessages()) != 1 || page.GetMessages()[0].GetContent() != "Hello from the scripted model." || page.GetTotal() != 4 {
		t.Fatalf("history page %v", &page)
	}

	var st pb.StatusResponse
	resp = s.do(t, request{method: "GET", path: "/api/status"})
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("security headers %v", resp.Header)
	}
	readProto(t, resp, http.StatusOK, &st)
	if !st.GetAgentConnected() || st.GetWorkspace() != s.ws || st.GetWebUrl() != s.base || st.GetActiveSessions() != 1 || st.GetVersion() != "test" {
		t.Fatalf("status %v", &st)
	}
	if resp := s.do(t, request{method: "HEAD", path: "/api/status"}); resp.StatusCode != http.StatusOK {
		t.Fatalf("HEAD /api/status: %d", resp.StatusCode)
	}
}

func TestMessageRefusals(t *testing.T) {
	t.Run("no agent", func(t *testing.T) {
		s := newStack(t, stackOptions{})
		wantError(t, s.do(t, request{method: "POST", path: "/api/sessions/new/messages", body: `{"content":"hi"}`}),
			http.StatusServiceUnavailable, "AGENT_UNAVAILABLE")
	})
	s := newStack(t, stackOptions{
		replies: []llm.Response{text("unused")},
		engine:  func(c *engine.Config) { c.MaxMessageBytes = 64 },
		web:     func(o *web.Options) { o.MaxBodyBytes = 1024 },
	})
	t.Run("unknown session", func(t *testing.T) {
		wantError(t, s.do(t, request{method: "POST", path: "/api/sessions/sess_nope/messages", body: `{"content":"hi"}`}),
			http.StatusNotFound, "SESSION_NOT_FOUND")
	})
	t.Run("message over the engine's limit", func(t *testing.T) {
		msg := wantError(t, s.do(t, request{method: "POST", path: "/api/sessions/new/messages", body: `{"content":"` + strings.Repeat("a", 100) + `"}`}),
			http.StatusRequestEntityTooLarge, "MESSAGE_TOO_LARGE")
		if !strings.Contains(msg, "64") {
			t.Fatalf("message %q does not name the limit", msg)
		}
	})
	t.Run("body over the web limit", func(t *testing.T) {
		wantError(t, s.do(t, request{method: "POST", path: "/api/sessions/new/messages", body: `{"content":"` + strings.Repeat("a", 2000) + `"}`}),
			http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	})
	// Nothing was sent to the agent: its one reply is still there.
	if resp := s.do(t, request{method: "POST", path: "/api/sessions/new/messages", body: `{"content":"hi"}`}); openSSE(t, resp).rest()[0].GetEventType() != evToken {
		t.Fatal("the agent did not answer the first good message")
	}
}

func TestBadInput(t *testing.T) {
	s := newStack(t, stackOptions{})
	cases := []struct {
		name       string
		req        request
		status     int
		code, want string // want: a phrase of the message
	}{
		{"broken JSON", request{method: "POST", path: "/api/sessions/new/messages", body: `{"content":`}, 400, "INVALID_ARGUMENT", "request body"},
		{"invalid UTF-8", request{method: "POST", path: "/api/sessions/new/messages", body: "{\"content\":\"\xff\"}"}, 400, "INVALID_ARGUMENT", "UTF-8"},
		{"unknown field", request{method: "POST", path: "/api/sessions/new/messages", body: `{"content":"hi","model":"x"}`}, 400, "INVALID_ARGUMENT", "model"},
		{"duplicate field", request{method: "POST", path: "/api/sessions/new/messages", body: `{"content":"a","content":"b"}`}, 400, "INVALID_ARGUMENT", "duplicate"},
		{"no content", request{method: "POST", path: "/api/sessions/new/messages", body: `{}`}, 400, "INVALID_ARGUMENT", "content"},
		{"content not a string", request{method: "POST", path: "/api/sessions/new/messages", body: `{"content":5}`}, 400, "INVALID_ARGUMENT", `"content" has the wrong type`},
		{"array body", request{method: "POST", path: "/api/sessions/new/messages", body: `["hi"]`}, 400, "INVALID_ARGUMENT", "object"},
		{"null body", request{method: "POST", path: "/api/sessions/new/messages", body: `null`}, 400, "INVALID_ARGUMENT", "object"},
		{"trailing data", request{method: "POST", path: "/api/sessions/new/messages", body: `{"content":"hi"} {}`}, 400, "INVALID_ARGUMENT", "request body"},
		{"bad mode", request{method: "POST", path: "/api/sessions/new/messages", body: `{"content":"hi","mode":"OTR"}`}, 400, "INVALID_ARGUMENT", "mode"},
		{"mode on an existing session", request{method: "POST", path: "/api/sessions/sess_1/messages", body: `{"content":"hi","mode":"otr"}`}, 400, "INVALID_ARGUMENT", "new session"},
		{"no content type", request{method: "POST", path: "/api/sessions/new/messages", body: `{"content":"hi"}`, header: map[string]string{"Content-Type": ""}}, 415, "UNSUPPORTED_MEDIA_TYPE", "application/json"},
		{"form content type", request{method: "POST", path: "/api/sessions/new/messages", body: `{"content":"hi"}`, header: map[string]string{"Content-Type": "text/plain"}}, 415, "UNSUPPORTED_MEDIA_TYPE", "text/plain"},
		{"session id not UTF-8", request{method: "GET", path: "/api/sessions/%FF/history"}, 400, "INVALID_ARGUMENT", "UTF-8"},
		{"unknown session history", request{method: "GET", path: "/api/sessions/sess_nope/history"}, 404, "NOT_FOUND", "sess_nope"},
		{"negative limit", request{method: "GET", path: "/api/sessions?limit=-1"}, 400, "INVALID_ARGUMENT", "limit"},
		{"limit not a number", request{method: "GET", path: "/api/sessions?limit=ten"}, 400, "INVALID_ARGUMENT", "limit"},
		{"limit twice", request{method: "GET", path: "/api/sessions?limit=1&limit=2"}, 400, "INVALID_ARGUMENT", "limit"},
		{"offset too big", request{method: "GET", path: "/api/sessions/x/history?offset=99999999999"}, 400, "INVALID_ARGUMENT", "offset"},
		{"approval without a decision", request{method: "POST", path: "/api/approvals/appr_1", body: `{"session_id":"s"}`}, 400, "INVALID_ARGUMENT", "approved"},
		{"approval decision not a bool", request{method: "POST", path: "/api/approvals/appr_1", body: `{"approved":"yes"}`}, 400, "INVALID_ARGUMENT", `"approved" has the wrong type`},
		{"approval decision twice", request{method: "POST", path: "/api/approvals/appr_1", body: `{"approved":false,"approved":true}`}, 400, "INVALID_ARGUMENT", "duplicate"},
		{"approval unknown field", request{method: "POST", path: "/api/approvals/appr_1", body: `{"approved":true,"force":true}`}, 400, "INVALID_ARGUMENT", "force"},
		{"unknown approval", request{method: "POST", path: "/api/approvals/appr_nope", body: `{"approved":true}`}, 404, "NOT_FOUND", "appr_nope"},
		{"unknown endpoint", request{method: "GET", path: "/api/nothing"}, 404, "NOT_FOUND", "/api/nothing"},
		{"unknown page", request{method: "GET", path: "/admin"}, 404, "NOT_FOUND", "/admin"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := wantError(t, s.do(t, c.req), c.status, c.code)
			if !strings.Contains(msg, c.want) {
				t.Fatalf("message %q does not mention %q", msg, c.want)
			}
			t.Log(msg)
		})
	}

	for _, c := range []struct{ method, path, allow string }{
		{"DELETE", "/api/status", "GET, HEAD"},
		{"GET", "/api/restart", "POST"},
		{"PUT", "/api/approvals/appr_1", "POST"},
		{"POST", "/api/sessions/x/history", "GET, HEAD"},
		{"POST", "/", "GET, HEAD"},
	} {
		resp := s.do(t, request{method: c.method, path: c.path})
		wantError(t, resp, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
		if got := resp.Header.Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
	}
}

// TestCrossSiteRequestsRefused: the checks that keep a web page the user
// visits from driving the engine (package doc).
func TestCrossSiteRequestsRefused(t *testing.T) {
	s := newStack(t, stackOptions{})
	hostPort := strings.TrimPrefix(s.base, "http://")
	restart := func(r request) *http.Response {
		r.method, r.path = "POST", "/api/restart"
		return s.do(t, r)
	}
	wantError(t, restart(request{noToken: true}), http.StatusUnauthorized, "TOKEN_REQUIRED")
	wantError(t, restart(request{header: map[string]string{web.TokenHeader: strings.Repeat("0", 64)}}), http.StatusUnauthorized, "TOKEN_REQUIRED")
	wantError(t, restart(request{header: map[string]string{"Origin": "http://evil.example"}}), http.StatusForbidden, "CROSS_ORIGIN_REFUSED")
	// Another port of the same host is the same site but not the same origin.
	wantError(t, restart(request{header: map[string]string{"Origin": "http://127.0.0.1:1"}}), http.StatusForbidden, "CROSS_ORIGIN_REFUSED")
	wantError(t, restart(request{header: map[string]string{"Origin": "null"}}), http.StatusForbidden, "CROSS_ORIGIN_REFUSED")
	for _, site := range []string{"cross-site", "same-site", "none"} {
		wantError(t, restart(request{header: map[string]string{"Sec-Fetch-Site": site}}), http.StatusForbidden, "CROSS_ORIGIN_REFUSED")
	}
	// DNS rebinding: the attacker's name pointing at 127.0.0.1.
	for _, path := range []string{"/", "/api/status", "/api/events"} {
		wantError(t, s.do(t, request{method: "GET", path: path, header: map[string]string{"Host": "evil.example:" + strings.Split(hostPort, ":")[1]}}),
			http.StatusForbidden, "HOST_NOT_ALLOWED")
	}
	select {
	case <-s.eng.ShutdownRequested():
		t.Fatal("a refused request reached the engine")
	default:
	}

	// Signing in: the address with the token sets the cookie and
	// redirects to the page without it; a wrong token sets nothing.
	port := strings.Split(hostPort, ":")[1]
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	signIn := func(token string) *http.Response {
		req, _ := http.NewRequest("GET", s.base+"/?token="+token, nil)
		req.Host = "localhost:" + port
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	bad := signIn(strings.Repeat("0", 64))
	if len(bad.Cookies()) != 0 {
		t.Fatalf("a wrong token set cookies %v", bad.Cookies())
	}
	wantError(t, bad, http.StatusUnauthorized, "TOKEN_REQUIRED")
	signedIn := signIn(s.web.Token())
	if signedIn.StatusCode != http.StatusSeeOther || signedIn.Header.Get("Location") != "/" {
		t.Fatalf("sign-in: %d, Location %q", signedIn.StatusCode, signedIn.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range signedIn.Cookies() {
		cookie = c
	}
	if cookie == nil || cookie.Name != "parapet_token_"+port || cookie.Value != s.web.Token() ||
		!cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("token cookie %+v", cookie)
	}

	// The page: only with the cookie; strict CSP, no framing.
	wantError(t, s.do(t, request{method: "GET", path: "/", noToken: true}), http.StatusUnauthorized, "TOKEN_REQUIRED")
	page := s.do(t, request{method: "GET", path: "/", noToken: true, header: map[string]string{"Host": "localhost:" + port,
		"Cookie": cookie.Name + "=" + cookie.Value}})
	if len(page.Cookies()) != 0 {
		t.Fatalf("the page hands out cookies: %v", page.Cookies())
	}
	body, _ := io.ReadAll(page.Body)
	if page.StatusCode != http.StatusOK || !strings.Contains(string(body), "<title>Parapet</title>") {
		t.Fatalf("page: %d %s", page.StatusCode, body)
	}
	csp := page.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("page CSP %q lacks %q", csp, want)
		}
	}
	if page.Header.Get("X-Frame-Options") != "DENY" || page.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("page headers %v", page.Header)
	}

	// What the page sends: the cookie, from its own origin.
	resp := restart(request{noToken: true, header: map[string]string{"Cookie": cookie.Name + "=" + cookie.Value,
		"Origin": s.base, "Sec-Fetch-Site": "same-origin"}})
	var ack pb.ShutdownResponse
	readProto(t, resp, http.StatusAccepted, &ack)
	if !ack.GetAccepted() {
		t.Fatalf("restart %v", &ack)
	}
	select {
	case <-s.eng.ShutdownRequested():
	default:
		t.Fatal("restart accepted but the engine was not asked to stop")
	}
	if !s.eng.RestartRequested() {
		t.Fatal("the shutdown is not a restart (exit 75)")
	}
}

func TestEventsStreamEverySession(t *testing.T) {
	replies := []llm.Response{}
	for range 20 {
		replies = append(replies, text("probe answer"))
	}
	s := newStack(t, stackOptions{replies: replies, web: func(o *web.Options) { o.Heartbeat = 20 * time.Millisecond }})
	events := openSSE(t, s.do(t, request{method: "GET", path: "/api/events"}))
	// Heartbeats arrive while nothing happens.
	for {
		ev, err := events.next(true)
		if err != nil {
			t.Fatal(err)
		}
		if ev == nil {
			break
		}
	}
	// A message sent over gRPC by another front-end shows on the stream.
	sid := waitWatching(t, s, events)
	if sid == "" {
		t.Fatal("no session id")
	}
}

// waitWatching sends messages over gRPC until one's RESPONSE_COMPLETE
// arrives on the event stream, and returns its session. The HTTP stream
// is open before the engine has subscribed it (WatchSession has no
// "subscribed" signal), so an early message may pass unseen: then a few
// heartbeats go by and another is sent. This waits for a condition; it
// asserts nothing about time.
func waitWatching(t testing.TB, s *stack, events *sseStream) string {
	t.Helper()
	for attempt := 0; attempt < 10; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		stream, err := s.client.SendMessage(ctx, &pb.ClientMessageRequest{Content: "probe", Source: "test"})
		if err != nil {
			t.Fatal(err)
		}
		var sid string
		for {
			ev, err := stream.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			sid = ev.GetSessionId()
		}
		cancel()
		start := events.heartbeats
		for events.heartbeats-start < 5 {
			ev, err := events.next(true)
			if err != nil {
				t.Fatal(err)
			}
			if ev != nil && ev.GetSessionId() == sid && ev.GetEventType() == evComplete {
				return sid
			}
		}
	}
	t.Fatal("the event stream never showed a message's events")
	return ""
}

func TestShutdownEndsOpenStreams(t *testing.T) {
	s := newStack(t, stackOptions{})
	events := openSSE(t, s.do(t, request{method: "GET", path: "/api/events"}))
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if err := s.web.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with an open event stream: %v", err)
	}
	for {
		_, err := events.next(false)
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Every read needs the token too: what the engine shows (sessions, tool
// calls, pending approvals and their ids) is not for every local process.
// Without it, or with a wrong one, each read is 401 and the event stream
// never opens; with it as the header, as a bearer token or as the cookie,
// each works. The static script and style need nothing.
func TestReadsNeedTheToken(t *testing.T) {
	s := newStack(t, stackOptions{})
	port := strings.Split(strings.TrimPrefix(s.base, "http://"), ":")[1]
	reads := []string{"/api/status", "/api/sessions", "/api/sessions/sess_x/history", "/api/events", "/"}
	for _, path := range reads {
		for what, h := range map[string]map[string]string{
			"nothing":             nil,
			"wrong header":        {web.TokenHeader: strings.Repeat("0", 64)},
			"wrong bearer":        {"Authorization": "Bearer " + strings.Repeat("0", 64)},
			"wrong cookie":        {"Cookie": "parapet_token_" + port + "=" + strings.Repeat("0", 64)},
			"other port's cookie": {"Cookie": "parapet_token_1=" + s.web.Token()},
		} {
			resp := s.do(t, request{method: "GET", path: path, noToken: true, header: h})
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Content-Type") == "text/event-stream" {
				t.Errorf("GET %s with %s: %d %s", path, what, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
		}
	}
	for what, h := range map[string]map[string]string{
		"header": nil,
		"bearer": {web.TokenHeader: "", "Authorization": "Bearer " + s.web.Token()},
		"cookie": {web.TokenHeader: "", "Cookie": "parapet_token_" + port + "=" + s.web.Token()},
	} {
		resp := s.do(t, request{method: "GET", path: "/api/status", header: h})
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET /api/status with the token as %s: %d", what, resp.StatusCode)
		}
	}
	for _, path := range []string{"/app.js", "/app.css"} {
		if resp := s.do(t, request{method: "GET", path: path, noToken: true}); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", path, resp.StatusCode)
		}
	}
}

func TestNewNeedsAToken(t *testing.T) {
	if _, err := web.New(web.Options{Client: pb.NewClientServiceClient(nil)}); err == nil {
		t.Fatal("web.New without a token succeeded")
	}
}
