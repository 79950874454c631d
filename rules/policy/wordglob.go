package policy

import (
	"errors"
	"strings"
)

// wordGlob matches a single word (a program, an argument, a host) against
// a shell-style pattern: `*` matches any run of characters, `/` and `.`
// included; `?` one character; `[a-z]` / `[!a-z]` a class; `\` escapes.
// Paths use doublestar instead (see pathglob.go), where `*` stops at `/`.
type wordGlob struct {
	pattern string
	// literal is set when the pattern has no metacharacters; matching is
	// then a string comparison.
	literal bool
	// form and lit let the common shapes skip the general matcher:
	// "lit*", "*lit" and "*lit*".
	form globForm
	lit  string
}

type globForm uint8

const (
	formGeneral globForm = iota
	formPrefix
	formSuffix
	formContains
)

func compileWordGlob(p string) (wordGlob, error) {
	if p == "" {
		return wordGlob{}, errors.New("empty pattern")
	}
	if !strings.ContainsAny(p, `*?[\`) {
		return wordGlob{pattern: p, literal: true}, nil
	}
	if err := validateWordGlob(p); err != nil {
		return wordGlob{}, err
	}
	g := wordGlob{pattern: p}
	isLit := func(s string) bool { return !strings.ContainsAny(s, `*?[\`) }
	switch {
	case len(p) >= 2 && p[0] == '*' && p[len(p)-1] == '*' && isLit(p[1:len(p)-1]):
		g.form, g.lit = formContains, p[1:len(p)-1]
	case p[len(p)-1] == '*' && isLit(p[:len(p)-1]):
		g.form, g.lit = formPrefix, p[:len(p)-1]
	case p[0] == '*' && isLit(p[1:]):
		g.form, g.lit = formSuffix, p[1:]
	}
	return g, nil
}

func validateWordGlob(p string) error {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i+1 >= len(p) {
				return errors.New("pattern ends with a lone backslash")
			}
			i++
		case '[':
			end := classEnd(p, i)
			if end < 0 {
				return errors.New("unterminated [ character class")
			}
			i = end
		}
	}
	return nil
}

// classEnd returns the index of the ']' closing the class opened at p[i],
// or -1. A ']' right after '[' or '[!' is a member, as in shell globs.
func classEnd(p string, i int) int {
	j := i + 1
	if j < len(p) && (p[j] == '!' || p[j] == '^') {
		j++
	}
	if j < len(p) && p[j] == ']' {
		j++
	}
	for ; j < len(p); j++ {
		switch p[j] {
		case '\\':
			j++
		case ']':
			return j
		}
	}
	return -1
}

func (g wordGlob) match(s string) bool {
	if g.literal {
		return s == g.pattern
	}
	switch g.form {
	case formPrefix:
		return strings.HasPrefix(s, g.lit)
	case formSuffix:
		return strings.HasSuffix(s, g.lit)
	case formContains:
		return strings.Contains(s, g.lit)
	}
	return globMatch(g.pattern, s)
}

// globMatch is the classic iterative wildcard match with one backtrack
// point: linear in practice, never exponential.
func globMatch(p, s string) bool {
	pi, si := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(p) {
			switch p[pi] {
			case '*':
				starP, starS = pi, si
				pi++
				continue
			case '?':
				pi++
				si++
				continue
			case '[':
				end := classEnd(p, pi)
				if end > 0 && classMatch(p[pi+1:end], s[si]) {
					pi = end + 1
					si++
					continue
				}
			case '\\':
				if pi+1 < len(p) && p[pi+1] == s[si] {
					pi += 2
					si++
					continue
				}
			default:
				if p[pi] == s[si] {
					pi++
					si++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		starS++
		pi, si = starP+1, starS
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// classMatch reports whether c is in the class body (between [ and ]).
// Classes work on bytes: they are meant for ASCII words.
func classMatch(body string, c byte) bool {
	negate := false
	if body != "" && (body[0] == '!' || body[0] == '^') {
		negate, body = true, body[1:]
	}
	in := false
	for i := 0; i < len(body); i++ {
		lo := body[i]
		if lo == '\\' && i+1 < len(body) {
			i++
			lo = body[i]
		}
		hi := lo
		if i+2 < len(body) && body[i+1] == '-' {
			hi = body[i+2]
			if hi == '\\' && i+3 < len(body) {
				i++
				hi = body[i+2]
			}
			i += 2
		}
		if lo <= c && c <= hi {
			in = true
		}
	}
	return in != negate
}

// wordGlobs is an OR list of patterns.
type wordGlobs []wordGlob

func (gs wordGlobs) match(s string) bool {
	for _, g := range gs {
		if g.match(s) {
			return true
		}
	}
	return false
}
