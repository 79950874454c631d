package action

import (
	"strings"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// knownTypes holds the canonical action types: the ActionType enum's names
// without prefix, lower case ("ACTION_TYPE_READ_FILE" → "read_file").
var knownTypes = func() map[string]pb.ActionType {
	m := make(map[string]pb.ActionType, len(pb.ActionType_name))
	for num, name := range pb.ActionType_name {
		if num == 0 {
			continue
		}
		m[strings.ToLower(strings.TrimPrefix(name, "ACTION_TYPE_"))] = pb.ActionType(num)
	}
	return m
}()

// aliases maps tool names agents commonly use to canonical action types.
var aliases = map[string]string{
	// shell
	"bash": "execute_command", "sh": "execute_command", "shell": "execute_command",
	"shell_command": "execute_command", "run_command": "execute_command",
	"run_shell_command": "execute_command", "exec": "execute_command",
	"exec_command": "execute_command", "terminal": "execute_command",
	"run_terminal_cmd": "execute_command", "command": "execute_command",
	"execute": "execute_command", "run": "execute_command", "zsh": "execute_command",
	// files
	"read": "read_file", "view": "read_file", "view_file": "read_file",
	"open_file": "read_file", "file_read": "read_file", "cat": "read_file",
	"write": "write_file", "create_file": "write_file", "file_write": "write_file",
	"save_file": "write_file", "put_file": "write_file",
	"edit": "edit_file", "str_replace": "edit_file", "str_replace_editor": "edit_file",
	"replace_in_file": "edit_file", "multi_edit": "edit_file", "apply_patch": "edit_file",
	"delete": "delete_file", "remove_file": "delete_file", "rm": "delete_file",
	"move": "move_file", "rename_file": "move_file", "mv": "move_file",
	"copy": "copy_file", "cp": "copy_file",
	"ls": "list_directory", "list_dir": "list_directory", "list_files": "list_directory",
	"grep": "search_files", "search": "search_files", "file_search": "search_files",
	"glob": "glob_files", "find_files": "glob_files",
	"mkdir": "create_directory", "make_directory": "create_directory",
	// network
	"http": "http_request", "fetch": "http_request", "http_get": "http_request",
	"http_post": "http_request", "curl": "http_request", "request": "http_request",
	"webfetch": "web_fetch", "fetch_url": "web_fetch", "url_fetch": "web_fetch",
	"websearch": "web_search", "navigate": "browser_navigate",
	// messaging
	"email": "send_email", "send_mail": "send_email", "gmail_send": "send_email",
	"mail": "send_email", "send_slack_message": "send_message", "post_message": "send_message",
	// agents and memory
	"task": "spawn_agent", "sub_agent": "spawn_agent", "remember": "memory_write",
	"recall": "memory_read", "memory_list": "memory_search", // a listing is a search without a query
}

var typeSeparators = strings.NewReplacer("-", "_", " ", "_", ".", "_")

// isCanonicalName reports whether s is already lower-case snake case, the
// common case, which needs no rewriting.
func isCanonicalName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return s != ""
}

// ResolveType normalises a type or tool name and resolves aliases. It
// returns the canonical name and whether it is a known action type.
func ResolveType(raw string) (string, bool) {
	r := resolveType(raw)
	return r.canonical, r.known
}

// resolveType is ResolveType with what collectByType derives for the type.
func resolveType(raw string) resolvedType {
	t := raw
	if !isCanonicalName(t) {
		t = typeSeparators.Replace(strings.ToLower(strings.TrimSpace(raw)))
	}
	if r, ok := resolvedTypes[t]; ok {
		return r
	}
	return resolvedType{t, false, derivationOf(t)}
}

// resolvedTypes answers ResolveType for every alias and known type with
// one lookup.
var resolvedTypes = func() map[string]resolvedType {
	m := make(map[string]resolvedType, len(knownTypes)+len(aliases))
	for t := range knownTypes {
		m[t] = resolvedType{t, true, derivationOf(t)}
	}
	for alias, t := range aliases { // an alias wins over a type of its name
		_, known := knownTypes[t]
		m[alias] = resolvedType{t, known, derivationOf(t)}
	}
	return m
}()

type resolvedType struct {
	canonical string
	known     bool
	// derive is derivationOf(canonical), worked out once per type
	// instead of once per decision.
	derive derivation
}

// KnownTypes lists the canonical action type names.
func KnownTypes() []string {
	out := make([]string, 0, len(knownTypes))
	for t := range knownTypes {
		out = append(out, t)
	}
	return out
}
