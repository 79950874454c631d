package shell

import (
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Parse analyses src as a bash command line. It never panics, always
// returns a Script, and is safe for concurrent use.
//
// Everyday command lines (plain words and $NAME, | && || ; and newlines,
// prefix assignments, export, comments, simple redirections and command
// substitutions of such lines in a command's words) take a
// fast path that skips the full parser; the result is identical to what
// the full parse gives.
func Parse(src string) *Script {
	return parse(src, true)
}

// parse is Parse with the fast path optional, so tests can check that it
// changes nothing.
func parse(src string, fastPath bool) *Script {
	// One allocation (or none, when a released Script is reused) for the
	// result, the walker that builds it and room for the commands and
	// arguments of an everyday line.
	// The state is zero (new, or cleared by Release): only the fields
	// that start otherwise are set.
	st := statePool.Get().(*parseState)
	w := st.start(src, fastPath)
	w.parseScript(src, frame{src: src}, true)
	w.release()
	if len(st.s.Commands) == 0 {
		st.s.Commands = nil // as when nothing was appended
	}
	if len(st.s.Pipelines) == 0 {
		st.s.Pipelines = nil
	}
	return &st.s
}

// parseState holds a Script, the walker that builds it, and the first
// commands, arguments and pipelines the Script's slices start in. (Room
// for four commands: one line in eight has more than two, and growing
// the slice cost an allocation of 700 bytes.)
type parseState struct {
	s      Script
	w      walker
	cmds   [4]Command
	args   [8]string
	pipes  [2][]int
	ints   [8]int
	redirs [4]Redirect
}

var statePool = sync.Pool{New: func() any { return new(parseState) }}

// start readies st, zero (new, or cleared by Release), to parse src: the
// Script's slices and the walker's start in st's room. It returns the
// walker.
func (st *parseState) start(src string, fastPath bool) *walker {
	st.s.Source, st.s.state = src, st
	st.s.Commands = st.cmds[:0]
	st.s.Pipelines = st.pipes[:0]
	w := &st.w
	w.s, w.noFastPath = &st.s, !fastPath
	w.args, w.ints, w.redirs = st.args[:0], st.ints[:0], st.redirs[:0]
	return w
}

// Release gives s back for a later Parse to reuse. Only s's owner may call
// it, once, after which neither s nor what its slices hold may be used.
// Its strings stay valid: none points into a Script. A Script that did not
// come from Parse is left alone.
func (s *Script) Release() {
	st := s.state
	if st == nil || &st.s != s {
		return
	}
	// Commands fill the room from the start, and a parse writes nothing
	// past what it appends: clearing only the commands used spares
	// clearing (with write barriers, while the collector runs) the room
	// the usual one- or two-command line leaves untouched.
	clear(st.cmds[:min(len(s.Commands), len(st.cmds))])
	st.s, st.w = Script{}, walker{}
	st.args, st.pipes, st.redirs = [len(st.args)]string{}, [len(st.pipes)][]int{}, [len(st.redirs)]Redirect{}
	statePool.Put(st)
}

// pooledParser is a bash parser with a reader to feed it. A syntax.Parser
// is not safe for concurrent use but can be reused once a parse has
// finished.
type pooledParser struct {
	p *syntax.Parser
	r strings.Reader
}

var parserPool = sync.Pool{
	New: func() any { return &pooledParser{p: syntax.NewParser(syntax.Variant(syntax.LangBash))} },
}

// parseFile runs the bash parser on src. The returned AST does not share
// memory with the parser, so the parser goes back to the pool at once.
func parseFile(src string) (*syntax.File, error) {
	pp := parserPool.Get().(*pooledParser)
	pp.r.Reset(src)
	f, err := pp.p.Parse(&pp.r, "")
	pp.r.Reset("") // do not keep src alive
	parserPool.Put(pp)
	return f, err
}

// bufPool reuses the walker's scratch buffer for building words.
var bufPool = sync.Pool{New: func() any { return new([]byte) }}

// scratch returns the walker's scratch buffer, empty.
func (w *walker) scratch() []byte {
	if w.bufp == nil {
		w.bufp = bufPool.Get().(*[]byte)
		w.buf = *w.bufp
	}
	return w.buf[:0]
}

// release returns what the walker borrowed once the Script is complete.
func (w *walker) release() {
	if w.bufp != nil {
		if cap(w.buf) <= 4<<10 {
			*w.bufp = w.buf[:0]
			bufPool.Put(w.bufp)
		}
		w.bufp = nil
	}
	w.buf = nil
	w.args = nil
	w.ints = nil
	w.redirs = nil
	w.subs = nil // do not keep the syntax tree alive
}

// parseScript analyses src (the top-level line or a nested script) and
// appends its commands to the Script, with the context in fr. top says
// whether a parse error belongs to the top-level source.
func (w *walker) parseScript(src string, fr frame, top bool) {
	fr.src = src
	if !w.noFastPath && w.fastPath(src, fr) {
		return
	}
	if syntaxTooDeep(src) {
		w.s.TooDeep = true
		w.evasion("too-deep", src)
		w.parseError(top, fr, "syntax nested more than "+strconv.Itoa(maxSyntaxNesting)+" levels; not analysed")
		if len(src) <= maxFallbackBytes {
			w.fallback(src, fr)
		}
		return
	}
	if commandMarks(src) > maxCommandMarks {
		// No reviewable command line has this many commands: judging it
		// would cost more than the request's budget (issue 12: linear,
		// <= 50 ms at the largest payload), and it is unanalysable anyway.
		w.parseError(top, fr, "more than "+strconv.Itoa(maxCommandMarks)+" commands or substitutions; not analysed")
		return
	}
	f, err := parseFile(src)
	if err != nil {
		w.parseError(top, fr, err.Error())
		if len(src) <= maxFallbackBytes {
			w.fallback(src, fr)
		}
		return
	}
	w.stmts(f.Stmts, fr)
}

// parseError records why a script could not be analysed. Errors in nested
// scripts are reported too (prefixed with how they were reached), because an
// unanalysable nested script is as opaque as an unanalysable top level.
func (w *walker) parseError(top bool, fr frame, msg string) {
	if w.s.ParseError != "" {
		return
	}
	if !top {
		msg = "in " + fr.via + ": " + msg
	}
	w.s.ParseError = msg
}
