package shell

import (
	"strconv"
	"strings"
)

// maxBraceFields bounds the fields one word's brace expansion may yield;
// past it the word is kept as written (and marked as a brace expansion).
const maxBraceFields = 64

// expandBraceFields replaces the fields from start on that hold an
// unquoted brace expression ({a,b}, {1..3}) by the fields bash makes of
// them, so that cat ~/.ssh/{id_rsa,config} is judged as the two files.
func (w *walker) expandBraceFields(out []field, start int, fr frame) []field {
	for i := start; i < len(out); i++ {
		f := out[i]
		if !f.brace || !strings.Contains(f.text, "{") || !strings.Contains(f.text, "}") {
			continue
		}
		alts, ok := expandBraces(f.text, maxBraceFields)
		if !ok || len(alts) < 2 {
			continue
		}
		w.dialect(fr, "brace expansion", f.raw)
		rest := append([]field(nil), out[i+1:]...)
		out = out[:i]
		for _, a := range alts {
			g := f
			g.text, g.brace, g.braced = a, false, true
			g.glob = g.glob && hasGlob(a)
			out = append(out, g)
		}
		i += len(alts) - 1
		out = append(out, rest...)
	}
	return out
}

// expandBraces performs bash brace expansion on s. ok is false when s
// holds no brace expression or expands to more than limit words.
func expandBraces(s string, limit int) ([]string, bool) {
	if open, _, _ := findBrace(s); open < 0 {
		return nil, false
	}
	return expandInto(nil, s, limit)
}

// expandInto appends the expansion of s to out; ok is false past limit.
func expandInto(out []string, s string, limit int) ([]string, bool) {
	open, close, items := findBrace(s)
	if open < 0 {
		if len(out) >= limit {
			return nil, false
		}
		return append(out, s), true
	}
	prefix, suffix := s[:open], s[close+1:]
	for _, it := range items {
		var ok bool
		if out, ok = expandInto(out, prefix+it+suffix, limit); !ok {
			return nil, false
		}
	}
	return out, true
}

// findBrace finds the first brace expression of s that expands: {a,b,…}
// with a comma at its own level, or a sequence {1..5} / {a..e}. ${…} is a
// parameter expansion, not a brace expression.
func findBrace(s string) (open, close int, items []string) {
	for i := 0; i < len(s); i++ {
		if s[i] != '{' || i > 0 && s[i-1] == '$' {
			continue
		}
		depth, commas := 0, []int{}
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '{':
				depth++
			case '}':
				if depth > 0 {
					depth--
					continue
				}
				if len(commas) > 0 {
					prev := i + 1
					for _, c := range commas {
						items = append(items, s[prev:c])
						prev = c + 1
					}
					return i, j, append(items, s[prev:j])
				}
				if seq, ok := braceSequence(s[i+1 : j]); ok {
					return i, j, seq
				}
				j = len(s)
			case ',':
				if depth == 0 {
					commas = append(commas, j)
				}
			}
		}
	}
	return -1, -1, nil
}

// braceSequence expands "1..5", "5..1", "a..e" and "1..10..2".
func braceSequence(body string) ([]string, bool) {
	parts := strings.Split(body, "..")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, false
	}
	step := 1
	if len(parts) == 3 {
		n, err := strconv.Atoi(parts[2])
		if err != nil || n == 0 {
			return nil, false
		}
		step = max(n, -n)
	}
	a, errA := strconv.Atoi(parts[0])
	b, errB := strconv.Atoi(parts[1])
	letters := false
	if errA != nil || errB != nil {
		if len(parts[0]) != 1 || len(parts[1]) != 1 || !isAlnum(parts[0][0]) || !isAlnum(parts[1][0]) {
			return nil, false
		}
		a, b, letters = int(parts[0][0]), int(parts[1][0]), true
	}
	if (b-a)/step > maxBraceFields || (a-b)/step > maxBraceFields {
		return nil, false
	}
	var out []string
	for v := a; ; {
		if letters {
			out = append(out, string(rune(v)))
		} else {
			out = append(out, strconv.Itoa(v))
		}
		if v == b || (a < b && v+step > b) || (a > b && v-step < b) {
			break
		}
		if a < b {
			v += step
		} else {
			v -= step
		}
	}
	return out, true
}
