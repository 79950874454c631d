package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/llm"
	"github.com/parapet-dev/parapet/llm/llmtest"
)

var providers = []string{llm.ProviderOpenAI, llm.ProviderAnthropic}

// newProvider points a provider at srv with test-sized delays.
func newProvider(t *testing.T, srv *llmtest.Server, name string, mod func(*llm.Config)) llm.Provider {
	t.Helper()
	cfg := srv.Config(name)
	cfg.RetryBaseDelay = time.Millisecond
	cfg.Timeout = 20 * time.Second
	if mod != nil {
		mod(&cfg)
	}
	p, err := llm.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func streaming(on bool) func(*llm.Config) {
	return func(c *llm.Config) { c.Stream = &on }
}

func userReq(text string) llm.Request {
	return llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

// each runs f for both providers, streamed and not.
func each(t *testing.T, f func(t *testing.T, name string, stream bool)) {
	for _, name := range providers {
		for _, stream := range []bool{true, false} {
			mode := "json"
			if stream {
				mode = "stream"
			}
			t.Run(name+"/"+mode, func(t *testing.T) { f(t, name, stream) })
		}
	}
}

func TestStreamedTextArrivesInOrder(t *testing.T) {
	const text = "Hello, streaming world: ünïcode ✓ and a longer tail to split."
	for _, name := range providers {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.Start(t)
			srv.Enqueue(llmtest.Reply{Text: text})
			p := newProvider(t, srv, name, nil)
			if p.Name() != name || p.Model() != "test-model" {
				t.Errorf("Name %q, Model %q", p.Name(), p.Model())
			}
			var tokens []string
			resp, err := p.Complete(context.Background(), userReq("hi"), func(s string) { tokens = append(tokens, s) })
			if err != nil {
				t.Fatal(err)
			}
			if len(tokens) < 2 {
				t.Errorf("got %d text deltas, want several", len(tokens))
			}
			if got := strings.Join(tokens, ""); got != text {
				t.Errorf("deltas joined = %q, want %q", got, text)
			}
			if resp.Text != text || resp.StopReason != llm.StopEndTurn || len(resp.ToolCalls) != 0 {
				t.Errorf("response = %+v", resp)
			}
			rec := <-srv.Arrived(1)
			if !rec.Stream || rec.Model != "test-model" {
				t.Errorf("server saw stream=%v model=%q", rec.Stream, rec.Model)
			}
			if name == llm.ProviderOpenAI && !rec.IncludeUsage {
				t.Error("OpenAI stream did not ask for include_usage")
			}
		})
	}
}

func TestStreamDefaultsToOnText(t *testing.T) {
	for _, name := range providers {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.Start(t)
			srv.Enqueue(llmtest.Reply{Text: `{"decision":"ALLOW"}`})
			p := newProvider(t, srv, name, nil)
			resp, err := p.Complete(context.Background(), userReq("answer in JSON"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != `{"decision":"ALLOW"}` {
				t.Errorf("text = %q", resp.Text)
			}
			if rec := <-srv.Arrived(1); rec.Stream {
				t.Error("a call without onText streamed")
			}
		})
	}
}

func TestToolCallsReassembled(t *testing.T) {
	calls := []llm.ToolCall{
		{Name: "read_file", Arguments: `{"path":"docs/ünï code.md","range":{"from":1,"to":40}}`},
		{ID: "call_given", Name: "execute_command", Arguments: `{"command":"ls -la | grep \"x\"","env":["A=1","B=2"]}`},
	}
	each(t, func(t *testing.T, name string, stream bool) {
		srv := llmtest.Start(t)
		srv.Enqueue(llmtest.Reply{Text: "Let me look.", ToolCalls: calls})
		p := newProvider(t, srv, name, streaming(stream))
		var streamed strings.Builder
		resp, err := p.Complete(context.Background(), userReq("look"), func(s string) { streamed.WriteString(s) })
		if err != nil {
			t.Fatal(err)
		}
		if resp.Text != "Let me look." || streamed.String() != "Let me look." {
			t.Errorf("text = %q, streamed %q", resp.Text, streamed.String())
		}
		if resp.StopReason != llm.StopToolCalls {
			t.Errorf("stop reason = %q", resp.StopReason)
		}
		if len(resp.ToolCalls) != 2 {
			t.Fatalf("got %d tool calls: %+v", len(resp.ToolCalls), resp.ToolCalls)
		}
		for i, want := range calls {
			got := resp.ToolCalls[i]
			if got.Name != want.Name || !sameJSON(t, got.Arguments, want.Arguments) {
				t.Errorf("call %d = %+v, want %+v", i, got, want)
			}
			if got.ID == "" || (want.ID != "" && got.ID != want.ID) {
				t.Errorf("call %d id = %q", i, got.ID)
			}
		}
	})
}

func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Errorf("not JSON: %q: %v", a, err)
		return false
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Errorf("not JSON: %q: %v", b, err)
		return false
	}
	return reflect.DeepEqual(x, y)
}

// conversation is a second turn after two tool calls, one of which failed.
func conversation() llm.Request {
	temp := 0.25
	return llm.Request{
		System: "You are careful.",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "What is in the repo?"},
			{Role: llm.RoleAssistant, Content: "Checking.", ToolCalls: []llm.ToolCall{
				{ID: "call_a", Name: "list_files", Arguments: `{"path":"."}`},
				{ID: "call_b", Name: "read_file", Arguments: `{"path":"secret"}`},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_a", Content: "README.md\ngo.mod"},
			{Role: llm.RoleTool, ToolCallID: "call_b", Content: "blocked by policy", IsError: true},
			{Role: llm.RoleUser, Content: "Go on."},
		},
		Tools: []llm.Tool{
			{Name: "list_files", Description: "List a directory.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "read_file", Description: "Read a file."},
		},
		MaxTokens:   300,
		Temperature: &temp,
	}
}

func TestMultiTurnRoundTrip(t *testing.T) {
	each(t, func(t *testing.T, name string, stream bool) {
		srv := llmtest.Start(t)
		srv.Enqueue(llmtest.Reply{Text: "It has a README."})
		p := newProvider(t, srv, name, streaming(stream))
		req := conversation()
		if _, err := p.Complete(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
		rec := <-srv.Arrived(1)
		if rec.Invalid != "" {
			t.Fatalf("server refused the request: %s", rec.Invalid)
		}
		if rec.System != req.System || rec.MaxTokens != 300 || rec.Temperature == nil || *rec.Temperature != 0.25 {
			t.Errorf("system %q, max tokens %d, temperature %v", rec.System, rec.MaxTokens, rec.Temperature)
		}
		want := req.Messages
		if name == llm.ProviderOpenAI {
			want = append([]llm.Message(nil), want...)
			want[3].IsError = false // the OpenAI format has no such flag
		}
		if !reflect.DeepEqual(rec.Messages, want) {
			t.Errorf("server decoded messages\n%+v\nwant\n%+v", rec.Messages, want)
		}
		if len(rec.Tools) != 2 || rec.Tools[0].Name != "list_files" || rec.Tools[1].Name != "read_file" {
			t.Errorf("tools = %+v", rec.Tools)
		}
		if !sameJSON(t, string(rec.Tools[1].Parameters), `{"type":"object","properties":{}}`) {
			t.Errorf("default schema = %s", rec.Tools[1].Parameters)
		}
	})
}

// TestWireShapeOpenAI checks the JSON the OpenAI provider sends, field by
// field, beyond what the server's decoder accepts.
func TestWireShapeOpenAI(t *testing.T) {
	srv := llmtest.Start(t)
	srv.Enqueue(llmtest.Reply{Text: "ok"})
	p := newProvider(t, srv, llm.ProviderOpenAI, nil)
	if _, err := p.Complete(context.Background(), conversation(), func(string) {}); err != nil {
		t.Fatal(err)
	}
	rec := <-srv.Arrived(1)
	if rec.Path != "/v1/chat/completions" || rec.Header.Get("Authorization") != "Bearer test-key" {
		t.Errorf("path %q, auth %q", rec.Path, rec.Header.Get("Authorization"))
	}
	var body map[string]any
	if err := json.Unmarshal(rec.Body, &body); err != nil {
		t.Fatal(err)
	}
	msgs := body["messages"].([]any)
	wantRoles := []string{"system", "user", "assistant", "tool", "tool", "user"}
	for i, m := range msgs {
		if r := m.(map[string]any)["role"]; r != wantRoles[i] {
			t.Errorf("message %d role %v, want %s", i, r, wantRoles[i])
		}
	}
	call := msgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	if call["type"] != "function" || call["id"] != "call_a" {
		t.Errorf("tool call = %v", call)
	}
	if args, ok := call["function"].(map[string]any)["arguments"].(string); !ok || args != `{"path":"."}` {
		t.Errorf("arguments must be a JSON string, got %#v", call["function"])
	}
	if tm := msgs[3].(map[string]any); tm["tool_call_id"] != "call_a" || tm["content"] != "README.md\ngo.mod" {
		t.Errorf("tool message = %v", tm)
	}
	tool := body["tools"].([]any)[0].(map[string]any)
	if tool["type"] != "function" || tool["function"].(map[string]any)["parameters"] == nil {
		t.Errorf("tool = %v", tool)
	}
	if body["max_tokens"] != 300.0 || body["stream"] != true {
		t.Errorf("max_tokens %v, stream %v", body["max_tokens"], body["stream"])
	}
	if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options = %v", body["stream_options"])
	}
}

func TestWireShapeAnthropic(t *testing.T) {
	srv := llmtest.Start(t)
	srv.Enqueue(llmtest.Reply{Text: "ok"})
	p := newProvider(t, srv, llm.ProviderAnthropic, nil)
	req := conversation()
	req.MaxTokens = 0 // Anthropic requires one: the default is sent
	if _, err := p.Complete(context.Background(), req, func(string) {}); err != nil {
		t.Fatal(err)
	}
	rec := <-srv.Arrived(1)
	if rec.Path != "/v1/messages" || rec.Header.Get("x-api-key") != "test-key" || rec.Header.Get("anthropic-version") != "2023-06-01" {
		t.Errorf("path %q, headers %v", rec.Path, rec.Header)
	}
	var body struct {
		System    string `json:"system"`
		MaxTokens int    `json:"max_tokens"`
		Messages  []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(rec.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.System != "You are careful." || body.MaxTokens != llm.DefaultAnthropicMaxTokens {
		t.Errorf("system %q, max_tokens %d", body.System, body.MaxTokens)
	}
	// The two tool results and the next user text share one user message.
	var shape []string
	for _, m := range body.Messages {
		var types []string
		for _, b := range m.Content {
			types = append(types, b["type"].(string))
		}
		shape = append(shape, m.Role+":"+strings.Join(types, ","))
	}
	want := []string{"user:text", "assistant:text,tool_use,tool_use", "user:tool_result,tool_result,text"}
	if !reflect.DeepEqual(shape, want) {
		t.Fatalf("messages %v, want %v", shape, want)
	}
	use := body.Messages[1].Content[1]
	if use["id"] != "call_a" || use["name"] != "list_files" || !reflect.DeepEqual(use["input"], map[string]any{"path": "."}) {
		t.Errorf("tool_use = %v", use)
	}
	res := body.Messages[2].Content[1]
	if res["tool_use_id"] != "call_b" || res["is_error"] != true || res["content"] != "blocked by policy" {
		t.Errorf("tool_result = %v", res)
	}
	if body.Tools[0]["input_schema"] == nil || body.Tools[0]["name"] != "list_files" {
		t.Errorf("tool = %v", body.Tools[0])
	}
}

func TestUsageReported(t *testing.T) {
	each(t, func(t *testing.T, name string, stream bool) {
		srv := llmtest.Start(t)
		u := llm.Usage{InputTokens: 1200, OutputTokens: 34, CacheReadTokens: 1000, CacheWriteTokens: 150}
		srv.Enqueue(llmtest.Reply{Text: "ok", Usage: u})
		p := newProvider(t, srv, name, streaming(stream))
		resp, err := p.Complete(context.Background(), userReq("hi"), nil)
		if err != nil {
			t.Fatal(err)
		}
		want := u
		if name == llm.ProviderOpenAI {
			want.CacheWriteTokens = 0 // OpenAI does not report cache writes
		}
		if resp.Usage != want {
			t.Errorf("usage = %+v, want %+v", resp.Usage, want)
		}
	})
}

func TestRetriesRateLimitThenSucceeds(t *testing.T) {
	each(t, func(t *testing.T, name string, stream bool) {
		srv := llmtest.Start(t)
		srv.Enqueue(
			llmtest.Reply{Status: 429, Text: "slow down", RetryAfter: "0"},
			llmtest.Reply{Status: 503, Text: "overloaded"},
			llmtest.Reply{Text: "finally"},
		)
		p := newProvider(t, srv, name, streaming(stream))
		resp, err := p.Complete(context.Background(), userReq("hi"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Text != "finally" || srv.Count() != 3 {
			t.Errorf("text %q after %d requests", resp.Text, srv.Count())
		}
	})
}

func TestRetryAfterBeyondCapFailsAtOnce(t *testing.T) {
	for _, name := range providers {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.Start(t)
			srv.Enqueue(llmtest.Reply{Status: 429, Text: "come back in two minutes", RetryAfter: "120"}, llmtest.Reply{Text: "too soon"})
			p := newProvider(t, srv, name, nil)
			_, err := p.Complete(context.Background(), userReq("hi"), nil)
			var e *llm.Error
			if !errors.Is(err, llm.ErrRateLimited) || !errors.As(err, &e) {
				t.Fatalf("err = %v, want ErrRateLimited", err)
			}
			if e.RetryAfter != 2*time.Minute || e.Status != 429 || !strings.Contains(e.Error(), "come back in two minutes") {
				t.Errorf("error = %+v", e)
			}
			if srv.Count() != 1 {
				t.Errorf("%d requests, want 1", srv.Count())
			}
		})
	}
}

func TestServerErrorsExhaustRetries(t *testing.T) {
	each(t, func(t *testing.T, name string, stream bool) {
		srv := llmtest.Start(t)
		for range 3 {
			srv.Enqueue(llmtest.Reply{Status: 500, Text: "the model fell over"})
		}
		srv.Enqueue(llmtest.Reply{Text: "never reached"})
		p := newProvider(t, srv, name, streaming(stream))
		_, err := p.Complete(context.Background(), userReq("hi"), nil)
		var e *llm.Error
		if !errors.Is(err, llm.ErrUnavailable) || !errors.As(err, &e) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
		if e.Attempts != 3 || e.Status != 500 || e.Provider != name || e.RequestID == "" {
			t.Errorf("error = %+v", e)
		}
		if !strings.Contains(err.Error(), "the model fell over") {
			t.Errorf("error %q does not quote the server", err)
		}
		if srv.Count() != 3 {
			t.Errorf("%d requests, want 3", srv.Count())
		}
	})
}

func TestExhaustedQuotaIsNotRetried(t *testing.T) {
	srv := llmtest.Start(t)
	srv.Enqueue(
		llmtest.Reply{Status: 429, Raw: `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`},
		llmtest.Reply{Text: "no"},
	)
	p := newProvider(t, srv, llm.ProviderOpenAI, nil)
	_, err := p.Complete(context.Background(), userReq("hi"), nil)
	if !errors.Is(err, llm.ErrRateLimited) || !strings.Contains(err.Error(), "current quota") || srv.Count() != 1 {
		t.Fatalf("err = %v after %d requests, want ErrRateLimited after 1", err, srv.Count())
	}
}

func TestAuthFailureIsNotRetried(t *testing.T) {
	for _, status := range []int{401, 403} {
		for _, name := range providers {
			t.Run(name, func(t *testing.T) {
				srv := llmtest.Start(t)
				srv.Enqueue(llmtest.Reply{Status: status, Text: "invalid x-api-key"}, llmtest.Reply{Text: "no"})
				p := newProvider(t, srv, name, nil)
				_, err := p.Complete(context.Background(), userReq("hi"), nil)
				if !errors.Is(err, llm.ErrAuth) || errors.Is(err, llm.ErrUnavailable) {
					t.Fatalf("err = %v, want ErrAuth only", err)
				}
				if !strings.Contains(err.Error(), "invalid x-api-key") {
					t.Errorf("error %q does not quote the server", err)
				}
				if srv.Count() != 1 {
					t.Errorf("%d requests, want 1", srv.Count())
				}
			})
		}
	}
}

func TestBadRequestIsNotRetried(t *testing.T) {
	for _, name := range providers {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.Start(t)
			srv.Enqueue(llmtest.Reply{Status: 400, Text: "prompt is too long"})
			p := newProvider(t, srv, name, nil)
			_, err := p.Complete(context.Background(), userReq("hi"), nil)
			if !errors.Is(err, llm.ErrBadRequest) || !strings.Contains(err.Error(), "prompt is too long") || srv.Count() != 1 {
				t.Fatalf("err = %v after %d requests", err, srv.Count())
			}
		})
	}
}

func TestSlowAnswerTimesOut(t *testing.T) {
	each(t, func(t *testing.T, name string, stream bool) {
		srv := llmtest.Start(t)
		srv.Enqueue(llmtest.Reply{Text: "late", Delay: time.Minute})
		p := newProvider(t, srv, name, func(c *llm.Config) {
			c.Stream = &stream
			c.Timeout = 200 * time.Millisecond
		})
		_, err := p.Complete(context.Background(), userReq("hi"), nil)
		if !errors.Is(err, llm.ErrTimeout) || !errors.Is(err, llm.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want ErrTimeout", err)
		}
		if srv.Count() != 1 {
			t.Errorf("%d requests, want 1", srv.Count())
		}
	})
}

func TestStalledStreamTimesOutKeepingNoRetry(t *testing.T) {
	for _, name := range providers {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.Start(t)
			srv.Enqueue(llmtest.Reply{Text: "first words then silence", ChunkDelay: time.Minute})
			p := newProvider(t, srv, name, func(c *llm.Config) { c.Timeout = 300 * time.Millisecond })
			_, err := p.Complete(context.Background(), userReq("hi"), func(string) {})
			if !errors.Is(err, llm.ErrTimeout) || srv.Count() != 1 {
				t.Fatalf("err = %v after %d requests, want ErrTimeout after 1", err, srv.Count())
			}
		})
	}
}

// midStreamError is a stream that fails with a retryable provider error,
// after some text when withText.
func midStreamError(name string, withText bool) string {
	if name == llm.ProviderOpenAI {
		s := `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n"
		if withText {
			s += `data: {"choices":[{"index":0,"delta":{"content":"partial "}}]}` + "\n\n"
		}
		return s + `data: {"error":{"message":"upstream overloaded","type":"server_error"}}` + "\n\n"
	}
	s := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	if withText {
		s += "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"partial \"}}\n\n"
	}
	return s + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"upstream overloaded\"}}\n\n"
}

func TestNoRetryOnceTextWasDelivered(t *testing.T) {
	for _, name := range providers {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.Start(t)
			srv.Enqueue(llmtest.Reply{Raw: midStreamError(name, true)}, llmtest.Reply{Text: "would repeat the text"})
			p := newProvider(t, srv, name, nil)
			var got strings.Builder
			_, err := p.Complete(context.Background(), userReq("hi"), func(s string) { got.WriteString(s) })
			if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "upstream overloaded") {
				t.Fatalf("err = %v, want ErrUnavailable quoting the event", err)
			}
			if got.String() != "partial " || srv.Count() != 1 {
				t.Errorf("text %q after %d requests, want %q after 1", got.String(), srv.Count(), "partial ")
			}
		})
	}
}

func TestRetryWhenStreamFailsBeforeText(t *testing.T) {
	for _, name := range providers {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.Start(t)
			srv.Enqueue(llmtest.Reply{Raw: midStreamError(name, false)}, llmtest.Reply{Text: "second try"})
			p := newProvider(t, srv, name, nil)
			var got strings.Builder
			resp, err := p.Complete(context.Background(), userReq("hi"), func(s string) { got.WriteString(s) })
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != "second try" || got.String() != "second try" || srv.Count() != 2 {
				t.Errorf("text %q, streamed %q, %d requests", resp.Text, got.String(), srv.Count())
			}
		})
	}
}

func TestMalformedAnswersAreBadResponses(t *testing.T) {
	cases := map[string]llmtest.Reply{
		"invalid JSON":     {Raw: `{"choices": [ {"message": `},
		"wrong JSON shape": {Raw: `{"choices": "none", "type": 7}`},
		"broken event":     {Raw: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: {oops\n\n"},
		"truncated":        {Text: "this answer will be cut off halfway through", Truncate: true},
	}
	each(t, func(t *testing.T, name string, stream bool) {
		for what, rep := range cases {
			t.Run(strings.ReplaceAll(what, " ", "_"), func(t *testing.T) {
				srv := llmtest.Start(t)
				srv.Enqueue(rep, llmtest.Reply{Text: "not reached"})
				p := newProvider(t, srv, name, streaming(stream))
				_, err := p.Complete(context.Background(), userReq("hi"), nil)
				if !errors.Is(err, llm.ErrBadResponse) {
					t.Fatalf("err = %v, want ErrBadResponse", err)
				}
				if srv.Count() != 1 {
					t.Errorf("%d requests, want 1", srv.Count())
				}
			})
		}
	})
}

func TestAnswerOverSizeCap(t *testing.T) {
	each(t, func(t *testing.T, name string, stream bool) {
		srv := llmtest.Start(t)
		srv.Enqueue(llmtest.Reply{Text: strings.Repeat("long answer ", 400)})
		p := newProvider(t, srv, name, func(c *llm.Config) {
			c.Stream = &stream
			c.MaxResponseBytes = 2048
		})
		_, err := p.Complete(context.Background(), userReq("hi"), nil)
		if !errors.Is(err, llm.ErrBadResponse) || !strings.Contains(err.Error(), "size cap") {
			t.Fatalf("err = %v, want ErrBadResponse over the size cap", err)
		}
	})
}

func TestUnreachableProvider(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	for _, name := range providers {
		t.Run(name, func(t *testing.T) {
			base := "http://" + addr
			if name == llm.ProviderOpenAI {
				base += "/v1"
			}
			p, err := llm.New(llm.Config{Provider: name, BaseURL: base, Model: "m", APIKey: "k", RetryBaseDelay: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Complete(context.Background(), userReq("hi"), nil)
			var e *llm.Error
			if !errors.Is(err, llm.ErrUnavailable) || !errors.As(err, &e) || e.Attempts != 3 {
				t.Fatalf("err = %v, want ErrUnavailable after 3 attempts", err)
			}
		})
	}
}

func TestCallerCancellation(t *testing.T) {
	for _, name := range providers {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.Start(t)
			srv.Enqueue(llmtest.Reply{Text: "late", Delay: time.Minute})
			p := newProvider(t, srv, name, nil)
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				<-srv.Arrived(1)
				cancel()
			}()
			_, err := p.Complete(ctx, userReq("hi"), nil)
			if !errors.Is(err, context.Canceled) || errors.Is(err, llm.ErrUnavailable) {
				t.Fatalf("err = %v, want a cancellation", err)
			}
		})
	}
}

func TestHandlerAnswersFromThePrompt(t *testing.T) {
	for _, name := range providers {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.Start(t)
			srv.Handle(func(r llmtest.Recorded) llmtest.Reply {
				_, canary, _ := strings.Cut(r.Prompt(), "canary=")
				return llmtest.Reply{Text: `{"decision":"ALLOW","canary":"` + strings.Fields(canary)[0] + `"}`}
			})
			p := newProvider(t, srv, name, nil)
			req := userReq("Judge this action. canary=c4n4ry-77 Answer in JSON.")
			req.System = "You are a security evaluator."
			req.JSON = true
			resp, err := p.Complete(context.Background(), req, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(resp.Text, `"canary":"c4n4ry-77"`) {
				t.Errorf("text = %q", resp.Text)
			}
			if rec := <-srv.Arrived(1); name == llm.ProviderOpenAI && !rec.JSONMode {
				t.Error("JSON mode was not requested")
			}
		})
	}
}

func TestJSONModeNeedsTheWordJSON(t *testing.T) {
	srv := llmtest.Start(t)
	p := newProvider(t, srv, llm.ProviderOpenAI, nil)
	req := userReq("Judge this action.")
	req.JSON = true
	_, err := p.Complete(context.Background(), req, nil)
	if !errors.Is(err, llm.ErrBadRequest) || !strings.Contains(err.Error(), "'json'") {
		t.Fatalf("err = %v, want the API's complaint about the word json", err)
	}
}

func TestJSONAnswerToStreamRequest(t *testing.T) {
	// Some OpenAI-compatible servers ignore stream:true.
	srv := llmtest.Start(t)
	srv.Enqueue(llmtest.Reply{Raw: `{"choices":[{"index":0,"message":{"role":"assistant","content":"whole"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`})
	p := newProvider(t, srv, llm.ProviderOpenAI, nil)
	var got string
	resp, err := p.Complete(context.Background(), userReq("hi"), func(s string) { got += s })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "whole" || got != "whole" || resp.Usage.InputTokens != 3 {
		t.Errorf("response %+v, streamed %q", resp, got)
	}
}

func TestStopReasonMaxTokens(t *testing.T) {
	for name, wire := range map[string]string{llm.ProviderOpenAI: "length", llm.ProviderAnthropic: "max_tokens"} {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.Start(t)
			srv.Enqueue(llmtest.Reply{Text: "cut", StopReason: wire})
			p := newProvider(t, srv, name, nil)
			resp, err := p.Complete(context.Background(), userReq("hi"), func(string) {})
			if err != nil || resp.StopReason != llm.StopMaxTokens {
				t.Fatalf("stop reason %q, err %v", resp.StopReason, err)
			}
		})
	}
}

// TestInjectedClientAndOpenAIHost gives the provider an HTTP client whose
// dialer ignores DNS, as the sandboxed agent does, and uses it to check
// what is sent to api.openai.com itself.
func TestInjectedClientAndOpenAIHost(t *testing.T) {
	srv := llmtest.Start(t)
	srv.Enqueue(llmtest.Reply{Text: "ok"})
	addr := strings.TrimPrefix(srv.URL, "http://")
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}
	p, err := llm.New(llm.Config{Provider: "openai", BaseURL: "http://api.openai.com/v1", Model: "gpt-x", APIKey: "k", HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	req := userReq("hi")
	req.MaxTokens = 50
	if _, err := p.Complete(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	rec := <-srv.Arrived(1)
	if err := json.Unmarshal(rec.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body["max_completion_tokens"] != 50.0 || body["max_tokens"] != nil {
		t.Errorf("api.openai.com got max_tokens %v, max_completion_tokens %v", body["max_tokens"], body["max_completion_tokens"])
	}
}

func TestInvalidRequestsAreRefusedBeforeSending(t *testing.T) {
	cases := map[string]llm.Request{
		"no messages":        {},
		"system message":     {Messages: []llm.Message{{Role: "system", Content: "x"}}},
		"tool without id":    {Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}, {Role: llm.RoleTool, Content: "r"}}},
		"call without id":    {Messages: []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{Name: "f"}}}}},
		"tool without name":  {Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, Tools: []llm.Tool{{}}},
		"schema not object":  {Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, Tools: []llm.Tool{{Name: "f", Parameters: json.RawMessage(`[1]`)}}},
		"user with tool id":  {Messages: []llm.Message{{Role: llm.RoleUser, Content: "x", ToolCallID: "c"}}},
		"unknown role":       {Messages: []llm.Message{{Role: "bot", Content: "x"}}},
		"negative maxtokens": {Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, MaxTokens: -1},
	}
	srv := llmtest.Start(t)
	for _, name := range providers {
		p := newProvider(t, srv, name, nil)
		for what, req := range cases {
			if _, err := p.Complete(context.Background(), req, nil); !errors.Is(err, llm.ErrBadRequest) {
				t.Errorf("%s, %s: err = %v, want ErrBadRequest", name, what, err)
			}
		}
	}
	// Anthropic refuses empty turns and arguments that are not an object.
	p := newProvider(t, srv, llm.ProviderAnthropic, nil)
	for _, req := range []llm.Request{
		userReq(""),
		{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}, {Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "f", Arguments: "{broken"}}}}},
	} {
		if _, err := p.Complete(context.Background(), req, nil); !errors.Is(err, llm.ErrBadRequest) {
			t.Errorf("anthropic: err = %v, want ErrBadRequest", err)
		}
	}
	if srv.Count() != 0 {
		t.Errorf("%d requests reached the server", srv.Count())
	}
}

func TestConcurrentCalls(t *testing.T) {
	srv := llmtest.Start(t)
	srv.Handle(func(r llmtest.Recorded) llmtest.Reply { return llmtest.Reply{Text: "echo " + r.Messages[0].Content} })
	for _, name := range providers {
		p := newProvider(t, srv, name, nil)
		errs := make(chan error, 8)
		for i := range 8 {
			go func() {
				want := "echo " + strings.Repeat("x", i+1)
				resp, err := p.Complete(context.Background(), userReq(strings.Repeat("x", i+1)), func(string) {})
				if err == nil && resp.Text != want {
					err = errors.New("got " + resp.Text + ", want " + want)
				}
				errs <- err
			}()
		}
		for range 8 {
			if err := <-errs; err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}
