package mcpproxy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Pins remembers the hash of each tool's definition the first time a
// server offered it, so a later change (a "rug pull": a tool approved as
// harmless that rewrites its own description) is noticed. The file lives
// in the workspace's state directory, outside the workspace, where an
// agent or the MCP server cannot rewrite it. One file per server: clients
// start one proxy per server, and separate files keep them from
// overwriting each other's pins.
type Pins struct {
	path string
	mu   sync.Mutex
	data pinFile
}

type pinFile struct {
	Version int            `json:"version"`
	Server  string         `json:"server"`
	Tools   map[string]Pin `json:"tools"`
}

// Pin is one tool's pinned definition.
type Pin struct {
	SHA256    string    `json:"sha256"`
	FirstSeen time.Time `json:"first_seen"`
}

// OpenPins loads server's pins from dir (absent: no pins yet). A file
// that cannot be read or parsed is an error: starting without the pins
// would silently re-trust every tool.
func OpenPins(dir, server string) (*Pins, error) {
	if !safeServerName(server) {
		return nil, fmt.Errorf("server name %q: use letters, digits, '.', '_' and '-'", server)
	}
	p := &Pins{path: filepath.Join(dir, "mcp-pins", server+".json")}
	data, err := readPins(p.path, server)
	if err != nil {
		return nil, err
	}
	p.data = data
	return p, nil
}

func readPins(path, server string) (pinFile, error) {
	data := pinFile{Version: 1, Server: server, Tools: map[string]Pin{}}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return data, nil
	}
	if err != nil {
		return data, fmt.Errorf("tool pins: %w", err)
	}
	if err := json.Unmarshal(b, &data); err != nil {
		return data, fmt.Errorf("tool pins %s: not valid JSON (%v); fix or remove the file to pin every tool afresh", path, err)
	}
	if data.Version != 1 || data.Server != server {
		return data, fmt.Errorf("tool pins %s: version %d for server %q, want version 1 for %q", path, data.Version, data.Server, server)
	}
	if data.Tools == nil {
		data.Tools = map[string]Pin{}
	}
	return data, nil
}

func safeServerName(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Path is where the pins are kept.
func (p *Pins) Path() string { return p.path }

// pinStatus is what Check found.
type pinStatus int

const (
	pinNew      pinStatus = iota // first seen now, pinned
	pinSame                      // matches the pin
	pinChanged                   // differs from the pin
	pinRepinned                  // differed, and the new definition is pinned now
)

// Check compares a tool's definition hash with its pin: a new tool is
// pinned; a changed one is re-pinned only when repin is set.
func (p *Pins) Check(tool, hash string, repin bool) (pinStatus, Pin, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	tools := p.data.Tools
	old, ok := tools[tool]
	switch {
	case ok && old.SHA256 == hash:
		return pinSame, old, nil
	case ok && !repin:
		return pinChanged, old, nil
	}
	tools[tool] = Pin{SHA256: hash, FirstSeen: time.Now().UTC()}
	st := pinNew
	if ok {
		st = pinRepinned
	}
	return st, old, p.saveLocked()
}

// saveLocked writes the file atomically (temporary file and rename), so
// a crash never leaves half a pin file. Tools another proxy for the same
// server pinned meanwhile are kept.
func (p *Pins) saveLocked() error {
	if disk, err := readPins(p.path, p.data.Server); err == nil {
		for name, pin := range disk.Tools {
			if _, ok := p.data.Tools[name]; !ok {
				p.data.Tools[name] = pin
			}
		}
	}
	b, err := json.MarshalIndent(p.data, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p.path), 0o700); err != nil {
		return fmt.Errorf("tool pins: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p.path), ".mcp-pins-*")
	if err != nil {
		return fmt.Errorf("tool pins: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("tool pins: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("tool pins: %w", err)
	}
	if err := os.Rename(tmp.Name(), p.path); err != nil {
		return fmt.Errorf("tool pins: %w", err)
	}
	return nil
}

// toolHash hashes a tool's definition: its JSON re-encoded with sorted
// keys, so formatting and key order do not count as a change.
func toolHash(def map[string]any) string {
	b, _ := json.Marshal(def) // maps marshal with sorted keys
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
