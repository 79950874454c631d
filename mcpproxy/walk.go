package mcpproxy

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
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
			p := k
			if path != "" {
				p = path + "." + k
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
