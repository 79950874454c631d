package action

import (
	"net/url"
	"strings"
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
	method := strings.ToUpper(a.String("method"))
	for i := range a.Args {
		k := a.Args[i].Key
		if !isURLKey(k) {
			continue
		}
		switch v := a.Args[i].Value.(type) {
		case string:
			c.addURL(k, v, method)
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok {
					c.addURL(k, s, method)
				}
			}
		}
	}
	if a.Script == nil {
		return
	}
	for _, cmd := range a.Script.Commands {
		m := commandMethod(cmd.Program, cmd.Args)
		for i, arg := range cmd.Args {
			switch {
			case strings.Contains(arg, "://"):
				c.addURL("command", arg, m)
			case isHTTPClient(cmd.Program) && looksLikeBareHost(arg) && !takesValue(cmd.Args, i):
				c.addURL("command", "http://"+arg, m)
			}
		}
	}
}

func (c *collector) addURL(field, raw, method string) {
	norm, _ := Normalize(strings.TrimSpace(raw))
	u, err := url.Parse(norm)
	if err != nil || u.Host == "" {
		// Keep what we can: an unparseable URL is still a contact attempt.
		c.a.URLs = append(c.a.URLs, URL{Raw: raw, Method: method, Field: field})
		return
	}
	c.a.URLs = append(c.a.URLs, URL{
		Raw: raw, Scheme: strings.ToLower(u.Scheme), Host: strings.TrimSuffix(strings.ToLower(u.Hostname()), "."),
		Port: u.Port(), Path: u.EscapedPath(), Method: method, Field: field,
	})
}

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

// commandMethod infers the HTTP method of a curl / wget invocation.
func commandMethod(program string, args []string) string {
	if !isHTTPClient(program) {
		return ""
	}
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
