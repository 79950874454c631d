package tools

import (
	"context"
	"fmt"
	"slices"
)

// Shared argument descriptions.
const (
	descPath    = "Path relative to the workspace root (an absolute path must lie inside the workspace)."
	descDirPath = "Directory relative to the workspace root; defaults to the workspace root."
)

// httpMethods lists the methods http_request accepts.
var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

const (
	defaultReadLines = 2000
	maxGitLogCount   = 500
)

// register builds every tool. Descriptions carry the configured limits so
// the model knows them before it runs into them.
func (r *Registry) register() {
	o := r.opts
	r.tools = map[string]*tool{}
	add := func(name, group, desc string, write bool, props []prop, run func(context.Context, args) Result) {
		r.tools[name] = &tool{
			def:   Def{Name: name, Description: desc, Group: group, Schema: schemaJSON(props)},
			props: props,
			write: write,
			run:   run,
		}
		r.order = append(r.order, name)
	}

	// files
	add("read_file", "files",
		fmt.Sprintf("Read a text file from the workspace. Returns the lines from offset (1-based, default 1), at most limit lines (default %d) and at most %d bytes; a marker tells how to continue when more remains.", defaultReadLines, o.OutputLimit),
		false, []prop{
			{name: "path", kind: kString, desc: descPath, required: true, nonEmpty: true},
			{name: "offset", kind: kInteger, desc: "First line to return, 1-based.", min: 1, hasMin: true},
			{name: "limit", kind: kInteger, desc: "Maximum number of lines to return.", min: 1, hasMin: true},
		}, r.readFile)
	add("write_file", "files",
		fmt.Sprintf("Create or overwrite a file in the workspace with the given content (at most %d bytes). Missing parent directories are created. Files inside .git cannot be written.", o.MaxFileBytes),
		true, []prop{
			{name: "path", kind: kString, desc: descPath, required: true, nonEmpty: true},
			{name: "content", kind: kString, desc: "The complete new content of the file.", required: true, allowNUL: true},
		}, r.writeFile)
	add("edit_file", "files",
		"Replace an exact string in a file. old_string must occur exactly once unless replace_all is true; include surrounding lines to make it unique. Whitespace and indentation must match exactly.",
		true, []prop{
			{name: "path", kind: kString, desc: descPath, required: true, nonEmpty: true},
			{name: "old_string", kind: kString, desc: "The exact text to replace.", required: true, nonEmpty: true, allowNUL: true},
			{name: "new_string", kind: kString, desc: "The replacement text.", required: true, allowNUL: true},
			{name: "replace_all", kind: kBoolean, desc: "Replace every occurrence instead of exactly one."},
		}, r.editFile)
	add("list_directory", "files",
		fmt.Sprintf("List a directory of the workspace: directories end in '/', symbolic links show their target, files their size. recursive lists the whole tree (without descending into .git), at most %d entries.", o.MaxEntries),
		false, []prop{
			{name: "path", kind: kString, desc: descDirPath},
			{name: "recursive", kind: kBoolean, desc: "List subdirectories too."},
		}, r.listDirectory)
	add("glob_files", "files",
		fmt.Sprintf("Find files whose path matches a glob pattern such as '**/*.go' or 'src/*.{ts,tsx}' ('**' spans directories). Returns workspace-relative paths, at most %d; .git is skipped unless the pattern names it.", o.MaxEntries),
		false, []prop{
			{name: "pattern", kind: kString, desc: "Glob pattern relative to path.", required: true, nonEmpty: true},
			{name: "path", kind: kString, desc: descDirPath},
		}, r.globFiles)
	add("search_files", "files",
		fmt.Sprintf("Search file contents with a regular expression (RE2 syntax; (?i) for case-insensitive). Returns 'path:line: text' for each matching line, at most max_results (default and maximum %d). Binary files, files over %d bytes and .git are skipped.", o.MaxMatches, o.MaxFileBytes),
		false, []prop{
			{name: "pattern", kind: kString, desc: "RE2 regular expression matched against each line.", required: true, nonEmpty: true},
			{name: "path", kind: kString, desc: "File or directory to search, relative to the workspace root; defaults to the workspace root."},
			{name: "include", kind: kString, desc: "Only search files matching this glob, e.g. '*.go' (matched against the file name) or 'src/**/*.ts' (matched against the path below path)."},
			{name: "max_results", kind: kInteger, desc: "Maximum number of matching lines to return.", min: 1, hasMin: true, max: int64(o.MaxMatches), hasMax: true},
		}, r.searchFiles)

	// shell
	add("execute_command", "shell",
		fmt.Sprintf("Run a shell command with /bin/sh -c in the workspace root. stdin is empty; stdout and stderr are returned together (at most %d bytes, the start and end kept) with the exit code. Default timeout %d seconds, at most %d; on timeout the command and every process it started are killed. Background processes do not outlive the command. Secrets are removed from the environment.", o.OutputLimit, int(o.CommandTimeout.Seconds()), int(o.MaxCommandTimeout.Seconds())),
		true, []prop{
			{name: "command", kind: kString, desc: "The shell command line.", required: true, nonEmpty: true},
			{name: "timeout_seconds", kind: kInteger, desc: fmt.Sprintf("Timeout in seconds; values above %d are capped.", int(o.MaxCommandTimeout.Seconds())), min: 1, hasMin: true},
		}, r.executeCommand)

	// git
	add("git_status", "git", "Show the working tree status of the workspace's git repository (short format with branch).",
		false, nil, r.gitStatus)
	add("git_diff", "git", "Show unstaged changes, or staged changes with staged=true, optionally limited to one path.",
		false, []prop{
			{name: "staged", kind: kBoolean, desc: "Show changes staged for the next commit instead of unstaged ones."},
			{name: "path", kind: kString, desc: "Limit the diff to this file or directory (relative to the workspace root)."},
		}, r.gitDiff)
	add("git_log", "git", "Show recent commits: abbreviated hash, date, author and subject.",
		false, []prop{
			{name: "max_count", kind: kInteger, desc: fmt.Sprintf("Number of commits to show (default 20, at most %d).", maxGitLogCount), min: 1, hasMin: true, max: maxGitLogCount, hasMax: true},
		}, r.gitLog)
	add("git_add", "git", "Stage files for the next commit ('.' stages everything).",
		true, []prop{
			{name: "paths", kind: kStringArray, desc: "Files or directories to stage, relative to the workspace root.", required: true, nonEmpty: true},
		}, r.gitAdd)
	add("git_commit", "git", "Commit the staged changes with a message. Hooks are not run and commits are not signed.",
		true, []prop{
			{name: "message", kind: kString, desc: "The commit message; must not be empty.", required: true, nonEmpty: true},
		}, r.gitCommit)

	// http
	add("http_request", "http",
		fmt.Sprintf("Send an HTTP or HTTPS request and return the status, response headers and body (body at most %d bytes read, output at most %d). Redirects are followed only within the same scheme, host and port (at most %d); a redirect elsewhere is returned, not followed. No credentials are added: send what the request needs in headers.", o.HTTPMaxBytes, o.OutputLimit, o.HTTPMaxRedirects),
		true, []prop{
			{name: "method", kind: kString, desc: "HTTP method.", required: true, enum: httpMethods, upper: true},
			{name: "url", kind: kString, desc: "Absolute http:// or https:// URL.", required: true, nonEmpty: true},
			{name: "headers", kind: kStringMap, desc: "Request headers (name to value)."},
			{name: "body", kind: kString, desc: fmt.Sprintf("Request body (at most %d bytes).", o.HTTPMaxRequestBytes), allowNUL: true},
		}, r.httpRequest)

	// agents: answered by the engine (it starts the process), judged by the
	// shield like any action. Sub-agents get tools from the groups above
	// only: never spawn_agent, so they cannot spawn further.
	subAgentTools := slices.Clone(r.order)
	add(SpawnAgentName, "agents",
		"Start a sub-agent: a separate sandboxed agent that works on one task with the tools you give it and returns its final answer as this tool's result. Its tool calls are checked by the same security gate. Use it to delegate a self-contained piece of work.",
		false, []prop{
			{name: "name", kind: kString, desc: "Short name for the sub-agent: lower-case letters, digits, '-' or '_', at most 32 characters, starting with a letter.", required: true, nonEmpty: true},
			{name: "task", kind: kString, desc: "What the sub-agent should do, with everything it needs to know: it does not see this conversation.", required: true, nonEmpty: true},
			{name: "tools", kind: kStringArray, desc: "Tools the sub-agent may use (default: all of them).", enum: subAgentTools},
		}, nil)

	// memory: only with Options.Memory; after spawn_agent, so sub-agents
	// are not given them.
	r.registerMemory(add)

	// meta: answered by the engine; registered here for its definition and validation.
	add(LoadToolsName, "",
		"Load more tools by group: files (read, write, edit, list, glob, search), shell (execute_command), git (status, diff, log, add, commit), http (http_request), agents (spawn_agent: delegate a task to a sandboxed sub-agent), memory (memory_write, memory_read, memory_list: long-term notes). Their definitions become available for the following turns.",
		false, []prop{
			{name: "groups", kind: kStringArray, desc: "Tool groups to load.", required: true, nonEmpty: true, enum: r.Groups()},
		}, nil)
}
