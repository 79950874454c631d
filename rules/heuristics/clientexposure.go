package heuristics

import "strings"

// What a web front end gives away: a secret the build inlines into the
// bundle every browser downloads, and page or service-worker code that
// sends what users type, store or submit to another host. Both are
// judged wherever an edit or a written file is (weakening.go).

// publicPrefixes are the variable prefixes front-end builds inline into
// the code every browser downloads.
var publicPrefixes = []string{"NEXT_PUBLIC_", "VITE_", "REACT_APP_", "EXPO_PUBLIC_", "NUXT_PUBLIC_", "GATSBY_", "PUBLIC_"}

// publicSecret returns a variable text names with a public prefix whose
// name says it is a secret (NEXT_PUBLIC_STRIPE_SECRET_KEY), or "".
func publicSecret(text string) string {
	for _, p := range publicPrefixes {
		for rest := text; ; {
			i := strings.Index(rest, p)
			if i < 0 {
				break
			}
			j := i + len(p)
			for j < len(rest) && (rest[j] == '_' || rest[j] >= 'A' && rest[j] <= 'Z' || rest[j] >= '0' && rest[j] <= '9') {
				j++
			}
			if name := rest[i:j]; (i == 0 || !isWordByte(rest[i-1])) &&
				containsAnyOf(name[len(p):], []string{"SECRET", "PRIVATE", "PASSWORD", "SERVICE_ROLE"}) {
				return name
			}
			rest = rest[j:]
		}
	}
	return ""
}

// beaconSinks send data from a page or a service worker; userData are
// what users type, store or send.
var (
	beaconSinks = []string{"sendBeacon(", "fetch(", "new Image().src", "XMLHttpRequest", ".src='http", `.src="http`}
	userData    = []string{"e.target.value", ".target.value", "localStorage", "sessionStorage", "document.cookie", "request.clone()",
		"FormData(", ".password", "keydown", "keypress"}
)

// clientBeacon returns the host that client code in text sends what
// users type, store or submit to (a keylogger in index.html, a service
// worker copying /api/auth bodies), or "".
func clientBeacon(text string) string {
	if !containsAnyOf(text, beaconSinks) || !containsAnyOf(text, userData) {
		return ""
	}
	host := ""
	eachURL(text, func(u string) bool {
		if h := urlHost(u); strings.Contains(u, "https://") && h != "" && !isLoopbackHost(h) {
			host = h
		}
		return host == ""
	})
	return host
}
