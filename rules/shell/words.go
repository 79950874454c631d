package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// field is one word as the program would receive it, plus what rendering
// learned about how it was written.
type field struct {
	text string
	// raw is the whole source word as written, used as evidence.
	raw string
	// dynamic: contains a parameter expansion or a substitution, so text
	// shows those parts as written rather than their run-time value.
	dynamic bool
	// quoteSplit: quotes or backslashes split a run of letters (r''m, "r"m).
	quoteSplit bool
	// glob / brace: an unquoted glob character (* ? [) or brace ({) appears.
	glob, brace bool
	// resolved: a variable or command substitution was replaced by the
	// value the line gives it; braced: the field came from brace expansion.
	resolved, braced bool
}

// words renders words after quote removal. Unquoted ${IFS} splits a word,
// so the result may hold more fields than there are words.
func (w *walker) words(ws []*syntax.Word, fr frame, subs *[]subst) []field {
	if len(ws) == 0 {
		return nil
	}
	out := make([]field, 0, len(ws))
	for _, wd := range ws {
		start := len(out)
		if name, n := w.multiValued(wd); n > 0 {
			// Once per value the variable may hold: each is judged.
			for i := range n {
				w.pickName, w.pick = name, i
				var tmp []subst
				if i == 0 {
					out = w.word(wd, fr, subs, out, true)
				} else {
					out = w.word(wd, fr, &tmp, out, true)
				}
			}
			w.pickName, w.pick = "", 0
		} else {
			out = w.word(wd, fr, subs, out, true)
		}
		out = w.expandBraceFields(out, start, fr)
	}
	return out
}

// joined renders one word without IFS splitting (assignment values and
// redirection targets are not split by the shell).
func (w *walker) joined(wd *syntax.Word, fr frame, subs *[]subst) string {
	fs := w.word(wd, fr, subs, nil, false)
	switch len(fs) {
	case 0:
		return ""
	case 1:
		return fs[0].text
	}
	texts := make([]string, len(fs))
	for i, f := range fs {
		texts[i] = f.text
	}
	return strings.Join(texts, " ")
}

func (w *walker) word(wd *syntax.Word, fr frame, subs *[]subst, out []field, split bool) []field {
	if wd == nil {
		return out
	}
	// Most words are one plain literal: no quotes, escapes or expansions.
	if len(wd.Parts) == 1 {
		if lit, ok := wd.Parts[0].(*syntax.Lit); ok && strings.IndexByte(lit.Value, '\\') < 0 {
			v := lit.Value
			return append(out, field{text: v, raw: v, glob: hasGlob(v), brace: strings.IndexByte(v, '{') >= 0})
		}
	}
	b := wordBuilder{
		w: w, fr: fr, subs: subs, split: split,
		raw: w.raw(wd, fr), multi: len(wd.Parts) > 1,
		out: out, buf: w.scratch(),
	}
	for _, p := range wd.Parts {
		b.part(p)
	}
	b.flush()
	w.buf = b.buf[:0]
	return b.out
}

// wordBuilder assembles the fields of one word.
type wordBuilder struct {
	w     *walker
	fr    frame
	subs  *[]subst
	split bool
	raw   string
	multi bool // the word has several parts

	out []field
	buf []byte
	cur field // flags of the field being built
	// started: the field exists even if empty ("" is an empty argument).
	started bool
	// prevQuoted: the previous part of this field was quoted.
	prevQuoted bool
	nparts     int
}

func (b *wordBuilder) part(p syntax.WordPart) {
	before := len(b.buf)
	switch x := p.(type) {
	case *syntax.Lit:
		b.lit(x.Value, false)
		b.boundary(before, false)
	case *syntax.SglQuoted:
		if x.Dollar {
			b.w.dialect(b.fr, "$'…'", b.raw)
			text, hidden := decodeANSIC(x.Value)
			if hidden {
				b.w.evasion("ansi-c-escape", b.raw)
			}
			b.buf = append(b.buf, text...)
		} else {
			b.buf = append(b.buf, x.Value...)
		}
		b.quoted(before)
	case *syntax.DblQuoted:
		if x.Dollar {
			b.w.dialect(b.fr, "$\"…\"", b.raw)
		}
		for _, in := range x.Parts {
			b.inner(in)
		}
		b.quoted(before)
	case *syntax.ParamExp:
		if b.split && isIFS(x) {
			b.w.evasion("ifs", b.raw)
			b.flush()
			return
		}
		if v, ok := b.w.paramValue(x, b.fr); ok {
			b.value(v, false)
			b.boundary(before, false)
			return
		}
		b.expansion(x)
		b.boundary(before, false)
	case *syntax.CmdSubst:
		if v, ok := b.w.substValue(x, b.fr); ok {
			*b.subs = append(*b.subs, subst{stmts: x.Stmts, via: "$()"})
			b.value(v, false)
			b.boundary(before, false)
			return
		}
		b.expansion(p)
		b.boundary(before, false)
	default:
		b.expansion(p)
		b.boundary(before, false)
	}
}

// inner renders a part inside double quotes: literals lose only the
// backslashes that escape $ ` " \ and newline; expansions stay as written.
func (b *wordBuilder) inner(p syntax.WordPart) {
	switch x := p.(type) {
	case *syntax.Lit:
		b.lit(x.Value, true)
		return
	case *syntax.ParamExp:
		if v, ok := b.w.paramValue(x, b.fr); ok {
			b.value(v, true)
			return
		}
	case *syntax.CmdSubst:
		if v, ok := b.w.substValue(x, b.fr); ok {
			*b.subs = append(*b.subs, subst{stmts: x.Stmts, via: "$()"})
			b.value(v, true)
			return
		}
	}
	b.expansion(p)
}

// value appends the known value of an expansion. Unquoted, the shell
// splits it at blanks and expands the glob characters it holds.
func (b *wordBuilder) value(v string, quoted bool) {
	b.cur.resolved = true
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !quoted {
			switch c {
			case ' ', '\t', '\n':
				if b.split {
					b.flush()
					b.cur.resolved = true
					continue
				}
			case '*', '?', '[':
				b.cur.glob = true
			}
		}
		b.buf = append(b.buf, c)
	}
}

// expansion renders a dynamic part as written and queues the substitutions
// it contains.
func (b *wordBuilder) expansion(p syntax.WordPart) {
	b.w.checkDialect(p, b.fr)
	if pe, ok := p.(*syntax.ParamExp); ok {
		if target, ok := b.w.indirectName(pe); ok {
			// ${!k} stands for the variable k names, whose value is not known.
			b.buf = append(b.buf, "${"+target+"}"...)
			b.cur.dynamic = true
			return
		}
	}
	b.buf = append(b.buf, b.w.raw(p, b.fr)...)
	switch x := p.(type) {
	case *syntax.CmdSubst:
		*b.subs = append(*b.subs, subst{stmts: x.Stmts, via: "$()"})
		b.cur.dynamic = true
	case *syntax.ProcSubst:
		*b.subs = append(*b.subs, subst{stmts: x.Stmts, via: procVia(x.Op)})
		b.cur.dynamic = true
	case *syntax.ParamExp:
		if x.Exp != nil || x.Repl != nil || x.Slice != nil || x.Index != nil {
			collectSubsts(x, b.subs)
		}
		b.cur.dynamic = true
	case *syntax.ExtGlob:
		b.cur.glob = true
	default:
		collectSubsts(p, b.subs)
		b.cur.dynamic = true
	}
}

// lit appends a literal after backslash removal. Unquoted, a backslash
// escapes any character (and joins lines); inside double quotes only
// $ ` " \ and newline.
func (b *wordBuilder) lit(v string, inDouble bool) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i+1 == len(v) {
			if !inDouble {
				switch c {
				case '*', '?', '[':
					b.cur.glob = true
				case '{':
					b.cur.brace = true
				}
			}
			b.buf = append(b.buf, c)
			continue
		}
		next := v[i+1]
		if inDouble && !strings.ContainsRune("$`\"\\\n", rune(next)) {
			b.buf = append(b.buf, c)
			continue
		}
		i++
		if next == '\n' {
			continue
		}
		// \r\m: an escaped letter right after a letter only hides the
		// word from text matching (a leading \rm is the alias bypass).
		if !inDouble && isAlnum(next) && len(b.buf) > 0 && isAlnum(b.buf[len(b.buf)-1]) {
			b.cur.quoteSplit = true
		}
		b.buf = append(b.buf, next)
	}
}

// quoted finishes a quoted part that started at buffer offset before.
func (b *wordBuilder) quoted(before int) {
	b.started = true
	if len(b.buf) == before && b.multi {
		b.cur.quoteSplit = true // r''m
	}
	b.boundary(before, true)
}

// boundary notes a part boundary at offset before, flagging quotes that
// split a run of letters ("r"m, c'u'rl).
func (b *wordBuilder) boundary(before int, quoted bool) {
	if b.nparts > 0 && (quoted || b.prevQuoted) && before > 0 && len(b.buf) > before &&
		isAlnum(b.buf[before-1]) && isAlnum(b.buf[before]) {
		b.cur.quoteSplit = true
	}
	b.prevQuoted = quoted
	b.nparts++
}

// flush ends the current field. A field with no text is kept only if it
// was quoted (""), as the shell drops empty unquoted fields at an IFS split.
func (b *wordBuilder) flush() {
	if len(b.buf) > 0 || b.started {
		f := b.cur
		f.text = string(b.buf)
		f.raw = b.raw
		b.out = append(b.out, f)
	}
	b.buf = b.buf[:0]
	b.cur = field{}
	b.started = false
	b.prevQuoted = false
	b.nparts = 0
}

// isIFS reports whether an unquoted expansion yields IFS characters:
// $IFS, ${IFS}, ${IFS:0:1}, ${IFS%?}, … (not ${#IFS} or ${!IFS}).
func isIFS(pe *syntax.ParamExp) bool {
	return pe.Param != nil && pe.Param.Value == "IFS" && !pe.Length && !pe.Excl && !pe.Width && !pe.IsSet
}

func hasGlob(s string) bool {
	// A byte loop: strings.ContainsAny builds its set on every call.
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '*' || c == '?' || c == '[' {
			return true
		}
	}
	return false
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// raw returns the source text of n, or "" if its position is unknown.
func (w *walker) raw(n syntax.Node, fr frame) string {
	if n == nil {
		return ""
	}
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(fr.src) || start > end {
		return ""
	}
	return fr.src[start:end]
}

// rawStmts returns the source text spanning a statement list.
func (w *walker) rawStmts(list []*syntax.Stmt, fr frame) string {
	if len(list) == 0 {
		return ""
	}
	start, end := int(list[0].Pos().Offset()), int(list[len(list)-1].End().Offset())
	if start < 0 || end > len(fr.src) || start > end {
		return ""
	}
	return fr.src[start:end]
}

// assigns renders NAME=value assignments.
func (w *walker) assigns(as []*syntax.Assign, fr frame, subs *[]subst) []string {
	if len(as) == 0 {
		return nil
	}
	out := make([]string, 0, len(as))
	for _, a := range as {
		out = append(out, w.assign(a, fr, subs))
	}
	return out
}

// assign renders one assignment, or one argument of declare/export/local
// (which may be a bare name or an option such as -x).
func (w *walker) assign(a *syntax.Assign, fr frame, subs *[]subst) string {
	if a.Name == nil {
		return w.joined(a.Value, fr, subs)
	}
	s := a.Name.Value
	if a.Index != nil {
		collectSubsts(a.Index, subs)
		s += "[" + w.raw(a.Index, fr) + "]"
	}
	if a.Naked {
		return s
	}
	op := "="
	if a.Append {
		op = "+="
	}
	switch {
	case a.Array != nil:
		collectSubsts(a.Array, subs)
		return s + op + w.raw(a.Array, fr)
	case a.Value != nil:
		return s + op + w.joined(a.Value, fr, subs)
	}
	return s + op
}

// redirects renders a statement's redirections.
func (w *walker) redirects(rs []*syntax.Redirect, fr frame, subs *[]subst) []Redirect {
	if len(rs) == 0 {
		return nil
	}
	out := w.redirRoom(len(rs))
	for _, r := range rs {
		rd := Redirect{Op: r.Op.String()}
		if r.N != nil {
			rd.FD = r.N.Value
		}
		if r.Word != nil {
			rd.Target = w.joined(r.Word, fr, subs)
		}
		if (r.Op == syntax.DplIn || r.Op == syntax.DplOut) && isFDWord(rd.Target) {
			rd.Target = "&" + rd.Target
		}
		if r.Hdoc != nil && len(r.Hdoc.Parts) > 0 {
			rd.Body = heredocBody(r.Hdoc, w.raw(r.Hdoc, fr), rd.Target)
			collectSubsts(r.Hdoc, subs)
		}
		out = append(out, rd)
	}
	return out
}

// heredocBody returns a here-document's text as written, without the
// closing delimiter line (which the parser's positions may include).
func heredocBody(hdoc *syntax.Word, raw, delim string) string {
	body := raw
	if len(hdoc.Parts) == 1 {
		if lit, ok := hdoc.Parts[0].(*syntax.Lit); ok {
			body = lit.Value
		}
	}
	nl := strings.LastIndexByte(body, '\n')
	if last := strings.TrimLeft(body[nl+1:], "\t"); last == "" || last == delim {
		return body[:nl+1]
	}
	return body
}

// isFDWord reports whether the word after >& or <& names a descriptor
// ("1", "-", "3-") rather than a file.
func isFDWord(s string) bool {
	if s == "-" {
		return true
	}
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
