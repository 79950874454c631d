package heuristics

import (
	"fmt"
	"net"
	"strings"
)

// hostSet matches host names against trusted-host patterns:
// "github.com" (exact), ".github.com" (the domain and its subdomains) and
// globs such as "*.internal.example" where * matches any run of characters
// (so also several labels) but never the empty string.
type hostSet struct {
	exact    map[string]bool
	suffixes []string // ".github.com"
	globs    []string
}

func newHostSet(patterns []string) (hostSet, error) {
	hs := hostSet{exact: map[string]bool{}}
	for _, raw := range patterns {
		p := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(raw)), ".")
		if err := validHostPattern(p); err != nil {
			return hostSet{}, fmt.Errorf("heuristics: trusted host %q: %v", raw, err)
		}
		switch {
		case strings.Contains(p, "*"):
			hs.globs = append(hs.globs, p)
		case strings.HasPrefix(p, "."):
			hs.suffixes = append(hs.suffixes, p)
		default:
			hs.exact[p] = true
		}
	}
	return hs, nil
}

func validHostPattern(p string) error {
	if p == "" {
		return fmt.Errorf("empty pattern")
	}
	named := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			named = true
		case c == '.' || c == '-' || c == '_' || c == '*' || c == ':' || c == '[' || c == ']':
		default:
			return fmt.Errorf("character %q is not allowed in a host pattern (give a host name, not a URL)", c)
		}
	}
	if !named {
		// "*" or "*.*" would trust every host and switch exfiltration checks off.
		return fmt.Errorf("pattern names no domain")
	}
	if strings.Contains(p, "..") || strings.Contains(p, "**") {
		return fmt.Errorf("malformed pattern")
	}
	if p[0] == '.' && strings.Contains(p, "*") {
		return fmt.Errorf("use either a leading dot or a wildcard, not both")
	}
	return nil
}

// match reports whether host is trusted. host must be lower case.
func (hs *hostSet) match(host string) bool {
	if host == "" {
		return false
	}
	if hs.exact[host] {
		return true
	}
	for _, s := range hs.suffixes {
		if host == s[1:] || strings.HasSuffix(host, s) {
			return true
		}
	}
	for _, g := range hs.globs {
		if globMatch(g, host) {
			return true
		}
	}
	return false
}

// globMatch matches s against pattern where '*' stands for one or more
// characters. Iterative with backtracking to the last star: linear in
// practice, never exponential.
func globMatch(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i+1 // a star consumes at least one character
			p++
			i++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	if p < len(pattern) && pattern[p] == '*' {
		return false // a trailing star needs at least one character
	}
	return p == len(pattern)
}

// domainMatch reports whether host is domain or one of its subdomains.
func domainMatch(host, domain string) bool {
	return host == domain || (len(host) > len(domain) && strings.HasSuffix(host, domain) && host[len(host)-len(domain)-1] == '.')
}

// privateHost reports a host inside an organisation's own network: a
// private or link-local address, a single-label name, or a name under a
// suffix reserved or customary for internal use (.internal, .local,
// .lan, .corp, .home.arpa, .intranet).
func privateHost(h string) bool {
	h = strings.ToLower(strings.Trim(h, "[]"))
	if h == "" {
		return false
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip.IsPrivate() || ip.IsLinkLocalUnicast()
	}
	if !strings.Contains(h, ".") {
		return true
	}
	for _, suffix := range []string{".internal", ".local", ".lan", ".corp", ".home.arpa", ".intranet", ".localdomain"} {
		if strings.HasSuffix(h, suffix) {
			return true
		}
	}
	return false
}

// codeHost reports a host trusted to serve code that runs or is applied
// straight from a URL: a trusted host that is not a paste service. A
// gist is one account's paste, not a project's release, whatever trust
// the rest of GitHub has; naming it exactly in trusted_hosts trusts it.
func codeHost(trusted *hostSet, h string) bool {
	switch h {
	case "gist.github.com", "gist.githubusercontent.com":
		return trusted.exact[h]
	}
	return trusted.match(h)
}
