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
// Everyday commands made only of plain words take a fast path that skips
// the full parser; the result is identical to what the full parse gives.
func Parse(src string) *Script {
	return parse(src, true)
}

// parse is Parse with the fast path optional, so tests can check that it
// changes nothing.
func parse(src string, fastPath bool) *Script {
	s := &Script{Source: src}
	w := walker{s: s, noFastPath: !fastPath}
	w.parseScript(src, frame{src: src}, true)
	return s
}

// parserPool reuses bash parsers; a syntax.Parser is not safe for
// concurrent use but can be reused once a parse has finished.
var parserPool = sync.Pool{
	New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) },
}

// parseFile runs the bash parser on src. The returned AST does not share
// memory with the parser, so the parser goes back to the pool at once.
func parseFile(src string) (*syntax.File, error) {
	p := parserPool.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	parserPool.Put(p)
	return f, err
}

// parseScript analyses src (the top-level line or a nested script) and
// appends its commands to the Script, with the context in fr. top says
// whether a parse error belongs to the top-level source.
func (w *walker) parseScript(src string, fr frame, top bool) {
	fr.src = src
	if fields, ok := fastPathFields(src); ok && !w.noFastPath {
		w.emitCall(fields, nil, nil, fr)
		return
	}
	if syntaxTooDeep(src) {
		w.s.TooDeep = true
		w.evasion("too-deep", src)
		w.parseError(top, fr, "syntax nested more than "+strconv.Itoa(maxSyntaxNesting)+" levels; not analysed")
		w.fallback(src, fr)
		return
	}
	f, err := parseFile(src)
	if err != nil {
		w.parseError(top, fr, err.Error())
		w.fallback(src, fr)
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
