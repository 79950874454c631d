package action

import "sync"

// Canonicalize takes its Actions from a pool. An Action is about a
// kilobyte (with room for the usual few arguments, strings, paths and
// URL), the largest allocation of a decision: reusing it saves shieldd
// the allocation and a third of the garbage each uncached decision makes.
var actionPool = sync.Pool{New: func() any { return new(Action) }}

// Release gives a back for a later Canonicalize to reuse. Only a's owner
// may call it, once, after which neither a nor what its Args, Paths,
// URLs, Strings, Evasions and Script hold may be used: those may live
// inside a, or be reused with it. Its strings stay valid, because none
// points into an Action (they are the request's, or in the arena's
// buffers, which are never reused), so a verdict or finding may keep
// them. An owner that never calls Release
// leaves a to the garbage collector as usual.
func (a *Action) Release() {
	if a.Script != nil {
		a.Script.Release()
	}
	*a = Action{}
	actionPool.Put(a)
}
