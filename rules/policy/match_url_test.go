package policy

import "testing"

func TestURLMatcher(t *testing.T) {
	req := func(method, url string) string {
		return `{"method":"` + method + `","url":` + jsonString(url) + `}`
	}
	cases := []struct {
		name, match, args string
		want              bool
	}{
		{"exact host", "url: {host: [github.com]}", req("GET", "https://github.com/x"), true},
		{"exact host not subdomain", "url: {host: [github.com]}", req("GET", "https://api.github.com/x"), false},
		{"exact host case and port", "url: {host: [github.com]}", req("GET", "https://GitHub.com:443/x"), true},
		{"domain matches apex", "url: {host: [.github.com]}", req("GET", "https://github.com/"), true},
		{"domain matches subdomain", "url: {host: [.github.com]}", req("GET", "https://a.b.github.com/"), true},
		{"domain not lookalike", "url: {host: [.github.com]}", req("GET", "https://evilgithub.com/"), false},
		{"domain not suffix trick", "url: {host: [.github.com]}", req("GET", "https://github.com.evil.io/"), false},
		{"glob host", "url: {host: [\"*.example.*\"]}", req("GET", "https://api.example.org/"), true},
		{"glob host no", "url: {host: [\"*.example.*\"]}", req("GET", "https://example.org/"), false},
		{"scheme", "url: {scheme: [http]}", req("GET", "http://x.io/"), true},
		{"scheme no", "url: {scheme: [http]}", req("GET", "https://x.io/"), false},
		{"method", "url: {method: [post]}", req("POST", "https://x.io/"), true},
		{"method no", "url: {method: [POST]}", req("GET", "https://x.io/"), false},
		{"all parts on one URL", "url: {method: [POST], host: [x.io]}", req("POST", "https://y.io/"), false},
		{"host_not", "url: {host_not: [x.io]}", req("GET", "https://y.io/"), true},
		{"host_not excludes", "url: {host_not: [x.io]}", req("GET", "https://x.io/"), false},
		{"host_not: unparseable URL counts as untrusted", "url: {host_not: [x.io]}", req("GET", "not a url"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := oneRule(t, "deny", c.match)
			if got := matched(p, act(t, "http_request", c.args)); got != c.want {
				t.Fatalf("%s on %s = %v, want %v", c.match, c.args, got, c.want)
			}
		})
	}
}

func TestURLQuantifiers(t *testing.T) {
	two := `{"urls":["https://github.com/a","https://evil.example/b"],"method":"GET"}`
	if !matched(oneRule(t, "deny", "url: {host: [evil.example]}"), act(t, "web_fetch", two)) {
		t.Fatal("deny: any URL is enough")
	}
	allowGH := oneRule(t, "allow", "url: {host: [github.com]}")
	if matched(allowGH, act(t, "web_fetch", two)) {
		t.Fatal("allow: every URL must match")
	}
	if !matched(allowGH, act(t, "web_fetch", `{"url":"https://github.com/a"}`)) {
		t.Fatal("allow: a single matching URL must be allowed")
	}
	if matched(allowGH, act(t, "web_fetch", `{}`)) {
		t.Fatal("allow: an action without URLs must not satisfy a url matcher")
	}
	if matched(oneRule(t, "allow", "url: {host_not: [evil.example]}"), act(t, "web_fetch", `{"url":"::nonsense"}`)) {
		t.Fatal("allow host_not: an unparseable URL proves nothing")
	}
}

func TestTrustedHostsToken(t *testing.T) {
	p := mustParse(t, `version: 1
heuristics:
  trusted_hosts: [github.com, .npmjs.org]
allow:
  - id: r
    match:
      url: {host: [$TRUSTED_HOSTS]}
`)
	for url, want := range map[string]bool{
		"https://github.com/x": true, "https://registry.npmjs.org/x": true, "https://evil.example/": false,
	} {
		if got := matched(p, act(t, "http_request", `{"method":"POST","url":"`+url+`"}`)); got != want {
			t.Errorf("%s: %v, want %v", url, got, want)
		}
	}
}
