package shell

// TakesFastPath reports whether Parse analyses src on the fast path, for
// the external tests (which read the corpus through policytest, which
// imports this package).
func TakesFastPath(src string) bool {
	w := new(parseState).start(src, true)
	ok := w.fastPath(src, frame{src: src})
	w.release()
	return ok
}
