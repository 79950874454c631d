package engine

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/shell"
)

// Limits on what one evaluation carries of the scripts a command runs:
// together they stay well inside the shield's message limit.
const (
	maxAttachments     = 8
	maxAttachmentBytes = 128 << 10
	maxAttachedTotal   = 512 << 10
)

// scriptAttachments reads the workspace scripts a shell command runs
// (bash build.sh, ./run.sh, make's Makefile, npm's package.json, …) so
// that the shield judges the code that will run, not only its name. A
// workspace script the engine cannot read (not a regular file, a link
// leading out of the workspace, unreadable, in a directory the line
// computes) is attached as unreadable: the shield treats its content as
// unknown. Programs named outside the workspace (~/go/bin/tool) are
// installed tools, not attached; nor is a missing file, which cannot run.
func scriptAttachments(workspace, actionType string, payload []byte) []*pb.Attachment {
	if actionType != "execute_command" {
		return nil
	}
	var args struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(payload, &args) != nil || args.Command == "" {
		return nil
	}
	sc := shell.Parse(args.Command)
	defer sc.Release()
	var out []*pb.Attachment
	seen := map[string]bool{}
	total := 0
	for i := range sc.Commands {
		file, _, implicit, ok := shell.ScriptRun(&sc.Commands[i])
		if !ok || seen[file] || len(out) >= maxAttachments {
			continue
		}
		seen[file] = true
		content, err := readScript(workspace, file, min(maxAttachmentBytes, maxAttachedTotal-total))
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, errNotWorkspace):
			continue
		case err != nil:
			if implicit && errors.Is(err, errOutside) {
				continue
			}
			out = append(out, &pb.Attachment{Path: file, Unreadable: true})
		default:
			total += len(content)
			out = append(out, &pb.Attachment{Path: file, Content: content})
		}
	}
	return out
}

// sameAttachments reports whether two readings of a command's scripts
// are the same files with the same contents.
func sameAttachments(a, b []*pb.Attachment) bool {
	return slices.EqualFunc(a, b, func(x, y *pb.Attachment) bool {
		return x.GetPath() == y.GetPath() && x.GetUnreadable() == y.GetUnreadable() && x.GetContent() == y.GetContent()
	})
}

var (
	errOutside      = errors.New("leads outside the workspace")
	errNotWorkspace = errors.New("not in the workspace")
)

// readScript reads up to limit bytes of a regular file inside the
// workspace (cut at a line end, so a long script is judged by its whole
// lines). Symbolic links are followed only if they stay inside.
func readScript(workspace, file string, limit int) (string, error) {
	if strings.HasPrefix(file, shell.UnknownDir) {
		return "", errOutside // somewhere the line computes
	}
	if strings.HasPrefix(file, "~") || strings.HasPrefix(file, "$") {
		return "", errNotWorkspace
	}
	p := file
	if !filepath.IsAbs(p) {
		p = filepath.Join(workspace, p)
	}
	p = filepath.Clean(p)
	if rel, err := filepath.Rel(filepath.Clean(workspace), p); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", errNotWorkspace
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	ws, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		ws = workspace
	}
	if rel, err := filepath.Rel(ws, real); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", errOutside
	}
	f, err := os.Open(real)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() || limit <= 0 {
		return "", errors.New("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)))
	if err != nil {
		return "", err
	}
	if st.Size() > int64(len(b)) {
		if i := strings.LastIndexByte(string(b), '\n'); i >= 0 {
			b = b[:i+1]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), nil
}
