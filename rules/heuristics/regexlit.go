package heuristics

import (
	"regexp/syntax"
	"strings"
)

// Patterns written as regular expressions hide the words they match:
// grep -E 'pass(word|wd)?\s*[=:]' finds "password" and "passwd" without
// spelling either. regexLiterals reads the literal texts a pattern
// matches, so the words a search hunts for can be compared with lists.

// maxRegexLiterals bounds the texts one pattern expands to.
const maxRegexLiterals = 32

// regexLiterals returns the literal strings pat (Perl syntax, as grep -E
// and -P, rg and ag read it) matches, with a space wherever a class, a
// wildcard or an anchor stands; nil when it does not parse or expands to
// more than maxRegexLiterals texts.
func regexLiterals(pat string) []string {
	re, err := syntax.Parse(pat, syntax.Perl)
	if err != nil {
		return nil
	}
	out, ok := literalsOf(re)
	if !ok {
		return nil
	}
	return out
}

func literalsOf(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{string(re.Rune)}, true
	case syntax.OpCapture:
		return literalsOf(re.Sub[0])
	case syntax.OpConcat:
		out := []string{""}
		for _, sub := range re.Sub {
			next, ok := literalsOf(sub)
			if !ok || len(out)*len(next) > maxRegexLiterals {
				return nil, false
			}
			prod := make([]string, 0, len(out)*len(next))
			for _, a := range out {
				for _, b := range next {
					prod = append(prod, a+b)
				}
			}
			out = prod
		}
		return out, true
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			next, ok := literalsOf(sub)
			if !ok || len(out)+len(next) > maxRegexLiterals {
				return nil, false
			}
			out = append(out, next...)
		}
		return out, true
	case syntax.OpQuest:
		sub, ok := literalsOf(re.Sub[0])
		if !ok || len(sub)+1 > maxRegexLiterals {
			return nil, false
		}
		return append([]string{""}, sub...), true
	case syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		// Once, standing for any number: a break on either side.
		sub, ok := literalsOf(re.Sub[0])
		if !ok {
			return nil, false
		}
		for i := range sub {
			sub[i] = " " + strings.TrimSpace(sub[i]) + " "
		}
		if re.Op == syntax.OpStar || re.Op == syntax.OpRepeat && re.Min == 0 {
			sub = append(sub, " ")
		}
		return sub, true
	case syntax.OpEmptyMatch:
		return []string{""}, true
	}
	// Classes, wildcards, anchors and word boundaries: a break.
	return []string{" "}, true
}
