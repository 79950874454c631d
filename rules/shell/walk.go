package shell

import (
	"mvdan.cc/sh/v3/syntax"
)

// maxNesting bounds how many compound commands (subshells, blocks, if,
// while, case, functions, …) the walker descends through. The bracket
// guard in prescan.go does not see keyword nesting (if … then if … then).
const maxNesting = 200

// frame is the context a statement is analysed in.
type frame struct {
	// src is the source that AST positions refer to (the top-level line or
	// the nested script being analysed).
	src        string
	depth      int
	via        string
	background bool
	// redirs are redirections of enclosing compound commands, which apply
	// to every command inside them ({ a; b; } > f).
	redirs []Redirect
	// nest counts enclosing compound commands; wrap counts enclosing
	// wrappers (sudo env nice …), both bounded to keep work finite.
	nest, wrap int
	// cond: inside a branch or loop body, which may or may not run.
	cond bool
	// chdir is the directory a wrapper (env -C, sudo -D) runs its
	// program in, or "".
	chdir string
	// dialect names the shell that runs this script when it is not bash
	// (sh -c, dash <<EOF): constructs bash reads differently are flagged.
	dialect string
}

// walker accumulates the analysis of one Parse call.
type walker struct {
	s *Script
	// nestedParses counts re-parsed nested scripts, bounded by
	// maxNestedParses so a line full of bash -c cannot multiply work.
	nestedParses, nestedBytes int
	buf                       []byte  // scratch space for building words
	bufp                      *[]byte // where buf came from (bufPool)
	// args, when not nil, is room for the Args of the commands to come,
	// so that one allocation serves several commands; ints likewise for
	// the member lists of pipelines and redirs for redirections.
	args   []string
	ints   []int
	redirs []Redirect
	// subs is the stack of substitutions found in the statements being
	// walked (see stmt).
	subs       []subst
	noFastPath bool // tests only: always run the full parser

	// sem is the directory and variable state of the line so far
	// (semantics.go); cdpathSet: the line set CDPATH, so relative cd
	// targets are unknown.
	sem       semState
	cdpathSet bool
	// listing, while a pipeline element is walked, is listedGlobs of the
	// command before it (find … | while read f): the names it reads.
	listing string
	// pickName / pick: while a word is rendered once per value of a
	// variable that may hold several, which value.
	pickName string
	pick     int
	// defs are the functions, aliases and program copies the line has
	// defined (defs.go).
	defs defs
}

// subst is a command or process substitution found while rendering words;
// it is analysed after the command that contains it.
type subst struct {
	stmts []*syntax.Stmt
	via   string
}

func (w *walker) stmts(list []*syntax.Stmt, fr frame) {
	for _, st := range list {
		w.stmt(st, fr)
	}
}

func (w *walker) stmt(st *syntax.Stmt, fr frame) {
	if st == nil {
		return
	}
	if st.Background || st.Coprocess || st.Disown {
		fr.background = true
		// A background job is a subshell: its cd and assignments stay there.
		saved := w.sem.save()
		defer func() { w.sem = saved }()
	}
	// The statement's substitutions go on the walker's stack (a local
	// slice whose address is passed down would be moved to the heap):
	// they are w.subs[base:] until walked, and nested statements leave
	// the stack as they found it.
	base := len(w.subs)
	subs := &w.subs
	redirs := w.redirects(st.Redirs, fr, subs)
	switch cmd := st.Cmd.(type) {
	case nil:
		// Only redirections: "> file" still truncates a file.
		w.emitCall(nil, nil, joinRedirs(fr.redirs, redirs), fr)
	case *syntax.CallExpr:
		if len(cmd.Args) > 0 {
			w.checkAllRedirOrder(st.Redirs, cmd.Args[len(cmd.Args)-1].Pos().Offset(), fr)
		}
		fields := w.words(cmd.Args, fr, subs)
		assigns := w.assigns(cmd.Assigns, fr, subs)
		w.emitCall(fields, assigns, joinRedirs(fr.redirs, redirs), fr)
		if len(cmd.Args) == 0 {
			w.assignStmt(cmd.Assigns, fr, false)
		}
	case *syntax.DeclClause:
		w.checkDialect(cmd, fr)
		fields := make([]field, 0, 1+len(cmd.Args))
		fields = append(fields, field{text: cmd.Variant.Value, raw: cmd.Variant.Value})
		for _, a := range cmd.Args {
			s := w.assign(a, fr, subs)
			fields = append(fields, field{text: s, raw: s})
		}
		w.emitCall(fields, nil, joinRedirs(fr.redirs, redirs), fr)
		w.assignStmt(cmd.Args, fr, declExports(cmd))
		w.execEnv(texts(fields[1:]), fr)
	default:
		if fr.nest >= maxNesting {
			w.s.TooDeep = true
			w.evasion("too-deep", w.raw(st, fr))
			w.subs = w.subs[:base]
			return
		}
		inner := fr
		inner.nest++
		if len(redirs) > 0 {
			inner.redirs = joinRedirs(fr.redirs, redirs)
		}
		w.compound(st.Cmd, inner, subs)
	}
	// Walking them pushes past the end of this list, never into it.
	w.substitutions(w.subs[base:], fr)
	w.subs = w.subs[:base]
}

// compound walks the bodies and conditions of a compound command.
func (w *walker) compound(c syntax.Command, fr frame, subs *[]subst) {
	w.checkDialect(c, fr)
	switch c.(type) {
	case *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause, *syntax.FuncDecl:
		// A body that may not run (or run later) leaves the directory
		// uncertain if it changes it.
		before := w.sem.dir
		fr.cond = true
		defer func() {
			if w.sem.dir != before {
				w.sem.dir = UnknownDir
			}
		}()
	case *syntax.Subshell:
		saved := w.sem.save()
		defer func() { w.sem = saved }()
	}
	switch cmd := c.(type) {
	case *syntax.BinaryCmd:
		if cmd.Op == syntax.Pipe || cmd.Op == syntax.PipeAll {
			w.pipeline(cmd, fr)
			return
		}
		// a && b || c nests to the left; walk it as a flat list so a
		// long chain does not recurse once per element.
		w.stmts(flattenBinary(cmd, syntax.AndStmt, syntax.OrStmt), fr)
	case *syntax.Subshell:
		fr.via = "subshell"
		w.stmts(cmd.Stmts, fr)
	case *syntax.Block:
		w.stmts(cmd.Stmts, fr)
	case *syntax.IfClause:
		for clause := cmd; clause != nil; clause = clause.Else {
			w.stmts(clause.Cond, fr)
			w.stmts(clause.Then, fr)
		}
	case *syntax.WhileClause:
		first, listing := len(w.s.Commands), w.listing
		w.listing = ""
		w.stmts(cmd.Cond, fr)
		for i := first; i < len(w.s.Commands); i++ {
			if c := &w.s.Commands[i]; c.Program == "read" {
				names := readNames(c.Args)
				if listing != "" && len(names) == 1 {
					// find … | while read f: f is each name the listing
					// writes, as for f in $(find …) would be.
					w.bindListing(names[0], listing)
					continue
				}
				w.s.Iterated = append(w.s.Iterated, names...)
			}
		}
		w.stmts(cmd.Do, fr)
	case *syntax.ForClause:
		switch loop := cmd.Loop.(type) {
		case *syntax.WordIter:
			w.loopVar(loop, w.words(loop.Items, fr, subs))
		case *syntax.CStyleLoop:
			collectSubsts(loop, subs)
		}
		w.stmts(cmd.Do, fr)
	case *syntax.CaseClause:
		w.words([]*syntax.Word{cmd.Word}, fr, subs)
		for _, item := range cmd.Items {
			w.words(item.Patterns, fr, subs)
			w.stmts(item.Stmts, fr)
		}
	case *syntax.FuncDecl:
		if cmd.Name != nil {
			w.defineFunc(cmd.Name.Value, cmd.Body, fr)
		}
		fr.via = "function"
		w.stmt(cmd.Body, fr)
	case *syntax.TimeClause:
		// "time" is a keyword in bash; show it like the wrapper it is.
		var args []string
		if cmd.PosixFormat {
			args = []string{"-p"}
		}
		w.add(Command{Name: "time", Program: "time", Args: args, Redirects: fr.redirs}, fr)
		fr.via = "time"
		w.stmt(cmd.Stmt, fr)
	case *syntax.CoprocClause:
		fr.via = "coproc"
		fr.background = true
		w.stmt(cmd.Stmt, fr)
	case *syntax.TestDecl:
		w.stmt(cmd.Body, fr)
	case *syntax.ArithmCmd, *syntax.TestClause, *syntax.LetClause:
		// Not commands, but $(…) inside them runs.
		collectSubsts(cmd, subs)
	}
}

// pipeline walks a | b | c and records which commands form it. Commands
// inside a compound element ( … ) or { …; } belong to the pipeline too;
// commands inside $(…) or bash -c of an element do not (they are deeper).
func (w *walker) pipeline(b *syntax.BinaryCmd, fr frame) {
	elems := flattenBinary(b, syntax.Pipe, syntax.PipeAll)
	members := w.memberRoom(len(elems) + 2)
	var startBuf [8]int
	starts := startBuf[:0] // where each element's members begin
	for k, el := range elems {
		starts = append(starts, len(members))
		start := len(w.s.Commands)
		w.listing = ""
		if k > 0 && len(members) > starts[k-1] {
			if g, ok := listedGlobs(&w.s.Commands[members[len(members)-1]]); ok {
				w.listing = g
			}
		}
		// Every element runs in a subshell of its own.
		saved := w.sem.save()
		w.stmt(el, fr)
		w.sem = saved
		w.listing = ""
		members = w.appendMembers(members, start, fr.depth)
	}
	w.registerPipeline(members)
	w.pipeData(members, starts, fr)
}

// appendMembers adds the indexes of commands from start on that are at
// the given depth.
func (w *walker) appendMembers(members []int, start, depth int) []int {
	for i := start; i < len(w.s.Commands); i++ {
		if w.s.Commands[i].Depth == depth {
			members = append(members, i)
		}
	}
	return members
}

// carve returns an empty slice with room for n elements, taken from the
// unused capacity of *pool when it has room. Appending past n copies, so
// the slices carved from one pool never overlap.
func carve[T any](pool *[]T, n int) []T {
	l := len(*pool)
	if cap(*pool)-l < n {
		return make([]T, 0, n)
	}
	*pool = (*pool)[:l+n]
	return (*pool)[l : l : l+n]
}

// memberRoom returns an empty slice with room for n pipeline members.
func (w *walker) memberRoom(n int) []int { return carve(&w.ints, n) }

// redirRoom returns an empty slice with room for n redirections.
func (w *walker) redirRoom(n int) []Redirect { return carve(&w.redirs, n) }

// registerPipeline records a pipeline of two or more commands. A command
// already in an inner pipeline keeps that (innermost) index.
func (w *walker) registerPipeline(members []int) {
	if len(members) < 2 {
		return
	}
	idx := len(w.s.Pipelines)
	w.s.Pipelines = append(w.s.Pipelines, members)
	for _, m := range members {
		if w.s.Commands[m].Pipeline == -1 {
			w.s.Commands[m].Pipeline = idx
		}
	}
}

// flattenBinary turns a left-nested chain of the given operators into its
// statements, left to right, without recursion.
func flattenBinary(b *syntax.BinaryCmd, op1, op2 syntax.BinCmdOperator) []*syntax.Stmt {
	var rev []*syntax.Stmt
	for {
		rev = append(rev, b.Y)
		x := b.X
		if xb, ok := x.Cmd.(*syntax.BinaryCmd); ok && (xb.Op == op1 || xb.Op == op2) &&
			len(x.Redirs) == 0 && !x.Negated && !x.Background && !x.Coprocess && !x.Disown {
			b = xb
			continue
		}
		rev = append(rev, x)
		break
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// substitutionFrame is the frame a statement's substitutions are
// analysed in: one level deeper, with none of the statement's
// redirections, backgrounding or wrapping.
func (fr frame) substitutionFrame() frame {
	inner := fr
	inner.depth++
	inner.redirs = nil
	inner.background = false
	inner.nest = 0
	inner.wrap = 0
	return inner
}

// substitutions analyses $(…), `…`, <(…) and >(…) found in a statement's
// words, one level deeper than the statement.
func (w *walker) substitutions(subs []subst, fr frame) {
	if len(subs) == 0 {
		return
	}
	inner := fr.substitutionFrame()
	saved := w.sem.save()
	defer func() { w.sem = saved }()
	for _, sub := range subs {
		if inner.depth > MaxDepth {
			w.s.TooDeep = true
			w.evasion("too-deep", w.rawStmts(sub.stmts, fr))
			continue
		}
		inner.via = sub.via
		w.stmts(sub.stmts, inner)
	}
}

// collectSubsts finds command and process substitutions anywhere under n
// (arithmetic, tests, parameter expansion operands) without descending
// into them: they are walked later as statements.
func collectSubsts(n syntax.Node, subs *[]subst) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst:
			*subs = append(*subs, subst{stmts: x.Stmts, via: "$()"})
			return false
		case *syntax.ProcSubst:
			*subs = append(*subs, subst{stmts: x.Stmts, via: procVia(x.Op)})
			return false
		}
		return true
	})
}

func procVia(op syntax.ProcOperator) string {
	if op == syntax.CmdOut {
		return ">()"
	}
	return "<()"
}

// add appends a command with the frame's context and returns its index.
func (w *walker) add(c Command, fr frame) int {
	c.Pipeline = -1
	if c.Dir == "" {
		c.Dir = w.curDir(fr)
	}
	c.Depth = fr.depth
	c.Via = fr.via
	c.Background = fr.background
	w.s.Commands = append(w.s.Commands, c)
	return len(w.s.Commands) - 1
}

// joinRedirs returns outer followed by own, sharing nothing with either.
func joinRedirs(outer, own []Redirect) []Redirect {
	if len(outer) == 0 {
		return own
	}
	out := make([]Redirect, 0, len(outer)+len(own))
	out = append(out, outer...)
	return append(out, own...)
}
