package shell

import "strings"

// fallback gives a best-effort view of a line the parser rejected: split
// on control operators (| ; & && || newline) and on ( ) ` so nested
// commands surface, then split each segment on whitespace with quote
// characters dropped. It over-approximates on purpose: seeing a command
// that would not run is safer than missing one that would.
func (w *walker) fallback(src string, fr frame) {
	var chain []int // commands of the pipeline being built
	segments := 0   // segments in that pipeline
	endChain := func() {
		if segments > 1 {
			w.registerPipeline(chain)
		}
		chain, segments = nil, 0
	}
	segStart := 0
	for i := 0; i <= len(src); i++ {
		op := ""
		if i < len(src) {
			op = fallbackOperator(src, i)
			if op == "" {
				continue
			}
		}
		segFr := fr
		if op == "&" {
			segFr.background = true
		}
		start := len(w.s.Commands)
		w.emitCall(fallbackFields(src[segStart:i]), nil, nil, segFr)
		chain = w.appendMembers(chain, start, fr.depth)
		segments++
		if op != "|" && op != "|&" {
			endChain()
		}
		if op == "" {
			break
		}
		i += len(op) - 1
		segStart = i + 1
	}
}

// fallbackOperator returns the separator starting at src[i], or "".
// & and | that belong to redirections (&>, >&, >|) are not separators.
func fallbackOperator(src string, i int) string {
	next := byte(0)
	if i+1 < len(src) {
		next = src[i+1]
	}
	prev := byte(0)
	if i > 0 {
		prev = src[i-1]
	}
	switch src[i] {
	case '\n', ';', '(', ')', '`':
		return src[i : i+1]
	case '|':
		if prev == '>' {
			return ""
		}
		if next == '|' || next == '&' {
			return src[i : i+2]
		}
		return "|"
	case '&':
		if prev == '>' || prev == '<' || next == '>' {
			return ""
		}
		if next == '&' {
			return "&&"
		}
		return "&"
	}
	return ""
}

// fallbackFields splits a segment on whitespace, dropping quote characters
// and backslashes, and the "$" left over from a split "$(".
func fallbackFields(seg string) []field {
	words := strings.Fields(seg)
	if len(words) == 0 {
		return nil
	}
	fields := make([]field, 0, len(words))
	for _, word := range words {
		text := strings.Map(func(r rune) rune {
			switch r {
			case '\'', '"', '\\':
				return -1
			}
			return r
		}, word)
		if text == "" || text == "$" {
			continue
		}
		fields = append(fields, field{text: text, raw: word})
	}
	return fields
}
