package llm

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// openAI speaks the chat completions API of OpenAI and the servers that
// copy it (vLLM, Ollama, llama.cpp server).
type openAI struct{ caller *caller }

func (p *openAI) Name() string  { return ProviderOpenAI }
func (p *openAI) Model() string { return p.caller.cfg.Model }

func (p *openAI) Complete(ctx context.Context, req Request, onText func(string)) (Response, error) {
	stream := p.caller.stream(onText)
	body, err := p.encode(req, stream)
	if err != nil {
		return Response{}, err
	}
	h := p.caller.header(stream)
	if p.caller.cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+p.caller.cfg.APIKey)
	}
	maxEvent := p.caller.maxEvent()
	read := func(resp *http.Response, r io.Reader, emit func(string)) (Response, error) {
		if stream && !isJSON(resp) {
			return decodeOpenAIStream(r, maxEvent, emit)
		}
		raw, err := io.ReadAll(r)
		if err != nil {
			return Response{}, err
		}
		out, err := decodeOpenAIResponse(raw)
		if err == nil {
			emit(out.Text)
		}
		return out, err
	}
	return p.caller.call(ctx, p.caller.cfg.BaseURL+"/chat/completions", h, body, read, onText)
}

// Wire format of a request.
type oaRequest struct {
	Model     string      `json:"model"`
	Messages  []oaMessage `json:"messages"`
	Tools     []oaTool    `json:"tools,omitempty"`
	MaxTokens int         `json:"max_tokens,omitempty"`
	// OpenAI's own API refuses max_tokens for its reasoning models and
	// takes this instead; compatible servers mostly know only max_tokens.
	MaxCompletionTokens int              `json:"max_completion_tokens,omitempty"`
	Temperature         *float64         `json:"temperature,omitempty"`
	Stream              bool             `json:"stream,omitempty"`
	StreamOptions       *oaStreamOptions `json:"stream_options,omitempty"`
	ResponseFormat      *oaFormat        `json:"response_format,omitempty"`
}

type oaStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type oaFormat struct {
	Type string `json:"type"`
}

type oaMessage struct {
	Role string `json:"role"`
	// Content is null on an assistant turn that only called tools.
	Content    *string      `json:"content"`
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type oaToolCall struct {
	ID       string     `json:"id"`
	Type     string     `json:"type"`
	Function oaFunction `json:"function"`
}

type oaFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type oaTool struct {
	Type     string        `json:"type"`
	Function oaFunctionDef `json:"function"`
}

type oaFunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type oaUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func (u *oaUsage) usage() Usage {
	if u == nil {
		return Usage{}
	}
	out := Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.CacheReadTokens = u.PromptTokensDetails.CachedTokens
	}
	return out
}

func (p *openAI) encode(req Request, stream bool) ([]byte, error) {
	if err := checkRequest(ProviderOpenAI, req); err != nil {
		return nil, err
	}
	w := oaRequest{Model: p.caller.cfg.Model, Temperature: req.Temperature, Stream: stream}
	if req.Model != "" {
		w.Model = req.Model
	}
	if stream {
		w.StreamOptions = &oaStreamOptions{IncludeUsage: true}
	}
	if req.JSON {
		w.ResponseFormat = &oaFormat{Type: "json_object"}
	}
	if u, _ := url.Parse(p.caller.cfg.BaseURL); u.Hostname() == "api.openai.com" {
		w.MaxCompletionTokens = req.MaxTokens
	} else {
		w.MaxTokens = req.MaxTokens
	}
	if req.System != "" {
		w.Messages = append(w.Messages, oaMessage{Role: "system", Content: &req.System})
	}
	for _, m := range req.Messages {
		om := oaMessage{Role: string(m.Role), ToolCallID: m.ToolCallID}
		if m.Content != "" || m.Role != RoleAssistant || len(m.ToolCalls) == 0 {
			om.Content = &m.Content
		}
		for _, tc := range m.ToolCalls {
			args := tc.Arguments
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			om.ToolCalls = append(om.ToolCalls, oaToolCall{ID: tc.ID, Type: "function", Function: oaFunction{Name: tc.Name, Arguments: args}})
		}
		w.Messages = append(w.Messages, om)
	}
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, oaTool{Type: "function", Function: oaFunctionDef{Name: t.Name, Description: t.Description, Parameters: t.schema()}})
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, badRequest(ProviderOpenAI, "encoding the request: %v", err)
	}
	return b, nil
}

// Wire format of a non-streamed answer.
type oaResponse struct {
	Choices []struct {
		Message struct {
			Content   json.RawMessage `json:"content"`
			Refusal   string          `json:"refusal"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *oaUsage        `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// decodeOpenAIResponse reads a non-streamed chat completion.
func decodeOpenAIResponse(raw []byte) (Response, error) {
	var r oaResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return Response{}, badResponse("answer is not a chat completion: %v", err)
	}
	if len(r.Choices) == 0 {
		if e, ok := errorObject(r.Error); ok {
			return Response{}, e.asError()
		}
		return Response{}, badResponse("answer has no choices")
	}
	c := r.Choices[0]
	text, err := contentText(c.Message.Content)
	if err != nil {
		return Response{}, err
	}
	text += c.Message.Refusal
	out := Response{Text: text, Usage: r.Usage.usage()}
	for i, tc := range c.Message.ToolCalls {
		if tc.Function.Name == "" {
			return Response{}, badResponse("tool call %d has no name", i)
		}
		args, err := argumentsText(tc.Function.Arguments)
		if err != nil {
			return Response{}, badResponse("tool call %d (%s): %v", i, tc.Function.Name, err)
		}
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: orCallID(tc.ID), Name: tc.Function.Name, Arguments: args})
	}
	out.StopReason = stopReason(c.FinishReason, len(out.ToolCalls) > 0)
	return out, nil
}

// Wire format of one streamed chunk.
type oaChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   *string `json:"content"`
			Refusal   *string `json:"refusal"`
			ToolCalls []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *oaUsage        `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// maxToolCalls bounds the tool calls of one answer, so a hostile stream
// can't make us build unbounded state out of index numbers.
const maxToolCalls = 128

// oaStream reassembles a streamed chat completion.
type oaStream struct {
	text     strings.Builder
	calls    []*ToolCall
	byIndex  map[int]int // wire index → position in calls
	finish   *string
	usage    *oaUsage
	finished bool // saw [DONE]
}

// decodeOpenAIStream reads chat completion chunks until [DONE].
func decodeOpenAIStream(r io.Reader, maxEvent int, emit func(string)) (Response, error) {
	sr := newSSEReader(r, maxEvent)
	s := &oaStream{byIndex: map[int]int{}}
	for !s.finished {
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Response{}, err
		}
		if err := s.add(ev.Data, emit); err != nil {
			return Response{}, err
		}
	}
	// Servers that omit [DONE] still end with a finish_reason; a stream
	// with neither was cut off.
	if !s.finished && s.finish == nil {
		return Response{}, badResponse("stream ended before [DONE]")
	}
	return s.response()
}

func (s *oaStream) add(data []byte, emit func(string)) error {
	data = bytes.TrimSpace(data)
	if string(data) == "[DONE]" {
		s.finished = true
		return nil
	}
	var c oaChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return badResponse("stream chunk is not JSON: %v", err)
	}
	if e, ok := errorObject(c.Error); ok {
		return e.asError()
	}
	if c.Usage != nil {
		s.usage = c.Usage
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // we ask for one choice
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.finish = ch.FinishReason
		}
		for _, t := range []*string{ch.Delta.Content, ch.Delta.Refusal} {
			if t != nil && *t != "" {
				s.text.WriteString(*t)
				emit(*t)
			}
		}
		for pos, d := range ch.Delta.ToolCalls {
			tc, err := s.call(d.Index, d.ID, pos)
			if err != nil {
				return err
			}
			if tc.ID == "" {
				tc.ID = d.ID
			}
			// The name comes whole in the first fragment; some servers
			// repeat it, so it is not concatenated.
			if tc.Name == "" {
				tc.Name = d.Function.Name
			}
			args, err := argumentsText(d.Function.Arguments)
			if err != nil {
				return badResponse("tool call fragment: %v", err)
			}
			tc.Arguments += args
		}
	}
	return nil
}

// call finds the tool call a fragment belongs to. Fragments are keyed by
// index; a server that omits it (sending whole calls) is matched by id,
// else by position in the chunk.
func (s *oaStream) call(index *int, id string, pos int) (*ToolCall, error) {
	if index == nil {
		for _, tc := range s.calls {
			if id != "" && tc.ID == id {
				return tc, nil
			}
		}
		if id == "" && pos < len(s.calls) {
			return s.calls[pos], nil
		}
		return s.newCall()
	}
	if i, ok := s.byIndex[*index]; ok {
		return s.calls[i], nil
	}
	s.byIndex[*index] = len(s.calls)
	return s.newCall()
}

func (s *oaStream) newCall() (*ToolCall, error) {
	if len(s.calls) >= maxToolCalls {
		return nil, badResponse("more than %d tool calls", maxToolCalls)
	}
	tc := &ToolCall{}
	s.calls = append(s.calls, tc)
	return tc, nil
}

func (s *oaStream) response() (Response, error) {
	out := Response{Text: s.text.String(), Usage: s.usage.usage()}
	for i, tc := range s.calls {
		if tc.Name == "" {
			return Response{}, badResponse("tool call %d has no name", i)
		}
		tc.ID = orCallID(tc.ID)
		out.ToolCalls = append(out.ToolCalls, *tc)
	}
	var finish string
	if s.finish != nil {
		finish = *s.finish
	}
	out.StopReason = stopReason(finish, len(out.ToolCalls) > 0)
	return out, nil
}

// contentText reads a message content: a string, null, or (some servers)
// an array of {"type":"text","text":...} parts.
func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", badResponse("message content is neither text nor parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// argumentsText reads tool call arguments: a string of JSON text as the
// API defines, or (Ollama and others) the object itself.
func argumentsText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '{' {
		return string(raw), nil // json.Unmarshal has validated it
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errors.New("arguments are neither a string nor an object")
	}
	return s, nil
}

// errorObject reads an "error" member that is present and not null.
func errorObject(raw json.RawMessage) (apiError, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return apiError{}, false
	}
	var e apiError
	if json.Unmarshal(raw, &e) != nil {
		var s string
		_ = json.Unmarshal(raw, &s)
		e = apiError{Message: s}
	}
	return e, true
}

// orCallID gives a tool call an id when the server sent none: results must
// name the call they answer.
func orCallID(id string) string {
	if id != "" {
		return id
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
