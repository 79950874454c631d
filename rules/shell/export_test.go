package shell

// TakesFastPath reports whether Parse analyses src on the fast path, for
// the external tests (which read the corpus through policytest, which
// imports this package). It sets up a walker as parse does.
func TakesFastPath(src string) bool {
	st := new(parseState)
	st.s.Source, st.s.state = src, st
	st.s.Commands, st.s.Pipelines = st.cmds[:0], st.pipes[:0]
	w := &st.w
	w.s = &st.s
	w.args, w.ints, w.redirs = st.args[:0], st.ints[:0], st.redirs[:0]
	ok := w.fastPath(src, frame{src: src})
	w.release()
	return ok
}
