package policy

import (
	"errors"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/parapet-dev/parapet/rules/action"
)

// urlMatcher holds for one URL when its scheme, host and method are all
// admitted by the given lists and its host matches no `host_not:` entry.
type urlMatcher struct {
	schemes, methods []string
	hosts, hostsNot  hostPatterns
	every            bool
}

func (m *urlMatcher) kind() string { return "url" }

func (m *urlMatcher) holdsFor(u *action.URL) bool {
	if m.schemes != nil && !containsString(m.schemes, u.Scheme) {
		return false
	}
	if m.methods != nil && !containsString(m.methods, u.Method) {
		return false
	}
	if m.hosts != nil && !m.hosts.match(u.Host) {
		return false
	}
	if m.hostsNot != nil {
		// An unparseable URL has no host: for deny/verify it counts as
		// outside every list, for allow it proves nothing.
		if u.Host == "" {
			return !m.every
		}
		if m.hostsNot.match(u.Host) {
			return false
		}
	}
	return true
}

func (m *urlMatcher) eval(st *evalState) (bool, string) {
	urls := st.act.URLs
	if m.every {
		if len(urls) == 0 {
			return false, ""
		}
		for i := range urls {
			if !m.holdsFor(&urls[i]) {
				return false, urls[i].Raw
			}
		}
		return true, ""
	}
	for i := range urls {
		if m.holdsFor(&urls[i]) {
			return true, urls[i].Raw
		}
	}
	return false, ""
}

// hostPattern is "github.com" (exactly), ".github.com" (the domain and all
// its subdomains) or a glob such as "*.example.*".
type hostPattern struct {
	exact, domain string
	glob          *wordGlob
}

func compileHostPattern(p string) (hostPattern, error) {
	p = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(p)), ".")
	switch {
	case p == "" || p == ".":
		return hostPattern{}, errors.New("empty host")
	case strings.ContainsAny(p, "/: \t@"):
		return hostPattern{}, errors.New("a host pattern is a bare host name, without scheme, port or path")
	case strings.HasPrefix(p, ".") && !strings.ContainsAny(p, `*?[\`):
		return hostPattern{domain: p}, nil
	case strings.ContainsAny(p, `*?[\`):
		g, err := compileWordGlob(p)
		if err != nil {
			return hostPattern{}, err
		}
		return hostPattern{glob: &g}, nil
	}
	return hostPattern{exact: p}, nil
}

func (h *hostPattern) match(host string) bool {
	switch {
	case h.glob != nil:
		return h.glob.match(host)
	case h.domain != "":
		return host == h.domain[1:] || strings.HasSuffix(host, h.domain)
	}
	return host == h.exact
}

type hostPatterns []hostPattern

func (hs hostPatterns) match(host string) bool {
	if host == "" {
		return false
	}
	for i := range hs {
		if hs[i].match(host) {
			return true
		}
	}
	return false
}

var urlKeys = []string{"scheme", "host", "host_not", "method"}

// trustedHostsToken in a host list stands for heuristics.trusted_hosts, so
// a policy names its trusted hosts once.
const trustedHostsToken = "$TRUSTED_HOSTS"

func (c *compiler) urlMatcher(label string, n *yaml.Node, every bool) *urlMatcher {
	kvs := c.ps.entries(n, label, "url")
	if n.Kind != yaml.MappingNode {
		return nil
	}
	if len(kvs) == 0 {
		c.ps.add(n.Line, label, "url is empty (give scheme, host, host_not or method)")
		return nil
	}
	c.ps.checkKeys(kvs, urlKeys, label, "url")
	m := &urlMatcher{every: every}
	hosts := func(kv keyValue) hostPatterns {
		out := hostPatterns{}
		for _, it := range c.ps.stringList(kv.value, label, "url."+kv.key) {
			if it.value == trustedHostsToken {
				if len(c.trustedHosts) == 0 {
					c.ps.add(it.line, label, "url.%s: %s is used but heuristics.trusted_hosts is empty", kv.key, trustedHostsToken)
				}
				for _, h := range c.trustedHosts {
					hp, _ := compileHostPattern(h) // validated with the heuristics section
					out = append(out, hp)
				}
				continue
			}
			hp, err := compileHostPattern(it.value)
			if err != nil {
				c.ps.add(it.line, label, "url.%s: bad host %q: %v", kv.key, it.value, err)
				continue
			}
			out = append(out, hp)
		}
		return out
	}
	for _, kv := range kvs {
		switch kv.key {
		case "scheme":
			m.schemes = []string{}
			for _, it := range c.ps.stringList(kv.value, label, "url.scheme") {
				s := strings.ToLower(strings.TrimSpace(strings.TrimSuffix(it.value, "://")))
				if s == "" || strings.ContainsAny(s, ":/ ") {
					c.ps.add(it.line, label, "url.scheme: bad scheme %q", it.value)
					continue
				}
				m.schemes = append(m.schemes, s)
			}
		case "method":
			m.methods = []string{}
			for _, it := range c.ps.stringList(kv.value, label, "url.method") {
				s := strings.ToUpper(strings.TrimSpace(it.value))
				if s == "" || strings.IndexFunc(s, func(r rune) bool { return r < 'A' || r > 'Z' }) >= 0 {
					c.ps.add(it.line, label, "url.method: bad method %q", it.value)
					continue
				}
				m.methods = append(m.methods, s)
			}
		case "host":
			m.hosts = hosts(kv)
		case "host_not":
			m.hostsNot = hosts(kv)
		}
	}
	return m
}
