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
