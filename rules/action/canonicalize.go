package action

import (
	"bytes"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/parapet-dev/parapet/internal/textcut"
	"github.com/parapet-dev/parapet/rules/shell"
)

// Limits bound the work canonicalisation may do for one request.
type Limits struct {
	// MaxPayloadBytes bounds the JSON arguments (default 512 KiB).
	MaxPayloadBytes int
	// MaxDepth bounds JSON nesting (default 32).
	MaxDepth int
	// MaxStrings bounds the number of string values (default 4096).
	MaxStrings int
	// MaxDecodeLayers bounds nested encodings decoded per string (default 3).
	MaxDecodeLayers int
}

// DefaultLimits are used for zero fields of Limits.
var DefaultLimits = Limits{MaxPayloadBytes: 512 << 10, MaxDepth: 32, MaxStrings: 4096, MaxDecodeLayers: 3}

func (l Limits) withDefaults() Limits {
	if l.MaxPayloadBytes <= 0 {
		l.MaxPayloadBytes = DefaultLimits.MaxPayloadBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultLimits.MaxDepth
	}
	if l.MaxStrings <= 0 {
		l.MaxStrings = DefaultLimits.MaxStrings
	}
	if l.MaxDecodeLayers <= 0 {
		l.MaxDecodeLayers = DefaultLimits.MaxDecodeLayers
	}
	return l
}

// parseRequest validates req and returns its decoded arguments, their
// string count and their RFC 8785 form: everything the action hash needs.
// The strings it makes live in mem. plain reports that every string in
// args is printable ASCII, tab, newline or carriage return only, which
// Normalize leaves as it is.
func parseRequest(req *Request, lim Limits, mem *arena, room []Member) (args Object, nstrings int, canon []byte, plain bool, err error) {
	if !requestInBounds(req, lim) {
		return nil, 0, nil, false, requestError(req, lim)
	}

	payload := bytes.TrimSpace(req.Payload)
	if len(payload) == 0 {
		payload = []byte("{}")
	}
	// ASCII is valid UTF-8: one pass answers both for the usual payload.
	asciiText := belowDEL(unsafe.String(unsafe.SliceData(payload), len(payload)))
	if !asciiText {
		if i := invalidUTF8At(payload); i >= 0 {
			return nil, 0, nil, false, invalidf("payload_json is not valid UTF-8 (byte %d)", i)
		}
	}
	// Room for the payload and its canonical form (rarely longer), and
	// a little for what the payload decodes to and the paths derived
	// from it; more buffers follow if needed.
	mem.reserve(2*len(payload) + 64)
	args, nstrings, canon, escapesPlain, err := parseJSONObjectCanonical(payload, lim, mem, room)
	if err != nil {
		return nil, 0, nil, false, err
	}
	// Raw control characters are not valid in a JSON string, so only an
	// escape could add one to an ASCII payload's strings.
	plain = asciiText && escapesPlain
	if canon != nil {
		// Already canonical. (Its numbers are small integers, so the
		// conversion below could not have failed either.)
		return args, nstrings, canon, plain, nil
	}
	start := mem.mark()
	if mem.buf, err = appendCanonical(mem.buf, args); err != nil {
		return nil, 0, nil, false, err
	}
	end := mem.mark()
	return args, nstrings, mem.buf[start:end:end], plain, nil
}

// requestInBounds reports whether requestError would find nothing wrong
// with req, in one straight test for the usual request.
func requestInBounds(req *Request, lim Limits) bool {
	c := &req.Caller
	return len(req.Type) <= 256 && len(req.Payload) <= lim.MaxPayloadBytes &&
		len(c.WorkspaceRoot) <= maxCallerField && len(c.Home) <= maxCallerField && len(c.Tenant) <= maxCallerField &&
		typeNotBlank(req.Type) && textcut.ValidUTF8(req.Type) &&
		textcut.ValidUTF8(c.WorkspaceRoot) && textcut.ValidUTF8(c.Home) && textcut.ValidUTF8(c.Tenant)
}

// typeNotBlank is strings.TrimSpace(t) != "", without the trim for the
// usual type that starts with an ASCII byte other than white space.
func typeNotBlank(t string) bool {
	if t != "" && t[0] < utf8.RuneSelf && asciiSpace[t[0]] == 0 {
		return true
	}
	return strings.TrimSpace(t) != ""
}

// asciiSpace marks the bytes strings.TrimSpace trims as ASCII white space.
var asciiSpace = [256]uint8{'\t': 1, '\n': 1, '\v': 1, '\f': 1, '\r': 1, ' ': 1}

// maxCallerField bounds each of the caller's strings.
const maxCallerField = 4096

// requestError is the error for a request requestInBounds rejects: the
// first of its tests that fails, in a fixed order. (Out of line: the
// messages cost code the usual request need not fetch.)
func requestError(req *Request, lim Limits) error {
	if strings.TrimSpace(req.Type) == "" {
		return invalidf("action_type is empty")
	}
	if len(req.Type) > 256 {
		return tooLargef("action_type is %d bytes, limit 256", len(req.Type))
	}
	if !textcut.ValidUTF8(req.Type) {
		return invalidf("action_type is not valid UTF-8")
	}
	if len(req.Payload) > lim.MaxPayloadBytes {
		return tooLargef("payload_json is %d bytes, limit %d", len(req.Payload), lim.MaxPayloadBytes)
	}
	if err := checkCallerField("caller.workspace_root", req.Caller.WorkspaceRoot); err != nil {
		return err
	}
	if err := checkCallerField("caller.home_dir", req.Caller.Home); err != nil {
		return err
	}
	if err := checkCallerField("caller.tenant", req.Caller.Tenant); err != nil {
		return err
	}
	return invalidf("request rejected") // unreachable while the two agree
}

// checkCallerField validates one of the caller's strings.
func checkCallerField(name, v string) error {
	if !textcut.ValidUTF8(v) {
		return invalidf("%s is not valid UTF-8", name)
	}
	if len(v) > maxCallerField {
		return tooLargef("%s is %d bytes, limit %d", name, len(v), maxCallerField)
	}
	return nil
}

// Limits on attachments: a few scripts of ordinary size.
const (
	maxAttachments       = 16
	maxAttachmentBytes   = 256 << 10
	maxAttachmentPathLen = 4096
)

// CheckAttachments bounds the attachments a request carries (count, size,
// UTF-8); Canonicalize checks them too.
func CheckAttachments(atts []Attachment) error {
	if len(atts) == 0 {
		return nil
	}
	return checkAttachments(atts)
}

// AttachmentCheck records that CheckAttachments passed for one slice of
// attachments (its first element and length), so CanonicalizeChecked
// need not check the same content again. The zero value covers only an
// empty slice, which always passes.
type AttachmentCheck struct {
	first *Attachment
	n     int
}

// CheckAttachmentsOnce is CheckAttachments that also returns the proof of
// the check for CanonicalizeChecked.
func CheckAttachmentsOnce(atts []Attachment) (AttachmentCheck, error) {
	if err := CheckAttachments(atts); err != nil {
		return AttachmentCheck{}, err
	}
	if len(atts) == 0 {
		return AttachmentCheck{}, nil
	}
	return AttachmentCheck{first: &atts[0], n: len(atts)}, nil
}

// covers reports whether the check was of exactly atts: the same slice,
// not merely equal content.
func (c AttachmentCheck) covers(atts []Attachment) bool {
	return len(atts) == c.n && (c.n == 0 || &atts[0] == c.first)
}

// checkAttachments is CheckAttachments for a non-empty slice, out of line
// because most requests carry none.
func checkAttachments(atts []Attachment) error {
	if len(atts) > maxAttachments {
		return tooLargef("%d attachments, limit %d", len(atts), maxAttachments)
	}
	for i, at := range atts {
		switch {
		case len(at.Content) > maxAttachmentBytes:
			return tooLargef("attachment %d (%s) is %d bytes, limit %d", i, textcut.Truncate(at.Path, 80), len(at.Content), maxAttachmentBytes)
		case at.Path == "":
			return invalidf("attachment %d has no path", i)
		case len(at.Path) > maxAttachmentPathLen:
			return tooLargef("attachment %d path is %d bytes, limit %d", i, len(at.Path), maxAttachmentPathLen)
		case !textcut.ValidUTF8(at.Path) || !textcut.ValidUTF8(at.Content):
			return invalidf("attachment %d is not valid UTF-8", i)
		}
	}
	return nil
}

// Canonicalize validates req and returns its canonical Action. Errors are
// *Error values whose message names the problem. An owner that is done
// with the Action may give it back with Release.
func Canonicalize(req Request, lim Limits) (*Action, error) {
	return CanonicalizeChecked(req, AttachmentCheck{}, lim)
}

// CanonicalizeChecked is Canonicalize for a caller that has checked the
// request's attachments with CheckAttachmentsOnce: check is its result.
// Attachments the check does not cover (another slice) are checked here,
// so every path checks them once.
func CanonicalizeChecked(req Request, check AttachmentCheck, lim Limits) (*Action, error) {
	lim = lim.withDefaults()
	if !check.covers(req.Attachments) {
		if err := checkAttachments(req.Attachments); err != nil {
			return nil, err
		}
	}
	a := actionPool.Get().(*Action)
	args, nstrings, canon, plain, err := parseRequest(&req, lim, &a.mem, a.argRoom[:0])
	if err != nil {
		a.Release()
		return nil, err
	}

	rt := resolveType(req.Type)
	a.Type, a.RawType, a.Known, a.Args, a.Caller, a.CanonicalJSON = rt.canonical, req.Type, rt.known, args, req.Caller, canon
	var rootNoDots bool
	a.Caller.WorkspaceRoot, rootNoDots = cleanRootNoDots(req.Caller.WorkspaceRoot)
	a.Caller.Home = cleanRoot(req.Caller.Home)
	a.Hash = hashAction(a.Type, canon, a.Caller.WorkspaceRoot, a.Caller.Home)
	a.Attachments = req.Attachments

	c := collector{a: a, lim: lim, rootNoDots: rootNoDots, plainArgs: plain}
	if nstrings > 0 {
		// Room for the values as sent; decoded layers may grow it.
		if n := min(nstrings, lim.MaxStrings); n <= len(a.stringRoom) {
			a.Strings = a.stringRoom[:0]
		} else {
			a.Strings = make([]String, 0, n)
		}
	}
	if err := c.collectStrings(args); err != nil {
		a.Release()
		return nil, err
	}
	a.Paths, a.URLs = a.pathRoom[:0], a.urlRoom[:0]
	if err := c.collectByType(rt.derive); err != nil {
		a.Release()
		return nil, err
	}
	// As if never allocated when there are none.
	if len(a.Paths) == 0 {
		a.Paths = nil
	}
	if len(a.URLs) == 0 {
		a.URLs = nil
	}
	return a, nil
}

func invalidUTF8At(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// collector fills the derived views of an Action.
type collector struct {
	a   *Action
	lim Limits
	// rootNoDots is isCleanNoDots of the workspace root, for resolvePath.
	rootNoDots bool
	// plainArgs: every string in the arguments is plain ASCII (see
	// parseRequest), so normalising one changes nothing.
	plainArgs bool
}

// normArg is Normalize for a string of the arguments.
func (c *collector) normArg(s string) (string, []Evasion) {
	if c.plainArgs {
		return s, nil
	}
	return Normalize(s)
}

// collectStrings records every string value, normalised, with its field
// path, and decodes encoding layers for inspection.
func (c *collector) collectStrings(args Object) error {
	for i := range args {
		if err := c.walk(args[i].Key, args[i].Value); err != nil {
			return err
		}
	}
	return nil
}

func (c *collector) walk(prefix string, v any) error {
	switch x := v.(type) {
	case Object:
		for i := range x {
			name := x[i].Key
			if prefix != "" {
				name = prefix + "." + name
			}
			if err := c.walk(name, x[i].Value); err != nil {
				return err
			}
		}
	case []any:
		for _, vv := range x {
			if err := c.walk(prefix, vv); err != nil {
				return err
			}
		}
	case string:
		if len(c.a.Strings) >= c.lim.MaxStrings {
			return tooLargef("payload_json has more than %d string values", c.lim.MaxStrings)
		}
		c.addString(prefix, x)
	}
	return nil
}

func (c *collector) addString(field, raw string) {
	norm, ev := c.normArg(raw)
	if len(ev) > 0 {
		c.addEvasions(field, ev)
	}
	c.a.Strings = append(c.a.Strings, String{Field: field, Value: norm, Raw: raw})
	if len(norm) < minEncodedLen {
		return // nothing to decode (decodeOnce's own test, without the call)
	}
	for _, layer := range decodeLayers(norm, c.lim.MaxDecodeLayers) {
		layer.Field = field
		c.a.Strings = append(c.a.Strings, layer)
	}
}

// addEvasions records the evasions Normalize found in field.
func (c *collector) addEvasions(field string, ev []Evasion) {
	for _, e := range ev {
		e.Field = field
		c.a.Evasions = append(c.a.Evasions, e)
	}
}

// String returns the normalised top-level string argument key, or "".
func (a *Action) String(key string) string {
	v, _ := a.Args.Get(key)
	s, _ := v.(string)
	if s == "" {
		return ""
	}
	norm, _ := Normalize(s)
	return norm
}

// derivation says what collectByType derives from the arguments of an
// action type.
type derivation uint8

const (
	deriveUnknownPaths derivation = iota // paths of unknown use
	deriveCommand
	deriveReadPaths
	deriveWritePaths
	deriveDeletePaths
	deriveMovePaths
	deriveAttachments
)

// derivationOf is the derivation for canonical action type t.
func derivationOf(t string) derivation {
	switch t {
	case "execute_command":
		return deriveCommand
	case "read_file", "list_directory", "search_files", "glob_files", "git_status", "git_diff", "git_log":
		return deriveReadPaths
	case "write_file", "edit_file", "create_directory", "git_add", "git_commit", "git_checkout", "git_branch", "git_pull":
		return deriveWritePaths
	case "delete_file":
		return deriveDeletePaths
	case "move_file", "copy_file":
		return deriveMovePaths
	case "send_email", "send_message":
		return deriveAttachments
	}
	return deriveUnknownPaths
}

// collectByType derives paths, the command and URLs from the arguments,
// as derivationOf(a.Type) says. A command tool whose command cannot be
// read is an error: what would run is unknown.
func (c *collector) collectByType(d derivation) error {
	switch d {
	case deriveCommand:
		if err := c.collectCommand(); err != nil {
			return err
		}
	case deriveReadPaths:
		c.pathsWhere(isPathKey, AccessRead)
	case deriveWritePaths:
		c.pathsWhere(isPathKey, AccessWrite)
	case deriveDeletePaths:
		c.pathsWhere(isPathKey, AccessDelete)
	case deriveMovePaths:
		c.pathsWhere(isPathKey, AccessRead)
		c.pathsWhere(isDestinationKey, AccessWrite)
	case deriveAttachments:
		c.pathsWhere(isAttachmentKey, AccessRead)
	default:
		c.pathsWhere(isPathKey, AccessUnknown)
	}
	c.collectURLs()
	return nil
}

// isPathKey reports argument names that hold a filesystem path.
func isPathKey(k string) bool {
	switch k {
	case "path", "file", "file_path", "filepath", "filename", "source", "src", "from",
		"dir", "directory", "cwd", "working_dir", "workdir", "paths", "files", "target_file",
		"old_path", "repo", "repository", "notebook_path":
		return true
	}
	return false
}

func isDestinationKey(k string) bool {
	switch k {
	case "destination", "dest", "dst", "to", "target", "new_path":
		return true
	}
	return false
}

func isAttachmentKey(k string) bool {
	switch k {
	case "attachments", "attachment", "files", "file", "path":
		return true
	}
	return false
}

func isWorkingDirKey(k string) bool { return commandArgRole(k) == roleWorkingDir }

// pathsWhere adds the paths of the arguments whose name has the role.
// (Arguments are walked by name and matched by role, which beats probing
// for every name a role might use.)
func (c *collector) pathsWhere(role func(string) bool, access Access) {
	for i := range c.a.Args {
		if m := &c.a.Args[i]; role(m.Key) {
			c.addPathArg(m.Key, m.Value, access)
		}
	}
}

func (c *collector) addPathArg(key string, value any, access Access) {
	switch v := value.(type) {
	case string:
		c.addPath(key, v, access, c.plainArgs)
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				c.addPath(key, s, access, c.plainArgs)
			}
		}
	}
}

// addPath adds the path raw. plain says raw is plain ASCII, which
// normalisation leaves as it is.
func (c *collector) addPath(field, raw string, access Access, plain bool) {
	if raw == "" {
		return
	}
	norm := raw
	if !plain {
		norm, _ = Normalize(raw)
	}
	p, encoded := resolvePath(norm, c.a.Caller.WorkspaceRoot, c.a.Caller.Home, c.rootNoDots, &c.a.mem)
	if encoded {
		c.a.Evasions = append(c.a.Evasions, Evasion{Kind: "encoded-path", Field: field, Evidence: textcut.Truncate(raw, 80)})
	}
	p.Raw, p.Field, p.Access = raw, field, access
	c.a.Paths = append(c.a.Paths, p)
}

// collectCommand reads the command line, parses it and adds the paths
// it names. Only the usual case (one command line, no redirection) runs
// here; the rest is in separate functions, so the code every command
// decision runs stays small.
func (c *collector) collectCommand() error {
	a := c.a
	line, startDir, hasDir, err := c.commandLine()
	if err != nil {
		return err
	}
	// The line is the arguments' strings, shell-quoted and joined with
	// plain ASCII: plain when they are.
	line, _ = c.normArg(line)
	a.Command = line
	a.Script = shell.Parse(line)
	// A command run in a directory the caller names (a hook's or an MCP
	// tool's cwd) has its relative paths there, not in the workspace.
	a.Script.StartIn(startDir)
	if len(a.Script.Evasions) > 0 {
		c.addScriptEvasions()
	}
	// Size Paths once: every plain argument of every command is a path.
	if n := c.commandPathBound(); n > cap(a.Paths)-len(a.Paths) {
		a.Paths = append(make([]Path, 0, len(a.Paths)+n), a.Paths...)
	}
	if hasDir {
		c.pathsWhere(isWorkingDirKey, AccessUnknown)
	}
	for i := range a.Script.Commands {
		cmd := &a.Script.Commands[i]
		access := commandAccess(cmd.Program)
		for _, arg := range cmd.Args {
			if looksLikePath(arg) {
				c.addPath("command", cmd.PathOf(arg), access, false)
			}
		}
		if len(cmd.Redirects) > 0 {
			c.redirectPaths(cmd)
		}
	}
	if len(a.Paths) == 0 {
		a.Paths = nil // as if never allocated
	}
	return nil
}

// commandLine is the command line the arguments give, the working
// directory they name (normalised) and whether they name one (a string
// under a working-directory key).
//
// Every command-bearing argument is analysed: if a caller sends both
// "command" and "cmd", which one runs is the engine's business, so the
// shield judges both. One it cannot read is an error, never an empty
// command: whatever runs would not have been judged.
func (c *collector) commandLine() (line, startDir string, hasDir bool, err error) {
	a := c.a
	var lineBuf [2]string
	lines := lineBuf[:0]
	extraArgs := false
	for i := range a.Args {
		key := a.Args[i].Key
		role := commandArgRole(key)
		if role == roleOther {
			continue
		}
		if role == roleWorkingDir {
			d, ok := a.Args[i].Value.(string)
			if !ok {
				return "", "", false, badWorkingDir(key, a.Args[i].Value)
			}
			hasDir = true
			if startDir == "" {
				startDir, _ = c.normArg(d)
			}
			continue
		}
		if role == roleExtraArgs {
			extraArgs = true
			continue
		}
		if v, ok := a.Args[i].Value.(string); ok {
			lines = append(lines, v)
			continue
		}
		l, err := argvArgument(key, a.Args[i].Value)
		if err != nil {
			return "", "", false, err
		}
		lines = append(lines, l)
	}
	switch len(lines) {
	case 0:
		return "", "", false, invalidf("execute_command has no command: give the command line in \"command\"")
	case 1:
		line = lines[0]
	default:
		line = strings.Join(lines, "\n")
	}
	if extraArgs && line != "" {
		line = appendExtraArgs(line, a.Args)
	}
	return line, startDir, hasDir, nil
}

// Roles of execute_command's arguments, for commandLine.
const (
	roleOther      = iota
	roleWorkingDir // isWorkingDirKey
	roleCommand    // holds a shell command line, or its argv
	roleExtraArgs  // "args": words appended to the command line
)

// commandArgRole is the role of an execute_command argument: one switch
// where commandLine would otherwise test each key against several.
func commandArgRole(k string) uint8 {
	switch k {
	case "cwd", "working_dir", "workdir", "dir", "directory":
		return roleWorkingDir
	case "command", "cmd", "script", "commandLine", "command_line", "code":
		return roleCommand
	case "args":
		return roleExtraArgs
	}
	return roleOther
}

// badWorkingDir is the error for a working directory that is not a
// string. (Errors are built out of line: they are rare.)
func badWorkingDir(key string, v any) error {
	return invalidf("execute_command argument %q must be a directory path (a string), got %s", key, jsonKind(v))
}

// argvArgument is the command line of a command argument that is not a
// string: an argv, or an error.
func argvArgument(key string, v any) (string, error) {
	if argv, ok := v.([]any); ok {
		return argvLine(key, argv)
	}
	return "", invalidf("execute_command argument %q must be a command line (a string) or an argv (an array of strings), got %s", key, jsonKind(v))
}

// appendExtraArgs appends the strings of an "args" array to line, each
// shell-quoted.
func appendExtraArgs(line string, args Object) string {
	argsValue, _ := args.Get("args")
	if extra, ok := argsValue.([]any); ok {
		for _, w := range extra {
			if s, ok := w.(string); ok {
				line += " " + shellQuote(s)
			}
		}
	}
	return line
}

// addScriptEvasions records the evasions the shell parse found.
func (c *collector) addScriptEvasions() {
	for _, e := range c.a.Script.Evasions {
		c.a.Evasions = append(c.a.Evasions, Evasion{Kind: e.Kind, Field: "command", Evidence: e.Evidence})
	}
}

// redirectPaths adds the files cmd's redirections read or write.
func (c *collector) redirectPaths(cmd *shell.Command) {
	for _, r := range cmd.Redirects {
		if r.Target == "" || strings.HasPrefix(r.Target, "&") {
			continue
		}
		acc := AccessWrite
		if strings.HasPrefix(r.Op, "<") && r.Op != "<>" {
			acc = AccessRead
		}
		if r.Op == "<<<" || r.Op == "<<" || r.Op == "<<-" {
			continue
		}
		c.addPath("command", cmd.PathOf(r.Target), acc, false)
	}
}

// argvLine is the command line of an argv: each word quoted so the parse
// sees the same argv. (Out of line: a command line is the usual form.)
func argvLine(key string, argv []any) (string, error) {
	words := make([]string, 0, len(argv))
	for j, w := range argv {
		s, ok := w.(string)
		if !ok {
			return "", invalidf("execute_command argument %q[%d] must be a string, got %s", key, j, jsonKind(w))
		}
		words = append(words, shellQuote(s))
	}
	return strings.Join(words, " "), nil
}

// commandPathBound is at least the number of paths collectCommand adds.
func (c *collector) commandPathBound() int {
	n := 0
	for i := range c.a.Args {
		if isWorkingDirKey(c.a.Args[i].Key) {
			n++
			if v, ok := c.a.Args[i].Value.([]any); ok {
				n += len(v)
			}
		}
	}
	for _, cmd := range c.a.Script.Commands {
		for _, arg := range cmd.Args {
			// looksLikePath's cheap half: a bound need not be exact,
			// and its scans are left to the one pass that adds paths.
			if arg != "" && arg[0] != '-' {
				n++
			}
		}
		n += len(cmd.Redirects)
	}
	return n
}

// commandAccess guesses what a program does to its path arguments.
func commandAccess(program string) Access {
	switch program {
	case "cat", "less", "more", "head", "tail", "grep", "rg", "egrep", "fgrep", "wc", "diff",
		"stat", "file", "strings", "xxd", "od", "base64", "md5sum", "sha256sum", "sha1sum",
		"sort", "uniq", "jq", "awk", "sed", "source", ".", "ls", "find", "tree", "nl", "tac":
		return AccessRead
	case "rm", "rmdir", "unlink", "shred", "srm", "wipe", "truncate":
		return AccessDelete
	case "cp", "mv", "tee", "touch", "mkdir", "chmod", "chown", "chgrp", "ln", "install", "dd", "rsync", "scp":
		return AccessWrite
	case "sh", "bash", "zsh", "dash", "ksh", "python", "python3", "perl", "ruby", "node", "exec":
		return AccessExec
	}
	return AccessUnknown
}

// looksLikePath reports whether a command argument is worth treating as a
// path: not a flag, not a URL, and not an obviously dynamic fragment.
func looksLikePath(arg string) bool {
	if arg == "" || arg[0] == '-' || len(arg) > 4096 {
		return false
	}
	if strings.IndexByte(arg, '\n') >= 0 || strings.Contains(arg, "://") {
		return false
	}
	return true
}

// shellQuote single-quotes a word for the shell parser.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '=' || r == ':' || r == ',' ||
			r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// MaxPayloadBytesOrDefault is the payload limit in force for l.
func (l Limits) MaxPayloadBytesOrDefault() int { return l.withDefaults().MaxPayloadBytes }
