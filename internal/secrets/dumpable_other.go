//go:build !linux

package secrets

// NonDumpable is unsupported off Linux.
func NonDumpable() error { return ErrUnsupported }

// Dumpable is unsupported off Linux.
func Dumpable() (bool, error) { return true, ErrUnsupported }
