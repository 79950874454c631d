// Package action validates and canonicalises a proposed tool call into the
// form every Shield tier reads: a known (or alias-resolved) action type, its
// decoded arguments, the filesystem paths, commands and URLs it touches, every
// string it carries (normalised, plus decoded encoding layers), the evasion
// tricks seen on the way, and a canonical SHA-256 action hash.
//
// Canonicalisation is the first tier of fail-closed: anything it cannot read
// is an error, and an error means the action is not allowed.
package action

import (
	"github.com/parapet-dev/parapet/rules/shell"
)

// Caller says who proposes the action and where it would run. Paths resolve
// against WorkspaceRoot and Home as the caller states them, never against the
// server's own filesystem.
type Caller struct {
	Tenant        string
	WorkspaceID   string
	EngineID      string
	UserID        string
	SessionID     string
	AgentName     string
	WorkspaceRoot string
	Home          string
}

// Request is a proposed action as a caller sends it.
type Request struct {
	// Type is the action type or tool name, e.g. "execute_command" or "bash".
	Type string
	// Payload is the JSON object of arguments; empty means {}.
	Payload []byte
	Caller  Caller
	// Attachments are files the action will use, as the caller read them
	// just before asking (the engine attaches the scripts a command runs).
	Attachments []Attachment
}

// Attachment is the content of a file an action will use.
type Attachment struct {
	// Path names the file as the command does (relative to the workspace,
	// or absolute).
	Path    string
	Content string
	// Unreadable: the caller could not read the file (missing, not a
	// regular file, too large, outside the workspace): its content is
	// unknown.
	Unreadable bool
}

// Access says what an action does to a path.
type Access uint8

const (
	AccessUnknown Access = iota // named by a command argument; use unknown
	AccessRead
	AccessWrite
	AccessDelete
	AccessExec
)

func (a Access) String() string {
	switch a {
	case AccessRead:
		return "read"
	case AccessWrite:
		return "write"
	case AccessDelete:
		return "delete"
	case AccessExec:
		return "exec"
	}
	return "unknown"
}

// Path is one filesystem path an action touches.
type Path struct {
	// Raw is the path as written.
	Raw string
	// Abs is the cleaned absolute path. When the caller gave no workspace
	// root, a relative path stays relative (cleaned); when it gave no home,
	// "~/x" stays "~/x".
	Abs string
	// Rel is the cleaned workspace-relative path ("." for the root), or ""
	// when the path is outside the workspace or the workspace is unknown.
	Rel string
	// InWorkspace is true when the path is the workspace root or below it.
	InWorkspace bool
	// Field names where the path came from: an argument key such as "path",
	// or "command" for a command argument or redirection.
	Field  string
	Access Access
}

// URL is one URL an action would contact.
type URL struct {
	Raw    string
	Scheme string // lower case
	Host   string // lower case, no port, IDNA not applied
	Port   string
	Path   string
	// Method is the HTTP method, upper case; "" when unknown.
	Method string
	Field  string
}

// String is one string value carried by the action.
type String struct {
	// Field is the dotted argument path, e.g. "body" or "headers.Authorization".
	Field string
	// Value is the normalised text: NFKC, zero-width, bidi and control
	// characters removed. Raw is the text as sent.
	Value string
	Raw   string
	// Layer is 0 for the value as sent; 1+ for a decoded encoding layer.
	Layer int
	// Encoding names the decoding that produced a layer: "url", "base64", "hex".
	Encoding string
}

// Evasion is an obfuscation found while canonicalising.
type Evasion struct {
	// Kind: "zero-width", "bidi", "tag", "control", "homoglyph", "fullwidth",
	// "encoded-path", or a shell.Evasion kind.
	Kind     string
	Field    string
	Evidence string
}

// Action is a canonical action.
type Action struct {
	// Type is the canonical action type, e.g. "execute_command".
	Type string
	// RawType is the type as sent.
	RawType string
	// Known is false when Type is not a recognised action type.
	Known bool
	// Args are the decoded JSON arguments. Values are Object, []any,
	// string, Number, bool or nil.
	Args   Object
	Caller Caller
	// Command is the shell command line for command actions (normalised).
	Command string
	// Script is the parsed Command, nil for other actions.
	Script *shell.Script
	Paths  []Path
	URLs   []URL
	// Strings holds every string argument and its decoded layers.
	Strings  []String
	Evasions []Evasion
	// CanonicalJSON is the RFC 8785 form of the arguments.
	CanonicalJSON []byte
	// Hash is the canonical action hash (see Hash in hash.go).
	Hash [32]byte
	// Attachments are the request's attachments, as sent.
	Attachments []Attachment

	// mem holds the strings canonicalisation derived (see arena).
	mem arena
	// Room for the first strings, paths and URL, so that a typical action
	// needs no allocation of its own for them.
	argRoom    [4]Member
	stringRoom [2]String
	pathRoom   [4]Path
	urlRoom    [1]URL
}

// Number is a JSON number kept as its literal text.
type Number string
