package llmtest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/llm"
	"github.com/parapet-dev/parapet/llm/llmtest"
)

// post sends a raw request, as a client with bugs would.
func post(t *testing.T, url, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var anthropicHeaders = map[string]string{"x-api-key": "k", "anthropic-version": "2023-06-01"}

func TestServerRefusesMalformedRequests(t *testing.T) {
	srv := llmtest.Start(t)
	srv.Enqueue(llmtest.Reply{Text: "must stay queued"})
	oa, an := srv.OpenAIBaseURL()+"/chat/completions", srv.AnthropicBaseURL()+"/v1/messages"
	cases := []struct {
		name, url, body string
		header          map[string]string
		status          int
		want            string
	}{
		{"not JSON", oa, `{`, nil, 400, "could not parse"},
		{"no model", oa, `{"messages":[{"role":"user","content":"x"}]}`, nil, 400, "model"},
		{"no messages", oa, `{"model":"m","messages":[]}`, nil, 400, "at least one message"},
		{"stream options without stream", oa, `{"model":"m","messages":[{"role":"user","content":"x"}],"stream_options":{"include_usage":true}}`, nil, 400, "stream_options"},
		{"object arguments", oa, `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{}}}]},{"role":"tool","tool_call_id":"c","content":"r"}]}`, nil, 400, "arguments"},
		{"unanswered tool call", oa, `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"y"}]}`, nil, 400, "missing: c"},
		{"orphan tool message", oa, `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c","content":"r"}]}`, nil, 400, "must be a response"},
		{"bad role", oa, `{"model":"m","messages":[{"role":"bot","content":"x"}]}`, nil, 400, "invalid role"},
		{"bad tool", oa, `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":""}}]}`, nil, 400, "tools[0]"},
		{"no api key", an, `{}`, map[string]string{"anthropic-version": "2023-06-01"}, 401, "x-api-key"},
		{"no version", an, `{}`, map[string]string{"x-api-key": "k"}, 400, "anthropic-version"},
		{"no max_tokens", an, `{"model":"m","messages":[{"role":"user","content":"x"}]}`, anthropicHeaders, 400, "max_tokens"},
		{"system role", an, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"system","content":"y"}]}`, anthropicHeaders, 400, "top-level `system`"},
		{"assistant first", an, `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":"x"}]}`, anthropicHeaders, 400, "first message"},
		{"empty text", an, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":""}]}`, anthropicHeaders, 400, "non-empty"},
		{"missing tool_result", an, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},{"role":"user","content":"y"}]}`, anthropicHeaders, 400, "without `tool_result`"},
		{"unknown tool_use_id", an, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"u"}]}]}`, anthropicHeaders, 400, "unexpected `tool_use_id`"},
		{"input not object", an, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":"{}"}]}]}`, anthropicHeaders, 400, "input object"},
		{"tool without schema", an, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f"}]}`, anthropicHeaders, 400, "input_schema"},
		{"unknown path", srv.URL + "/v2/complete", `{}`, nil, 404, "no API at"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := post(t, c.url, c.body, c.header)
			if status != c.status || !strings.Contains(body, c.want) {
				t.Errorf("got %d %s, want %d containing %q", status, body, c.status, c.want)
			}
			var e struct {
				Error struct {
					Message string `json:"message"`
					Type    string `json:"type"`
				} `json:"error"`
			}
			if json.Unmarshal([]byte(body), &e) != nil || e.Error.Message == "" || e.Error.Type == "" {
				t.Errorf("error body is not in the API's shape: %s", body)
			}
		})
	}
	if srv.Pending() != 1 {
		t.Error("a refused request consumed a reply")
	}
	if n := srv.Count(); n != len(cases) {
		t.Errorf("Count = %d, want %d", n, len(cases))
	}
	for _, r := range srv.Requests() {
		if r.Invalid == "" {
			t.Errorf("request %d recorded as valid", r.N)
		}
	}
}

func TestServerWithNothingQueued(t *testing.T) {
	srv := llmtest.Start(t)
	status, body := post(t, srv.OpenAIBaseURL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, nil)
	if status != 500 || !strings.Contains(body, "no reply queued") {
		t.Errorf("got %d %s", status, body)
	}
}

func TestServerRecordsAndSignalsArrivals(t *testing.T) {
	srv := llmtest.Start(t)
	second := srv.Arrived(2)
	srv.Enqueue(llmtest.Reply{Text: "one"}, llmtest.Reply{Text: "two"})
	before := time.Now()
	post(t, srv.URL+"/chat/completions", `{"model":"a","messages":[{"role":"user","content":"first"}]}`, nil)
	select {
	case <-second:
		t.Fatal("request 2 signalled after one request")
	default:
	}
	post(t, srv.AnthropicBaseURL()+"/v1/messages", `{"model":"b","max_tokens":9,"system":[{"type":"text","text":"sys"}],"messages":[{"role":"user","content":[{"type":"text","text":"second"}]}]}`, anthropicHeaders)
	r := <-second
	if r.N != 2 || r.API != llm.ProviderAnthropic || r.Model != "b" || r.System != "sys" || r.MaxTokens != 9 || r.Messages[0].Content != "second" {
		t.Errorf("recorded %+v", r)
	}
	if r.At.Before(before) || r.Header.Get("x-api-key") != "k" {
		t.Errorf("at %v, headers %v", r.At, r.Header)
	}
	if got := <-srv.Arrived(1); got.API != llm.ProviderOpenAI || got.Path != "/chat/completions" || got.Prompt() != "\nfirst" {
		t.Errorf("request 1 = %+v", got)
	}
}

func TestServerRawReplies(t *testing.T) {
	srv := llmtest.Start(t)
	srv.Enqueue(
		llmtest.Reply{Raw: "data: {\"x\":1}\n\n"},
		llmtest.Reply{Raw: `{"ok":true}`, Status: 202},
	)
	for _, want := range []struct {
		ct     string
		status int
	}{{"text/event-stream", 200}, {"application/json", 202}} {
		resp, err := http.Post(srv.OpenAIBaseURL()+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"x"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want.status || resp.Header.Get("Content-Type") != want.ct {
			t.Errorf("got %d %q, want %d %q", resp.StatusCode, resp.Header.Get("Content-Type"), want.status, want.ct)
		}
	}
}

func TestServerRejectsBadReplies(t *testing.T) {
	srv := llmtest.Start(t)
	srv.Enqueue(llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "f", Arguments: "[1]"}}})
	status, body := post(t, srv.OpenAIBaseURL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, nil)
	if status != 500 || !strings.Contains(body, "bad Reply") {
		t.Errorf("got %d %s", status, body)
	}
}

// TestServerStreamsInPieces reads a stream raw to check that text and
// arguments really are split across events.
func TestServerStreamsInPieces(t *testing.T) {
	srv := llmtest.Start(t)
	srv.Enqueue(llmtest.Reply{Text: "several words of text", ToolCalls: []llm.ToolCall{{Name: "f", Arguments: `{"path":"a/b/c.txt"}`}}})
	status, body := post(t, srv.OpenAIBaseURL()+"/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`, nil)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	if n := strings.Count(body, `"content":"`) - 1; n < 3 { // minus the empty role chunk
		t.Errorf("text in %d deltas, want several:\n%s", n, body)
	}
	if n := strings.Count(body, `"arguments":"`) - 1; n < 3 { // minus the naming fragment
		t.Errorf("arguments in %d deltas, want several:\n%s", n, body)
	}
	if strings.Contains(body, `"usage"`) {
		t.Error("usage chunk sent without include_usage")
	}
	if !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Errorf("stream does not end with [DONE]:\n%s", body)
	}
}
