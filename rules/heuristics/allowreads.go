package heuristics

import (
	"errors"
	"path"
	"strings"
)

// CheckSecretReadPattern validates an entry of Config.AllowSecretReads:
// an absolute path, or one starting at ~/ or $HOME/, with at most the
// wildcards * and ? (which match within one path element).
func CheckSecretReadPattern(p string) error {
	switch {
	case p == "":
		return errors.New("empty path")
	case !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~/") && !strings.HasPrefix(p, "$HOME/"):
		return errors.New("must be absolute or start with ~/ or $HOME/")
	case strings.Contains(p, "**") || strings.ContainsAny(p, "[]{}\\"):
		return errors.New("only the wildcards * and ? are supported")
	case strings.Contains(p, "/../") || strings.HasSuffix(p, "/.."):
		return errors.New("must not contain ..")
	}
	if _, err := path.Match(p, ""); err != nil {
		return err
	}
	return nil
}

// readAllowed reports whether the policy allows reading abs (a cleaned
// absolute path) without a credential-read finding.
func (s *scan) readAllowed(abs string) bool {
	if len(s.an.allowedReads) == 0 || s.collectOnly {
		return false
	}
	home := s.act.Caller.Home
	for _, p := range s.an.allowedReads {
		switch {
		case strings.HasPrefix(p, "~/"):
			if home == "" {
				continue
			}
			p = path.Join(home, p[2:])
		case strings.HasPrefix(p, "$HOME/"):
			if home == "" {
				continue
			}
			p = path.Join(home, p[6:])
		}
		if p == abs {
			return true
		}
		if ok, _ := path.Match(p, abs); ok {
			return true
		}
	}
	return false
}
