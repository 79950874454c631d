package action

import "sync"

// Canonicalize takes its Actions from a pool. An Action (about a kilobyte
// with its room for the usual few arguments, strings, paths and URL) is
// the largest allocation of an uncached decision; reusing it, and the
// parsed Script it holds, takes 40 % of the bytes a decision allocates
// off the garbage collector.
var actionPool = sync.Pool{New: func() any { return new(Action) }}

// Release gives a back for a later Canonicalize to reuse. Only a's owner
// may call it, once, after which neither a nor what its Args, Paths,
// URLs, Strings, Evasions and Script hold may be used: those may live
// inside a, or be reused with it. Its strings stay valid, because none
// points into an Action (they are the request's, or in the arena's
// buffers, which are never reused), so a verdict or finding may keep
// them. An owner that never calls Release leaves a to the garbage
// collector as usual.
func (a *Action) Release() {
	if a.Script != nil {
		a.Script.Release()
	}
	*a = Action{}
	actionPool.Put(a)
}
