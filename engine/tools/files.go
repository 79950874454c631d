package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"github.com/bmatcuk/doublestar/v4"
)

const (
	binarySniffBytes = 8000    // like git: a NUL in the first 8000 bytes means binary
	maxWalkEntries   = 200_000 // bounds a glob or search walk over a huge tree
	maxMatchLine     = 300     // bytes of a matching line shown
)

func isBinary(peek []byte) bool { return bytes.IndexByte(peek, 0) >= 0 }

// displayPath joins a walk path below rel into a workspace-relative path.
func displayPath(rel, p string) string {
	if rel == "." {
		return p
	}
	if p == "." {
		return rel
	}
	return path.Join(filepath.ToSlash(rel), p)
}

func (r *Registry) readFile(ctx context.Context, a args) Result {
	p := a.str("path")
	rel, err := r.resolve(p)
	if err == nil {
		err = r.checkStatePath(p, rel)
	}
	if err != nil {
		return errResult(fmt.Errorf("read_file: %w", err))
	}
	f, fi, err := r.openRegular(p, rel, os.O_RDONLY)
	if err != nil {
		return errResult(fmt.Errorf("read_file: %w", err))
	}
	defer f.Close()
	offset, limit := a.integer("offset", 1), a.integer("limit", defaultReadLines)

	br := bufio.NewReaderSize(f, 64<<10)
	if peek, _ := br.Peek(binarySniffBytes); isBinary(peek) {
		return errResult(fmt.Errorf("read_file: %q looks binary (it contains NUL bytes; %d bytes in all) and is not shown as text", p, fi.Size()))
	}

	line := int64(1) // number of the line the reader is at
	var consumed int64
	for line < offset { // skip to offset
		chunk, err := br.ReadSlice('\n')
		consumed += int64(len(chunk))
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // the same long line goes on
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return errResult(fmt.Errorf("read_file: %w", fsError(p, err)))
			}
			lines := line - 1
			if len(chunk) > 0 {
				lines = line
			}
			return errResult(fmt.Errorf("read_file: offset %d is past the end of %q, which has %d lines", offset, p, lines))
		}
		line++
		if line%4096 == 0 && ctx.Err() != nil {
			return errResult(fmt.Errorf("read_file: %w", ctx.Err()))
		}
	}
	if _, err := br.Peek(1); errors.Is(err, io.EOF) {
		if offset == 1 {
			return okResult(fmt.Sprintf("[%q is empty]", p), false)
		}
		return errResult(fmt.Errorf("read_file: offset %d is past the end of %q, which has %d lines", offset, p, line-1))
	}

	var out strings.Builder
	budget := r.opts.OutputLimit
	var n int64
	eof, cutMidLine := false, false
	for n < limit {
		chunk, err := br.ReadSlice('\n')
		if room := budget - out.Len(); len(chunk) > room {
			head := cutUTF8(string(chunk), room)
			out.WriteString(head)
			consumed += int64(len(head))
			cutMidLine = true
			break
		}
		out.Write(chunk)
		consumed += int64(len(chunk))
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			eof = true
			break
		}
		if err != nil {
			return errResult(fmt.Errorf("read_file: %w", fsError(p, err)))
		}
		n++
		line++
	}
	if !eof && !cutMidLine { // a cut line consumed its rest from the buffer
		if _, err := br.Peek(1); errors.Is(err, io.EOF) {
			eof = true
		}
	}
	if eof {
		return okResult(out.String(), false)
	}
	more := max(fi.Size()-consumed, 1)
	switch {
	case cutMidLine && n == 0:
		fmt.Fprintf(&out, "\n[... truncated: %d more bytes; line %d alone is longer than the %d-byte output limit: use search_files or execute_command to see parts of it]", more, line, budget)
	default:
		fmt.Fprintf(&out, "\n[... truncated: %d more bytes; continue with offset=%d]", more, line)
	}
	return okResult(out.String(), true)
}

func (r *Registry) writeFile(_ context.Context, a args) Result {
	p, content := a.str("path"), a.str("content")
	if int64(len(content)) > r.opts.MaxFileBytes {
		return errResult(fmt.Errorf("write_file: content is %d bytes, more than the %d allowed", len(content), r.opts.MaxFileBytes))
	}
	rel, err := r.resolve(p)
	if err != nil {
		return errResult(fmt.Errorf("write_file: %w", err))
	}
	if rel == "." {
		return errResult(fmt.Errorf("write_file: %q is the workspace root, a directory; give a file path", p))
	}
	if hasGitComponent(rel) {
		return errResult(fmt.Errorf("write_file: %w", errGitWrite(p)))
	}
	if err := r.checkStatePath(p, rel); err != nil {
		return errResult(fmt.Errorf("write_file: %w", err))
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := r.mkdirParents(p, dir); err != nil {
			return errResult(fmt.Errorf("write_file: %w", err))
		}
	}
	created := true
	f, err := r.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0o644)
	var fi fs.FileInfo
	switch {
	case errors.Is(err, fs.ErrExist):
		created = false
		f, fi, err = r.openRegular(p, rel, os.O_WRONLY)
	case err == nil:
		fi, err = f.Stat()
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		return errResult(fmt.Errorf("write_file: %w", fsError(p, err)))
	}
	defer f.Close()
	if !created {
		if err := checkHardLinks(p, fi); err != nil {
			return errResult(fmt.Errorf("write_file: %w", err))
		}
	}
	if err := r.checkWriteTarget(p, rel, f); err != nil {
		if created {
			r.root.Remove(rel)
		}
		return errResult(fmt.Errorf("write_file: %w", err))
	}
	if err := f.Truncate(0); err != nil {
		return errResult(fmt.Errorf("write_file: %w", fsError(p, err)))
	}
	if _, err := f.WriteAt([]byte(content), 0); err != nil {
		return errResult(fmt.Errorf("write_file: %w", fsError(p, err)))
	}
	if err := f.Close(); err != nil {
		return errResult(fmt.Errorf("write_file: %w", fsError(p, err)))
	}
	if created {
		return okResult(fmt.Sprintf("created %s (%d bytes)", p, len(content)), false)
	}
	return okResult(fmt.Sprintf("wrote %s (%d bytes, previously %d)", p, len(content), fi.Size()), false)
}

func (r *Registry) editFile(_ context.Context, a args) Result {
	p, oldS, newS := a.str("path"), a.str("old_string"), a.str("new_string")
	if oldS == newS {
		return errResult(errors.New("edit_file: old_string and new_string are identical; there is nothing to change"))
	}
	rel, err := r.resolve(p)
	if err != nil {
		return errResult(fmt.Errorf("edit_file: %w", err))
	}
	if hasGitComponent(rel) {
		return errResult(fmt.Errorf("edit_file: %w", errGitWrite(p)))
	}
	if err := r.checkStatePath(p, rel); err != nil {
		return errResult(fmt.Errorf("edit_file: %w", err))
	}
	f, fi, err := r.openRegular(p, rel, os.O_RDWR)
	if err != nil {
		return errResult(fmt.Errorf("edit_file: %w", err))
	}
	defer f.Close()
	if err := checkHardLinks(p, fi); err != nil {
		return errResult(fmt.Errorf("edit_file: %w", err))
	}
	if err := r.checkWriteTarget(p, rel, f); err != nil {
		return errResult(fmt.Errorf("edit_file: %w", err))
	}
	limit := r.opts.MaxFileBytes
	if fi.Size() > limit {
		return errResult(fmt.Errorf("edit_file: %q is %d bytes, more than the %d that can be edited", p, fi.Size(), limit))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return errResult(fmt.Errorf("edit_file: %w", fsError(p, err)))
	}
	if int64(len(data)) > limit {
		return errResult(fmt.Errorf("edit_file: %q grew past %d bytes while being read", p, limit))
	}
	content := string(data)
	count := strings.Count(content, oldS)
	switch {
	case count == 0:
		return errResult(fmt.Errorf("edit_file: old_string was not found in %q; read the file and copy the exact text, including whitespace, indentation and line endings", p))
	case count > 1 && !a.boolean("replace_all"):
		return errResult(fmt.Errorf("edit_file: old_string occurs %d times in %q; include more surrounding lines to make it unique, or set replace_all to true", count, p))
	}
	firstLine := strings.Count(content[:strings.Index(content, oldS)], "\n") + 1
	var updated string
	if a.boolean("replace_all") {
		updated = strings.ReplaceAll(content, oldS, newS)
	} else {
		updated = strings.Replace(content, oldS, newS, 1)
	}
	if int64(len(updated)) > limit {
		return errResult(fmt.Errorf("edit_file: the edited file would be %d bytes, more than the %d allowed", len(updated), limit))
	}
	if _, err := f.WriteAt([]byte(updated), 0); err != nil {
		return errResult(fmt.Errorf("edit_file: %w", fsError(p, err)))
	}
	if err := f.Truncate(int64(len(updated))); err != nil {
		return errResult(fmt.Errorf("edit_file: %w", fsError(p, err)))
	}
	if err := f.Close(); err != nil {
		return errResult(fmt.Errorf("edit_file: %w", fsError(p, err)))
	}
	return okResult(fmt.Sprintf("edited %s: replaced %d occurrence(s), the first at line %d", p, count, firstLine), false)
}

// openDir opens a directory argument as a sub-root; what is below it stays
// confined to it, and so to the workspace. It also returns the directory's
// real workspace-relative path, read from the sub-root's own descriptor,
// which walks use to skip the state directory.
func (r *Registry) openDir(p, rel string) (*os.Root, string, error) {
	if err := r.checkStatePath(p, rel); err != nil {
		return nil, "", err
	}
	fi, err := r.root.Stat(rel)
	if err != nil {
		return nil, "", fsError(p, err)
	}
	if !fi.IsDir() {
		return nil, "", fmt.Errorf("%q is a file, not a directory", p)
	}
	sub, err := r.root.OpenRoot(rel)
	if err != nil {
		return nil, "", fsError(p, err)
	}
	real, err := r.subRootReal(p, rel, sub)
	if err != nil {
		sub.Close()
		return nil, "", err
	}
	return sub, real, nil
}

// subRootReal returns the real workspace-relative path of a sub-root opened
// as rel, refusing the state directory.
func (r *Registry) subRootReal(p, rel string, sub *os.Root) (string, error) {
	d, err := sub.Open(".")
	if err != nil {
		return "", fsError(p, err)
	}
	defer d.Close()
	real, err := r.realRel(p, rel, d)
	if err != nil {
		return "", err
	}
	if isStateRel(real) {
		return "", errStatePath(p)
	}
	return real, nil
}

// entryLine formats one listing entry.
func entryLine(sub *os.Root, walkPath, shown string, d fs.DirEntry) string {
	t := d.Type()
	switch {
	case t.IsDir():
		return shown + "/"
	case t&fs.ModeSymlink != 0:
		target, err := sub.Readlink(walkPath)
		if err != nil {
			return shown + " -> ?"
		}
		return shown + " -> " + target
	case t.IsRegular():
		if info, err := d.Info(); err == nil {
			return fmt.Sprintf("%s (%d bytes)", shown, info.Size())
		}
		return shown
	}
	return fmt.Sprintf("%s [%s]", shown, strings.TrimPrefix(fileType(t), "a "))
}

func (r *Registry) listDirectory(ctx context.Context, a args) Result {
	p := a.str("path")
	rel, err := r.resolveDir(p)
	if err != nil {
		return errResult(fmt.Errorf("list_directory: %w", err))
	}
	if p == "" {
		p = "."
	}
	sub, base, err := r.openDir(p, rel)
	if err != nil {
		return errResult(fmt.Errorf("list_directory: %w", err))
	}
	defer sub.Close()
	fsys := sub.FS()
	limit := r.opts.MaxEntries
	var lines []string
	truncated := false

	if !a.boolean("recursive") {
		entries, err := fs.ReadDir(fsys, ".")
		if err != nil {
			return errResult(fmt.Errorf("list_directory: %w", fsError(p, err)))
		}
		entries = slices.DeleteFunc(entries, func(d fs.DirEntry) bool { return inState(base, d.Name()) })
		for i, d := range entries {
			if i == limit {
				lines = append(lines, fmt.Sprintf("[... truncated: %d more entries]", len(entries)-limit))
				truncated = true
				break
			}
			lines = append(lines, entryLine(sub, d.Name(), displayPath(rel, d.Name()), d))
		}
	} else {
		err := fs.WalkDir(fsys, ".", func(wp string, d fs.DirEntry, err error) error {
			if wp == "." {
				return err
			}
			if inState(base, wp) { // not even listed
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if err != nil { // an unreadable subdirectory: say so and go on
				lines = append(lines, fmt.Sprintf("%s/ [unreadable: %v]", displayPath(rel, wp), errors.Unwrap(err)))
				return nil
			}
			if len(lines) == limit {
				truncated = true
				return fs.SkipAll
			}
			if len(lines)%256 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			lines = append(lines, entryLine(sub, wp, displayPath(rel, wp), d))
			if d.IsDir() && d.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		})
		if err != nil {
			return errResult(fmt.Errorf("list_directory: %w", fsError(p, err)))
		}
		if truncated {
			lines = append(lines, fmt.Sprintf("[... truncated: listing stopped after %d entries; list a subdirectory or use glob_files to narrow it]", limit))
		}
	}
	if len(lines) == 0 {
		return okResult(fmt.Sprintf("[%s is empty]", p), false)
	}
	out, cut := capString(strings.Join(lines, "\n"), r.opts.OutputLimit)
	return okResult(out, truncated || cut)
}

// checkGlob refuses patterns that can't do what the model meant.
func checkGlob(arg, pattern string) error {
	if strings.HasPrefix(pattern, "/") {
		return fmt.Errorf("%s %q is absolute; give it relative to path (default: the workspace root)", arg, pattern)
	}
	if !doublestar.ValidatePattern(pattern) {
		return fmt.Errorf("%s %q is not a valid glob (check brackets, braces and escapes)", arg, pattern)
	}
	if slices.Contains(strings.Split(pattern, "/"), "..") {
		return fmt.Errorf("%s %q contains '..'; patterns match below path, which must stay in the workspace", arg, pattern)
	}
	return nil
}

// patternNamesState refuses a pattern whose first segment names the state
// directory below base (the real workspace-relative path the pattern is
// relative to). Walks skip the directory anyway; this says why nothing
// would match.
func patternNamesState(arg, pattern, base string) error {
	first, _, _ := strings.Cut(pattern, "/")
	if !strings.ContainsAny(first, `*?[{\`) && inState(base, first) {
		return fmt.Errorf("%s %q names %s, which is %w", arg, pattern, StateDirName, errInState)
	}
	return nil
}

// literalPrefix returns the leading pattern directories without glob
// syntax, where a walk can start instead of at the top.
func literalPrefix(pattern string) string {
	segs := strings.Split(pattern, "/")
	var lit []string
	for _, s := range segs[:len(segs)-1] {
		if strings.ContainsAny(s, `*?[{\`) {
			break
		}
		lit = append(lit, s)
	}
	if len(lit) == 0 {
		return "."
	}
	return path.Clean(strings.Join(lit, "/"))
}

func (r *Registry) globFiles(ctx context.Context, a args) Result {
	pattern, p := a.str("pattern"), a.str("path")
	if err := checkGlob("pattern", pattern); err != nil {
		return errResult(fmt.Errorf("glob_files: %w", err))
	}
	rel, err := r.resolveDir(p)
	if err != nil {
		return errResult(fmt.Errorf("glob_files: %w", err))
	}
	if p == "" {
		p = "."
	}
	sub, base, err := r.openDir(p, rel)
	if err != nil {
		return errResult(fmt.Errorf("glob_files: %w", err))
	}
	defer sub.Close()
	if err := patternNamesState("pattern", pattern, base); err != nil {
		return errResult(fmt.Errorf("glob_files: %w", err))
	}
	wantGit := strings.Contains(strings.ToLower(pattern), ".git")
	// The walk starts at the pattern's literal directories, opened as a
	// sub-root of path so that its real path is known and checked too.
	start := literalPrefix(pattern)
	walkRoot, startReal := sub, base
	if start != "." {
		if err := r.checkStatePath(displayPath(rel, start), filepath.Join(rel, filepath.FromSlash(start))); err != nil {
			return errResult(fmt.Errorf("glob_files: pattern %q: %w", pattern, err))
		}
		if walkRoot, err = sub.OpenRoot(start); err != nil {
			return okResult(fmt.Sprintf("no paths match %q under %s", pattern, p), false)
		}
		defer walkRoot.Close()
		if startReal, err = r.subRootReal(displayPath(rel, start), filepath.Join(rel, filepath.FromSlash(start)), walkRoot); err != nil {
			return errResult(fmt.Errorf("glob_files: pattern %q: %w", pattern, err))
		}
	}

	var matches []string
	visited := 0
	stop := ""
	err = fs.WalkDir(walkRoot.FS(), ".", func(wp string, d fs.DirEntry, err error) error {
		if wp != "." && inState(startReal, wp) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if err != nil {
			return nil // unreadable: nothing to match below it
		}
		wp = displayPath(start, wp) // relative to path, as the pattern is
		if visited++; visited > maxWalkEntries {
			stop = fmt.Sprintf("[... truncated: stopped after visiting %d entries; give a narrower path or pattern]", maxWalkEntries)
			return fs.SkipAll
		}
		if visited%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() && strings.EqualFold(d.Name(), ".git") && !wantGit {
			return fs.SkipDir
		}
		if wp != "." && doublestar.MatchUnvalidated(pattern, wp) {
			if len(matches) == r.opts.MaxEntries {
				stop = fmt.Sprintf("[... truncated: stopped at %d matches; give a narrower path or pattern]", r.opts.MaxEntries)
				return fs.SkipAll
			}
			shown := displayPath(rel, wp)
			if d.IsDir() {
				shown += "/"
			}
			matches = append(matches, shown)
		}
		return nil
	})
	if err != nil {
		return errResult(fmt.Errorf("glob_files: %w", fsError(p, err)))
	}
	if len(matches) == 0 && stop == "" {
		return okResult(fmt.Sprintf("no paths match %q under %s", pattern, p), false)
	}
	if stop != "" {
		matches = append(matches, stop)
	}
	out, cut := capString(strings.Join(matches, "\n"), r.opts.OutputLimit)
	return okResult(out, stop != "" || cut)
}

// searchState accumulates search_files results across files.
type searchState struct {
	re        *regexp.Regexp
	max       int
	lines     []string
	full      bool // max matches reached with more to come
	walkCut   bool // the walk stopped at maxWalkEntries
	binary    int
	tooLarge  int
	longLines int
	unread    int
}

func (r *Registry) searchFiles(ctx context.Context, a args) Result {
	pattern, p, include := a.str("pattern"), a.str("path"), a.str("include")
	re, err := regexp.Compile(pattern)
	if err != nil {
		return errResult(fmt.Errorf("search_files: pattern is not a valid RE2 regular expression: %v", err))
	}
	if include != "" {
		if err := checkGlob("include", include); err != nil {
			return errResult(fmt.Errorf("search_files: %w", err))
		}
	}
	rel, err := r.resolveDir(p)
	if err != nil {
		return errResult(fmt.Errorf("search_files: %w", err))
	}
	if p == "" {
		p = "."
	}
	st := &searchState{re: re, max: int(a.integer("max_results", int64(r.opts.MaxMatches)))}

	if err := r.checkStatePath(p, rel); err != nil {
		return errResult(fmt.Errorf("search_files: %w", err))
	}
	fi, err := r.root.Stat(rel)
	if err != nil {
		return errResult(fmt.Errorf("search_files: %w", fsError(p, err)))
	}
	switch {
	case fi.Mode().IsRegular(): // one file
		f, _, err := r.openRegular(p, rel, os.O_RDONLY)
		if err != nil {
			return errResult(fmt.Errorf("search_files: %w", err))
		}
		r.searchFile(st, f, filepath.ToSlash(rel))
		f.Close()
	case fi.IsDir():
		sub, base, err := r.openDir(p, rel)
		if err != nil {
			return errResult(fmt.Errorf("search_files: %w", err))
		}
		defer sub.Close()
		if strings.Contains(include, "/") { // a slash matches include against the path below path
			if err := patternNamesState("include", include, base); err != nil {
				return errResult(fmt.Errorf("search_files: %w", err))
			}
		}
		visited := 0
		err = fs.WalkDir(sub.FS(), ".", func(wp string, d fs.DirEntry, err error) error {
			if wp != "." && inState(base, wp) {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if err != nil {
				st.unread++
				return nil
			}
			if st.full {
				return fs.SkipAll
			}
			if visited++; visited > maxWalkEntries {
				st.walkCut = true
				return fs.SkipAll
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if d.IsDir() {
				if strings.EqualFold(d.Name(), ".git") {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() { // symbolic links are not followed
				return nil
			}
			if include != "" {
				target := d.Name()
				if strings.Contains(include, "/") {
					target = wp
				}
				if !doublestar.MatchUnvalidated(include, target) {
					return nil
				}
			}
			f, err := sub.OpenFile(wp, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
			if err != nil {
				st.unread++
				return nil
			}
			defer f.Close()
			if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
				st.unread++
				return nil
			} else if info.Size() > r.opts.MaxFileBytes {
				st.tooLarge++
				return nil
			}
			r.searchFile(st, f, displayPath(rel, wp))
			return nil
		})
		if err != nil {
			return errResult(fmt.Errorf("search_files: %w", fsError(p, err)))
		}
	default:
		return errResult(fmt.Errorf("search_files: %q is %s; refused", p, fileType(fi.Mode())))
	}

	var out strings.Builder
	if len(st.lines) == 0 {
		fmt.Fprintf(&out, "no matches for %q in %s", pattern, p)
	} else {
		out.WriteString(strings.Join(st.lines, "\n"))
	}
	if st.full {
		fmt.Fprintf(&out, "\n[... truncated: stopped at %d matching lines; narrow the pattern, path or include]", len(st.lines))
	}
	if st.walkCut {
		fmt.Fprintf(&out, "\n[... truncated: stopped after visiting %d entries; give a narrower path or include]", maxWalkEntries)
	}
	var skipped []string
	for _, s := range []struct {
		n    int
		what string
	}{{st.binary, "binary"}, {st.tooLarge, fmt.Sprintf("over %d bytes", r.opts.MaxFileBytes)}, {st.longLines, "with a line over 1 MiB (searched up to it)"}, {st.unread, "unreadable"}} {
		if s.n > 0 {
			skipped = append(skipped, fmt.Sprintf("%d %s", s.n, s.what))
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&out, "\n[files skipped: %s]", strings.Join(skipped, ", "))
	}
	res, cut := capString(out.String(), r.opts.OutputLimit)
	return okResult(res, st.full || st.walkCut || cut)
}

// searchFile appends the matching lines of one open regular file.
func (r *Registry) searchFile(st *searchState, f *os.File, shown string) {
	br := bufio.NewReaderSize(f, 64<<10)
	if peek, _ := br.Peek(binarySniffBytes); isBinary(peek) {
		st.binary++
		return
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if !st.re.Match(line) {
			continue
		}
		if len(st.lines) == st.max {
			st.full = true
			return
		}
		text := strings.TrimRight(string(line), "\r")
		if len(text) > maxMatchLine {
			text = cutUTF8(text, maxMatchLine) + "…"
		}
		st.lines = append(st.lines, fmt.Sprintf("%s:%d: %s", shown, n, text))
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		st.longLines++
	}
}
