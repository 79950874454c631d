package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// anthropicVersion is the Messages API version this code speaks.
const anthropicVersion = "2023-06-01"

// anthropic speaks the Anthropic Messages API.
type anthropic struct{ caller *caller }

func (p *anthropic) Name() string  { return ProviderAnthropic }
func (p *anthropic) Model() string { return p.caller.cfg.Model }

func (p *anthropic) Complete(ctx context.Context, req Request, onText func(string)) (Response, error) {
	stream := p.caller.stream(onText)
	body, err := p.encode(req, stream)
	if err != nil {
		return Response{}, err
	}
	h := p.caller.header(stream)
	h.Set("anthropic-version", anthropicVersion)
	if p.caller.cfg.APIKey != "" {
		h.Set("x-api-key", p.caller.cfg.APIKey)
	}
	maxEvent := p.caller.maxEvent()
	read := func(resp *http.Response, r io.Reader, emit func(string)) (Response, error) {
		if stream && !isJSON(resp) {
			return decodeAnthropicStream(r, maxEvent, emit)
		}
		raw, err := io.ReadAll(r)
		if err != nil {
			return Response{}, err
		}
		out, err := decodeAnthropicResponse(raw)
		if err == nil {
			emit(out.Text)
		}
		return out, err
	}
	return p.caller.call(ctx, p.caller.cfg.BaseURL+"/v1/messages", h, body, read, onText)
}

// Wire format of a request.
type anRequest struct {
	Model       string      `json:"model"`
	MaxTokens   int         `json:"max_tokens"`
	System      string      `json:"system,omitempty"`
	Messages    []anMessage `json:"messages"`
	Tools       []anTool    `json:"tools,omitempty"`
	Temperature *float64    `json:"temperature,omitempty"`
	Stream      bool        `json:"stream,omitempty"`
}

type anMessage struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}

// anBlock is any content block we send: text, tool_use or tool_result.
type anBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type anTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// anUsage fields are pointers because message_delta repeats only some of
// what message_start said.
type anUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
}

// merge overwrites u with what v states.
func (u *anUsage) merge(v *anUsage) {
	if v == nil {
		return
	}
	for _, f := range [][2]**int{
		{&u.InputTokens, &v.InputTokens}, {&u.OutputTokens, &v.OutputTokens},
		{&u.CacheCreationInputTokens, &v.CacheCreationInputTokens}, {&u.CacheReadInputTokens, &v.CacheReadInputTokens},
	} {
		if *f[1] != nil {
			*f[0] = *f[1]
		}
	}
}

// usage converts to ours; Anthropic's input_tokens excludes the cached part.
func (u anUsage) usage() Usage {
	n := func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	}
	read, write := n(u.CacheReadInputTokens), n(u.CacheCreationInputTokens)
	return Usage{
		InputTokens:      n(u.InputTokens) + read + write,
		OutputTokens:     n(u.OutputTokens),
		CacheReadTokens:  read,
		CacheWriteTokens: write,
	}
}

func (p *anthropic) encode(req Request, stream bool) ([]byte, error) {
	if err := checkRequest(ProviderAnthropic, req); err != nil {
		return nil, err
	}
	w := anRequest{Model: p.caller.cfg.Model, MaxTokens: req.MaxTokens, System: req.System, Temperature: req.Temperature, Stream: stream}
	if req.Model != "" {
		w.Model = req.Model
	}
	if w.MaxTokens == 0 {
		w.MaxTokens = DefaultAnthropicMaxTokens
	}
	for i, m := range req.Messages {
		role := "user" // tool results travel in user turns
		var blocks []anBlock
		switch m.Role {
		case RoleAssistant:
			role = "assistant"
			if m.Content != "" {
				blocks = append(blocks, anBlock{Type: "text", Text: m.Content})
			}
			for j, tc := range m.ToolCalls {
				input := json.RawMessage(strings.TrimSpace(tc.Arguments))
				if len(input) == 0 {
					input = json.RawMessage("{}")
				}
				if !isJSONObject(input) {
					return nil, badRequest(ProviderAnthropic, "message %d (assistant): tool call %d (%s): arguments are not a JSON object", i, j, tc.Name)
				}
				blocks = append(blocks, anBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: input})
			}
		case RoleTool:
			blocks = append(blocks, anBlock{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Content, IsError: m.IsError})
		default:
			if m.Content != "" {
				blocks = append(blocks, anBlock{Type: "text", Text: m.Content})
			}
		}
		if len(blocks) == 0 {
			return nil, badRequest(ProviderAnthropic, "message %d (%s) is empty; Anthropic refuses empty messages", i, m.Role)
		}
		// Consecutive turns of one role become one message: Anthropic wants
		// all results of a turn's tool calls in the next user message.
		if n := len(w.Messages); n > 0 && w.Messages[n-1].Role == role {
			w.Messages[n-1].Content = append(w.Messages[n-1].Content, blocks...)
		} else {
			w.Messages = append(w.Messages, anMessage{Role: role, Content: blocks})
		}
	}
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, anTool{Name: t.Name, Description: t.Description, InputSchema: t.schema()})
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, badRequest(ProviderAnthropic, "encoding the request: %v", err)
	}
	return b, nil
}

// Wire format of a non-streamed answer.
type anResponse struct {
	Type    string `json:"type"`
	Content []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
	StopReason string          `json:"stop_reason"`
	Usage      anUsage         `json:"usage"`
	Error      json.RawMessage `json:"error"`
}

// decodeAnthropicResponse reads a non-streamed message.
func decodeAnthropicResponse(raw []byte) (Response, error) {
	var r anResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return Response{}, badResponse("answer is not a message: %v", err)
	}
	if e, ok := errorObject(r.Error); ok {
		return Response{}, e.asError()
	}
	if r.Type != "message" {
		return Response{}, badResponse("answer has type %q, want \"message\"", truncate(r.Type, 64))
	}
	var text strings.Builder
	var calls []ToolCall
	for i, b := range r.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			if b.Name == "" || b.ID == "" {
				return Response{}, badResponse("content block %d: tool_use without id or name", i)
			}
			if !isJSONObject(b.Input) {
				return Response{}, badResponse("content block %d (%s): input is not a JSON object", i, b.Name)
			}
			calls = append(calls, ToolCall{ID: b.ID, Name: b.Name, Arguments: string(bytes.TrimSpace(b.Input))})
		}
	}
	return Response{Text: text.String(), ToolCalls: calls, Usage: r.Usage.usage(), StopReason: stopReason(r.StopReason, len(calls) > 0)}, nil
}

// Wire format of one stream event.
type anEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Usage anUsage `json:"usage"`
	} `json:"message"`
	ContentBlock *struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
		Text string `json:"text"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anUsage        `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// maxBlocks bounds the content blocks of one streamed message.
const maxBlocks = 4 * maxToolCalls

type anBlockState struct {
	kind    string // "text", "tool_use", or another type we skip
	call    *ToolCall
	args    strings.Builder
	stopped bool
}

// anStream reassembles a streamed message.
type anStream struct {
	text   strings.Builder
	blocks map[int]*anBlockState
	calls  []*anBlockState // tool_use blocks, in order
	usage  anUsage
	stop   string
	done   bool // saw message_stop
}

// decodeAnthropicStream reads message events until message_stop.
func decodeAnthropicStream(r io.Reader, maxEvent int, emit func(string)) (Response, error) {
	sr := newSSEReader(r, maxEvent)
	s := &anStream{blocks: map[int]*anBlockState{}}
	for !s.done {
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return Response{}, badResponse("stream ended before message_stop")
		}
		if err != nil {
			return Response{}, err
		}
		if err := s.add(ev.Data, emit); err != nil {
			return Response{}, err
		}
	}
	return s.response()
}

func (s *anStream) add(data []byte, emit func(string)) error {
	var ev anEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return badResponse("stream event is not JSON: %v", err)
	}
	switch ev.Type {
	case "message_start":
		if ev.Message != nil {
			s.usage.merge(&ev.Message.Usage)
		}
	case "content_block_start":
		if ev.ContentBlock == nil {
			return badResponse("content_block_start %d without a content_block", ev.Index)
		}
		if _, dup := s.blocks[ev.Index]; dup {
			return badResponse("content block %d started twice", ev.Index)
		}
		if len(s.blocks) >= maxBlocks {
			return badResponse("more than %d content blocks", maxBlocks)
		}
		b := &anBlockState{kind: ev.ContentBlock.Type}
		s.blocks[ev.Index] = b
		switch b.kind {
		case "text":
			s.addText(ev.ContentBlock.Text, emit)
		case "tool_use":
			if ev.ContentBlock.Name == "" || ev.ContentBlock.ID == "" {
				return badResponse("content block %d: tool_use without id or name", ev.Index)
			}
			if len(s.calls) >= maxToolCalls {
				return badResponse("more than %d tool calls", maxToolCalls)
			}
			b.call = &ToolCall{ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name}
			s.calls = append(s.calls, b)
		}
	case "content_block_delta":
		b, ok := s.blocks[ev.Index]
		if !ok || b.stopped {
			return badResponse("delta for content block %d, which is not open", ev.Index)
		}
		if ev.Delta == nil {
			return badResponse("content_block_delta %d without a delta", ev.Index)
		}
		switch ev.Delta.Type {
		case "text_delta":
			if b.kind != "text" {
				return badResponse("text_delta for %s block %d", truncate(b.kind, 64), ev.Index)
			}
			s.addText(ev.Delta.Text, emit)
		case "input_json_delta":
			if b.kind != "tool_use" {
				return badResponse("input_json_delta for %s block %d", truncate(b.kind, 64), ev.Index)
			}
			b.args.WriteString(ev.Delta.PartialJSON)
		}
	case "content_block_stop":
		b, ok := s.blocks[ev.Index]
		if !ok || b.stopped {
			return badResponse("stop for content block %d, which is not open", ev.Index)
		}
		b.stopped = true
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != "" {
			s.stop = ev.Delta.StopReason
		}
		s.usage.merge(ev.Usage)
	case "message_stop":
		s.done = true
	case "error":
		e, _ := errorObject(ev.Error)
		return e.asError()
	}
	// ping, and event types added after this was written, carry nothing
	// we need.
	return nil
}

func (s *anStream) addText(t string, emit func(string)) {
	if t != "" {
		s.text.WriteString(t)
		emit(t)
	}
}

func (s *anStream) response() (Response, error) {
	out := Response{Text: s.text.String(), Usage: s.usage.usage()}
	for _, b := range s.calls {
		args := strings.TrimSpace(b.args.String())
		if args == "" {
			args = "{}" // a call without arguments streams no input deltas
		}
		if !isJSONObject([]byte(args)) {
			return Response{}, badResponse("tool call %s (%s): streamed input is not a JSON object", truncate(b.call.ID, 64), truncate(b.call.Name, 64))
		}
		b.call.Arguments = args
		out.ToolCalls = append(out.ToolCalls, *b.call)
	}
	out.StopReason = stopReason(s.stop, len(out.ToolCalls) > 0)
	return out, nil
}
