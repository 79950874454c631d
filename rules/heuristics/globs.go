package heuristics

import (
	"path"
	"strings"
)

// A glob is judged by the protected paths it can match: cat ~/.ss?/id_*
// reads SSH keys, cat /home/*/.ssh/* every user's, and echo >> ~/.b*rc
// writes a shell startup file. bash's globs do not match a leading dot
// unless the pattern has one (dotglob is off), and * does not cross "/".

// homeTemplates are protected paths relative to a home, most telling
// first: SSH keys, then startup files, then other credentials.
var homeTemplates = func() [][]string {
	rels := []string{".ssh/id_rsa", ".ssh/authorized_keys", ".bashrc", ".bash_profile", ".profile", ".zshrc", ".zprofile",
		".bash_login", ".config/fish/config.fish", ".config/autostart", ".config/systemd/user"}
	for _, h := range homeSecrets {
		rels = append(rels, h.rel)
	}
	rels = append(rels, browserRoots...)
	out := make([][]string, len(rels))
	for i, r := range rels {
		out[i] = strings.Split(r, "/")
	}
	return out
}()

// systemTemplates are protected absolute paths.
var systemTemplates = func() [][]string {
	abs := []string{"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d", "/etc/passwd", "/etc/master.passwd",
		"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_ecdsa_key", "/etc/crontab", "/etc/cron.d",
		"/etc/profile", "/etc/profile.d", "/etc/bash.bashrc", "/etc/environment", "/etc/ld.so.preload", "/etc/systemd/system",
		"/etc/rc.local", "/var/run/secrets", "/run/secrets", "/var/spool/cron"}
	out := make([][]string, len(abs))
	for i, a := range abs {
		out[i] = strings.Split(a[1:], "/")
	}
	return out
}()

// globProtected returns the protected path the glob pattern abs can
// match (a directory above one, or a path below one), or "".
func globProtected(abs, home string) string {
	var segs []string
	switch {
	case strings.HasPrefix(abs, "/"):
		segs = strings.Split(abs[1:], "/")
	case abs == "~" || strings.HasPrefix(abs, "~/"):
		if home == "" {
			home = "/home/user"
		}
		segs = strings.Split(strings.TrimPrefix(home+abs[1:], "/"), "/")
	default:
		return ""
	}
	if len(segs) > 32 {
		return ""
	}
	for _, base := range homeBases(home) {
		rest, concrete, ok := matchBase(segs, base)
		if !ok {
			continue
		}
		for _, t := range homeTemplates {
			if m, ok := matchTemplate(rest, t); ok {
				return concrete + "/" + m
			}
		}
	}
	for _, t := range systemTemplates {
		if m, ok := matchTemplate(segs, t); ok {
			return "/" + m
		}
	}
	return ""
}

// homeBases are the home directories a pattern may start with; "*" stands
// for any user name.
func homeBases(home string) [][]string {
	bases := [][]string{{"root"}, {"home", "*"}, {"Users", "*"}}
	if home != "" && home != "/" {
		bases = append([][]string{strings.Split(strings.TrimPrefix(home, "/"), "/")}, bases...)
	}
	return bases
}

// matchBase matches the start of segs against a home base and returns
// the rest, and the home as a concrete path.
func matchBase(segs, base []string) (rest []string, concrete string, ok bool) {
	if len(segs) < len(base) {
		return nil, "", false
	}
	parts := make([]string, len(base))
	for i, b := range base {
		if b == "*" {
			if strings.HasPrefix(segs[i], ".") || segs[i] == "" {
				return nil, "", false
			}
			parts[i] = segs[i]
			if strings.ContainsAny(segs[i], "*?[") {
				parts[i] = "user"
			}
			continue
		}
		if !segMatch(segs[i], b) {
			return nil, "", false
		}
		parts[i] = b
	}
	return segs[len(base):], "/" + strings.Join(parts, "/"), true
}

// matchTemplate reports whether pattern segments can name template t, a
// directory above it or a path below it, and returns that path.
func matchTemplate(pattern, t []string) (string, bool) {
	if len(pattern) == 0 {
		return "", false
	}
	n := min(len(pattern), len(t))
	globbed := false
	for i := range n {
		if !segMatch(pattern[i], t[i]) {
			return "", false
		}
		globbed = globbed || strings.ContainsAny(pattern[i], "*?[")
	}
	if !globbed && len(pattern) <= len(t) {
		return "", false // a plain path: classify judges it as it is
	}
	if len(pattern) <= len(t) {
		return strings.Join(t[:len(pattern)], "/"), true
	}
	return strings.Join(t, "/") + "/" + strings.Join(pattern[len(t):], "/"), true
}

// segMatch matches one path element as bash would.
func segMatch(pattern, name string) bool {
	if strings.HasPrefix(name, ".") && !strings.HasPrefix(pattern, ".") {
		return false
	}
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}
