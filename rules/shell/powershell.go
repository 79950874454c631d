package shell

import (
	"encoding/base64"
	"path"
	"strings"
	"unicode/utf16"
)

// PowerShell (pwsh -c CODE, pwsh -Command CODE, powershell …) is a shell
// of its own, and on Linux it runs the same programs bash does. Its code
// is read here into the POSIX commands it amounts to, which are then
// parsed as nested scripts, so that every command rule judges them:
//
//	Remove-Item -Recurse -Force ~/x       rm -r -f ~/x
//	iwr URL -OutFile F; Start-Process F    curl -s -o F URL; F
//	iex (irm URL)                          curl -s URL | sh
//	gc ~/.aws/credentials | irm -Method Post -Uri U    cat … | curl -X POST --data-binary @- U
//	Add-Content ~/.ssh/authorized_keys "ssh-ed25519 …"  printf '%s\n' '…' >> ~/.ssh/authorized_keys
//
// Cmdlets are matched by name or alias, case-insensitively, their
// parameters by any unambiguous prefix (-fo is -Force), as PowerShell
// matches them. Backticks in bare words are dropped (I`nv`oke-Ex`pression),
// literal strings joined with + or -f are folded, and variables assigned
// a literal, an environment variable or a command are followed. A
// command whose name is computed and cannot be folded, or code run from
// a value that is neither literal nor downloaded, is reported as opaque:
// it cannot be judged.

// powershellCode returns the code pwsh runs from its arguments: the
// words after -Command (PowerShell joins them), the text of
// -EncodedCommand (base64 of UTF-16LE), or a here-document or
// here-string for -Command - or no arguments at all.
func powershellCode(args []field, redirs []Redirect) (string, bool) {
	for i := 0; i < len(args); i++ {
		name, val, glued := strings.Cut(strings.ToLower(args[i].text), ":")
		if len(name) < 2 || name[0] != '-' {
			if name != "" && name[0] != '-' {
				return "", false // a script file, which runs as -File
			}
			continue
		}
		opt := name[1:]
		switch {
		case strings.HasPrefix("command", opt):
			if glued {
				return val, true
			}
			if i+1 >= len(args) || args[i+1].text == "-" {
				return stdinProgram(nil, redirs)
			}
			return strings.Join(texts(args[i+1:]), " "), true
		case strings.HasPrefix("encodedcommand", opt) || opt == "ec":
			if i+1 < len(args) {
				return decodeUTF16Base64(args[i+1].text)
			}
			return "", false
		case strings.HasPrefix("file", opt):
			return "", false
		case strings.HasPrefix("executionpolicy", opt) && len(opt) >= 2, strings.HasPrefix("workingdirectory", opt) && len(opt) >= 2,
			strings.HasPrefix("configurationname", opt) && len(opt) >= 2, strings.HasPrefix("outputformat", opt) && len(opt) >= 2,
			strings.HasPrefix("inputformat", opt) && len(opt) >= 2, strings.HasPrefix("windowstyle", opt) && len(opt) >= 2,
			strings.HasPrefix("settingsfile", opt) && len(opt) >= 2:
			if !glued {
				i++ // its value
			}
		}
	}
	return stdinProgram(nil, redirs)
}

// PowershellScript returns the script file pwsh's arguments run: the
// value of -File (-f), or a .ps1 named first.
func PowershellScript(args []string) (string, bool) {
	for i, a := range args {
		l := strings.ToLower(a)
		switch {
		case (l == "-file" || l == "-f") && i+1 < len(args):
			return args[i+1], true
		case i == 0 && strings.HasSuffix(l, ".ps1"):
			return a, true
		}
	}
	return "", false
}

// decodeUTF16Base64 decodes -EncodedCommand's text.
func decodeUTF16Base64(s string) (string, bool) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(raw)%2 != 0 {
		return "", false
	}
	u := make([]uint16, len(raw)/2)
	for i := range u {
		u[i] = uint16(raw[2*i]) | uint16(raw[2*i+1])<<8
	}
	return string(utf16.Decode(u)), true
}

// PowershellCommands returns the POSIX commands PowerShell code (a .ps1
// script) runs, and what of it could not be followed ("" when all was).
func PowershellCommands(code string) (cmds []string, opaque string) { return powershellCommands(code) }

// maxPSDepth bounds script blocks and groups nested in one another.
const maxPSDepth = 8

// powershellCommands returns the POSIX commands PowerShell code runs, and
// a description of what could not be followed ("" when everything was).
func powershellCommands(code string) (cmds []string, opaque string) {
	t := psTranslator{vars: map[string]psValue{}}
	t.statements(code, 0)
	return t.cmds, t.opaque
}

// psTranslator holds what a translation has found so far.
type psTranslator struct {
	cmds   []string
	opaque string
	vars   map[string]psValue // lower-cased name → value
}

// psValue is what an expression amounts to: sh is one sh word (quoted as
// needed); source, when set, is a command whose output the value is (so
// it can be piped where it is used); url, when set, says the value is
// the body of a download from url.
type psValue struct {
	table   [][2]string // a hashtable literal's keys and raw values (@{ Uri = …; Method = … })
	sh      string
	literal string // the text, when it is known
	known   bool
	source  string
	url     string
}

func (t *psTranslator) setOpaque(what string) {
	if t.opaque == "" {
		t.opaque = what
	}
}

// statements translates a statement list: statements separated by ; or
// newlines, each a pipeline.
func (t *psTranslator) statements(code string, depth int) {
	if depth > maxPSDepth {
		t.setOpaque("PowerShell nested too deeply")
		return
	}
	for _, st := range psSplit(code, ";\n") {
		if c := t.pipeline(st, depth); c != "" {
			t.cmds = append(t.cmds, c)
		}
	}
}

// pipeline translates one statement into one sh command line, or "".
func (t *psTranslator) pipeline(st string, depth int) string {
	st = strings.TrimSpace(st)
	if st == "" || st[0] == '#' {
		return ""
	}
	if name, rhs, ok := psAssignment(st); ok {
		// $b = Get-Content f: a command's output; $b = "x" + $y: an
		// expression.
		var v psValue
		if rhs == "" {
			v = psValue{sh: "''"}
		} else if c := rhs[0]; c == '\'' || c == '"' || c == '$' || c == '(' || c == '[' || c == '@' || c >= '0' && c <= '9' {
			v = t.expression(rhs, depth)
		} else {
			v = t.group(rhs, depth)
		}
		t.vars[strings.ToLower(name)] = v
		if v.source != "" && v.url == "" {
			return v.source // the command runs when assigned
		}
		return ""
	}
	var out []string
	input := ""
	for _, el := range psSplit(st, "|") {
		c := t.element(strings.TrimSpace(el), input, depth)
		if c == "" {
			continue
		}
		out = append(out, c)
		input = c
	}
	return strings.Join(out, " | ")
}

// psAssignment splits "$name = expression" (also +=).
func psAssignment(st string) (name, rhs string, ok bool) {
	if len(st) < 3 || st[0] != '$' {
		return "", "", false
	}
	i := 1
	for i < len(st) && (isAlnum(st[i]) || st[i] == '_' || st[i] == ':') {
		i++
	}
	name = st[1:i]
	rest := strings.TrimLeft(st[i:], " \t")
	rest = strings.TrimPrefix(rest, "+")
	if name == "" || !strings.HasPrefix(rest, "=") || strings.HasPrefix(rest, "==") {
		return "", "", false
	}
	return name, strings.TrimSpace(rest[1:]), true
}

// element translates one pipeline element; input is the sh command
// before it in the pipeline ("" for the first).
func (t *psTranslator) element(el, input string, depth int) string {
	if el == "" {
		return ""
	}
	words := psWords(el)
	if len(words) == 0 {
		return ""
	}
	head := words[0]
	if len(head) > 1 && (head[0] == '&' || head[0] == '.' && head[1] == '(') {
		// &(gcm …), &"iex", .(…): the call operator glued to its operand.
		words = append([]string{head[:1], head[1:]}, words[1:]...)
		head = words[0]
	}
	if strings.EqualFold(head, "foreach") && len(words) == 3 && words[1][0] == '(' && words[2][0] == '{' {
		t.foreachLoop(words[1], words[2], depth)
		return ""
	}
	if psKeywords[strings.ToLower(head)] {
		// if (…) { … } else { … }, foreach ($x in …) { … }, try { … }:
		// the conditions' commands and every block's statements run.
		for _, w := range words[1:] {
			switch w[0] {
			case '{':
				t.statements(psInner(w), depth+1)
			case '(':
				if c := t.group(psInner(w), depth+1); c.source != "" {
					t.cmds = append(t.cmds, c.source)
				}
			}
		}
		return ""
	}
	switch {
	case head == "&" || head == ".":
		if len(words) < 2 {
			return ""
		}
		name := t.commandName(words[1], depth)
		if name == "" {
			return ""
		}
		return t.command(name, words[2:], input, depth)
	case head[0] == '\'' || head[0] == '"' || head[0] == '$' || head[0] == '(' || head[0] == '[' || head[0] == '@':
		// An expression: its value is the pipeline's input.
		v := t.expression(el, depth)
		if v.source != "" {
			return v.source
		}
		if v.sh != "" && v.sh != "''" {
			return "printf '%s\\n' " + v.sh
		}
		return ""
	case head[0] == '{':
		t.statements(psInner(head), depth+1)
		return ""
	}
	return t.command(psBare(head), words[1:], input, depth)
}

// psKeywords start statements that are not commands.
var psKeywords = map[string]bool{
	"if": true, "elseif": true, "else": true, "foreach": true, "for": true, "while": true, "do": true, "until": true,
	"switch": true, "try": true, "catch": true, "finally": true, "function": true, "filter": true, "param": true,
	"return": true, "exit": true, "throw": true, "trap": true, "begin": true, "process": true, "end": true, "break": true,
	"continue": true,
}

// psNativeAsCmdlet maps the programs whose PowerShell aliases Linux
// leaves out (rm, cp, mv, ls, cat) to the cmdlets when their arguments
// are PowerShell parameters (rm -r -fo ~/*, ls -Recurse): written for
// PowerShell, and judged as meant.
var psNativeAsCmdlet = map[string]string{
	"rm": "remove-item", "cp": "copy-item", "mv": "move-item", "ls": "get-childitem", "cat": "get-content",
}

// psStyleArgs reports a PowerShell parameter among args: a dash and two
// or more letters (-fo, -Recurse, -ErrorAction).
func psStyleArgs(args []string) bool {
	for _, a := range args {
		if len(a) > 2 && a[0] == '-' && psLetter(a[1]) && psLetter(a[2]) && !strings.Contains(a, "=") {
			return true
		}
	}
	return false
}

// commandName resolves the word after & or .: a string, a folded
// expression, a variable, or Get-Command with a wildcard.
func (t *psTranslator) commandName(w string, depth int) string {
	if w[0] == '(' {
		inner := strings.TrimSpace(psInner(w))
		ws := psWords(inner)
		if len(ws) == 2 && (strings.EqualFold(psBare(ws[0]), "gcm") || strings.EqualFold(psBare(ws[0]), "get-command")) {
			if name := psCmdletLike(psUnquote(ws[1])); name != "" {
				return name
			}
			t.setOpaque("runs the command Get-Command finds for " + ws[1])
			return ""
		}
	}
	v := t.expression(w, depth)
	if v.known {
		return v.literal
	}
	if v.url != "" {
		// & ([scriptblock]::Create((irm URL))): the download is run.
		t.cmds = append(t.cmds, "curl -s "+shQuote(v.url)+" | sh")
		return ""
	}
	t.setOpaque("runs a command whose name it computes (" + w + ")")
	return ""
}

// psTable reads the entries of a hashtable literal's body.
func psTable(body string) [][2]string {
	var out [][2]string
	for _, entry := range psSplit(body, ";\n") {
		k, v, ok := strings.Cut(entry, "=")
		if k = strings.Trim(strings.TrimSpace(k), `'"`); ok && k != "" {
			out = append(out, [2]string{k, strings.TrimSpace(v)})
		}
	}
	return out
}

// splat expands @name arguments into the named parameters of the
// hashtable the variable holds (Invoke-RestMethod @params).
func (t *psTranslator) splat(args []string) []string {
	var out []string
	for _, a := range args {
		if len(a) > 1 && a[0] == '@' && a[1] != '{' && a[1] != '(' {
			if v, ok := t.vars[strings.ToLower(a[1:])]; ok && v.table != nil {
				for _, kv := range v.table {
					out = append(out, "-"+kv[0], kv[1])
				}
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

// command translates a cmdlet or program with its argument words.
func (t *psTranslator) command(name string, args []string, input string, depth int) string {
	args = t.splat(args)
	p := psParams{t: t, depth: depth}
	if cmdlet, ok := psNativeAsCmdlet[name]; ok && psStyleArgs(args) {
		name = cmdlet
	}
	switch psCanonical(name) {
	case "invoke-expression", "invoke-command":
		p.read(args, []string{"scriptblock", "command"}, nil)
		for _, a := range p.pos {
			t.runValue(a, name, depth)
		}
		if sb, ok := p.named["scriptblock"]; ok {
			t.runValue(sb, name, depth)
		}
		if input != "" && len(p.pos) == 0 {
			return input + " | sh" // … | iex
		}
		return ""
	case "invoke-webrequest", "invoke-restmethod":
		return t.webRequest(args, input, depth)
	case "remove-item":
		p.read(args, []string{"path", "literalpath"}, []string{"recurse", "force", "whatif", "confirm"})
		flags := "rm"
		if p.has("recurse") {
			flags += " -r"
		}
		if p.has("force") {
			flags += " -f"
		}
		paths := p.values("path", "literalpath")
		if len(paths) == 0 && input != "" {
			return "xargs " + flags
		}
		return flags + " " + strings.Join(paths, " ")
	case "get-content":
		p.read(args, []string{"path", "literalpath"}, []string{"raw", "wait"})
		return "cat " + strings.Join(p.values("path", "literalpath"), " ")
	case "set-content", "add-content", "out-file":
		p.read(args, []string{"path", "value", "filepath", "literalpath"}, []string{"force", "append", "nonewline"})
		op := " > "
		if psCanonical(name) == "add-content" || p.has("append") {
			op = " >> "
		}
		paths := p.values("path", "filepath", "literalpath")
		if len(paths) == 0 {
			return ""
		}
		vals := p.values("value")
		if len(vals) == 0 && len(paths) > 1 {
			vals = paths[1:]
		}
		if len(vals) == 0 && input != "" {
			return "cat" + op + paths[0]
		}
		if len(vals) == 0 || vals[0] == "''" && op == " > " {
			return "truncate -s 0 " + paths[0] // emptied
		}
		return "printf '%s\\n' " + vals[0] + op + paths[0]
	case "copy-item", "move-item":
		p.read(args, []string{"path", "destination", "literalpath"}, []string{"recurse", "force"})
		paths := append(p.values("path", "literalpath"), p.values("destination")...)
		prog := "cp -r"
		if psCanonical(name) == "move-item" {
			prog = "mv"
		}
		return prog + " " + strings.Join(paths, " ")
	case "get-childitem":
		p.read(args, []string{"path", "literalpath", "filter", "include", "exclude", "depth", "erroraction"},
			[]string{"recurse", "force", "directory", "file", "name", "hidden"})
		paths := p.values("path", "literalpath")
		if len(paths) == 1 && strings.EqualFold(strings.Trim(paths[0], "'\""), "env:") {
			return "env"
		}
		cmd := "find " + strings.Join(paths, " ")
		if len(paths) == 0 {
			cmd = "find ."
		}
		if !p.has("recurse") {
			cmd += " -maxdepth 1"
		}
		var names []string
		names = append(names, p.values("filter")...)
		for _, inc := range p.values("include") {
			names = append(names, psList(inc)...)
		}
		for i, n := range names {
			if i > 0 {
				cmd += " -o"
			}
			cmd += " -name " + n
		}
		if p.has("directory") {
			cmd += " -type d"
		}
		return cmd
	case "foreach-object":
		// % { … $_ … }: the block runs once per item.
		for _, a := range args {
			if strings.HasPrefix(a, "{") {
				t.block(a, input, depth)
			}
		}
		return ""
	case "where-object", "select-object", "sort-object", "convertto-json", "convertfrom-json", "out-null", "out-string",
		"format-table", "format-list", "select-string", "measure-object", "tee-object":
		return "" // a filter or a format: the data flows on
	case "start-process":
		p.read(args, []string{"filepath", "argumentlist", "workingdirectory"}, []string{"wait", "nonewwindow", "passthru"})
		file := p.values("filepath")
		if len(file) == 0 {
			return ""
		}
		return strings.Join(append(file, p.values("argumentlist")...), " ")
	case "start-job", "start-threadjob":
		for _, a := range args {
			if strings.HasPrefix(a, "{") {
				t.statements(psInner(a), depth+1)
			}
		}
		return ""
	case "write-output", "write-host":
		p.read(args, []string{"inputobject", "object"}, []string{"nonewline"})
		return "printf '%s\\n' " + strings.Join(p.values("inputobject", "object"), " ")
	case "clear-history":
		return ""
	case "resolve-dnsname":
		p.read(args, []string{"name", "type", "server"}, nil)
		return "nslookup " + strings.Join(p.values("name"), " ")
	}
	// A program, run as bash would run it.
	words := []string{shQuote(name)}
	for _, a := range args {
		words = append(words, t.expression(a, depth).sh)
	}
	cmd := strings.Join(words, " ")
	return cmd
}

// block translates a script block run once per pipeline item, with $_
// the item. A simple command becomes xargs -I{} CMD (gci … | % { shred
// $_.FullName } is find … | xargs -I{} shred {}); anything else a
// while-read loop over the items.
func (t *psTranslator) block(b, input string, depth int) {
	saved, had := t.vars["_"]
	t.vars["_"] = psValue{sh: psItem}
	before := len(t.cmds)
	t.statements(psInner(b), depth+1)
	for i := before; i < len(t.cmds) && input != ""; i++ {
		c := t.cmds[i]
		simple := !strings.ContainsAny(c, "|;&<>`") && !strings.Contains(c, "$(")
		switch {
		case simple && strings.HasPrefix(input, "find ") && !strings.Contains(input, "|"):
			// gci … | % { shred $_.FullName }: find … -exec shred {} ;
			t.cmds[i] = input + " -exec " + strings.ReplaceAll(c, psItem, "{}") + " ;"
		case simple:
			t.cmds[i] = input + " | xargs -I{} " + strings.ReplaceAll(c, psItem, "{}")
		default:
			t.cmds[i] = input + " | while read -r f; do " + strings.ReplaceAll(c, psItem, `"$f"`) + "; done"
		}
	}
	for i := before; i < len(t.cmds); i++ {
		t.cmds[i] = strings.ReplaceAll(t.cmds[i], psItem, `"$f"`)
	}
	if had {
		t.vars["_"] = saved
	} else {
		delete(t.vars, "_")
	}
}

// psItem stands for $_ in a block's commands until the block is placed.
const psItem = "__PS_ITEM__"

// foreachLoop translates foreach ($x in a, b, c) { … }: the block once
// per item of a list it can read (at most maxForeach), or once with $x
// unknown.
func (t *psTranslator) foreachLoop(header, body string, depth int) {
	name, list, ok := strings.Cut(psInner(header), " in ")
	name = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(name), "$"))
	items := psList(list)
	if !ok || name == "" || len(items) == 0 || len(items) > maxForeach {
		t.statements(psInner(body), depth+1)
		return
	}
	saved, had := t.vars[name]
	for _, item := range items {
		t.vars[name] = t.expression(item, depth+1)
		t.statements(psInner(body), depth+1)
	}
	if had {
		t.vars[name] = saved
	} else {
		delete(t.vars, name)
	}
}

// maxForeach bounds the items a foreach loop is unrolled over.
const maxForeach = 16

// runValue runs a value as PowerShell code (iex X, Invoke-Command
// -ScriptBlock X).
func (t *psTranslator) runValue(a, via string, depth int) {
	if strings.HasPrefix(a, "{") {
		t.statements(psInner(a), depth+1)
		return
	}
	v := t.expression(a, depth)
	switch {
	case v.url != "":
		t.cmds = append(t.cmds, "curl -s "+shQuote(v.url)+" | sh")
	case v.known:
		t.statements(v.literal, depth+1)
	case v.source != "":
		t.cmds = append(t.cmds, v.source+" | sh")
	default:
		t.setOpaque(via + " runs code it computes (" + a + ")")
	}
}

// webRequest translates Invoke-WebRequest / Invoke-RestMethod into curl.
func (t *psTranslator) webRequest(args []string, input string, depth int) string {
	p := psParams{t: t, depth: depth}
	p.read(args, []string{"uri", "outfile", "method", "body", "infile", "headers", "contenttype", "useragent", "timeoutsec",
		"credential", "form", "erroraction"}, []string{"usebasicparsing", "usedefaultcredentials", "passthru", "skipcertificatecheck"})
	uri := p.values("uri")
	if len(uri) == 0 {
		return ""
	}
	cmd := "curl -s"
	if m := p.values("method"); len(m) > 0 {
		cmd += " -X " + m[0]
	}
	if p.has("skipcertificatecheck") {
		cmd += " -k"
	}
	if out := p.values("outfile"); len(out) > 0 {
		cmd += " -o " + out[0]
	}
	if in := p.values("infile"); len(in) > 0 {
		cmd += " -T " + in[0]
	}
	prefix := ""
	if body, ok := p.named["body"]; ok {
		v := t.expression(body, depth)
		if v.source != "" {
			prefix = v.source + " | "
			cmd += " --data-binary @-"
		} else {
			cmd += " --data-binary " + v.sh
		}
	} else if input != "" {
		cmd += " --data-binary @-" // … | irm -Method Post
	}
	return prefix + cmd + " " + uri[0]
}

// psParams reads a cmdlet's arguments: named parameters (matched by
// prefix against the names given) and positional values.
type psParams struct {
	t        *psTranslator
	depth    int
	named    map[string]string // parameter → raw word ("" for a switch)
	switches map[string]bool
	pos      []string // raw words
	names    []string // value parameters, in positional order
}

func (p *psParams) read(args, valued, switches []string) {
	p.named, p.switches, p.names = map[string]string{}, map[string]bool{}, valued
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' || !psLetter(a[1]) {
			p.pos = append(p.pos, a)
			continue
		}
		name, val, glued := strings.Cut(a[1:], ":")
		name = strings.ToLower(name)
		if full := psMatch(name, switches); full != "" {
			p.switches[full] = true
			continue
		}
		full := psMatch(name, valued)
		if full == "" {
			full = name // unknown: assume it takes a value
		}
		if glued {
			p.named[full] = val
		} else if i+1 < len(args) {
			p.named[full] = args[i+1]
			i++
		}
	}
}

// has reports a switch given (by any prefix of its name).
func (p *psParams) has(name string) bool { return p.switches[name] }

// values returns the sh words of the named parameters, or, when none is
// given, of the positional value in the place of the first name.
func (p *psParams) values(names ...string) []string {
	var out []string
	for _, n := range names {
		if raw, ok := p.named[n]; ok {
			for _, item := range psList(raw) {
				out = append(out, p.t.expression(item, p.depth).sh)
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	// Positional: the parameter's place among the valued ones.
	for i, n := range p.names {
		if n == names[0] && i < len(p.pos) {
			if n == "argumentlist" || n == "value" && len(p.pos) > i {
				var rest []string
				for _, raw := range p.pos[i:] {
					rest = append(rest, p.t.expression(raw, p.depth).sh)
				}
				return rest
			}
			for _, item := range psList(p.pos[i]) {
				out = append(out, p.t.expression(item, p.depth).sh)
			}
			return out
		}
	}
	return nil
}

// psMatch returns the name in names that p is a prefix of, or "".
func psMatch(p string, names []string) string {
	for _, n := range names {
		if strings.HasPrefix(n, p) {
			return n
		}
	}
	return ""
}

// expression evaluates a PowerShell expression as far as it can be known.
func (t *psTranslator) expression(e string, depth int) psValue {
	e = strings.TrimSpace(e)
	if e == "" || depth > maxPSDepth {
		return psValue{sh: "''", known: true}
	}
	// "a"+"b", "{0}://{1}" -f "https","host": joined literals.
	if parts := psSplit(e, "+"); len(parts) > 1 {
		var b strings.Builder
		for _, part := range parts {
			v := t.expression(part, depth+1)
			if !v.known {
				return psValue{sh: shQuote(e)}
			}
			b.WriteString(v.literal)
		}
		return psLiteral(b.String())
	}
	if f, args, ok := psFormat(e); ok {
		fv := t.expression(f, depth+1)
		if !fv.known {
			return psValue{sh: shQuote(e)}
		}
		out := fv.literal
		for i, a := range psList(args) {
			v := t.expression(a, depth+1)
			if !v.known {
				return psValue{sh: shQuote(e)}
			}
			out = strings.ReplaceAll(out, "{"+string(rune('0'+i))+"}", v.literal)
		}
		return psLiteral(out)
	}
	if strings.HasPrefix(e, "@{") {
		// A hashtable: what its values read is what it holds, when it
		// is sent (-Body @{ aws = (gc ~/.aws/credentials) }).
		v := psValue{sh: "''", table: psTable(psInner(e[1:]))}
		var sources []string
		for _, kv := range v.table {
			if ev := t.expression(kv[1], depth+1); ev.source != "" {
				sources = append(sources, ev.source)
			}
		}
		switch len(sources) {
		case 0:
		case 1:
			v.source = sources[0]
		default:
			v.source = "{ " + strings.Join(sources, "; ") + "; }"
		}
		return v
	}
	if len(psSplit(e, "|")) > 1 {
		return t.group(e, depth) // a pipeline's output: @{…} | ConvertTo-Json
	}
	switch c := e[0]; {
	case c == '\'':
		return psLiteral(strings.ReplaceAll(strings.TrimSuffix(e[1:], "'"), "''", "'"))
	case c == '"':
		return t.expandable(strings.TrimSuffix(e[1:], `"`), depth)
	case c == '$':
		if strings.HasPrefix(e, "$(") && strings.HasSuffix(e, ")") {
			return t.group(e[2:len(e)-1], depth)
		}
		return t.variable(e, depth)
	case c == '(':
		inner, rest := psGroup(e)
		v := t.group(inner, depth)
		return t.member(v, rest, depth)
	case c == '[':
		return t.staticCall(e, depth)
	}
	return psBareWord(psBare(e))
}

// psBareWord is a bare word's value: left unquoted for sh when it holds
// only path characters and wildcards (~/*, *.pem), which PowerShell
// expands as sh does.
func psBareWord(w string) psValue {
	for i := 0; i < len(w); i++ {
		if c := w[i]; !isAlnum(c) && !strings.ContainsRune("/._-~:=@%+,*?", rune(c)) {
			return psLiteral(w)
		}
	}
	return psValue{sh: w, literal: w, known: true}
}

// group evaluates (pipeline): a command's output, or an expression.
func (t *psTranslator) group(inner string, depth int) psValue {
	inner = strings.TrimSpace(inner)
	if inner == "" {
		return psValue{sh: "''", known: true}
	}
	if len(psSplit(inner, "|")) > 1 {
		// ($e | ConvertTo-Json): a pipeline's output.
		if c := t.pipeline(inner, depth+1); c != "" {
			return psValue{sh: `"$(` + c + `)"`, source: c}
		}
		return psValue{sh: "''"}
	}
	words := psWords(inner)
	if len(words) > 0 {
		switch psCanonical(psBare(words[0])) {
		case "invoke-webrequest", "invoke-restmethod":
			p := psParams{t: t, depth: depth}
			p.read(words[1:], []string{"uri", "outfile", "method", "body", "infile", "headers"}, []string{"usebasicparsing"})
			if u := p.values("uri"); len(u) > 0 {
				url := strings.Trim(u[0], "'\"")
				return psValue{sh: `"$(curl -s ` + u[0] + `)"`, source: "curl -s " + u[0], url: url}
			}
		}
		if first := words[0]; first[0] != '\'' && first[0] != '"' && first[0] != '$' && first[0] != '(' && first[0] != '[' {
			c := t.pipeline(inner, depth+1)
			if c == "" {
				return psValue{sh: "''"}
			}
			return psValue{sh: `"$(` + c + `)"`, source: c}
		}
	}
	return t.expression(inner, depth+1)
}

// member applies .Content, .DownloadString(U), .DownloadFile(U, P), … to
// a value.
func (t *psTranslator) member(v psValue, rest string, depth int) psValue {
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return v
	}
	if strings.HasPrefix(rest, ".(") {
		// .('Down'+'loadString').Invoke(URL): a member named by a
		// computed string, called through Invoke.
		inner, after := psGroup(rest[1:])
		name := t.expression(inner, depth+1)
		if !name.known {
			t.setOpaque("calls a member it computes (" + rest + ")")
			return psValue{sh: "''"}
		}
		after = strings.TrimSpace(after)
		if la := strings.ToLower(after); strings.HasPrefix(la, ".invoke(") {
			after = after[len(".invoke"):]
		}
		rest = "." + name.literal + after
	}
	lower := strings.ToLower(rest)
	switch {
	case strings.HasPrefix(lower, ".uploadstring(") || strings.HasPrefix(lower, ".uploaddata(") || strings.HasPrefix(lower, ".uploadvalues("):
		args := psList(psCallArgs(rest))
		if len(args) >= 2 {
			u, body := t.expression(args[0], depth), t.expression(args[len(args)-1], depth)
			if body.source != "" {
				t.cmds = append(t.cmds, body.source+" | curl -s -X POST --data-binary @- "+u.sh)
			} else {
				t.cmds = append(t.cmds, "curl -s -X POST --data-binary "+body.sh+" "+u.sh)
			}
		}
		return psValue{sh: "''"}
	case strings.HasPrefix(lower, ".uploadfile("):
		if args := psList(psCallArgs(rest)); len(args) >= 2 {
			t.cmds = append(t.cmds, "curl -s -T "+t.expression(args[len(args)-1], depth).sh+" "+t.expression(args[0], depth).sh)
		}
		return psValue{sh: "''"}
	case strings.HasPrefix(lower, ".content"):
		return v
	case strings.HasPrefix(lower, ".downloadstring(") || strings.HasPrefix(lower, ".downloaddata("):
		arg := t.expression(psCallArgs(rest), depth)
		url := arg.literal
		return psValue{sh: `"$(curl -s ` + arg.sh + `)"`, source: "curl -s " + arg.sh, url: url}
	case strings.HasPrefix(lower, ".downloadfile("):
		args := psList(psCallArgs(rest))
		if len(args) == 2 {
			u, f := t.expression(args[0], depth), t.expression(args[1], depth)
			t.cmds = append(t.cmds, "curl -s -o "+f.sh+" "+u.sh)
		}
		return psValue{sh: "''"}
	case strings.HasPrefix(lower, ".invoke("):
		if v.url != "" {
			t.cmds = append(t.cmds, "curl -s "+shQuote(v.url)+" | sh")
		}
		return psValue{sh: "''"}
	}
	return psValue{sh: v.sh, source: v.source, url: v.url}
}

// staticCall evaluates [Type]::Method(args) for the types that matter.
func (t *psTranslator) staticCall(e string, depth int) psValue {
	end := strings.Index(e, "]")
	if end < 0 {
		return psValue{sh: shQuote(e)}
	}
	typ := strings.ToLower(strings.TrimPrefix(e[1:end], "system."))
	rest := e[end+1:]
	if !strings.HasPrefix(rest, "::") {
		// A cast: [string]$x, [xml](gc f) keep the value; [bool] and the
		// numbers make another of it, whose commands still run.
		v := t.expression(rest, depth)
		switch typ {
		case "bool", "int", "long", "double", "switch", "void":
			return psValue{sh: "''", source: v.source, url: v.url}
		}
		return v
	}
	method := rest[2:]
	name, _, _ := strings.Cut(strings.ToLower(method), "(")
	args := psCallArgs(method)
	switch typ + "::" + name {
	case "environment::getenvironmentvariables":
		return psValue{sh: `"$(env)"`, source: "env"}
	case "environment::getenvironmentvariable":
		v := t.expression(args, depth)
		if v.known {
			return psValue{sh: `"$` + v.literal + `"`}
		}
	case "scriptblock::create", "reflection.assembly::load":
		v := t.expression(args, depth)
		if v.url != "" {
			return psValue{sh: v.sh, url: v.url, source: v.source}
		}
		if v.known && typ == "scriptblock" {
			return v
		}
		t.setOpaque("builds code it runs from a computed value (" + e + ")")
	case "io.file::readalltext", "io.file::readallbytes":
		v := t.expression(args, depth)
		return psValue{sh: `"$(cat ` + v.sh + `)"`, source: "cat " + v.sh}
	case "io.file::writealltext", "io.file::appendalltext":
		if a := psList(args); len(a) == 2 {
			op := " > "
			if name == "appendalltext" {
				op = " >> "
			}
			t.cmds = append(t.cmds, "printf '%s\\n' "+t.expression(a[1], depth).sh+op+t.expression(a[0], depth).sh)
		}
	case "net.dns::gethostaddresses", "net.dns::gethostentry", "net.dns::resolve":
		t.cmds = append(t.cmds, "nslookup "+t.expression(args, depth).sh)
	case "convert::tobase64string":
		v := t.expression(psInnermost(args), depth)
		return psValue{sh: `"$(printf %s ` + v.sh + ` | base64)"`, source: "printf %s " + v.sh + " | base64"}
	}
	return psValue{sh: shQuote(e)}
}

// psInnermost returns the argument of the innermost call in e
// ([Text.Encoding]::UTF8.GetBytes($env:X) gives $env:X).
func psInnermost(e string) string {
	i := strings.LastIndex(e, "(")
	if i < 0 {
		return e
	}
	j := strings.IndexByte(e[i:], ')')
	if j < 0 {
		return e
	}
	if inner := e[i+1 : i+j]; inner != "" {
		return inner
	}
	return e[:i]
}

// variable evaluates $name, $env:NAME and ${name}.
func (t *psTranslator) variable(e string, depth int) psValue {
	body := strings.TrimPrefix(e[1:], "{")
	n := 0
	for n < len(body) && (isAlnum(body[n]) || body[n] == '_' || body[n] == ':' || body[n] == '?') {
		n++
	}
	name, rest := body[:n], strings.TrimPrefix(body[n:], "}")
	v := t.variableValue(name)
	if rest == "" {
		return v
	}
	if !strings.HasPrefix(rest, ".") {
		return psValue{sh: `"$__ps"`} // $x -join ",", $a[0]: computed
	}
	// $_.FullName, $a.EntryPoint.Invoke(…),
	// $ExecutionContext.InvokeCommand.InvokeScript(…): a member of the value.
	lower := strings.ToLower(rest)
	for _, sink := range []string{".invokescript(", ".newscriptblock(", ".invoke("} {
		if i := strings.Index(lower, sink); i >= 0 {
			arg := t.expression(psCallArgs(rest[i:]), depth+1)
			switch {
			case v.url != "":
				t.cmds = append(t.cmds, "curl -s "+shQuote(v.url)+" | sh")
			case arg.url != "":
				t.cmds = append(t.cmds, "curl -s "+shQuote(arg.url)+" | sh")
			case sink != ".invoke(" && arg.known:
				t.statements(arg.literal, depth+1)
			case sink != ".invoke(":
				t.setOpaque("runs code it computes (" + e + ")")
			}
			return psValue{sh: "''"}
		}
	}
	return t.member(v, rest, depth)
}

// variableValue is the value of the variable name ($env:X, $HOME, one
// the code assigned).
func (t *psTranslator) variableValue(name string) psValue {
	if rest, ok := strings.CutPrefix(strings.ToLower(name), "env:"); ok {
		return psValue{sh: `"$` + name[len(name)-len(rest):] + `"`}
	}
	switch strings.ToLower(name) {
	case "home":
		return psValue{sh: `"$HOME"`}
	case "true", "false", "null":
		return psLiteral(strings.ToLower(name))
	}
	if v, ok := t.vars[strings.ToLower(name)]; ok {
		return v
	}
	return psValue{sh: `"$` + strings.TrimPrefix(name, "script:") + `"`}
}

// expandable evaluates the text of a "…" string: $var, $env:X and
// $(…) inside it, backtick escapes.
func (t *psTranslator) expandable(s string, depth int) psValue {
	var lit, sh strings.Builder
	known := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '`' && i+1 < len(s):
			i++
			e := s[i]
			switch e {
			case 'n':
				e = '\n'
			case 't':
				e = '\t'
			case 'r':
				e = '\r'
			case '0':
				e = 0
			}
			lit.WriteByte(e)
			sh.WriteByte(e)
		case c == '$' && i+1 < len(s) && s[i+1] == '(':
			inner, rest := psGroup(s[i+1:])
			v := t.group(inner, depth+1)
			known = false
			sh.WriteString(embedded(v))
			i = len(s) - len(rest) - 1
		case c == '$' && i+1 < len(s) && (psLetter(s[i+1]) || s[i+1] == '{' || s[i+1] == '_'):
			j := i + 1
			for j < len(s) && (isAlnum(s[j]) || s[j] == '_' || s[j] == ':' || s[j] == '{' || s[j] == '}') {
				j++
			}
			v := t.variable(s[i:j], depth)
			if v.known {
				lit.WriteString(v.literal)
				sh.WriteString(v.literal)
			} else {
				known = false
				sh.WriteString(embedded(v))
			}
			i = j - 1
		case c == '"' || c == '\\':
			lit.WriteByte(c)
			sh.WriteString(`\` + string(c))
		default:
			lit.WriteByte(c)
			sh.WriteByte(c)
		}
	}
	if known {
		return psLiteral(lit.String())
	}
	return psValue{sh: `"` + sh.String() + `"`}
}

// embedded is a value as written inside an sh "…" word: an expansion
// ($X, $(cmd)) as it is, anything else as an unknown value.
func embedded(v psValue) string {
	inner := strings.TrimSuffix(strings.TrimPrefix(v.sh, `"`), `"`)
	if strings.HasPrefix(v.sh, `"$`) && !strings.ContainsAny(inner[1:], `"`) {
		return inner
	}
	return "$__ps"
}

func psLiteral(s string) psValue { return psValue{sh: shQuote(s), literal: s, known: true} }

// psCmdletLike returns the cmdlet a Get-Command pattern (i*e-e*pression)
// matches, or "".
func psCmdletLike(pattern string) string {
	p := strings.ToLower(pattern)
	for name := range psCmdlets {
		if ok, _ := path.Match(p, name); ok {
			return name
		}
	}
	return ""
}

// psCmdlets are the cmdlets translated, by full name.
var psCmdlets = map[string]bool{
	"invoke-expression": true, "invoke-command": true, "invoke-webrequest": true, "invoke-restmethod": true,
	"remove-item": true, "get-content": true, "set-content": true, "add-content": true, "out-file": true,
	"copy-item": true, "move-item": true, "get-childitem": true, "foreach-object": true, "where-object": true,
	"start-process": true, "start-job": true, "write-output": true, "clear-history": true, "resolve-dnsname": true,
}

// psAliases are PowerShell's aliases of the cmdlets translated. On
// Linux, PowerShell leaves out the aliases that would hide a program
// (rm, cp, mv, cat, ls, curl, wget): those run the programs, and are
// translated as such unless their arguments are PowerShell parameters.
var psAliases = map[string]string{
	"iex": "invoke-expression", "icm": "invoke-command", "iwr": "invoke-webrequest", "irm": "invoke-restmethod",
	"ri": "remove-item", "del": "remove-item", "erase": "remove-item", "rd": "remove-item", "rmdir": "remove-item",
	"gc": "get-content", "type": "get-content", "ac": "add-content", "sc": "set-content",
	"cpi": "copy-item", "copy": "copy-item", "mi": "move-item", "move": "move-item",
	"gci": "get-childitem", "dir": "get-childitem", "%": "foreach-object", "foreach": "foreach-object",
	"?": "where-object", "where": "where-object", "saps": "start-process", "start": "start-process",
	"sajb": "start-job", "echo": "write-output", "write": "write-output", "clhy": "clear-history",
}

// psCanonical returns the full lower-case cmdlet name of name, or name
// lower-cased.
func psCanonical(name string) string {
	l := strings.ToLower(name)
	if full, ok := psAliases[l]; ok {
		return full
	}
	return l
}
