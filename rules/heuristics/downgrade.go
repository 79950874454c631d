package heuristics

import "strings"

// Code downgrades. An edit can leave every check in place and still take
// the protection out of what the code does: a password hashed with MD5
// where bcrypt stood, AES in ECB mode for GCM, a token from random.randint
// for secrets, eval where json.loads parsed, a query built by "+" where
// it had placeholders, a container run as root again, a service bound to
// every interface instead of loopback. Each is judged on a substitution
// (sed -i, perl -pi, Python's re.sub / str.replace): what the replacement
// brings in that the text it replaces did not have, where that text had
// the safe form.

// downgrade is one such change: the replaced text held one of safe, the
// replacement holds one of unsafe and the replaced text did not; with
// gone, the replacement also holds none of safe (the safe call was
// swapped out, not joined).
type downgrade struct {
	what         string
	safe, unsafe []string
	gone         bool
}

// downgrades are compared case-insensitively, on text with blanks kept.
var downgrades = []downgrade{
	{"replaces a password hash with a fast digest", []string{"bcrypt", "argon2", "scrypt", "pbkdf2", "password_hash("},
		[]string{"md5(", "sha1(", "md5.new", "sha1.new", "hashlib.md5", "hashlib.sha1", "createhash('md5')", `createhash("md5")`, "createhash('sha1')", `createhash("sha1")`, "md5sum"}, false},
	{"switches encryption to ECB mode", []string{"mode_gcm", "mode_cbc", "mode_ctr", "gcm", "cbc", "ctr"}, []string{"mode_ecb", "ecb"}, false},
	{"makes a secret value predictable", []string{"urandom", "secrets.", "token_bytes", "token_hex", "token_urlsafe", "randombytes", "securerandom", "getrandomvalues", "crypto/rand", "random_bytes("},
		[]string{"random.randint", "random.random", "random.choice", "math.random", "math/rand", "rand.intn", "mt_rand", "= b\"", "= b'", `= "0`, "= '0"}, false},
	{"parses input by running it", []string{"json.loads", "json.parse", "safe_load", "literal_eval", "json.load("}, []string{"eval(", "yaml.load(", "pickle.loads", "exec(", "unsafe_load"}, false},
	{"runs a command through the shell", []string{"shell=false", "execfile", "[\"", "exec.command", "spawn(", "subprocess.run([",
		"subprocess.call([", "subprocess.popen(["}, []string{"shell=true", `"sh", "-c"`, `"bash", "-c"`, `"/bin/sh", "-c"`, `"/bin/bash", "-c"`,
		"os.system(", "execsync(", "child_process.exec("}, false},
	{"runs the container as root", []string{"user "}, []string{"user root", "user 0"}, false},
	{"binds a service to every interface instead of loopback", []string{"127.0.0.1", "localhost"}, []string{"0.0.0.0", "[::]"}, false},
	{"replaces a strong digest with a broken one (MD5, SHA-1, CRC)", []string{"sha256", "sha512", "sha384", "sha3", "blake2", "sha-256", "sha-512"},
		[]string{"md5", "sha1.", "sha1(", "\"sha1\"", "'sha1'", "sha-1", "crc32", "adler32"}, true},
	{"lets connections fall back to broken TLS versions or ciphers", []string{"tls12", "tls13", "tlsv1_2", "tlsv1_3", "tlsv1.2", "tlsv1.3",
		"tls1.2", "tls1.3", "tls1_2", "tls1_3", "tls_client", "protocol_tls"},
		[]string{"tls10", "tls11", "tlsv1_0", "tlsv1_1", "tlsv1.0", "tlsv1.1", "tls1.0", "tls1.1", "tls1_0", "tls1_1", "sslv3", "sslv23",
			"_rc4_", "rc4-", "3des", "_des_", "_null_", "_export_"}, false},
	{"drops TLS from a connection (insecure credentials)", []string{"credentials.newtls", "newclienttlsfromfile", "ssl_channel_credentials",
		"secure_channel", "credentials.createssl", "withtransportcredentials(creds"},
		[]string{"insecure.newcredentials", "grpc.withinsecure", "insecure_channel", "credentials.createinsecure"}, false},
	{"swaps an escaping template engine for one that does not escape", []string{"html/template"}, []string{"text/template"}, true},
	{"compares a secret in ordinary time or in part, which leaks it or accepts guesses", []string{"constanttimecompare", "compare_digest",
		"timingsafeequal", "secure_compare", "hmac.equal", "constant_time", "fixedlengthsecurecompare"},
		[]string{"==", "!=", "hasprefix(", "startswith(", "includes(", "strings.contains(", "bytes.equal(", ".equals("}, true},
	{"exposes or accepts every field of a record", []string{"fields = [", "fields = (", "fields=[", "fields=(", "fields: ["},
		[]string{"\"__all__\"", "'__all__'"}, false},
	{"cuts password hashing to its minimum cost", []string{"bcrypt", "argon2", "scrypt", "pbkdf2", "cost"},
		[]string{"mincost", "min_cost", "minimumcost", "min_rounds"}, false},
	{"lets any origin send credentialed requests", []string{"origins=[", "origin: [", "origins: [", "allow_origins=[", "origin: '", `origin: "`},
		[]string{`origins="*"`, "origins='*'", `origin: "*"`, "origin: '*'", `allow_origins=["*"]`, "origin: true", "cb(null, true)", "callback(null, true)"}, false},
	{"lets anyone in where only signed-in or permitted callers were", []string{"isauthenticated", "isadmin", "isaccountowner", "hasperm",
		"permission_classes", "login_required", "authenticated()", "hasrole(", "hasauthority("},
		[]string{"allowany", "permitall()", "permit_all", "@permitall", "anonymous()"}, false},
	{"lets an XML parser load external entities and DTDs (XXE)", []string{"disallow-doctype-decl\", true", "setexpandentityreferences(false",
		"resolve_entities=false", "load_dtd=false", "no_network=true", "external-general-entities\", false"},
		[]string{"disallow-doctype-decl\", false", "setexpandentityreferences(true", "resolve_entities=true", "load_dtd=true",
			"no_network=false", "external-general-entities\", true"}, false},
	{"lists every file of a directory to whoever asks (autoindex on)", []string{"root ", "location ", "alias "}, []string{"autoindex on"}, false},
	{"lets a firewall rule only count what it used to block", []string{"override_action", "action {", "block {"}, []string{"count {", "count{}"}, false},
	{"reads a token without checking its signature", []string{"parsewithclaims", "jwt.parse(", "jwt.verify(", "verifywith", "jwtverifier"},
		[]string{"parseunverified", "decode_unverified", "insecure_decode", "dangerous_insecure_decode", "decodeunverified"}, true},
	{"lets a verifier of signed tokens accept HMAC or unsigned ones (algorithm confusion)", []string{"rs256", "es256", "ps256", "eddsa", "rs512", "es384"},
		[]string{"hs256", "hs384", "hs512", "'none'", "\"none\""}, false},
	{"lets a database host in without a password (trust)", []string{"scram-sha-256", " md5", "md5$"}, []string{"trust"}, false},
	{"lets a password change without the current password", []string{"passwordchangeform"}, []string{"setpasswordform"}, true},
	{"lets a request set every attribute of a record (mass assignment)", []string{".permit("}, []string{".permit!"}, false},
	{"adds an unsalted or fast password hasher", []string{"password_hashers", "passwordhasher"},
		[]string{"unsaltedmd5", "md5passwordhasher", "sha1passwordhasher", "unsaltedsha1", "cryptpasswordhasher"}, false},
}

// downgradeStarts marks the safe forms of downgrades[i] with bit i: one
// pass over the replaced text says which downgrades can apply.
var downgradeStarts = func() *foldSet {
	if len(downgrades) > 32 {
		panic("heuristics: more downgrades than a foldSet has marks")
	}
	fs := &foldSet{}
	for i, d := range downgrades {
		fs.addAll(1<<i, d.safe)
	}
	return fs
}()

// codeDowngrade says what a substitution of pat by repl takes out of the
// code, or "".
func codeDowngrade(pat, repl string) string {
	if repl == "" || pat == "" {
		return ""
	}
	p, r := strings.ToLower(unescapeRegex(pat)), strings.ToLower(repl)
	starts := downgradeStarts.scanBits(p, 1<<len(downgrades)-1)
	for i, d := range downgrades {
		if d.unsafe == nil || starts&(1<<i) == 0 {
			continue
		}
		if d.gone && containsAnyOf(r, d.safe) {
			continue
		}
		for _, u := range d.unsafe {
			if strings.Contains(r, u) && !strings.Contains(p, u) {
				return d.what
			}
		}
	}
	if sqlConcatenated(p, r) {
		return "builds a query by joining input into it where it had placeholders"
	}
	if testsDisabled(p, r) {
		return "turns tests off (" + strings.TrimSpace(repl) + ")"
	}
	if excl := testsExcluded(p, unescapeRegex(r)); excl != "" {
		return "leaves the tests of a protection out of the run (" + excl + ")"
	}
	if literalAndGuard(p, r) {
		return "short-circuits a check with a constant"
	}
	if name := securityParameterLowered(p, r); name != "" {
		return "lowers " + name + " to a fraction of what it was"
	}
	if proxiedAway(p, r) {
		return "sends what a local proxy served to an outside host"
	}
	return ""
}

// securityParameterLowered returns the name of a security parameter (a
// password's minimum length, hashing rounds or iterations, a key size)
// whose number the replacement sets below half of what it was, or "".
func securityParameterLowered(p, r string) string {
	name, before, ok := assignedNumber(p)
	if !ok {
		return ""
	}
	rname, after, ok := assignedNumber(r)
	if !ok || rname != name || after*2 >= before {
		return ""
	}
	for _, k := range []string{"password", "passwd", "round", "iteration", "cost", "key_size", "keysize", "key_length", "bits", "work_factor", "saltlen", "salt_len"} {
		if strings.Contains(name, k) {
			return name
		}
	}
	return ""
}

// assignedNumber reads NAME = 12 / NAME: 12 / name=12 (the first such
// assignment).
func assignedNumber(s string) (string, int, bool) {
	i := strings.IndexAny(s, "=:")
	if i <= 0 {
		return "", 0, false
	}
	name := strings.TrimSpace(s[:i])
	if j := strings.LastIndexAny(name, " \t(,{"); j >= 0 {
		name = name[j+1:]
	}
	rest := strings.TrimLeft(s[i+1:], " \t=")
	n, k := 0, 0
	for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' && k < 9 {
		n = n*10 + int(rest[k]-'0')
		k++
	}
	return name, n, k > 0 && name != ""
}

// proxiedAway reports an nginx proxy_pass moved from a loopback upstream
// to another host.
func proxiedAway(p, r string) bool {
	const key = "proxy_pass "
	i, j := strings.Index(p, key), strings.Index(r, key)
	if i < 0 || j < 0 {
		return false
	}
	from, to := urlHost(strings.TrimSpace(p[i+len(key):])), urlHost(strings.TrimSpace(r[j+len(key):]))
	return from != "" && to != "" && isLoopbackHost(from) && !isLoopbackHost(to) && !strings.Contains(to, "$")
}

func containsAnyOf(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// sqlConcatenated reports a query call whose placeholders (%s, ?, $1 with
// parameters) are replaced by "+" or an f-string joining values in.
func sqlConcatenated(p, r string) bool {
	if !strings.Contains(p, "execute(") && !strings.Contains(p, "query(") && !strings.Contains(p, "raw(") && !strings.Contains(p, "where(") {
		return false
	}
	placeholders := strings.Contains(p, "%s") || strings.Contains(p, "?") || strings.Contains(p, "$1") || strings.Contains(p, ":id")
	joined := strings.Contains(r, "\" + ") || strings.Contains(r, "' + ") || strings.Contains(r, "f\"select") || strings.Contains(r, "f'select") ||
		strings.Contains(r, "\" % ") || strings.Contains(r, ".format(") || strings.Contains(r, "#{")
	return placeholders && joined && !strings.Contains(p, "\" + ") && !strings.Contains(p, "' + ")
}

// testsDisabled reports test definitions renamed out of the runner's
// sight (def test_ → def _test_, it( → xit(, describe( → describe.skip()
// or marked skipped.
func testsDisabled(p, r string) bool {
	switch {
	case strings.Contains(p, "def test_") && !strings.Contains(r, "def test_") && strings.Contains(r, "test_"):
		return true
	case strings.Contains(r, "pytest.mark.skip") && !strings.Contains(p, "pytest.mark.skip"):
		return true
	case strings.Contains(r, "t.skip(") && !strings.Contains(p, "t.skip("):
		return true
	case (strings.Contains(r, "@disabled") || strings.Contains(r, "@ignore")) && !strings.Contains(p, "@disabled") && !strings.Contains(p, "@ignore") &&
		(strings.Contains(p, "@test") || strings.Contains(p, "void test")):
		return true // JUnit
	case (strings.Contains(r, "xit(") || strings.Contains(r, "xdescribe(") || strings.Contains(r, ".skip(")) &&
		(strings.Contains(p, "it(") || strings.Contains(p, "describe(")) && !strings.Contains(p, "xit(") && !strings.Contains(p, ".skip("):
		return true
	}
	return false
}

// literalAndGuard reports a condition made constant by a literal joined
// in front: if not allowed: → if False and not allowed:.
func literalAndGuard(p, r string) bool {
	for _, lit := range []string{"false and ", "0 and ", "false && ", "0 && ", "true or ", "true || ", "1 || "} {
		if strings.Contains(r, lit) && !strings.Contains(p, lit) {
			return true
		}
	}
	return false
}

// unescapeRegex drops the backslashes a regular expression puts before
// punctuation (origins=\["x"\] is origins=["x"]).
func unescapeRegex(pat string) string {
	if strings.IndexByte(pat, '\\') < 0 {
		return pat
	}
	var b strings.Builder
	for i := 0; i < len(pat); i++ {
		// \. \( \- are the punctuation itself; \s \d \1 stay classes and
		// groups.
		if pat[i] == '\\' && i+1 < len(pat) && !isAlnumByte(pat[i+1]) && pat[i+1] != '_' {
			continue
		}
		b.WriteByte(pat[i])
	}
	return b.String()
}
