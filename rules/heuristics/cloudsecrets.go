package heuristics

import (
	"net/netip"
	"strings"
)

// Kubernetes and cloud secrets: the instance metadata service however its
// address is spelled, Kubernetes secrets and service-account tokens.

// metadataIPs are the IPv4 addresses of instance metadata and credential
// services: AWS / GCP / Azure / OpenStack / DigitalOcean, AWS ECS task
// credentials, EKS Pod Identity, Alibaba Cloud.
var metadataIPs = map[uint32]string{
	0xA9FEA9FE: "169.254.169.254",
	0xA9FEAA02: "169.254.170.2",
	0xA9FEAA17: "169.254.170.23",
	0x646464C8: "100.100.100.200",
}

// metadataNames are DNS names of metadata services.
var metadataNames = map[string]bool{
	"metadata.google.internal": true, "metadata": true, "metadata.goog": true, "metadata.azure.internal": true,
	"instance-data": true, "instance-data.ec2.internal": true, "fd00:ec2::254": true, "fd00:ec2::23": true,
}

// wildcardDNSSuffixes resolve a name that embeds an IP address to that
// address (169.254.169.254.nip.io, 169-254-169-254.sslip.io, a9fea9fe.nip.io).
var wildcardDNSSuffixes = []string{".nip.io", ".sslip.io", ".xip.io", ".traefik.me", ".nip.direct", ".localtest.me", ".backname.io", ".1u.ms"}

// metadataSpelling says whether host reaches a metadata service and, if
// so, whether it is spelled in a way that hides it (decimal, hex or octal
// numbers, short dotted forms, IPv6-mapped, wildcard DNS).
func metadataSpelling(host string) (canonical string, hidden, ok bool) {
	h := strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if h == "" {
		return "", false, false
	}
	if i := strings.IndexByte(h, '%'); i >= 0 { // fe80::1%eth0 zones
		h = h[:i]
	}
	if metadataNames[h] {
		return h, false, true
	}
	if ip, ok := parseInetAton(h); ok {
		if c, known := metadataIPs[ip]; known {
			return c, h != c, true
		}
		return "", false, false
	}
	if strings.IndexByte(h, ':') >= 0 {
		a, err := netip.ParseAddr(h)
		if err != nil {
			return "", false, false
		}
		if metadataNames[a.String()] {
			return a.String(), h != a.String(), true
		}
		b := a.As16()
		// IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and
		// NAT64 (64:ff9b::a.b.c.d) addresses carry the IPv4 address last.
		if a.Is4In6() || a.Is6() && (isZero(b[:12]) || b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && isZero(b[4:12])) {
			v4 := uint32(b[12])<<24 | uint32(b[13])<<16 | uint32(b[14])<<8 | uint32(b[15])
			if c, known := metadataIPs[v4]; known {
				return c, true, true
			}
		}
		return "", false, false
	}
	for _, suf := range wildcardDNSSuffixes {
		if !strings.HasSuffix(h, suf) {
			continue
		}
		name := h[:len(h)-len(suf)]
		labels := strings.Split(name, ".")
		cands := []string{}
		if len(labels) >= 4 {
			cands = append(cands, strings.Join(labels[len(labels)-4:], "."))
		}
		last := labels[len(labels)-1]
		cands = append(cands, strings.ReplaceAll(last, "-", "."))
		if i := strings.LastIndexByte(last, '-'); i >= 0 {
			cands = append(cands, strings.ReplaceAll(last[i+1:], "-", ".")) // app-a9fea9fe
		}
		cands = append(cands, last)
		for _, c := range cands {
			if len(c) == 8 && isHex(c) {
				c = "0x" + c
			}
			if ip, ok := parseInetAton(c); ok {
				if canon, known := metadataIPs[ip]; known {
					return canon, true, true
				}
			}
		}
	}
	return "", false, false
}

// mayBeMetadataHost is a cheap test that h could be a spelling of a
// metadata address: numbers, IPv6, the known names and wildcard DNS.
func mayBeMetadataHost(h string) bool {
	if h == "" {
		return false
	}
	switch c := h[0]; {
	case c >= '0' && c <= '9', c == '[', c == ':':
		return true
	case c == 'm' || c == 'M' || c == 'i' || c == 'I' || c == 'f' || c == 'F':
		return true
	}
	for _, suf := range wildcardDNSSuffixes {
		if strings.HasSuffix(h, suf) {
			return true
		}
	}
	return false
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return s != ""
}

// parseInetAton parses an IPv4 address as inet_aton (and so curl, wget
// and most resolvers) does: one to four parts, each decimal, octal
// (leading 0) or hex (0x); the last part fills the remaining bytes.
func parseInetAton(s string) (uint32, bool) {
	if s == "" || len(s) > 64 {
		return 0, false
	}
	var vals [4]uint64
	n := 0
	for rest := s; ; {
		p, tail, more := strings.Cut(rest, ".")
		if n == len(vals) || p == "" {
			return 0, false
		}
		base := uint64(10)
		switch {
		case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
			base, p = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		v, ok := parseUint32(p, base)
		if !ok {
			return 0, false
		}
		vals[n] = v
		n++
		if !more {
			break
		}
		rest = tail
	}
	var ip uint64
	last := n - 1
	for i, v := range vals[:last] {
		if v > 0xFF {
			return 0, false
		}
		ip |= v << (24 - 8*uint(i))
	}
	if vals[last] >= 1<<(8*uint(4-last)) {
		return 0, false
	}
	ip |= vals[last]
	return uint32(ip), true
}

// parseUint32 is strconv.ParseUint(p, base, 32) for base 8, 10 or 16,
// without the error value it allocates for the many words that are not
// numbers.
func parseUint32(p string, base uint64) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(p); i++ {
		var d uint64
		switch c := p[i]; {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		n = n*base + d
		if n > 0xFFFFFFFF {
			return 0, false
		}
	}
	return n, true
}

// metadataCredentialPath reports a request path on metadata service canon
// that returns credentials or user data. The container credential
// endpoints serve nothing else.
func metadataCredentialPath(canon, p string) bool {
	if canon == "169.254.170.2" || canon == "169.254.170.23" {
		return true
	}
	lp := strings.ToLower(p)
	if lp == "/latest/api/token" {
		// IMDSv2's session token: good only for asking the service
		// itself, which the credential paths are judged on.
		return false
	}
	for _, w := range []string{"credential", "token", "identity", "iam", "service-account", "user-data", "userdata", "/metadata/instance", "secret"} {
		if strings.Contains(lp, w) {
			return true
		}
	}
	return false
}

// checkMetadataHosts flags commands that reach a metadata service through
// a raw socket or tool other than an HTTP client (nc 169.254.169.254 80),
// and any hidden spelling of its address in a command argument.
func (s *scan) checkMetadataHosts(v *cmdView) {
	if !s.enabled(rCredMetadata) {
		return
	}
	kind := v.netKind()
	for _, a := range v.args {
		if a == "" || a[0] == '-' {
			continue
		}
		i := strings.Index(a, "://")
		u := "" // urlHost(a), worked out once
		if i >= 0 {
			u = hostAfterScheme(a[i+3:])
		}
		if i > 0 && (u == "" || !hasPrefixFold(a, "http")) {
			// A URL inside a longer argument: an interpreter's code, a
			// config string. Its metadata spellings count as well.
			if s.embeddedMetadataURL(v, a) {
				return
			}
			continue
		}
		h, reqPath := a, ""
		if u != "" {
			h = u
		} else if kind == "" {
			continue // only network programs take a bare host
		} else {
			if at := strings.LastIndexByte(h, '@'); at >= 0 {
				h = h[at+1:]
			}
			if i := strings.IndexByte(h, '/'); i >= 0 {
				h, reqPath = h[:i], h[i:]
			}
			if !strings.HasPrefix(h, "[") && strings.Count(h, ":") == 1 {
				h, _, _ = strings.Cut(h, ":")
			}
		}
		if !mayBeMetadataHost(h) {
			continue
		}
		canon, hidden, ok := metadataSpelling(h)
		if !ok {
			continue
		}
		switch {
		case hidden:
			s.add(rCredMetadata, "reaches the cloud metadata service "+canon+" through the disguised address "+h+
				": it hands out the machine's cloud credentials; refuse it", v.prog+" "+evJoin(v.args))
			return
		case kind == "http" && reqPath != "" && metadataCredentialPath(canon, reqPath):
			s.add(rCredMetadata, v.prog+" asks the cloud metadata service "+canon+" for credentials ("+reqPath+
				"): these give the machine's cloud permissions to whoever holds them; refuse it", v.prog+" "+evJoin(v.args))
			return
		case kind == "socket" || kind == "ssh" || kind == "ftp":
			s.add(rCredMetadata, v.prog+" opens a raw connection to the cloud metadata service "+canon+
				": it hands out the machine's cloud credentials; refuse it", v.prog+" "+evJoin(v.args))
			return
		}
	}
}

// embeddedMetadataURL flags a URL inside an argument (python -c
// "urlopen('http://169.254.169.254/…/security-credentials/')") that reaches
// a metadata service through a hidden spelling or asks it for credentials.
func (s *scan) embeddedMetadataURL(v *cmdView, a string) bool {
	for off := 0; off < len(a); {
		i := strings.Index(a[off:], "://")
		if i < 0 {
			return false
		}
		rest := a[off+i+3:]
		off += i + 3
		end := strings.IndexAny(rest, "/'\" \t\n)?#,;")
		host := rest
		reqPath := ""
		if end >= 0 {
			host = rest[:end]
			if rest[end] == '/' {
				p := rest[end:]
				if j := strings.IndexAny(p, "'\" \t\n)"); j >= 0 {
					p = p[:j]
				}
				reqPath = p
			}
		}
		if at := strings.LastIndexByte(host, '@'); at >= 0 {
			host = host[at+1:]
		}
		if !strings.HasPrefix(host, "[") {
			if j := strings.LastIndexByte(host, ':'); j >= 0 {
				host = host[:j]
			}
		}
		if !mayBeMetadataHost(host) {
			continue
		}
		canon, hidden, ok := metadataSpelling(host)
		if ok && (hidden || metadataCredentialPath(canon, reqPath)) {
			s.add(rCredMetadata, v.prog+" reaches the cloud metadata service "+canon+" ("+host+reqPath+
				"): it hands out the machine's cloud credentials; refuse it", v.prog+" "+evJoin(v.args))
			return true
		}
	}
	return false
}

// checkClusterSecrets judges kubectl / oc commands that reveal secrets.
func (s *scan) checkClusterSecrets(cs *cmdScan, v *cmdView) {
	if v.prog != "kubectl" && v.prog != "oc" && v.prog != "kubectl-view_secret" && v.prog != "k9s" && v.prog != "etcdctl" {
		return
	}
	ev := func() string { return v.prog + " " + evJoin(v.args) }
	if v.prog == "etcdctl" {
		// The API server keeps every Secret under /registry/secrets/.
		if ops := v.plainOperands(); len(ops) >= 2 && (ops[0] == "get" || ops[0] == "watch") && strings.HasPrefix(ops[1], "/registry/secrets") {
			s.add(rCredClusterSecret, "etcdctl reads the cluster's Secrets straight from etcd ("+ops[1]+"): refuse it", ev())
		}
		return
	}
	if v.prog == "kubectl-view_secret" {
		s.add(rCredClusterSecret, "kubectl view-secret prints a Kubernetes secret's values: refuse it", ev())
		return
	}
	valued := "nlcoOfkLs"
	longValued := []string{"--namespace", "--context", "--cluster", "--kubeconfig", "--output", "--selector", "--user", "--token",
		"--server", "--filename", "--field-selector", "--template", "--as", "--as-group", "--container", "--sort-by"}
	var ops []string
	// kubectl exec POD -- CMD: judge CMD's paths; the rest are kubectl's.
	dash := -1
	for i, a := range v.args {
		if a == "--" {
			dash = i
			break
		}
	}
	if dash >= 0 {
		ops = operands(v.args[:dash], valued, longValued)
	} else {
		ops = operands(v.args, valued, longValued)
	}
	if len(ops) == 0 {
		return
	}
	switch ops[0] {
	case "get", "describe", "edit":
		if ops[0] == "describe" || len(ops) < 2 {
			return
		}
		secrets := false
		for _, r := range strings.Split(ops[1], ",") {
			r, _, _ = strings.Cut(strings.ToLower(r), "/")
			if r == "secret" || r == "secrets" || r == "secret.v1" {
				secrets = true
			}
		}
		if !secrets {
			return
		}
		out := ""
		flagValues(v.args, 'o', "output", func(o string) { out = o })
		if ops[0] == "edit" || printsValues(v.args) && !cs.narrowedToPublicFields(v) {
			s.add(rCredClusterSecret, v.prog+" "+ops[0]+" secret prints the secret's values (-o "+out+"): use kubectl describe secret to see its keys; refuse it", ev())
		}
	case "create":
		if len(ops) >= 2 && ops[1] == "token" {
			s.add(rCredClusterSecret, v.prog+" create token mints a service-account token: refuse it", ev())
		}
	case "view-secret":
		s.add(rCredClusterSecret, "kubectl view-secret prints a Kubernetes secret's values: refuse it", ev())
	case "exec", "debug", "cp", "attach":
		words := v.args
		if dash >= 0 {
			words = v.args[dash+1:]
		}
		for _, w := range words {
			if i := strings.IndexByte(w, ':'); i > 0 && ops[0] == "cp" {
				w = w[i+1:] // pod:/path
			}
			if strings.Contains(w, "/secrets/") || strings.Contains(w, "serviceaccount") || strings.HasSuffix(w, "/token") {
				s.add(rCredClusterSecret, v.prog+" "+ops[0]+" reads a pod's service-account token or mounted secrets ("+w+"): refuse it", ev())
				return
			}
		}
	}
}

// plainMetadataHost reports the instance metadata service written as
// itself: a value sent there stays on the machine (the IMDSv2 session
// token goes back to the service that issued it).
func plainMetadataHost(h string) bool {
	if !mayBeMetadataHost(h) {
		return false
	}
	_, hidden, ok := metadataSpelling(h)
	return ok && !hidden
}
