package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parapet-dev/parapet/llm"
	"github.com/parapet-dev/parapet/llm/llmtest"
)

// clearEnv unsets the variables New reads, for the test's duration.
func clearEnv(t *testing.T) {
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"} {
		t.Setenv(k, "")
	}
}

func TestConfigErrors(t *testing.T) {
	clearEnv(t)
	cases := []struct {
		cfg  llm.Config
		want string
	}{
		{llm.Config{}, "no provider configured"},
		{llm.Config{Provider: "gemini", Model: "m"}, `unknown provider "gemini"`},
		{llm.Config{Provider: "openai"}, "needs a model name"},
		{llm.Config{Provider: "openai", Model: "m"}, "set OPENAI_API_KEY"},
		{llm.Config{Provider: "anthropic", Model: "m"}, "set ANTHROPIC_API_KEY"},
		{llm.Config{Provider: "openai", Model: "m", BaseURL: "ftp://x"}, "must be an http or https URL"},
		{llm.Config{Provider: "openai", Model: "m", BaseURL: "http://h/v1?x=1"}, "no query"},
		{llm.Config{Provider: "anthropic", Model: "m", APIKeyEnv: "PARAPET_TEST_UNSET_KEY"}, "PARAPET_TEST_UNSET_KEY is not set"},
		{llm.Config{Provider: "scripted"}, "needs a script file"},
	}
	for _, c := range cases {
		if _, err := llm.New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", c.cfg, err, c.want)
		}
	}
}

func TestConfigFromEnvironment(t *testing.T) {
	clearEnv(t)
	srv := llmtest.Start(t)
	srv.Enqueue(llmtest.Reply{Text: "a"}, llmtest.Reply{Text: "b"}, llmtest.Reply{Text: "c"})

	t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL()+"/")
	t.Setenv("OPENAI_API_KEY", "env-openai")
	t.Setenv("ANTHROPIC_BASE_URL", srv.AnthropicBaseURL())
	t.Setenv("ANTHROPIC_API_KEY", "env-anthropic")
	t.Setenv("PARAPET_TEST_KEY", "named-key")

	for _, c := range []struct {
		cfg          llm.Config
		header, want string
	}{
		{llm.Config{Provider: "openai", Model: "m"}, "Authorization", "Bearer env-openai"},
		{llm.Config{Provider: "Anthropic", Model: "m"}, "x-api-key", "env-anthropic"},
		{llm.Config{Provider: "anthropic", Model: "m", APIKeyEnv: "PARAPET_TEST_KEY"}, "x-api-key", "named-key"},
	} {
		p, err := llm.New(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Complete(context.Background(), userReq("hi"), nil); err != nil {
			t.Fatal(err)
		}
		rec := <-srv.Arrived(srv.Count())
		if got := rec.Header.Get(c.header); got != c.want {
			t.Errorf("%+v: %s = %q, want %q", c.cfg, c.header, got, c.want)
		}
	}
}

func TestLocalServerNeedsNoKey(t *testing.T) {
	clearEnv(t)
	srv := llmtest.Start(t)
	srv.Enqueue(llmtest.Reply{Text: "ok"})
	p, err := llm.New(llm.Config{Provider: "openai", Model: "llama3", BaseURL: srv.OpenAIBaseURL()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(context.Background(), userReq("hi"), nil); err != nil {
		t.Fatal(err)
	}
	if h := (<-srv.Arrived(1)).Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization %q sent without a key", h)
	}
}

func TestEndpoint(t *testing.T) {
	clearEnv(t)
	cases := []struct {
		cfg  llm.Config
		host string
		port uint16
	}{
		{llm.Config{Provider: "openai", Model: "m", APIKey: "k"}, "api.openai.com", 443},
		{llm.Config{Provider: "anthropic", Model: "m", APIKey: "k"}, "api.anthropic.com", 443},
		{llm.Config{Provider: "openai", Model: "m", BaseURL: "http://127.0.0.1:11434/v1"}, "127.0.0.1", 11434},
		{llm.Config{Provider: "openai", Model: "m", BaseURL: "http://vllm.internal/v1"}, "vllm.internal", 80},
		{llm.Config{Provider: "anthropic", Model: "m", BaseURL: "https://[::1]:8443"}, "::1", 8443},
		{llm.Config{Provider: "scripted", ScriptPath: "unused.yaml"}, "", 0},
	}
	for _, c := range cases {
		host, port, err := c.cfg.Endpoint()
		if err != nil || host != c.host || port != c.port {
			t.Errorf("Endpoint(%+v) = %q, %d, %v; want %q, %d", c.cfg, host, port, err, c.host, c.port)
		}
	}
	if _, _, err := (llm.Config{Provider: "openai", Model: "m", BaseURL: "http://h:0/v1"}).Endpoint(); err == nil {
		t.Error("port 0 accepted")
	}
	t.Setenv("OPENAI_BASE_URL", "http://10.0.0.7:8000/v1")
	if host, port, err := (llm.Config{Provider: "openai", Model: "m"}).Endpoint(); err != nil || host != "10.0.0.7" || port != 8000 {
		t.Errorf("from OPENAI_BASE_URL: %q, %d, %v", host, port, err)
	}
}
