package sandbox

// arm64 has no fork syscall (clone covers it) and no x32-style numbering.
func archOps(childParams, map[string]string) {}

func archExpectations(childParams) map[string]string { return nil }
