package action

import (
	"net/url"
	"path"
	"strings"
)

// ResolvePath cleans p and places it relative to the caller's workspace
// root and home. "~", "$HOME" and "${HOME}" mean the caller's home; when the
// caller gave none they stay as "~". It reports whether percent-encoding
// hid path structure ("%2e%2e%2f"), which is decoded before matching.
func ResolvePath(p, root, home string) (Path, bool) {
	return resolvePath(p, root, home, isCleanNoDots(root), nil)
}

// CommandPath resolves a word of a's command line (or of text decoded
// from it) as ResolvePath does with the caller's directories, Raw set to
// the word. Canonicalize resolved the command's path arguments already;
// their resolution is reused when it is the same: for plain ASCII, which
// normalisation leaves as it is. The reuse is a linear search, so it is
// skipped for long lists: resolving again costs the same for every word,
// while searching would make a long command line quadratic.
func (a *Action) CommandPath(word string) Path {
	if len(a.Paths) <= maxReusedPaths && isPlainASCII(word) {
		for i := range a.Paths {
			if p := &a.Paths[i]; p.Raw == word && p.Field == "command" {
				r := *p
				r.Field, r.Access = "", AccessUnknown
				return r
			}
		}
	}
	r, _ := ResolvePath(word, a.Caller.WorkspaceRoot, a.Caller.Home)
	r.Raw = word
	return r
}

// maxReusedPaths bounds the search in CommandPath.
const maxReusedPaths = 16

// resolvePath is ResolvePath making its strings in mem (nil: on the heap).
// rootNoDots is isCleanNoDots(root), which callers resolving many paths
// against one root work out once.
func resolvePath(p, root, home string, rootNoDots bool, mem *arena) (Path, bool) {
	encoded := false
	if strings.IndexByte(p, '%') >= 0 && hidesPathSyntax(p) {
		if d, err := url.PathUnescape(p); err == nil {
			p, encoded = d, true
		}
	}
	p = expandHome(p, home, mem)
	var abs string
	switch {
	case root != "" && (p == "" || p[0] != '/' && p[0] != '~'):
		abs = joinRoot(root, rootNoDots, p, mem)
	default:
		abs = cleanPath(p)
	}
	abs = throughProcRoot(abs)
	out := Path{Abs: abs}
	switch {
	case root != "":
		if abs == root {
			out.Rel, out.InWorkspace = ".", true
		} else if root == "/" && strings.HasPrefix(abs, "/") {
			out.Rel, out.InWorkspace = abs[1:], true
		} else if len(abs) > len(root) && abs[len(root)] == '/' && strings.HasPrefix(abs, root) {
			out.Rel, out.InWorkspace = abs[len(root)+1:], true
		}
	case !strings.HasPrefix(abs, "/") && !strings.HasPrefix(abs, "~") && abs != ".." && !strings.HasPrefix(abs, "../"):
		// No workspace root given: a relative path that stays below the
		// working directory is taken as workspace-relative.
		out.Rel, out.InWorkspace = abs, true
	}
	return out, encoded
}

// throughProcRoot reads /proc/PID/root/X (also self, thread-self) as
// /X: the file system root of that process, which for pid 1 or this
// process is the machine's own.
func throughProcRoot(abs string) string {
	rest, ok := strings.CutPrefix(abs, "/proc/")
	if !ok {
		return abs
	}
	pid, after, _ := strings.Cut(rest, "/")
	if pid == "" || (pid != "self" && pid != "thread-self" && strings.Trim(pid, "0123456789") != "") {
		return abs
	}
	if after == "root" {
		return "/"
	}
	if inner, ok := strings.CutPrefix(after, "root/"); ok {
		return "/" + inner
	}
	return abs
}

// hidesPathSyntax reports whether p percent-encodes a character that
// shapes a path (".", "/", "~", "\\"). Only then is it decoded: a file may
// really be called "a%20b.txt", but "%2e%2e%2f" is only ever a disguise.
func hidesPathSyntax(p string) bool {
	for i := 0; i+2 < len(p); i++ {
		if p[i] != '%' {
			continue
		}
		switch strings.ToLower(p[i+1 : i+3]) {
		case "2e", "2f", "7e", "5c":
			return true
		}
	}
	return false
}

func expandHome(p, home string, mem *arena) string {
	if p == "" || p[0] != '~' && p[0] != '$' {
		return p // every form below starts with "~" or "$"
	}
	rest, ok := "", false
	for _, prefix := range []string{"~", "$HOME", "${HOME}"} {
		if p == prefix {
			rest, ok = "", true
			break
		}
		if strings.HasPrefix(p, prefix+"/") {
			rest, ok = p[len(prefix):], true
			break
		}
	}
	if !ok {
		if strings.HasPrefix(p, "~") && len(p) > 1 { // ~user/…
			user, tail, _ := strings.Cut(p[1:], "/")
			return "/home/" + user + "/" + tail
		}
		return p
	}
	if home == "" {
		return concat(mem, "~", rest, "")
	}
	return concat(mem, home, rest, "")
}

// concat is a + b + c, in mem when there is one.
func concat(mem *arena, a, b, c string) string {
	switch {
	case b == "" && c == "":
		return a
	case mem != nil:
		return mem.concat(a, b, c)
	}
	return a + b + c
}

// cleanRoot cleans a caller-stated directory; "" stays "".
func cleanRoot(dir string) string {
	if dir == "" {
		return ""
	}
	return cleanPath(dir)
}

// cleanRootNoDots is cleanRoot that also reports isCleanNoDots of the
// result, with one scan for the usual clean directory.
func cleanRootNoDots(dir string) (string, bool) {
	if dir == "" {
		return "", false
	}
	if isCleanNoDots(dir) {
		return dir, true
	}
	dir = path.Clean(dir)
	return dir, isCleanNoDots(dir)
}

// cleanPath is path.Clean without its scan and copy for the usual path
// that is clean already.
func cleanPath(p string) string {
	if isCleanNoDots(p) {
		return p
	}
	return path.Clean(p)
}

// joinClean is path.Join(root, p) for a non-empty root. When both are
// already clean and free of "." and ".." elements, the join is plain
// concatenation, which spares path.Clean's scan and copy.
func joinClean(root, p string, mem *arena) string {
	return joinRoot(root, isCleanNoDots(root), p, mem)
}

// joinRoot is joinClean given rootNoDots, isCleanNoDots(root).
func joinRoot(root string, rootNoDots bool, p string, mem *arena) string {
	if rootNoDots && p != "" && p[0] != '/' && isCleanNoDots(p) {
		if root == "/" {
			return concat(mem, "/", p, "")
		}
		return concat(mem, root, "/", p)
	}
	return path.Join(root, p)
}

// isCleanNoDots reports whether path.Clean(s) == s because s has nothing
// for Clean to do: non-empty, no empty, "." or ".." elements and no
// trailing slash (except "/" itself).
func isCleanNoDots(s string) bool {
	n := len(s)
	if n == 0 {
		return false
	}
	if n == 1 && s[0] == '/' {
		return true
	}
	if s[n-1] == '/' {
		return false
	}
	// Only an element that starts with "/" or "." can be "", "." or
	// "..": words where no element starts with either are passed over
	// eight bytes at a time, and the rest is left to the byte loop.
	i := 0
	if s[0] == '/' {
		i = 1
	}
	if n-i >= 8 {
		// starts marks, in the word at i, the bytes that begin an element.
		starts := uint64(0x80)
		for ; i+8 <= n; i += 8 {
			x := load8(s, i)
			slashes := zeroBytes(x ^ (lows * '/'))
			starts |= slashes << 8
			if starts&(slashes|zeroBytes(x^(lows*'.'))) != 0 {
				return cleanNoDotsFrom(s, i, i == 0 || s[i-1] == '/')
			}
			starts = slashes >> 56 // the next word's first byte, if this one ended in "/"
		}
		return cleanNoDotsFrom(s, i, starts != 0)
	}
	return cleanNoDotsFrom(s, i, true)
}

// cleanNoDotsFrom is isCleanNoDots's byte loop over s[i:], where an element
// starts at i when atStart (i is 0 or follows a "/").
func cleanNoDotsFrom(s string, i int, atStart bool) bool {
	n := len(s)
	for ; i < n; i++ {
		c := s[i]
		if atStart {
			switch {
			case c == '/':
				return false // an empty element
			case c == '.' && (i+1 == n || s[i+1] == '/'):
				return false // "."
			case c == '.' && s[i+1] == '.' && (i+2 == n || s[i+2] == '/'):
				return false // ".."
			}
		}
		atStart = c == '/'
	}
	return true
}
