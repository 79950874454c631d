package heuristics

import "strings"

// Patches. git apply and patch take a unified diff on their input, which
// a line can carry in a here-document: the same edit as sed's, written as
// hunks. Each file's added lines are judged as code written into it, and
// each hunk as a substitution of its removed lines by its added ones.

// filePatch is what a diff does to one file.
type filePatch struct {
	path  string
	added string      // the added lines, joined
	hunks [][2]string // per hunk: the removed lines and the added lines
}

// unifiedDiff reads the files of a unified diff. A path's a/ or b/
// prefix (git's) is dropped; a deleted file (+++ /dev/null) keeps its old
// name.
func unifiedDiff(text string) []filePatch {
	var out []filePatch
	var cur *filePatch
	var removed, added, all strings.Builder
	flush := func() {
		if cur != nil && (removed.Len() > 0 || added.Len() > 0) {
			cur.hunks = append(cur.hunks, [2]string{removed.String(), added.String()})
		}
		removed.Reset()
		added.Reset()
	}
	finish := func() {
		flush()
		if cur != nil {
			cur.added = all.String()
			out = append(out, *cur)
		}
		all.Reset()
		cur = nil
	}
	oldName := ""
	for line := range strings.SplitSeq(text, "\n") {
		switch {
		case strings.HasPrefix(line, "--- "):
			finish()
			oldName = diffPath(line[4:])
		case strings.HasPrefix(line, "+++ "):
			name := diffPath(line[4:])
			if name == "/dev/null" {
				name = oldName
			}
			cur = &filePatch{path: name}
		case cur == nil:
		case strings.HasPrefix(line, "@@"):
			flush()
		case strings.HasPrefix(line, "+"):
			added.WriteString(line[1:] + "\n")
			all.WriteString(line[1:] + "\n")
		case strings.HasPrefix(line, "-"):
			removed.WriteString(line[1:] + "\n")
		default: // context: ends a run of changes
			if removed.Len() > 0 || added.Len() > 0 {
				flush()
			}
		}
	}
	finish()
	return out
}

// diffPath is the path of a ---/+++ line: a/ or b/ dropped, a timestamp
// after a tab dropped.
func diffPath(s string) string {
	s, _, _ = strings.Cut(s, "\t")
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/") {
		return s[2:]
	}
	return s
}

// patchText returns the diff v applies when the line shows it: git
// apply or patch reading a here-document or a pipe from echo / cat.
func (cs *cmdScan) patchText(v *cmdView) (string, bool) {
	switch v.prog {
	case "patch":
	case "git":
		if !containsArg(v.args, "apply") && !containsArg(v.args, "am") {
			return "", false
		}
		if sub, rest := gitSubcommand(v.args); sub != "apply" && sub != "am" || len(operands(rest, "", nil)) > 0 {
			return "", false
		}
	default:
		return "", false
	}
	if v.prog == "patch" && hasShortFlag(v.args, 'i') {
		return "", false
	}
	return cs.stdinText(v)
}

// checkPatchEdits judges a patch's hunks as substitutions, as
// checkWeakeningEdits judges sed's.
func (s *scan) checkPatchEdits(v *cmdView, patches []filePatch) {
	if !s.enabled(rDefWeakeningEdit) {
		return
	}
	for _, p := range patches {
		what := judgeEdits([]string{p.path}, p.hunks, "")
		if what != "" {
			s.add(rDefWeakeningEdit, v.prog+" applies a patch that "+what+" ("+p.path+"): a protection leaves the code without a word about it; make the change by hand, in review",
				v.prog+" "+evJoin(v.args))
			return
		}
	}
}

// Web shells. Code that starts a process from what a request carries
// (exec.Command("sh", "-c", r.URL.Query().Get("q")), os.system(
// request.args["c"]), shell_exec($_GET['x'])) hands a shell to whoever
// can reach the service. The request's value is looked for in the call's
// line or the two before it, where it is usually read.

// processStarts mark a call that starts a process.
var processStarts = []string{"exec.command(", "os.system(", "subprocess.", "popen(", "child_process", "execsync(", "spawn(",
	"shell_exec(", "passthru(", "proc_open(", "getruntime().exec(", "processbuilder(", "open3.", "system(", "%x(", "os.exec",
	// Code run in the process itself: eval of what the request carries.
	"eval(", "new function(", "vm.runinthiscontext(", "vm.runinnewcontext(", "`#{"}

// requestInputs mark a value read from an HTTP request.
var requestInputs = []string{"request.args", "request.form", "request.values", "request.get_json", "request.json", "request.data",
	"request.get.get(", "request.post.get(", "request.query_params", "req.query", "req.body", "req.params", "r.url.query()",
	"r.formvalue(", "r.postformvalue(", "$_get", "$_post", "$_request", "$_cookie", "$_server['http_", "getparameter(",
	"c.query(", "c.param(", "ctx.query", "ctx.request", "params[:", "params.get(", "request.headers", "r.header.get(", "req.header(",
	"req.headers", "params[\""}

// checkRequestCommand reports code of a source kind that starts a
// process from a request's value.
func (s *scan) checkRequestCommand(kind, content, what string) {
	switch kind {
	case "python", "js", "go", "php", "ruby", "java", "perl":
	default:
		return
	}
	if !s.enabled(rNetExposedShell) {
		return
	}
	marks := s.codeMarks(content)
	if marks&webProcess == 0 || marks&webRequest == 0 && (kind != "python" || !strings.Contains(content, "def ")) {
		return
	}
	lines := strings.Split(content, "\n")
	for i, line := range lines {
		if writtenCodeMarkers.scanBits(line, webProcess)&webProcess == 0 {
			continue
		}
		fromRequest := kind == "python" && handlerArgumentRun(lines, i)
		for j := max(0, i-2); j <= i && !fromRequest; j++ {
			fromRequest = writtenCodeMarkers.scanBits(lines[j], webRequest)&webRequest != 0
		}
		if fromRequest {
			s.add(rNetExposedShell, what+": its code runs a command taken from an HTTP request ("+strings.TrimSpace(line)+"), a web shell for whoever reaches the service; refuse it",
				strings.TrimSpace(line))
			return
		}
	}
}

// routeDecorators mark a Python function that serves an HTTP route
// (FastAPI, Flask, Django REST framework).
var routeDecorators = []string{"@app.", "@router.", "@bp.", "@blueprint.", ".route(", "@api_view", "@get(", "@post("}

// handlerArgumentRun reports a process started on line i of a Python
// route handler with one of the handler's parameters, which the
// framework fills from the request (def run(cmd: str) under @app.get).
func handlerArgumentRun(lines []string, i int) bool {
	for j := i; j >= max(0, i-8); j-- {
		def := strings.TrimSpace(lines[j])
		def = strings.TrimPrefix(def, "async ")
		if !strings.HasPrefix(def, "def ") {
			continue
		}
		routed := false
		for k := j - 1; k >= max(0, j-3) && !routed; k-- {
			routed = containsAnyOf(strings.ToLower(lines[k]), routeDecorators)
		}
		open, end := strings.IndexByte(def, '('), strings.LastIndexByte(def, ')')
		if !routed || open < 0 || end < open {
			return false
		}
		for _, param := range strings.Split(def[open+1:end], ",") {
			name := strings.TrimSpace(param)
			if k := strings.IndexAny(name, ":="); k >= 0 {
				name = strings.TrimSpace(name[:k])
			}
			if name != "" && name != "self" && name != "request" && hasIdentifier(lines[i], name) {
				return true
			}
		}
		return false
	}
	return false
}

// hasIdentifier reports name in code as a whole identifier: "cmd" in
// "run(cmd.split())" but not in "cmdline" (containsWord's words take
// "." and "-" too).
func hasIdentifier(code, name string) bool { return containsWordIn(code, name, &identifierBytes) }
