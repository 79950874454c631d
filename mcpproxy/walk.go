package mcpproxy

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/parapet-dev/parapet/rules/heuristics"
)

// decodeObject decodes a JSON object keeping numbers as written.
func decodeObject(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, &json.UnmarshalTypeError{Value: "null", Type: nil}
	}
	return m, nil
}

// walkStrings calls fn with every string in v (object keys included) and
// its dotted path, in a stable order; fn returns the string to keep, so
// the walk can rewrite them. skip names keys whose values are not text
// (base64 blobs).
func walkStrings(v any, path string, skip map[string]bool, fn func(path, s string) string) any {
	switch x := v.(type) {
	case string:
		return fn(path, x)
	case []any:
		for i := range x {
			x[i] = walkStrings(x[i], path+"[]", skip, fn)
		}
		return x
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := pathKey(k)
			if path != "" {
				p = path + "." + p
			}
			fn(p+" (key)", k)
			if skip[k] {
				continue
			}
			x[k] = walkStrings(x[k], p, skip, fn)
		}
		return x
	}
	return v
}

// pathKey is how a key appears in a path: paths end up in messages the
// model reads and in logs, so a key that is not a short plain name (it
// could be a secret, or a sentence aimed at the model) is shown as "*".
func pathKey(k string) string {
	if len(k) == 0 || len(k) > 32 {
		return "*"
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return "*"
		}
	}
	if _, found, _ := heuristics.RedactSecrets(k); len(found) > 0 {
		return "*"
	}
	return k
}

// clip shortens evidence for a log line or a message.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
