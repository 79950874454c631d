package heuristics

import (
	"strings"

	"github.com/parapet-dev/parapet/rules/shell"
)

// Scripts written for later: a shell script, git hook or package
// lifecycle script is code that runs as soon as someone (or some tool)
// invokes it, so its commands are judged now as if they ran.

// maxNested bounds judging shell text found inside shell text.
const maxNested = 2

// judgeShell parses text as a command line and runs the command rules on
// it with their default outcomes. It returns the first BLOCK finding.
func (s *scan) judgeShell(text string) (Finding, bool) {
	if s.nested >= maxNested || !looksLikeShell(text) {
		return Finding{}, false
	}
	for _, f := range s.nestedFindings(text, nil) {
		if f.Outcome == block {
			return f, true
		}
	}
	return Finding{}, false
}

// nestedFindings judges src as a script found inside the action (code
// written for later, a container's command, decoded text) with the
// command rules and their default outcomes, and returns what they found.
// more, when not nil, runs further checks on the parsed script.
func (s *scan) nestedFindings(src string, more func(inner *scan, cs *cmdScan)) []Finding {
	inner := scan{an: s.an, act: s.act, collectOnly: true, nested: s.nested + 1, ctx: s.ctx}
	sc := shell.Parse(src)
	buf := getViews()
	cs := newCmdScan(sc, s.act, buf)
	inner.commandRules(&cs, src)
	if more != nil {
		more(&inner, &cs)
	}
	putViews(buf)
	sc.Release()
	return inner.findings
}

// writtenContents calls fn with each file content the action's file tool
// writes (its top-level content fields, as given), until fn returns false.
func (s *scan) writtenContents(fn func(content string) bool) {
	for i := range s.act.Strings {
		str := &s.act.Strings[i]
		top, _, _ := strings.Cut(str.Field, ".")
		if str.Layer != 0 || !contentFields[top] {
			continue
		}
		if !fn(str.Value) {
			return
		}
	}
}

// contentFields are the arguments of file tools that hold file contents.
var contentFields = map[string]bool{
	"content": true, "contents": true, "new_string": true, "new_str": true, "text": true, "patch": true,
	"diff": true, "input": true, "code": true, "file_text": true, "insert_text": true, "data": true,
}

// isScriptFile reports whether a file is run as shell: a shell script, a
// git hook, a husky hook, or any file starting with a shell #! line.
func isScriptFile(path, content string) bool {
	base := baseName(path)
	switch {
	case strings.HasSuffix(base, ".sh"), strings.HasSuffix(base, ".bash"), strings.HasSuffix(base, ".zsh"),
		strings.HasSuffix(base, ".ksh"), strings.HasSuffix(base, ".command"), base == ".envrc":
		return true
	case strings.Contains(path, ".git/hooks/"), strings.Contains(path, ".husky/"), namedGitHook(path):
		return true
	}
	if strings.HasPrefix(content, "#!") {
		line, _, _ := strings.Cut(content, "\n")
		for _, sh := range []string{"sh", "bash", "zsh", "dash", "ksh"} {
			if strings.HasSuffix(line, "/"+sh) || strings.Contains(line, "/"+sh+" ") || strings.HasSuffix(line, "env "+sh) {
				return true
			}
		}
	}
	return false
}

// npmLifecycle are package.json scripts npm runs by itself on install.
var npmLifecycle = []string{"preinstall", "install", "postinstall", "prepare", "prepublish", "preprepare", "postprepare", "prepack", "postpack", "preuninstall", "postuninstall"}

// checkScriptWrites judges file contents written by write_file / edit_file
// that will run as shell later.
func (s *scan) checkScriptWrites() {
	if !s.enabled(rRCEScriptWrite) {
		return
	}
	switch s.act.Type {
	case "write_file", "edit_file":
	default:
		return
	}
	target := ""
	for i := range s.act.Paths {
		if s.act.Paths[i].Access == actionWrite {
			target = s.act.Paths[i].Abs
			break
		}
	}
	if target == "" {
		return
	}
	isPackage := baseName(target) == "package.json"
	for i := range s.act.Strings {
		str := &s.act.Strings[i]
		top, _, _ := strings.Cut(str.Field, ".")
		if str.Layer != 0 || !contentFields[top] {
			continue
		}
		if isPackage {
			for _, name := range npmLifecycle {
				if script, ok := jsonStringValue(str.Value, name); ok {
					if f, bad := s.judgeShell(script); bad {
						s.add(rRCEScriptWrite, "adds an npm \""+name+"\" script that runs on install and "+f.Message, script)
						return
					}
				}
			}
			continue
		}
		if !isScriptFile(target, str.Value) {
			continue
		}
		if f, bad := s.judgeShell(str.Value); bad {
			s.add(rRCEScriptWrite, "writes "+baseName(target)+", a script whose commands would be refused if run now ("+f.Message+")", f.Evidence)
			return
		}
	}
}

// jsonStringValue finds "key": "value" in JSON-ish text (also a fragment
// being edited in) and returns the value with \" and \\ unescaped.
func jsonStringValue(text, key string) (string, bool) {
	for off := 0; ; {
		i := strings.Index(text[off:], `"`+key+`"`)
		if i < 0 {
			return "", false
		}
		j := off + i + len(key) + 2
		off = j
		rest := strings.TrimLeft(text[j:], " \t\r\n")
		if !strings.HasPrefix(rest, ":") {
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t\r\n")
		if !strings.HasPrefix(rest, `"`) {
			continue
		}
		var b strings.Builder
		for k := 1; k < len(rest); k++ {
			c := rest[k]
			switch {
			case c == '\\' && k+1 < len(rest):
				k++
				b.WriteByte(rest[k])
			case c == '"':
				return b.String(), true
			default:
				b.WriteByte(c)
			}
		}
		return "", false
	}
}

// checkPackageScriptCommands judges "npm pkg set scripts.x=…" and
// "npm set-script x …", which plant a script the next install runs.
func (s *scan) checkPackageScriptCommands(cs *cmdScan) {
	if !s.enabled(rRCEScriptWrite) {
		return
	}
	for i := range cs.views {
		v := &cs.views[i]
		if v.prog == "composer" {
			// composer config scripts.post-autoload-dump "CMD"
			ops := v.plainOperands()
			if len(ops) >= 3 && ops[0] == "config" && strings.HasPrefix(ops[1], "scripts.") {
				if f, bad := s.judgeShell(strings.Join(ops[2:], " ")); bad {
					s.add(rRCEScriptWrite, "sets a composer script ("+ops[1]+") that "+f.Message, v.prog+" "+evJoin(v.args))
					return
				}
			}
			continue
		}
		if v.prog != "npm" && v.prog != "pnpm" && v.prog != "yarn" {
			continue
		}
		for _, a := range v.args {
			if !strings.HasPrefix(a, "scripts.") {
				continue
			}
			_, script, ok := strings.Cut(a, "=")
			if !ok {
				continue
			}
			if f, bad := s.judgeShell(script); bad {
				s.add(rRCEScriptWrite, "sets a package script that "+f.Message, a)
				return
			}
		}
	}
}
