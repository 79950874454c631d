package heuristics

import "strings"

// Trust-store changes: adding a certificate authority that the system,
// a language runtime or a browser trusts. Whoever holds that CA's key can
// impersonate any site to this machine and read its TLS traffic. Reading
// certificates and using one for a single request (curl --cacert) is
// ordinary.

// trustAnchorDirs hold the certificates the system trust store is built
// from (Debian, RHEL, Arch, SUSE, Alpine) and the bundles themselves.
var trustAnchorDirs = []string{
	"/usr/local/share/ca-certificates", "/usr/share/ca-certificates", "/etc/ca-certificates", "/etc/ssl/certs",
	"/etc/pki/ca-trust", "/etc/pki/tls/certs", "/etc/pki/trust", "/usr/share/pki/trust", "/etc/pki/ca-trust/source/anchors",
	"/etc/ca-certificates/trust-source", "/usr/share/ca-certificates/trust-source", "/etc/pki/nssdb",
}

// isTrustStorePath reports a system trust anchor location, a Java cacerts
// file or a user's NSS database (Chrome, Firefox on Linux).
func isTrustStorePath(abs, home string) bool {
	for _, d := range trustAnchorDirs {
		if underOrAt(abs, d) {
			return true
		}
	}
	if baseName(abs) == "cacerts" && strings.Contains(abs, "/security/") {
		return true // $JAVA_HOME/lib/security/cacerts
	}
	if baseName(abs) == "cacert.pem" && strings.Contains(abs, "/certifi/") {
		return true // Python's certifi bundle, which requests trusts
	}
	if rest, _, ok := homeRel(abs, home); ok && underOrAt(rest, ".pki/nssdb") {
		return true
	}
	return false
}

// checkTrustStore judges one command for trust-store changes.
func (s *scan) checkTrustStore(cs *cmdScan, v *cmdView) {
	ev := func() string { return v.prog + " " + evJoin(v.args) }
	switch v.prog {
	case "trust":
		ops := v.plainOperands()
		if len(ops) > 0 && ops[0] == "anchor" && !hasLongFlag(v.args, "remove") {
			s.add(rTrustRootCA, "trust anchor adds a root certificate to the system trust store: refuse it", ev())
		}
	case "certutil":
		// NSS: certutil -A -t "C,," adds a trusted CA; Windows:
		// certutil -addstore Root.
		trusted := false
		flagValues(v.args, 't', "", func(t string) { trusted = trusted || strings.ContainsAny(t, "CT") })
		if hasShortFlag(v.args, 'A') && trusted || containsFoldArg(v.args, "-addstore") {
			s.add(rTrustRootCA, "certutil adds a trusted certificate authority: refuse it", ev())
		}
	case "security":
		ops := v.plainOperands()
		if len(ops) > 0 && (ops[0] == "add-trusted-cert") {
			s.add(rTrustRootCA, "security "+ops[0]+" makes macOS trust a certificate: refuse it", ev())
		}
	case "keytool":
		imports := containsArg(v.args, "-importcert") || containsArg(v.args, "-import") || containsArg(v.args, "-importkeystore")
		store := containsArg(v.args, "-cacerts")
		for i, a := range v.args {
			if (a == "-keystore" || a == "-destkeystore") && i+1 < len(v.args) && isTrustStorePath(cs.resolveIn(v.c, v.args[i+1]).Abs, cs.home) {
				store = true
			}
		}
		if imports && store {
			s.add(rTrustRootCA, "keytool imports a certificate into Java's trusted CA store: refuse it", ev())
		}
	case "Import-Certificate", "import-certificate":
		s.add(rTrustRootCA, "Import-Certificate adds a certificate to a Windows store: refuse it", ev())
	}
	for _, target := range cs.writeTargets(v) {
		if isTrustStorePath(cs.resolveIn(v.c, target).Abs, cs.home) {
			s.add(rTrustRootCA, "writes "+target+", where the system's trusted certificate authorities live: refuse it", target)
		}
	}
}
