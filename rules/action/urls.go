package action

import (
	"net/url"
	"strings"

	"github.com/parapet-dev/parapet/rules/shell"
)

// isURLKey reports argument names that hold a URL.
func isURLKey(k string) bool {
	switch k {
	case "url", "uri", "endpoint", "href", "link", "target_url", "urls", "webhook", "webhook_url":
		return true
	}
	return false
}

func (c *collector) collectURLs() {
	a := c.a
	// The method is read only for an action that has a URL argument.
	method, haveMethod := "", false
	for i := range a.Args {
		k := a.Args[i].Key
		if !isURLKey(k) {
			continue
		}
		if !haveMethod {
			method, haveMethod = c.methodArg(), true
		}
		switch v := a.Args[i].Value.(type) {
		case string:
			c.addURL(k, v, method, c.plainArgs)
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok {
					c.addURL(k, s, method, c.plainArgs)
				}
			}
		}
	}
	if a.Script == nil {
		return
	}
	for i := range a.Script.Commands {
		cmd := &a.Script.Commands[i]
		if isHTTPClient(cmd.Program) {
			c.httpClientURLs(cmd)
			continue
		}
		for _, arg := range cmd.Args {
			if strings.Contains(arg, "://") {
				c.addURL("command", arg, "", false)
			}
		}
	}
}

// methodArg is the "method" argument, normalised, in upper case.
func (c *collector) methodArg() string {
	v, _ := c.a.Args.Get("method")
	method, _ := v.(string)
	method, _ = c.normArg(method)
	return strings.ToUpper(method)
}

// httpClientURLs adds the URLs an HTTP client's command names, with the
// method its flags imply: a bare host is a URL too.
func (c *collector) httpClientURLs(cmd *shell.Command) {
	m := commandMethod(cmd.Args)
	for i, arg := range cmd.Args {
		switch {
		case strings.Contains(arg, "://"):
			c.addURL("command", arg, m, false)
		case looksLikeBareHost(arg) && !takesValue(cmd.Args, i):
			c.addURL("command", "http://"+arg, m, false)
		}
	}
}

// addURL adds the URL raw; plain says it is plain ASCII, which
// normalisation leaves as it is.
func (c *collector) addURL(field, raw, method string, plain bool) {
	norm := strings.TrimSpace(raw)
	if !plain {
		norm, _ = Normalize(norm)
	}
	c.a.URLs = append(c.a.URLs, parseURL(norm, raw, method, field))
}

// parseURL reads the normalised URL norm into a URL with Raw, Method and
// Field as given.
func parseURL(norm, raw, method, field string) URL {
	scheme, host, port, path, ok := parseSimpleURL(norm)
	if !ok {
		u, err := url.Parse(norm)
		if err != nil || u.Host == "" {
			// Keep what we can: an unparseable URL is still a contact attempt.
			return URL{Raw: raw, Method: method, Field: field}
		}
		scheme, host, port, path = u.Scheme, u.Hostname(), u.Port(), u.EscapedPath()
	}
	return URL{
		Raw: raw, Scheme: strings.ToLower(scheme), Host: strings.TrimSuffix(strings.ToLower(host), "."),
		Port: port, Path: path, Method: method, Field: field,
	}
}

// parseSimpleURL reads the usual URL, scheme://host[:port][/path], when
// url.Parse would take every part of it as written: no user, query,
// fragment, bracketed address or percent-escape, and only characters
// that need no escaping. It returns url.Parse's Scheme, Hostname(),
// Port() and EscapedPath() for it; ok is false for anything else, which
// is left to url.Parse. (url.Parse allocates and checks for much that
// the usual URL does not have.)
func parseSimpleURL(s string) (scheme, host, port, path string, ok bool) {
	i := 0
	for i < len(s) && urlByte[s[i]]&urlScheme != 0 {
		i++
	}
	if i == 0 || !isASCIILetter(s[0]) || !strings.HasPrefix(s[i:], "://") {
		return "", "", "", "", false
	}
	scheme = s[:i]
	i += len("://")
	start := i
	for i < len(s) && urlByte[s[i]]&urlHost != 0 {
		i++
	}
	host, end := s[start:i], i
	if i < len(s) && s[i] == ':' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		port = s[end+1 : i]
	}
	if host == "" || i < len(s) && s[i] != '/' {
		return "", "", "", "", false
	}
	path = s[i:]
	for j := 0; j < len(path); j++ {
		if urlByte[path[j]]&urlPath == 0 {
			return "", "", "", "", false
		}
	}
	return scheme, host, port, path, true
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// Classes of URL bytes for parseSimpleURL.
const (
	urlScheme = 1 << iota // may follow a scheme's first letter
	urlHost               // a host name url.Parse keeps as is (no ":")
	urlPath               // a path character EscapedPath writes as is
)

var urlByte = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		alnum := isASCIILetter(b) || b >= '0' && b <= '9'
		if alnum || strings.IndexByte("+-.", b) >= 0 {
			t[c] |= urlScheme
		}
		if alnum || strings.IndexByte("-._~", b) >= 0 {
			t[c] |= urlHost
		}
		if alnum || strings.IndexByte("-._~$&+,/:;=@", b) >= 0 {
			t[c] |= urlPath
		}
	}
	return t
}()

func isHTTPClient(program string) bool {
	switch program {
	case "curl", "wget", "http", "https", "xh", "httpie", "aria2c":
		return true
	}
	return false
}

// takesValue reports whether args[i] is the value of the flag before it
// (curl -o out.txt, -H 'x: y'), so it is not mistaken for a host.
func takesValue(args []string, i int) bool {
	if i == 0 {
		return false
	}
	prev := args[i-1]
	switch prev {
	case "-o", "--output", "-H", "--header", "-d", "--data", "--data-raw", "--data-binary",
		"-u", "--user", "-X", "--request", "-A", "--user-agent", "-e", "--referer", "-F", "--form",
		"-T", "--upload-file", "-O", "--output-document", "-P", "--directory-prefix", "--json",
		"--post-data", "--post-file", "-b", "--cookie", "-c", "--cookie-jar", "--connect-timeout",
		"-m", "--max-time", "--retry", "-w", "--write-out", "-K", "--config", "--cacert", "--cert", "--key":
		return true
	}
	return false
}

func looksLikeBareHost(arg string) bool {
	if arg == "" || arg[0] == '-' || strings.ContainsAny(arg, " @$`'\"") {
		return false
	}
	host, _, _ := strings.Cut(arg, "/")
	host, _, _ = strings.Cut(host, ":")
	return strings.Contains(host, ".") && !strings.HasPrefix(host, ".") && !strings.HasSuffix(host, ".") &&
		strings.IndexFunc(host, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }) >= 0
}

// commandMethod infers the HTTP method of a curl / wget invocation
// (isHTTPClient) from its arguments.
func commandMethod(args []string) string {
	method := "GET"
	for i, a := range args {
		switch {
		case (a == "-X" || a == "--request" || a == "--method") && i+1 < len(args):
			return strings.ToUpper(args[i+1])
		case strings.HasPrefix(a, "--request=") || strings.HasPrefix(a, "--method="):
			_, v, _ := strings.Cut(a, "=")
			return strings.ToUpper(v)
		case strings.HasPrefix(a, "-X") && len(a) > 2:
			return strings.ToUpper(a[2:])
		case a == "-T" || a == "--upload-file":
			method = "PUT"
		case a == "-d" || strings.HasPrefix(a, "--data") || a == "-F" || strings.HasPrefix(a, "--form") ||
			a == "--json" || strings.HasPrefix(a, "--post-data") || strings.HasPrefix(a, "--post-file"):
			if method == "GET" {
				method = "POST"
			}
		}
	}
	return method
}
