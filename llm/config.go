package llm

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Defaults applied by New for zero Config fields.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	DefaultTimeout          = 3 * time.Minute
	DefaultMaxAttempts      = 3
	DefaultRetryBaseDelay   = 500 * time.Millisecond
	DefaultMaxRetryWait     = 30 * time.Second
	DefaultMaxResponseBytes = 16 << 20
	// DefaultAnthropicMaxTokens is sent when Request.MaxTokens is 0, since
	// Anthropic requires max_tokens.
	DefaultAnthropicMaxTokens = 4096
)

// Config selects and configures a provider. Only Provider and, for the
// HTTP providers, Model are required.
type Config struct {
	// Provider is "openai" (any OpenAI-compatible endpoint: OpenAI, vLLM,
	// Ollama, llama.cpp server), "anthropic" or "scripted".
	Provider string
	// BaseURL defaults to $OPENAI_BASE_URL or DefaultOpenAIBaseURL for
	// openai (the URL up to but excluding /chat/completions, e.g.
	// http://127.0.0.1:11434/v1), and to $ANTHROPIC_BASE_URL or
	// DefaultAnthropicBaseURL for anthropic (excluding /v1/messages).
	BaseURL string
	Model   string
	// APIKey is used as given. Otherwise it is read from the environment
	// variable APIKeyEnv names, else from OPENAI_API_KEY / ANTHROPIC_API_KEY.
	// A missing key is an error only for the providers' own hosts: local
	// OpenAI-compatible servers usually need none.
	APIKey    string
	APIKeyEnv string
	// ScriptPath is the scripted provider's YAML file, read whole by New.
	ScriptPath string

	// Timeout bounds one Complete call, retries and waits included.
	// Default DefaultTimeout.
	Timeout time.Duration
	// MaxAttempts bounds the HTTP requests of one call (1 = no retry).
	// Default DefaultMaxAttempts.
	MaxAttempts int
	// RetryBaseDelay is the first backoff; each retry doubles it, with
	// jitter, up to 8 times the base. Default DefaultRetryBaseDelay.
	RetryBaseDelay time.Duration
	// MaxRetryWait caps how long a Retry-After is honoured: a provider
	// asking for longer gets an ErrRateLimited at once. Default
	// DefaultMaxRetryWait.
	MaxRetryWait time.Duration
	// MaxResponseBytes caps a response body, streamed or not. Default
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// HTTPClient makes the requests; its Timeout should be zero (Timeout
	// above bounds calls). Default: a client on http.DefaultTransport.
	HTTPClient *http.Client
	// Stream chooses streaming. Default: stream when Complete is given an
	// onText callback, a single JSON answer when not.
	Stream *bool
}

// Provider names accepted by New.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	ProviderScripted  = "scripted"
)

// New builds the provider cfg describes, resolving defaults from the
// environment. The scripted provider's file is read and validated here.
func New(cfg Config) (Provider, error) {
	rc, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	switch rc.Provider {
	case ProviderScripted:
		s, err := LoadScript(rc.ScriptPath, rc.Model)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return s, nil
	case ProviderOpenAI:
		return &openAI{caller: newCaller(rc)}, nil
	default:
		return &anthropic{caller: newCaller(rc)}, nil
	}
}

// Endpoint is the host and TCP port the provider will connect to, so a
// sandbox can allow exactly that. The scripted provider needs no network:
// it returns "", 0 and no error.
func (c Config) Endpoint() (host string, port uint16, err error) {
	rc, err := c.resolve()
	if err != nil {
		return "", 0, err
	}
	if rc.Provider == ProviderScripted {
		return "", 0, nil
	}
	u, _ := url.Parse(rc.BaseURL) // resolve has validated it
	p := u.Port()
	if p == "" {
		p = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 {
		return "", 0, fmt.Errorf("llm: base URL %q: bad port %q", rc.BaseURL, p)
	}
	return u.Hostname(), uint16(n), nil
}

// resolve fills defaults and validates; the result is what the provider uses.
func (c Config) resolve() (Config, error) {
	c.Provider = strings.ToLower(strings.TrimSpace(c.Provider))
	var baseEnv, keyEnv, defBase string
	switch c.Provider {
	case ProviderOpenAI:
		baseEnv, keyEnv, defBase = "OPENAI_BASE_URL", "OPENAI_API_KEY", DefaultOpenAIBaseURL
	case ProviderAnthropic:
		baseEnv, keyEnv, defBase = "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", DefaultAnthropicBaseURL
	case ProviderScripted:
		if c.ScriptPath == "" {
			return c, fmt.Errorf("llm: scripted provider needs a script file (ScriptPath)")
		}
		if c.Model == "" {
			c.Model = "scripted"
		}
		return c, nil
	case "":
		return c, fmt.Errorf("llm: no provider configured (want openai, anthropic or scripted)")
	default:
		return c, fmt.Errorf("llm: unknown provider %q (want openai, anthropic or scripted)", c.Provider)
	}
	if c.Model == "" {
		return c, fmt.Errorf("llm: %s provider needs a model name", c.Provider)
	}
	if c.BaseURL == "" {
		c.BaseURL = os.Getenv(baseEnv)
	}
	if c.BaseURL == "" {
		c.BaseURL = defBase
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return c, fmt.Errorf("llm: %s base URL %q must be an http or https URL with a host and no query", c.Provider, c.BaseURL)
	}
	if c.APIKey == "" {
		if c.APIKeyEnv != "" {
			keyEnv = c.APIKeyEnv
		}
		c.APIKey = strings.TrimSpace(os.Getenv(keyEnv))
		if c.APIKey == "" && c.APIKeyEnv != "" {
			return c, fmt.Errorf("llm: %s API key variable %s is not set", c.Provider, c.APIKeyEnv)
		}
	}
	// The providers' own hosts always want a key; say so now rather than
	// after a 401.
	if official, _ := url.Parse(defBase); c.APIKey == "" && u.Hostname() == official.Hostname() {
		return c, fmt.Errorf("llm: %s needs an API key: set %s", c.Provider, keyEnv)
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.RetryBaseDelay <= 0 {
		c.RetryBaseDelay = DefaultRetryBaseDelay
	}
	if c.MaxRetryWait <= 0 {
		c.MaxRetryWait = DefaultMaxRetryWait
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Transport: http.DefaultTransport}
	}
	return c, nil
}
