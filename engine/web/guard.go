package web

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
)

// TokenHeader carries the engine's token for clients that are not the
// page (scripts; "Authorization: Bearer" works too); the page sends it as
// a cookie.
const TokenHeader = "X-Parapet-Token"

// cookiePrefix starts the token cookie's name. Cookies are not kept apart
// by port, so the name carries the port: the pages of two engines on one
// machine do not overwrite each other's token.
const cookiePrefix = "parapet_token_"

// securityHeaders go on every answer. The CSP allows only this origin's
// own script and style (the page has no inline code), and no framing:
// a page that can approve actions must not be clickjacked.
func securityHeaders(h http.Header, page bool) {
	if page {
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "+
			"img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	} else {
		h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	}
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	// Other origins may not even embed our answers (<script src>, <img>).
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// hostAllowed accepts only loopback names in the Host header. A DNS
// rebinding attack reaches the server under the attacker's own name
// (evil.example resolving to 127.0.0.1), which makes its page
// same-origin with us; refusing every other name stops it.
func hostAllowed(host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(name)
	return err == nil && ip.Unmap().IsLoopback()
}

// crossOriginReason says why a state-changing request from a browser is
// refused, or "" when it may proceed. Browsers send Sec-Fetch-Site and
// Origin on every POST; a client that sends neither is not a browser and
// is held to the token alone.
func crossOriginReason(r *http.Request) string {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return "the request comes from another site (Sec-Fetch-Site: " + site + ")"
	}
	if origin := r.Header.Get("Origin"); origin != "" && !strings.EqualFold(origin, "http://"+r.Host) {
		return "the request comes from another origin (" + origin + ")"
	}
	return ""
}

// cookieName is the token cookie of the listener that r arrived on.
func cookieName(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if tcp, ok := a.(*net.TCPAddr); ok {
			return cookiePrefix + strconv.Itoa(tcp.Port)
		}
	}
	return cookiePrefix + "0"
}

// tokenOK reports whether r carries the engine's token: as TokenHeader,
// as "Authorization: Bearer", or as the cookie signing in set.
func (s *Server) tokenOK(r *http.Request) bool {
	got := r.Header.Get(TokenHeader)
	if got == "" {
		got, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	if got == "" {
		if c, err := r.Cookie(cookieName(r)); err == nil {
			got = c.Value
		}
	}
	return s.tokenEqual(got)
}

// tokenEqual compares in constant time.
func (s *Server) tokenEqual(got string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1
}

// setTokenCookie gives the browser the token once it signed in with it.
// HttpOnly: no script, ours included, needs to read it; SameSite=Strict:
// no other site's request carries it.
func (s *Server) setTokenCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
}
