package workload

import "io/fs"

// embeddedCorpus returns the labelled corpus compiled into the binary.
// rules/corpus has no Go package yet; until it does, there is none and
// Load falls back to the inline set.
func embeddedCorpus() (fs.FS, bool) { return nil, false }
