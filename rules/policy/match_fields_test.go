package policy

import "testing"

func TestFieldsMatcher(t *testing.T) {
	cases := []struct {
		name, match, args string
		want              bool
	}{
		{"regexp on field", `fields: {body: "(?i)password"}`, `{"to":"a@b.c","body":"my PASSWORD is"}`, true},
		{"other field ignored", `fields: {body: "(?i)password"}`, `{"subject":"password","body":"hi"}`, false},
		{"nested field", `fields: {"headers.Authorization": "^Bearer "}`, `{"url":"https://x.io","headers":{"Authorization":"Bearer abc"}}`, true},
		{"nested field no", `fields: {"headers.Authorization": "^Bearer "}`, `{"url":"https://x.io","headers":{"Authorization":"Basic abc"}}`, false},
		{"normalised value", `fields: {body: "password"}`, `{"body":"pass\u200bword"}`, true},
		{"decoded layer", `fields: {body: "password"}`, `{"body":"cGFzc3dvcmQ6IGh1bnRlcjIgaXMgbXkgcGFzc3dvcmQ="}`, true},
		{"list values", `fields: {to: "@evil\\.example$"}`, `{"to":["a@corp.example","b@evil.example"]}`, true},
		{"all fields must hold", `fields: {to: "@corp", body: "secret"}`, `{"to":"a@corp","body":"hello"}`, false},
		{"missing field", `fields: {body: "."}`, `{"to":"a"}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := oneRule(t, "deny", c.match)
			if got := matched(p, act(t, "send_email", c.args)); got != c.want {
				t.Fatalf("%s on %s = %v, want %v", c.match, c.args, got, c.want)
			}
		})
	}
}

func TestFieldsQuantifiers(t *testing.T) {
	allowCorp := oneRule(t, "allow", `fields: {to: "@corp\\.example$"}`)
	if !matched(allowCorp, act(t, "send_email", `{"to":["a@corp.example","b@corp.example"]}`)) {
		t.Fatal("allow: all recipients match")
	}
	if matched(allowCorp, act(t, "send_email", `{"to":["a@corp.example","b@evil.example"]}`)) {
		t.Fatal("allow: every value of the field must match")
	}
	if matched(allowCorp, act(t, "send_email", `{"body":"x"}`)) {
		t.Fatal("allow: a missing field must not match")
	}
}
