package policytest

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"
)

// FuzzLoad feeds arbitrary bytes to the case-file loader, which parses
// user-supplied YAML: it must never panic or hang, and whatever it accepts
// must be a complete, valid case.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(goodFile))
	f.Add([]byte(""))
	f.Add([]byte("category: c\nkind: attack\ncases:\n  - {name: a, action: {type: x, args: {k: [1, {b: null}], t: 2001-02-03}}, expect: block}\n"))
	f.Add([]byte("category: c\nkind: everyday\ncases:\n  - {name: a, action: {type: x, args_json: '[1]'}, expect: error, min_tier: 3}\n"))
	f.Add([]byte("a: &x [*x, *x]\n"))
	f.Add([]byte("cases:\n  - name: a\n    action: {type: x, args: {a: &v {b: 1}, c: *v, d: !!binary aGk=, e: .nan}}\n"))
	f.Add([]byte("category: c\nkind: attack\ncases:\n  - {name: \"\\u200b\", action: {type: \"\\uff52m\", args: {\"\\x00\": 0x1F}}, expect: allow}\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cases, err := LoadFS(fstest.MapFS{"f.yaml": {Data: data}}, ".")
		if err != nil {
			if cases != nil {
				t.Fatal("cases returned with an error")
			}
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(cases) == 0 {
			t.Fatal("no cases and no error")
		}
		for _, c := range cases {
			if c.File != "f.yaml" || c.Line < 1 || strings.TrimSpace(c.Name) == "" || c.Category == "" {
				t.Fatalf("incomplete case %+v", c)
			}
			switch c.Expect {
			case ExpectAllow, ExpectBlock, ExpectEscalate, ExpectError:
			default:
				t.Fatalf("bad expect %q", c.Expect)
			}
			if c.Kind != KindAttack && c.Kind != KindEveryday {
				t.Fatalf("bad kind %q", c.Kind)
			}
			if c.MinTier < 0 || c.MinTier > MaxTier {
				t.Fatalf("bad min tier %d", c.MinTier)
			}
			if strings.TrimSpace(c.Request.Type) == "" && c.Expect != ExpectError {
				t.Fatalf("empty type accepted for expect %s", c.Expect)
			}
		}
	})
}

// args (unlike args_json) always become a JSON object.
func FuzzArgsJSON(f *testing.F) {
	f.Add("k: v")
	f.Add("a: [1, 2.5, true, null, {b: c}]\nd: 2024-01-01\n")
	f.Add("\"\\u200b\": \"\\ud800\"")
	f.Fuzz(func(t *testing.T, args string) {
		src := "category: c\nkind: attack\ncases:\n  - name: a\n    expect: block\n    action:\n      type: x\n      args:\n" +
			indent(args, "        ")
		cases, err := LoadFS(fstest.MapFS{"f.yaml": {Data: []byte(src)}}, ".")
		if err != nil {
			return
		}
		var obj map[string]any
		if p := cases[0].Request.Payload; !json.Valid(p) || json.Unmarshal(p, &obj) != nil {
			t.Fatalf("args gave payload %q, not a JSON object", p)
		}
	})
}

func indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}
