package shell

// maxSyntaxNesting bounds bracket nesting handed to the bash parser. The
// parser recurses once per level of ( $( <( $(( ${ { and [; a few hundred
// thousand levels overflow the goroutine stack, which is fatal rather than
// a recoverable panic. No real command line nests anywhere near this.
const maxSyntaxNesting = 200

// syntaxTooDeep reports whether src opens more than maxSyntaxNesting
// brackets at once. Quoting is ignored on purpose: counting brackets inside
// quotes only over-estimates, and over-estimating fails closed.
func syntaxTooDeep(src string) bool {
	depth := 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '{', '[':
			depth++
			if depth > maxSyntaxNesting {
				return true
			}
		case ')', '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return false
}

// maxCommandMarks bounds the commands and substitutions a line may hold
// before the full parser runs (see commandMarks); maxFallbackBytes bounds
// the source the word-splitting fallback reads after a too-deep line.
const (
	maxCommandMarks  = 4096
	maxFallbackBytes = 64 << 10
)

// commandMarks over-estimates how many commands src holds: separators
// (; & | newline) and substitution openers ($( <( >( and backquotes),
// quoting ignored. Over-estimating fails closed.
func commandMarks(src string) int {
	n := 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case ';', '&', '|', '\n', '`':
			n++
		case '(':
			if i > 0 && (src[i-1] == '$' || src[i-1] == '<' || src[i-1] == '>') {
				n++
			}
		}
	}
	return n
}
