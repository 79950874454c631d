package action

import (
	"crypto/sha256"
	"encoding/hex"
)

// hashDomain separates Parapet action hashes from any other SHA-256 use.
const hashDomain = "parapet.action.v1"

// hashAction computes the canonical action hash:
//
//	SHA-256( "parapet.action.v1" LF type LF canonical-args LF workspace-root LF home )
//
// where type is the alias-resolved action type, canonical-args the RFC 8785
// (JCS) form of the JSON arguments, and workspace-root and home the cleaned
// directories the caller stated (empty when not given). Strings are hashed
// as sent, not normalised: the hash names exactly what would execute.
func hashAction(typ string, canonicalArgs []byte, root, home string) [32]byte {
	// A stack buffer covers the usual action; append moves larger ones to
	// the heap.
	var buf [512]byte
	b := buf[:0]
	b = append(b, hashDomain...)
	b = append(b, '\n')
	b = append(b, typ...)
	b = append(b, '\n')
	b = append(b, canonicalArgs...)
	b = append(b, '\n')
	b = append(b, root...)
	b = append(b, '\n')
	b = append(b, home...)
	return sha256.Sum256(b)
}

// HashHex returns the action hash as lower-case hex.
func (a *Action) HashHex() string { return hex.EncodeToString(a.Hash[:]) }

// HashRequest returns the canonical action hash of req as lower-case hex,
// without the analysis Canonicalize does. The engine uses it to check, just
// before executing, that a verdict is for exactly the action it will run.
func HashRequest(req Request, lim Limits) (string, error) {
	_, _, canon, _, err := parseRequest(&req, lim.withDefaults(), &arena{}, nil)
	if err != nil {
		return "", err
	}
	t, _ := ResolveType(req.Type)
	h := hashAction(t, canon, cleanRoot(req.Caller.WorkspaceRoot), cleanRoot(req.Caller.Home))
	return hex.EncodeToString(h[:]), nil
}

// IsHexHash reports whether s has the form of a SHA-256 in lower-case
// hex, as HashHex writes the action hash (and the audit chain its entry
// hashes).
func IsHexHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
