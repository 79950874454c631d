package auth

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"go.yaml.in/yaml/v3"
)

// MinStaticTokenBytes is the shortest plain token a tokens file may hold.
const MinStaticTokenBytes = 16

// StaticTokens authenticates bearer tokens listed in a YAML file:
//
//	tokens:
//	  - name: engine-eu-1      # the principal (required, unique)
//	    tenant: acme           # default: the name
//	    user: ""               # optional: overrides the request's user_id
//	    workspace: ""          # optional: overrides the request's workspace_id
//	    sha256: 9f86d08…       # hex SHA-256 of the token, or
//	    # token: <the token itself>
//
// Reload re-reads the file; a broken file keeps the previous tokens.
type StaticTokens struct {
	path   string
	tokens atomic.Pointer[map[[sha256.Size]byte]Identity]
}

type tokenFile struct {
	Tokens []struct {
		Name      string `yaml:"name"`
		Tenant    string `yaml:"tenant"`
		User      string `yaml:"user"`
		Workspace string `yaml:"workspace"`
		Token     string `yaml:"token"`
		SHA256    string `yaml:"sha256"`
	} `yaml:"tokens"`
}

// LoadStaticTokens reads a tokens file.
func LoadStaticTokens(path string) (*StaticTokens, error) {
	s := &StaticTokens{path: path}
	if err := s.Reload(); err != nil {
		return nil, err
	}
	return s, nil
}

// Reload re-reads the file and swaps the tokens in atomically.
func (s *StaticTokens) Reload() error {
	src, err := os.ReadFile(s.path)
	if err != nil {
		return fmt.Errorf("tokens file: %w", err)
	}
	m, err := parseTokens(src)
	if err != nil {
		return fmt.Errorf("tokens file %s: %w", s.path, err)
	}
	s.tokens.Store(&m)
	return nil
}

// Len is the number of tokens loaded.
func (s *StaticTokens) Len() int { return len(*s.tokens.Load()) }

// Tenants lists the tenants named in the file.
func (s *StaticTokens) Tenants() []string {
	var out []string
	for _, id := range *s.tokens.Load() {
		out = append(out, id.Tenant)
	}
	return out
}

func parseTokens(src []byte) (map[[sha256.Size]byte]Identity, error) {
	var f tokenFile
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if len(f.Tokens) == 0 {
		return nil, errors.New("no tokens")
	}
	m := make(map[[sha256.Size]byte]Identity, len(f.Tokens))
	names := map[string]bool{}
	for i, t := range f.Tokens {
		where := fmt.Sprintf("token %d", i+1)
		if t.Name == "" {
			return nil, fmt.Errorf("%s: name is required", where)
		}
		where = fmt.Sprintf("token %q", t.Name)
		if names[t.Name] {
			return nil, fmt.Errorf("%s: name used twice", where)
		}
		names[t.Name] = true
		var sum [sha256.Size]byte
		switch {
		case t.Token != "" && t.SHA256 != "":
			return nil, fmt.Errorf("%s: give token or sha256, not both", where)
		case t.Token != "":
			if len(t.Token) < MinStaticTokenBytes {
				return nil, fmt.Errorf("%s: the token is %d bytes; at least %d are needed", where, len(t.Token), MinStaticTokenBytes)
			}
			sum = sha256.Sum256([]byte(t.Token))
		case t.SHA256 != "":
			b, err := hex.DecodeString(t.SHA256)
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("%s: sha256 is not 64 hex digits", where)
			}
			copy(sum[:], b)
		default:
			return nil, fmt.Errorf("%s: token or sha256 is required", where)
		}
		if _, dup := m[sum]; dup {
			return nil, fmt.Errorf("%s: the same token is listed twice", where)
		}
		tenant := t.Tenant
		if tenant == "" {
			tenant = t.Name
		}
		m[sum] = Identity{Method: ModeStatic, Subject: t.Name, Tenant: tenant, User: t.User, Workspace: t.Workspace}
	}
	return m, nil
}

// Mode implements Authenticator.
func (s *StaticTokens) Mode() string { return ModeStatic }

// Authenticate implements Authenticator. Tokens are looked up by their
// SHA-256: a lookup's timing can reveal at most how a hash of the caller's
// guess compares with a stored hash, which says nothing useful about any
// stored token, so no byte of a real token leaks through timing.
func (s *StaticTokens) Authenticate(c Credentials) (Identity, error) {
	tok, err := c.bearer()
	if err != nil {
		return Identity{}, err
	}
	if len(tok) > maxTokenBytes {
		return Identity{}, fail(ReasonMalformed, "token longer than %d bytes", maxTokenBytes)
	}
	id, ok := (*s.tokens.Load())[sha256.Sum256([]byte(tok))]
	if !ok {
		return Identity{}, fail(ReasonUnknownToken, "token is not in the tokens file")
	}
	return id, nil
}
