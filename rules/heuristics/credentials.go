package heuristics

import (
	"slices"
	"strings"

	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/shell"
)

// Credential access: reading keys, tokens and password stores, through
// file tools or commands.

// isNonReader reports programs that name a path without revealing its
// contents (chmod 600 ~/.ssh/id_rsa, ssh -i key, docker --env-file .env).
// A switch, not a map: it is asked for every command, and hashing the
// name costs more than the compiled comparison.
func isNonReader(prog string) bool {
	switch prog {
	case "ls", "stat", "test", "[", "[[", "chmod", "chown", "chgrp",
		"mkdir", "touch", "rm", "rmdir", "unlink", "ssh", "ssh-add",
		"ssh-keygen", "ssh-copy-id", "which", "type", "realpath", "readlink",
		"dirname", "basename", "cd", "pushd", "echo", "printf", "export", "du",
		"docker", "podman", "docker-compose", "dotenv", "direnv", "env-cmd",
		"node", "chattr", "file", "setfacl", "getfacl", "shred", "wc",
		"git", "kubectl", "helm", "terraform", "visudo":
		return true
	}
	return false
}

// credentialRule maps a sensitivity to the rule for reading it.
func credentialRule(sens sensitivity) ruleIndex {
	switch sens {
	case sensDotenv:
		return rCredDotenv
	case sensSystemSecret:
		return rCredSystemFile
	case sensBrowser:
		return rCredBrowser
	case sensPrivateKey:
		return rCredPrivateKey
	}
	return rCredSecretFile
}

func credentialMessage(sens sensitivity, label, raw string) string {
	switch sens {
	case sensSystemSecret:
		return "reads " + raw + " (" + label + "): an agent never needs this; refuse it"
	case sensBrowser:
		return "reads " + raw + " (" + label + "): this steals the user's web sessions; refuse it"
	case sensDotenv:
		return "reads " + raw + ", which usually holds secrets: approve only if the task needs its values, and never send them anywhere"
	case sensPrivateKey:
		return "reads " + raw + " (" + label + ") into the agent's context: no task needs a key's bytes in a prompt, and tools that use it (ssh, git, the cloud CLIs) read it themselves; refuse it"
	}
	return "reads " + raw + " (" + label + "): approve only if the task truly needs this credential"
}

// pathsInArg returns the path a command argument reads: the word itself,
// "@file" (curl -d @file), "name=@file" / "name=<file" (curl -F), or
// "if=file" (dd).
func pathInArg(a string) string {
	switch {
	case strings.HasPrefix(a, "@"):
		return a[1:]
	case strings.HasPrefix(a, "if="):
		return a[3:]
	case strings.HasPrefix(a, "file:"):
		// A file URI: sqlite3 "file:$HOME/db?immutable=1", file:///etc/x.
		p, _, _ := strings.Cut(strings.TrimPrefix(a[len("file:"):], "//"), "?")
		return p
	}
	if strings.IndexByte(a, '=') >= 0 { // most arguments have none
		if i := strings.Index(a, "=@"); i > 0 {
			return a[i+2:]
		}
		if i := strings.Index(a, "=<"); i > 0 {
			return a[i+2:]
		}
	}
	if strings.HasPrefix(a, "--") {
		// --post-file=x, --upload-file=x, --data-binary=@x
		name, val, ok := strings.Cut(a[2:], "=")
		if ok && (strings.HasPrefix(name, "post-file") || strings.HasPrefix(name, "body-file") || strings.HasPrefix(name, "upload-file")) {
			return val
		}
		return ""
	}
	if strings.HasPrefix(a, "-") {
		return ""
	}
	return a
}

// classifyArg classifies a command argument as a path. A bare name (no
// "/", "~" or "$") stays in the workspace, where only what its name says
// is sensitive (secretFileName), so the resolver is skipped for the
// common case.
func (cs *cmdScan) classifyArg(c *shell.Command, p string) (sensitivity, string) {
	if c.Dir == "" && strings.IndexByte(p, '/') < 0 && strings.IndexByte(p, '*') < 0 && strings.IndexByte(p, '?') < 0 && strings.IndexByte(p, '~') < 0 && strings.IndexByte(p, '$') < 0 &&
		cs.root != "" && cs.root != cs.home {
		return secretFileName(p)
	}
	return classify(cs.resolveIn(c, p).Abs, cs.home)
}

// classifyRead is classifyArg for a file a command reads, which may be
// one the line filled with a secret itself (secretFilled): that file's
// bytes are the secret's. (Deleting such a file destroys nothing.)
func (cs *cmdScan) classifyRead(c *shell.Command, p string) (sensitivity, string) {
	sens, label := cs.classifyArg(c, p)
	if sens == sensNone && len(cs.views) > 1 && (strings.IndexByte(cs.act.Command, '>') >= 0 || strings.Contains(cs.act.Command, "report-path")) { // filled by a redirection, or a scanner's report
		if what := cs.secretFilled(cs.resolveIn(c, p).Abs); what != "" {
			return sensUserSecret, what
		}
	}
	return sens, label
}

// secretFilled says what secret a command of the line wrote into abs
// (sops -d secrets.enc.yaml > /tmp/prod.yaml, cat ~/.aws/credentials >
// /tmp/c): the output of a command that prints a stored credential, or
// a secret file it read; else "".
func (cs *cmdScan) secretFilled(abs string) string {
	for i := range cs.views {
		u := &cs.views[i]
		if u.prog == "" {
			continue
		}
		if report := scannerReport(u); report != "" && cs.resolveIn(u.c, report).Abs == abs {
			return "the secrets " + u.prog + " found, written to it unredacted"
		}
		for _, r := range u.c.Redirects {
			if !isOutputRedirect(r.Op) || r.Target == "" || cs.resolveIn(u.c, r.Target).Abs != abs {
				continue
			}
			if what := cliTokenCommand(u); what != "" {
				return "the output of " + what + ", written to it"
			}
			if what := deployedSecrets(u); what != "" {
				return what + ", written to it"
			}
			if isNonReader(u.prog) {
				continue
			}
			for _, a := range u.args {
				if p := pathInArg(a); p != "" {
					if sens, label := classify(cs.resolveIn(u.c, p).Abs, cs.home); sens != sensNone && sens != sensLeakOnly {
						return label + ", copied into it"
					}
				}
			}
		}
	}
	return ""
}

// scannerReport returns the report file a secrets scanner writes the
// secrets it finds into, in clear (gitleaks without --redact, its
// --report-path; trufflehog's and detect-secrets' output goes to stdout,
// judged as a redirection), or "".
func scannerReport(u *cmdView) string {
	if u.prog != "gitleaks" || hasLongFlag(u.args, "redact") {
		return ""
	}
	report := ""
	flagValues(u.args, 'r', "report-path", func(p string) { report = p })
	return report
}

// sensitiveReads calls fn for each sensitive path v reads.
func (cs *cmdScan) sensitiveReads(v *cmdView, fn func(raw string, sens sensitivity, label string) bool) bool {
	for _, r := range v.c.Redirects {
		if r.Op == "<" || r.Op == "<>" {
			if sens, label := classify(cs.resolveIn(v.c, r.Target).Abs, cs.home); sens != sensNone {
				if fn(r.Target, sens, label) {
					return true
				}
			}
		}
	}
	if v.prog == "" || isNonReader(v.prog) {
		return false
	}
	dst := copyDestination(v)
	pattern := searchPattern(v)
	for i := 0; i < len(v.args); i++ {
		a := v.args[i]
		if pattern != "" && a == pattern {
			pattern = "" // grep '.env' .gitignore: a pattern, not a file (its first word only)
			continue
		}
		if skip, ok := keyUseOption(v.prog, a); ok {
			// The key or certificate is used to authenticate, not read
			// out: scp -i KEY, curl --key KEY, ansible --private-key=KEY.
			i += skip
			continue
		}
		if i == dst {
			continue // written, not read: cp .env.example .env
		}
		p := pathInArg(a)
		if p == "" || strings.Contains(p, "://") {
			continue
		}
		if i := strings.IndexByte(p, ':'); i > 0 && (v.prog == "scp" || v.prog == "rsync" || v.prog == "sftp") {
			continue // a remote path
		}
		if sens, label := cs.classifyRead(v.c, p); sens != sensNone {
			if fn(a, sens, label) {
				return true
			}
		}
	}
	return false
}

// printsValues reports a kubectl get whose output format shows objects'
// contents (-o yaml, json, jsonpath, go-template, custom-columns): the
// default table and -o wide or name list secrets by name alone.
func printsValues(args []string) bool {
	out := ""
	flagValues(args, 'o', "output", func(o string) { out = o })
	switch {
	case out == "", out == "wide", out == "name":
		return false
	}
	if tmpl, ok := strings.CutPrefix(out, "jsonpath="); ok {
		return !metadataOnly(tmpl)
	}
	if tmpl, ok := strings.CutPrefix(out, "go-template="); ok {
		return !metadataOnly(tmpl)
	}
	if cols, ok := strings.CutPrefix(out, "custom-columns="); ok {
		// NAME:.metadata.name,TYPE:.type: each column's path, as a
		// jsonpath's.
		for col := range strings.SplitSeq(cols, ",") {
			if _, path, _ := strings.Cut(col, ":"); !metadataOnly(path) {
				return true
			}
		}
		return false
	}
	return true
}

// metadataOnly reports whether a jsonpath or go template reads nothing
// but an object's metadata, kind or type ({.metadata.creationTimestamp},
// {{.metadata.name}}): no value of a Secret.
func metadataOnly(tmpl string) bool {
	found := false
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '.' || i > 0 && (isWordByte(tmpl[i-1]) || tmpl[i-1] == ']' || tmpl[i-1] == ')') {
			continue
		}
		field := pathComponent(tmpl[i+1:])
		switch field {
		case "metadata", "kind", "apiVersion", "type":
			found = true
		case "data", "stringData":
			// One key of the secret: {.data.username} is not its password.
			rest := tmpl[i+1+len(field):]
			key, n := "", 0
			if strings.HasPrefix(rest, ".") {
				key, n = dataKey(rest[1:])
			}
			if !publicField(key) {
				return false
			}
			found = true
			i += len(field) + 1 + n
		case "":
		default:
			return false
		}
	}
	return found
}

// dataKey reads the key of a Secret's data that starts s, where jsonpath
// escapes the dots of a key ({.data.tls\.crt}): the key, dots
// unescaped, and the length it takes in s.
func dataKey(s string) (string, int) {
	key := pathComponent(s)
	n := len(key)
	for strings.HasPrefix(s[n:], `\.`) {
		next := pathComponent(s[n+2:])
		if next == "" {
			break
		}
		key += "." + next
		n += 2 + len(next)
	}
	return key, n
}

// pathComponent is the identifier that starts s.
func pathComponent(s string) string {
	if j := strings.IndexFunc(s, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}); j >= 0 {
		return s[:j]
	}
	return s
}

// publicField reports a key of a secret or credential document that
// names where or who, not the secret itself: username, host, port,
// database, region (DB_HOST, db-user). A key with any secret-sounding
// part (DB_PASSWORD, DATABASE_URL, which carries one) is not.
func publicField(key string) bool {
	parts := strings.FieldsFunc(strings.ToLower(key), func(r rune) bool { return r == '_' || r == '-' || r == '.' })
	if len(parts) == 0 {
		return false
	}
	for _, p := range parts {
		switch p {
		case "password", "passwd", "pass", "pwd", "secret", "token", "key", "apikey", "cert", "credential", "credentials",
			"private", "auth", "dsn", "url", "uri", "connection", "conn", "string", "salt", "otp", "pin":
			return false
		}
	}
	switch parts[len(parts)-1] {
	case "crt": // a certificate (tls.crt, ca.crt): what the server shows every client
		return true
	case "user", "username", "login", "host", "hostname", "port", "database", "db", "dbname", "name", "namespace", "region",
		"endpoint", "bucket", "email", "schema", "server", "account", "project", "zone", "engine", "id", "level", "mode", "timeout",
		"env", "environment", "version", "debug":
		return true
	}
	return false
}

// narrowedToPublicFields reports a command whose output the next command
// of its pipeline cuts down to public fields (… | jq -r .host) or to key
// names (… | jq '.data | keys'): the secret's own values never reach
// the context.
func (cs *cmdScan) narrowedToPublicFields(v *cmdView) bool {
	after := cs.after(v)
	if len(after) == 0 {
		return false
	}
	u := cs.view(after[0])
	if u == nil || u.prog != "jq" && u.prog != "yq" && u.prog != "gojq" {
		return false
	}
	ops := operands(u.args, "", []string{"--arg", "--argjson", "--indent"})
	return len(ops) == 1 && filterNarrows(ops[0])
}

// filterNarrows reports a jq or yq filter that keeps only public fields
// (.host, .metadata.name) or key names (keys, to_entries[].key) of what
// it reads.
func filterNarrows(filter string) bool {
	found, keys := false, false
	for _, tok := range strings.FieldsFunc(filter, func(r rune) bool {
		return !(r == '.' || r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		switch {
		case tok == "." || tok == "fromjson" || tok == "length" || tok == "to_entries":
		case tok == "keys" || tok == "keys_unsorted" || tok == ".key":
			keys = true // the names, not the values
		case tok == ".data" || tok == ".stringData" || tok == ".items" || tok == ".auths":
			// A container: what of it is kept decides.
		case strings.HasPrefix(tok, ".") && len(tok) > 1:
			if !publicField(tok[strings.LastIndexByte(tok, '.')+1:]) {
				return false
			}
			found = true
		default:
			return false
		}
	}
	return found || keys
}

func (s *scan) checkCredentialCommands(cs *cmdScan) {
	for i := range cs.views {
		v := &cs.views[i]
		cs.sensitiveReads(v, func(raw string, sens sensitivity, label string) bool {
			if sens == sensDotenv && (loadsWithoutPrinting(v) || cs.exportedBySubstitution(v, raw)) && !cs.printsEnvironment() {
				return false
			}
			if printsNoValues(v) { // grep -c, cut -d= -f1, jq keys: nothing of the secret shows
				return false
			}
			// A rule already reported costs nothing more: a line naming
			// thousands of key files must stay linear.
			if r := credentialRule(sens); sens != sensLeakOnly && s.enabled(r) && !s.readAllowed(cs.resolveIn(v.c, pathInArg(raw)).Abs) {
				s.add(r, credentialMessage(sens, label, raw), v.c.Name+" "+evJoin(v.c.Args))
			}
			return false
		})
		if v.fam&famSecretSearch != 0 {
			s.checkSecretSearch(cs, v)
			if v.prog == "git" && (containsArg(v.args, "log") || containsArg(v.args, "grep")) {
				s.checkHistorySearch(cs, v)
			}
		}
		if v.prog == "docker" || v.prog == "podman" || v.prog == "kubectl" || v.prog == "oc" {
			s.checkContainerCopyOut(v)
		}
		if v.fam&famInfra != 0 {
			s.checkPasswordHashQuery(cs, v)
		}
		if len(v.c.Assigns) > 0 || setsVariables(v.prog) {
			s.checkAgentHijack(v)
		}
		if what := containerEnvironment(v); what != "" && s.enabled(rCredCLIToken) {
			s.add(rCredCLIToken, what+", where services keep their passwords and keys: approve only if the task needs a value from it, and never send it anywhere",
				v.prog+" "+evJoin(v.args))
		}
		if v.prog == "osascript" && s.enabled(rCredSecretFile) {
			if app := personalAppRead(v.args); app != "" {
				s.add(rCredSecretFile, "osascript reads the user's "+app+" through AppleScript: approve only if the task truly needs them, and never send them anywhere",
					v.prog+" "+evJoin(v.args))
			}
		}
		if v.codeAny(traitKeyring) && s.enabled(rCredCLIToken) {
			s.add(rCredCLIToken, v.prog+"'s code reads secrets from the desktop keyring: approve only if the task needs the secret itself, and never send it anywhere",
				v.prog+" "+evJoin(v.args))
		}
		if v.fam&famCLIToken == 0 {
			continue
		}
		if what := cliTokenCommand(v); what != "" && !cs.narrowedToPublicFields(v) && !s.feedsKnownLogin(cs, v) && !cs.tokenToIssuer(v) &&
			(cs.printsEnvironment() || !cs.exportedBySubstitution(v, v.c.Name)) {
			if (what == "gpg --export-secret-keys" || what == "aws configure export-credentials") && printsToContext(v) {
				// Private key material itself, printed into the context.
				s.add(rCredPrivateKey, what+" prints private key material into the agent's context: no task needs it in a prompt; refuse it",
					v.prog+" "+evJoin(v.args))
			} else {
				s.add(rCredCLIToken, what+" prints a stored credential: approve only if the task needs the secret itself, and never send it anywhere",
					v.prog+" "+evJoin(v.args))
			}
		}
	}
}

// containerEnvironment says how v prints a whole container's or pod's
// environment (docker exec web env, kubectl exec pod -- printenv, docker
// inspect --format '{{.Config.Env}}'), or returns "".
func containerEnvironment(v *cmdView) string {
	switch v.prog {
	case "env", "printenv":
		runner, ok := strings.CutSuffix(v.c.Via, " exec")
		if ok && dumpsEnvironment(v) {
			switch runner {
			case "docker", "podman", "nerdctl", "kubectl", "oc", "crictl":
				return v.prog + " prints the whole environment of a container (" + v.c.Via + ")"
			}
		}
	case "docker", "podman", "nerdctl":
		if firstOperand(v.args) != "inspect" {
			return ""
		}
		format := ""
		flagValues(v.args, 'f', "format", func(f string) { format = f })
		if strings.Contains(format, ".Config.Env") {
			return v.prog + " inspect prints containers' environments (.Config.Env)"
		}
	}
	return ""
}

// checkAgentHijack judges SSH_AUTH_SOCK pointed at sockets found by a
// glob (/tmp/ssh-*/agent.*, $(ls /run/user/*/…)): the sockets of other
// sessions, other users' when run as root. The user's own agent needs
// no search: its path is known ($XDG_RUNTIME_DIR/…, gpgconf's answer).
func (s *scan) checkAgentHijack(v *cmdView) {
	if !s.enabled(rCredAgentHijack) {
		return
	}
	words := v.c.Assigns
	if setsVariables(v.prog) {
		words = append(words[:len(words):len(words)], v.args...)
	}
	for _, w := range words {
		if value, ok := strings.CutPrefix(w, "SSH_AUTH_SOCK="); ok && strings.ContainsAny(value, "*?") {
			s.add(rCredAgentHijack, "points SSH_AUTH_SOCK at whatever agent socket "+value+" finds: another session's agent would sign in with keys that are not the task's; refuse it", w)
			return
		}
	}
}

// checkPasswordHashQuery judges a database client's query of the
// catalogue where the server keeps its accounts' password hashes
// (pg_authid, mysql.user): offline cracking starts there.
func (s *scan) checkPasswordHashQuery(cs *cmdScan, v *cmdView) {
	switch v.prog {
	case "psql", "mysql", "mariadb", "cockroach", "clickhouse-client":
	default:
		return
	}
	if !s.enabled(rCredSystemFile) {
		return
	}
	for _, a := range v.args {
		if table := passwordHashTable(optionValue(a)); table != "" {
			s.add(rCredSystemFile, v.prog+" reads "+table+", the database accounts' password hashes: an agent never needs them; refuse it", v.prog+" "+evJoin(v.args))
			return
		}
	}
	if text, ok := cs.stdinText(v); ok {
		if table := passwordHashTable(text); table != "" {
			s.add(rCredSystemFile, v.prog+" reads "+table+", the database accounts' password hashes, given on its standard input: an agent never needs them; refuse it", v.prog+" "+evJoin(v.args))
		}
	}
}

// passwordHashTables are the catalogues that hold password hashes, and
// the columns that do: a query of those columns (or of *) reads them.
var passwordHashTables = []struct{ table, columns string }{
	{"pg_shadow", "passwd"},
	{"pg_authid", "rolpassword"},
	{"mysql.user", "authentication_string password"},
	{"sys.sql_logins", "password_hash"},
	{"sys.user$", "password spare4"},
}

// passwordHashTable names the catalogue a query reads password hashes
// from, or returns "".
func passwordHashTable(sql string) string {
	if len(sql) < 12 || !strings.ContainsAny(sql, "_.") {
		return ""
	}
	l := strings.ToLower(sql)
	if !strings.Contains(l, "select") && !strings.Contains(l, "copy") && !strings.Contains(l, "table") {
		return ""
	}
	for _, t := range passwordHashTables {
		if !strings.Contains(l, t.table) {
			continue
		}
		if strings.Contains(l, "*") {
			return t.table
		}
		for _, c := range strings.Fields(t.columns) {
			if strings.Contains(l, c) {
				return t.table
			}
		}
	}
	return ""
}

// cliTokenCommand names a CLI invocation that prints a stored secret.
func cliTokenCommand(v *cmdView) string {
	switch v.prog {
	case "printenv":
		for _, op := range v.args {
			if isSecretVarName(op) {
				return "printenv " + op
			}
		}
		return ""
	case "echo", "printf":
		for _, a := range v.args {
			if name := varRef(a); name != "" && isSecretVarName(name) {
				return v.prog + " $" + name
			}
		}
		return ""
	case "git":
		// git credential fill asks the configured helper (keychain, store,
		// manager) for a host's password or token and prints it.
		if sub, rest := gitSubcommand(v.args); sub == "credential" && firstOperand(rest) == "fill" ||
			(sub == "credential-store" || sub == "credential-cache" || sub == "credential-osxkeychain" || sub == "credential-manager" ||
				sub == "credential-libsecret") && firstOperand(rest) == "get" {
			return "git " + sub + " (a stored password or token)"
		}
		// CI checkouts keep the job's token as http.<url>.extraheader.
		if sub, rest := gitSubcommand(v.args); sub == "config" {
			for _, a := range rest {
				if strings.Contains(strings.ToLower(a), "extraheader") {
					return "git config " + a + " (a CI job's token)"
				}
			}
		}
		return ""
	case "bw", "lpass", "keepassxc-cli", "rbw":
		// Password managers' CLIs: an export or a password printed.
		if ops := v.plainOperands(); len(ops) > 0 && (ops[0] == "export" || ops[0] == "get" && len(ops) > 1 && (ops[1] == "password" || ops[1] == "item" || ops[1] == "totp") ||
			v.prog == "bw" && ops[0] == "list" && len(ops) > 1 && ops[1] == "items" || // items carry their passwords
			v.prog == "lpass" && ops[0] == "show" || v.prog == "keepassxc-cli" && (ops[0] == "show" || ops[0] == "export") || v.prog == "rbw" && ops[0] == "get") {
			return v.prog + " " + ops[0] + " (a password manager's secrets)"
		}
		return ""
	case "terraform", "tofu":
		// The state holds every secret the configuration handled.
		if ops := v.plainOperands(); len(ops) >= 2 && ops[0] == "state" && ops[1] == "pull" || len(ops) >= 1 && ops[0] == "output" && hasLongFlag(v.args, "raw") {
			return v.prog + " " + strings.Join(ops[:min(2, len(ops))], " ") + " (the state's secrets)"
		}
		return ""
	case "curl", "wget":
		// GitHub Actions' OIDC token request: the job's cloud identity.
		for _, a := range v.args {
			if strings.Contains(a, "ACTIONS_ID_TOKEN_REQUEST_") {
				return v.prog + " of the job's OIDC token"
			}
		}
		return ""
	case "aws", "gcloud", "gh", "security", "az", "kubectl", "op", "pass", "gopass", "vault", "heroku", "secret-tool", "gpg", "gpg2",
		"npm", "pnpm", "yarn", "rclone", "airflow":
	default:
		if !strings.HasPrefix(v.prog, "docker-credential-") {
			return ""
		}
	}
	ops := v.plainOperands()
	has := func(words ...string) bool {
		for _, w := range words {
			if !containsArg(ops, w) {
				return false
			}
		}
		return true
	}
	switch v.prog {
	case "aws":
		if has("secretsmanager", "get-secret-value") || has("ssm", "get-parameter") && hasLongFlag(v.args, "with-decryption") ||
			has("ssm", "get-parameters") && hasLongFlag(v.args, "with-decryption") || has("ssm", "get-parameters-by-path") && hasLongFlag(v.args, "with-decryption") {
			return "aws " + ops[0] + " (a stored secret's value)"
		}
		if has("ecr", "get-login-password") || has("ecr-public", "get-login-password") || has("codeartifact", "get-authorization-token") {
			return "aws " + ops[0] + " " + ops[1] + " (a registry's password)"
		}
		if has("sts", "get-session-token") || has("sts", "get-federation-token") || has("sts", "assume-role") ||
			has("sts", "assume-role-with-web-identity") || has("sts", "assume-role-with-saml") {
			return "aws " + ops[0] + " " + ops[1] + " (credentials made for whoever holds them)"
		}
		if has("configure", "get") {
			for _, o := range ops {
				if containsFold(o, "secret") || containsFold(o, "key") || containsFold(o, "token") {
					return "aws configure get " + o
				}
			}
		}
		if has("configure", "export-credentials") {
			return "aws configure export-credentials"
		}
	case "gcloud":
		if has("secrets", "versions", "access") {
			return "gcloud secrets versions access"
		}
		for _, o := range ops {
			if o == "print-access-token" || o == "print-identity-token" || o == "print-refresh-token" {
				return "gcloud auth " + o
			}
		}
	case "gh":
		if has("auth", "token") {
			return "gh auth token"
		}
		if has("auth", "status") && (hasShortFlag(v.args, 't') || hasLongFlag(v.args, "show-token")) {
			return "gh auth status --show-token"
		}
	case "security":
		if len(ops) > 0 && (ops[0] == "find-generic-password" || ops[0] == "find-internet-password") && (hasShortFlag(v.args, 'w') || hasShortFlag(v.args, 'g')) {
			return "security " + ops[0]
		}
		if len(ops) > 0 && ops[0] == "dump-keychain" {
			return "security dump-keychain"
		}
	case "az":
		if has("get-access-token") {
			return "az account get-access-token"
		}
		if has("keyvault", "secret", "show") || has("keyvault", "secret", "download") {
			return "az keyvault secret show"
		}
	case "kubectl":
		if has("config", "view") && hasLongFlag(v.args, "raw") {
			return "kubectl config view --raw"
		}
		if len(ops) >= 2 && ops[0] == "get" && (ops[1] == "secret" || ops[1] == "secrets" || strings.HasPrefix(ops[1], "secret/")) && printsValues(v.args) {
			return "kubectl get secret"
		}
	case "op":
		if has("read") || has("item", "get") {
			return "op (1Password)"
		}
	case "pass", "gopass":
		if len(ops) == 0 {
			return ""
		}
		switch ops[0] {
		case "ls", "list", "find", "search", "insert", "generate", "init", "git", "rm", "mv", "cp", "edit", "grep":
			return ""
		}
		return v.prog
	case "npm", "pnpm", "yarn":
		// npm config get //registry.npmjs.org/:_authToken
		if has("config", "get") && slices.ContainsFunc(ops, func(o string) bool { return strings.Contains(strings.ToLower(o), "authtoken") }) {
			return v.prog + " config get …_authToken (the registry token)"
		}
	case "vault":
		if (has("read") || has("kv", "get")) && !has("metadata") { // kv metadata get: versions and dates, no value
			return "vault read"
		}
		if has("token", "create") {
			return "vault token create (a new token)"
		}

	case "heroku":
		if has("auth:token") {
			return "heroku auth:token"
		}
	case "airflow":
		// airflow connections export / get print every connection's
		// passwords and keys.
		if has("connections", "export") || has("connections", "get") {
			return "airflow connections " + ops[1] + " (the connections' passwords and keys)"
		}
	case "rclone":
		// rclone config show / dump print every remote's keys and
		// tokens; config redacted prints them masked.
		for _, sub := range []string{"show", "dump"} {
			if has("config", sub) {
				return "rclone config " + sub + " (every remote's keys and tokens)"
			}
		}
	case "secret-tool":
		if has("lookup") {
			return "secret-tool lookup"
		}
		if has("search") { // prints each match's secret too
			return "secret-tool search"
		}
	case "gpg", "gpg2":
		if hasLongFlag(v.args, "export-secret-keys") || hasLongFlag(v.args, "export-secret-subkeys") {
			return "gpg --export-secret-keys"
		}
	}
	if strings.HasPrefix(v.prog, "docker-credential-") && has("get") {
		return v.prog + " get"
	}
	return ""
}

// varRef returns NAME for an argument that is exactly $NAME or ${NAME}.
func varRef(a string) string {
	switch {
	case strings.HasPrefix(a, "${") && strings.HasSuffix(a, "}"):
		return a[2 : len(a)-1]
	case strings.HasPrefix(a, "$") && len(a) > 1:
		return a[1:]
	}
	return ""
}

// isSecretVarName matches environment variable names that hold secrets.
func isSecretVarName(n string) bool {
	if n == "" || strings.ContainsAny(n, " /.$") {
		return false
	}
	u := strings.ToUpper(n)
	if strings.Contains(u, "PUBLIC") || strings.HasSuffix(u, "_PATH") || strings.HasSuffix(u, "_FILE") || strings.HasSuffix(u, "_ID") {
		return false
	}
	for _, w := range []string{"SECRET", "TOKEN", "PASSWORD", "PASSWD", "API_KEY", "APIKEY", "PRIVATE_KEY", "ACCESS_KEY", "CREDENTIAL"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

// keyHuntNames are find -name patterns that look for keys and credentials.
var keyHuntNames = []string{"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".pem", ".key", ".p12", ".pfx", ".kdbx", ".ppk",
	"credentials", ".env", ".netrc", ".git-credentials", "wallet.dat", "keystore", ".jks", "secrets", ".tfstate", "kubeconfig", ".pgpass",
	".npmrc", ".pypirc", ".htpasswd", "shadow",
	// Globs over key names (id_*, id_?sa) and shell histories, which
	// hold the passwords typed on command lines.
	"id_*", "id_?", "_history", "authorized_keys"}

// keyHuntText are grep patterns that look for key material.
var keyHuntText = []string{"private key", "begin rsa", "begin openssh", "begin ec private", "aws_secret", "aws_access_key",
	"secret_key", "api_key", "apikey", "api-key", "passw", "ghp_", "xoxb-", "sk_live_", "akia", "secret", "token",
	"credential", "-----begin", "private_key", "client_secret", "pwd=",
	// Token formats searched by pattern: Slack, GitLab, GitHub, Google.
	"xox", "glpat", "github_pat", "aiza"}

// checkSecretSearch flags find / grep sweeps for keys over the filesystem
// root, a home or system directories (inside the workspace it is an audit).
func (s *scan) checkSecretSearch(cs *cmdScan, v *cmdView) {
	if !s.enabled(rCredSearch) {
		return
	}
	switch v.prog {
	case "trufflehog", "gitleaks", "detect-secrets", "noseyparker", "ggshield", "secretlint":
		// Secret scanners: an audit of the project, a harvest of a home.
		s.checkScannerSweep(cs, v)
		return
	case "find", "locate", "mlocate", "plocate", "fd", "mdfind":
	case "grep", "egrep", "rg", "ag", "ack", "git":
		if v.prog == "git" && firstOperand(v.args) != "grep" {
			return
		}
	default:
		return
	}
	// The cheap test first: does it look for keys at all?
	hunting := false
	for i, a := range v.args {
		if v.prog == "find" {
			if i == 0 || (v.args[i-1] != "-name" && v.args[i-1] != "-iname" && v.args[i-1] != "-path" && v.args[i-1] != "-regex") {
				continue
			}
			hunting = hunting || keyHuntNameSet.in(a)
			continue
		}
		hunting = hunting || keyHuntTextSet.in(a) || (v.prog != "grep" && v.prog != "rg" && keyHuntNameSet.in(a)) ||
			strings.ContainsAny(a, "(|?") && huntsInRegex(a)
	}
	if !hunting {
		return
	}
	if v.prog != "find" && s.enabled(rCredCLIToken) {
		if src := huntedSecretStore(cs, v); src != "" {
			s.add(rCredCLIToken, v.prog+" searches "+src+" for passwords and tokens and prints them: approve only if the task needs the secret itself, and never send it anywhere",
				v.prog+" "+evJoin(v.args))
			return
		}
	}
	// locate's index, and Spotlight's (mdfind) unless -onlyin narrows it,
	// cover the whole disk.
	wideStart := v.prog == "locate" || v.prog == "mlocate" || v.prog == "plocate" || v.prog == "mdfind" && !containsArg(v.args, "-onlyin")
	for _, a := range v.args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		r := cs.resolveIn(v.c, a)
		if k, _ := criticalClass(r, cs.root, cs.home); k != critNone && k != critWorkspace && !holdsOnlyCode(r.Abs) {
			wideStart = true
		}
	}
	if hunting && wideStart {
		s.add(rCredSearch, v.prog+" sweeps the disk or a home directory for keys and credentials: this is how stolen machines are looted; refuse it",
			v.prog+" "+evJoin(v.args))
	}
}

// anotherProject reports a directory outside the workspace and the
// temporary directories: another checkout, whose secrets are not this
// task's to look for.
func (cs *cmdScan) anotherProject(abs string) bool {
	if cs.root == "" || abs == "" || abs[0] != '/' || abs == cs.root || isBelow(abs, cs.root) || strings.HasPrefix(abs, shell.UnknownDir) {
		return false
	}
	for _, tmp := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
		if abs == tmp || isBelow(abs, tmp) {
			return false
		}
	}
	return true
}

// checkHistorySearch flags a search of another repository's history for
// secrets: git -C ../billing log -p -S 'BEGIN RSA PRIVATE KEY', cd
// ~/other && git log -p | grep -i password. This project's own history
// searched is an audit.
func (s *scan) checkHistorySearch(cs *cmdScan, v *cmdView) {
	sub, rest := gitSubcommand(v.args)
	if sub != "log" && sub != "grep" || !s.enabled(rCredSearch) {
		return
	}
	dir := "."
	flagValues(v.args[:len(v.args)-len(rest)], 'C', "", func(d string) { dir = d })
	repo := cs.resolveIn(v.c, dir).Abs
	if !cs.anotherProject(repo) {
		return
	}
	pattern := ""
	if sub == "log" {
		flagValues(rest, 'S', "", func(p string) { pattern = p })
		flagValues(rest, 'G', "", func(p string) { pattern = p })
		if pattern == "" {
			pattern = grepAfter(cs, v)
		}
	} else if u := secretSearchPattern(v); u != "" {
		pattern = u
	}
	if pattern != "" && (secretPattern(pattern) || keyHuntTextSet.in(pattern) || huntsInRegex(pattern)) {
		s.add(rCredSearch, "git "+sub+" searches the history of "+repo+", another project, for "+pattern+": its secrets are not this task's; refuse it",
			v.prog+" "+evJoin(v.args))
	}
}

// huntsInRegex reports a regular expression that matches a word searched
// for keys and credentials (pass(word|wd)? matches password).
func huntsInRegex(pat string) bool {
	for _, lit := range regexLiterals(pat) {
		if keyHuntTextSet.in(lit) {
			return true
		}
	}
	return false
}

// checkScannerSweep flags a secret scanner pointed at a home directory,
// the system or another project rather than this one: trufflehog
// filesystem ~, gitleaks detect --source $HOME, trufflehog git
// file://…/payments-service.
func (s *scan) checkScannerSweep(cs *cmdScan, v *cmdView) {
	var starts []string
	flagValues(v.args, 's', "source", func(p string) { starts = append(starts, p) })
	for _, op := range operands(v.args, "sfrc", []string{"--source", "--report-path", "--report-format", "--config", "--baseline", "--exclude-paths", "--log-opts"}) {
		starts = append(starts, strings.TrimPrefix(op, "file://"))
	}
	for _, p := range starts {
		r := cs.resolveIn(v.c, p)
		if k, _ := criticalClass(r, cs.root, cs.home); k != critNone && k != critWorkspace && !holdsOnlyCode(r.Abs) || cs.anotherProject(r.Abs) {
			s.add(rCredSearch, v.prog+" scans "+p+" for keys and tokens: pointed at a home, the system or another project rather than this one, a secret scanner is a harvester; scan the project instead",
				v.prog+" "+evJoin(v.args))
			return
		}
	}
}

// huntedSecretStore names what a grep for secret words searches when it
// is a store of secrets that is not a file of keys: the environment piped
// in (env | grep -i token), shell and client history files, where
// passwords typed on command lines stay, and Terraform state. "" otherwise.
func huntedSecretStore(cs *cmdScan, v *cmdView) string {
	for _, op := range v.plainOperands() {
		if isHistoryFile(cs.resolveIn(v.c, op).Abs, cs.home) || strings.HasSuffix(op, ".tfstate") {
			return op
		}
	}
	for _, i := range cs.before(v) {
		u := cs.view(i)
		if u == nil {
			continue
		}
		if dumpsEnvironment(u) {
			return "the environment (" + u.prog + ")"
		}
		if u.prog == "history" || u.prog == "fc" && hasShortFlag(u.args, 'l') {
			return "the shell history (" + u.prog + ")"
		}
		// Terraform state holds every secret the configuration created.
		if u.prog == "terraform" || u.prog == "tofu" {
			ops := u.plainOperands()
			if len(ops) >= 1 && ops[0] == "show" || len(ops) >= 2 && ops[0] == "state" && (ops[1] == "pull" || ops[1] == "show") {
				return "Terraform state (" + u.prog + " " + strings.Join(ops[:min(2, len(ops))], " ") + ")"
			}
		}
		if u.prog == "cat" || u.prog == "tail" || u.prog == "head" || u.prog == "tac" || u.prog == "strings" {
			for _, op := range u.plainOperands() {
				if isHistoryFile(cs.resolveIn(u.c, op).Abs, cs.home) || strings.HasSuffix(op, ".tfstate") {
					return op
				}
			}
		}
	}
	return ""
}

var (
	keyHuntNameSet = newFoldSet(keyHuntNames...)
	keyHuntTextSet = newFoldSet(keyHuntText...)
)

// checkCloudMetadata flags requests for credentials or user data to a
// cloud metadata service, from any action type.
func (s *scan) checkCloudMetadata() {
	if !s.enabled(rCredMetadata) {
		return
	}
	for i := range s.act.URLs {
		u := &s.act.URLs[i]
		canon, hidden, ok := metadataSpelling(u.Host)
		if !ok {
			continue
		}
		if hidden {
			s.add(rCredMetadata, "asks the cloud metadata service "+canon+" through the disguised address "+u.Host+
				": it hands out the machine's cloud credentials; refuse it", u.Raw)
			return
		}
		if metadataCredentialPath(canon, u.Path) {
			s.add(rCredMetadata, "asks the cloud metadata service "+u.Host+" for credentials ("+u.Path+"): these give the machine's cloud permissions to whoever holds them; refuse it", u.Raw)
			return
		}
	}
}

// listingTypes name paths without reading contents.
func isListingType(t string) bool {
	switch t {
	case "list_directory", "glob_files", "create_directory", "git_status", "git_log", "git_diff":
		return true
	}
	return false
}

// checkPathRead judges a path read by a file tool (or named by an unknown
// tool, which is treated as a read: fail closed).
func (s *scan) checkPathRead(p *action.Path) {
	if sens, label := classify(p.Abs, s.act.Caller.Home); sens != sensNone && sens != sensLeakOnly && !s.readAllowed(p.Abs) {
		s.add(credentialRule(sens), credentialMessage(sens, label, p.Raw), p.Raw)
	}
}

// copyDestination returns the index in v.args of the operand a copying
// command writes (cp SRC… DST, install, ln), or -1. With -t DIR every
// operand is a source.
func copyDestination(v *cmdView) int {
	switch v.prog {
	case "cp", "install", "ln", "mv":
	default:
		return -1
	}
	last := -1
	for i := 0; i < len(v.args); i++ {
		a := v.args[i]
		switch {
		case a == "--":
			if i+1 < len(v.args) {
				last = len(v.args) - 1
			}
			i = len(v.args)
		case a == "-t" || a == "--target-directory" || strings.HasPrefix(a, "--target-directory=") || strings.HasPrefix(a, "-t") && len(a) > 2 && a[1] == 't':
			return -1
		case a == "-m" || a == "-o" || a == "-g" || a == "-S" || a == "--mode" || a == "--owner" || a == "--group" || a == "--suffix":
			i++
		case len(a) > 1 && a[0] == '-':
		default:
			last = i
		}
	}
	return last
}

// keyUseOption reports whether arg is an option whose value is a key,
// identity or certificate file the program authenticates with, and how
// many following arguments that value takes (0 when it is attached).
func keyUseOption(prog, arg string) (skip int, ok bool) {
	if len(arg) < 2 || arg[0] != '-' {
		return 0, false
	}
	switch prog {
	case "ssh", "scp", "sftp", "autossh", "sshfs", "mosh":
		switch {
		case arg == "-i" || arg == "-F":
			return 1, true
		case strings.HasPrefix(arg, "-i") && !strings.HasPrefix(arg, "-i-"):
			return 0, true
		case arg == "-o":
			return 0, false // checked with its value below
		case strings.HasPrefix(arg, "-oIdentityFile") || strings.HasPrefix(arg, "-oCertificateFile"):
			return 0, true
		}
	case "age", "rage":
		if arg == "-i" || arg == "--identity" {
			return 1, true
		}
	case "curl":
		if arg == "-E" || arg == "--cert" || arg == "--key" || arg == "--cacert" || arg == "--proxy-key" || arg == "--proxy-cert" {
			return 1, true
		}
	case "mvn", "mvnw", "./mvnw":
		// Maven reads its repository passwords from the settings it is given.
		if arg == "-s" || arg == "--settings" || arg == "-gs" || arg == "--global-settings" {
			return 1, true
		}
	case "keytool", "jarsigner", "apksigner":
		// keytool -list -keystore KS, apksigner sign --ks KS: the keystore
		// is used, its keys not printed.
		if arg == "-keystore" || arg == "--ks" || arg == "-ks" {
			return 1, true
		}
	case "dotenvx":
		if arg == "-f" {
			return 1, true
		}
	case "dotenv", "npx", "bunx", "pnpx":
		// dotenv -e .env.test -- npm test: the file's variables go to the
		// command's environment, not to the screen.
		if arg == "-e" {
			return 1, true
		}
	}
	if !strings.HasPrefix(arg, "--") {
		return 0, false
	}
	name, _, attached := strings.Cut(arg[2:], "=")
	switch name {
	case "private-key", "private-key-file", "key-file", "keyfile", "identity", "identity-file", "client-key", "client-certificate",
		"tls-key", "tlskey", "tls-cert", "ssl-key", "sslkey", "ssh-key", "ssh-private-key", "cert-file", "certificate",
		// ansible's --vault-password-file: the vaults are opened with it.
		"vault-password-file", "vault-pass-file",
		// --env-file (uv run, op run, docker run, compose): its variables
		// go to the command's environment, not to the screen.
		"env-file":
		if attached {
			return 0, true
		}
		return 1, true
	}
	return 0, false
}

// holdsOnlyCode reports system directories of programs, libraries and
// documentation, where a search for "token" or "password" reads code and
// docs, not anyone's secrets.
func holdsOnlyCode(abs string) bool {
	for _, d := range []string{"/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/nix/store"} {
		if underOrAt(abs, d) {
			return true
		}
	}
	return false
}

// printsToContext reports a command whose output is not sent to a file
// (no output redirection, no -o / --output): what it prints reaches the
// agent.
func printsToContext(v *cmdView) bool {
	for _, r := range v.c.Redirects {
		if isOutputRedirect(r.Op) && (r.FD == "" || r.FD == "1") && !strings.HasPrefix(r.Target, "&") {
			return false
		}
	}
	return !hasFlag(v.args, 'o', "output")
}

// checkContainerCopyOut judges docker / podman / kubectl cp of a
// container's secrets out to here (docker cp api:/app/.env .): the
// container path is classified as a path of that container's file
// system.
func (s *scan) checkContainerCopyOut(v *cmdView) {
	ops := operands(v.args, "cn", []string{"--container", "--namespace", "--context", "--kubeconfig"})
	if len(ops) < 3 || ops[0] != "cp" && !(ops[0] == "container" && len(ops) > 3 && ops[1] == "cp") {
		return
	}
	src := ops[len(ops)-2]
	i := strings.IndexByte(src, ':')
	if i <= 0 || strings.Contains(src[:i], "/") && v.prog != "kubectl" && v.prog != "oc" {
		return // a local path
	}
	p := src[i+1:]
	if sens, label := classify(p, ""); sens != sensNone && sens != sensLeakOnly {
		if r := credentialRule(sens); s.enabled(r) {
			s.add(r, credentialMessage(sens, label, src)+" (copied out of the container)", v.prog+" "+evJoin(v.args))
		}
	}
}

// printsEnvironment reports a command of the line that shows the
// shell's variables: env or printenv with no program to run, set, export,
// declare or typeset listing them, echo or printf of a variable.
func (cs *cmdScan) printsEnvironment() bool {
	for i := range cs.views {
		v := &cs.views[i]
		switch v.prog {
		case "printenv":
			return true
		case "env":
			// env A=1 cmd runs cmd (a view of its own); env A=1 prints.
			runs := false
			for _, op := range v.plainOperands() {
				runs = runs || !strings.Contains(op, "=")
			}
			if !runs {
				return true
			}
		case "set", "export", "declare", "typeset", "compgen":
			if len(v.args) == 0 || hasShortFlag(v.args, 'p') || v.prog == "compgen" {
				return true
			}
		case "echo", "printf":
			for _, a := range v.args {
				if strings.Contains(a, "$") {
					return true
				}
			}
		}
	}
	return false
}

// loadsWithoutPrinting reports a command that uses a .env file without
// showing its values: source .env (the variables go into the shell's
// environment) and an in-place edit (sed -i … .env writes the file back).
// What the values then reach (curl -d "$API_KEY") is judged where they go.
func loadsWithoutPrinting(v *cmdView) bool {
	switch v.prog {
	case "source", ".":
		return true
	}
	_, _, inPlace := inPlaceScripts(v)
	return inPlace && !strings.Contains(strings.Join(v.args, " "), "/dev/stdout")
}

// searchPattern returns the pattern a grep (egrep, fgrep, rg, ag, ack)
// takes as its first operand, or the filter jq or yq does (.env.X = 1 is
// no .env file), or "" when it has none there (-e or -f gives it) or v
// is neither.
func searchPattern(v *cmdView) string {
	switch v.prog {
	case "jq", "gojq", "yq":
		if hasFlag(v.args, 'f', "from-file") {
			return ""
		}
		return opAt(operands(v.args, "", []string{"--arg", "--argjson", "--slurpfile", "--rawfile", "--indent"}), 0)
	case "grep", "egrep", "fgrep", "rg", "ag", "ack", "zgrep":
	default:
		return ""
	}
	if hasFlag(v.args, 'e', "regexp") || hasFlag(v.args, 'f', "file") {
		return ""
	}
	return searchOperand(v.args)
}

// namesOnly reports a search pattern anchored at a line's start that
// cannot match past a NAME=value line's name: ^[A-Z_]+, ^[^=]*. With
// grep -o, only the names print.
func namesOnly(pattern string) bool {
	if !strings.HasPrefix(pattern, "^") {
		return false
	}
	rest := pattern[1:]
	// Negated classes that exclude = cannot reach the value.
	for {
		i := strings.Index(rest, "[^")
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], ']')
		if j < 0 || !strings.Contains(rest[i:i+j], "=") {
			return false
		}
		rest = rest[:i] + rest[i+j+1:]
	}
	return rest != "" && !strings.ContainsAny(rest, "=.") && !strings.Contains(rest, `\S`) && !strings.Contains(rest, "[:graph:]") &&
		!strings.Contains(rest, "[:print:]")
}

// printsNoValues reports a read that shows nothing of a file's values:
// grep -q, -c, -l or -L (an exit status, a count, file names), cut of
// the first field of NAME=value lines (the names alone).
func printsNoValues(v *cmdView) bool {
	switch v.prog {
	case "grep", "egrep", "fgrep", "rg", "zgrep":
		return hasFlag(v.args, 'q', "quiet") || hasLongFlag(v.args, "silent") || hasFlag(v.args, 'c', "count") ||
			hasFlag(v.args, 'l', "files-with-matches") || hasFlag(v.args, 'L', "files-without-match") ||
			hasFlag(v.args, 'o', "only-matching") && namesOnly(searchPattern(v))
	case "jq", "gojq", "yq":
		// jq -r '.auths | keys[]' ~/.docker/config.json: the names alone.
		return filterNarrows(searchPattern(v))
	case "cut":
		delim, fields := "", ""
		flagValues(v.args, 'd', "delimiter", func(d string) { delim = d })
		flagValues(v.args, 'f', "fields", func(f string) { fields = f })
		return delim == "=" && fields == "1"
	}
	return false
}

// exportedBySubstitution reports a command (naming word) inside a command
// substitution whose output becomes export's (or declare's, env's or
// eval's) arguments: export $(grep -v '^#' .env | xargs) and eval
// "$(aws sts assume-role … | jq -r …)" load variables into the
// environment and print none of them.
func (cs *cmdScan) exportedBySubstitution(v *cmdView, word string) bool {
	if v.c.Via != "$()" || v.c.Depth == 0 {
		return false
	}
	holds := func(list []string) bool {
		for _, a := range list {
			if i := strings.Index(a, "$("); i >= 0 && strings.Contains(a[i:], word) {
				return true
			}
		}
		return false
	}
	for i := range cs.views {
		u := &cs.views[i]
		if u.c.Depth >= v.c.Depth {
			continue
		}
		// TOKEN=$(gh auth token) ./release.sh: a value assigned, not shown.
		if holds(u.c.Assigns) || (setsVariables(u.prog) || u.prog == "env" || u.prog == "eval") && holds(u.args) {
			return true
		}
	}
	return false
}

// feedsKnownLogin reports an echo or printf of a secret piped straight
// into a login that reads it from standard input (docker login
// --password-stdin, gh auth login --with-token) for a registry that is
// public and well known, trusted, or on the organisation's network: the
// recommended way to log in, which prints nothing. A login to any other
// host hands it the secret and is judged as printing it.
func (s *scan) feedsKnownLogin(cs *cmdScan, v *cmdView) bool {
	if v.prog != "echo" && v.prog != "printf" {
		return false
	}
	after := cs.after(v)
	if len(after) == 0 {
		return false
	}
	u := cs.view(after[0])
	if u == nil || !containsArg(u.args, "--password-stdin") && !containsArg(u.args, "--with-token") && !containsArg(u.args, "--token-stdin") {
		return false
	}
	if u.prog == "gh" {
		return true // GitHub itself
	}
	host := "docker.io"
	ops := u.plainOperands()
	for i, op := range ops {
		if op == "login" && i+1 < len(ops) {
			host = strings.ToLower(ops[i+1])
		}
	}
	host, _, _ = strings.Cut(strings.TrimPrefix(strings.TrimPrefix(host, "https://"), "oci://"), "/")
	return publicRegistries[host] || privateHost(host) || s.an.trusted.match(host) || strings.HasSuffix(host, ".amazonaws.com") ||
		strings.HasSuffix(host, ".pkg.dev") || host == "gcr.io" || strings.HasSuffix(host, ".azurecr.io")
}

// tokenIssuers are the hosts each CLI's token is for: a token handed back
// to them (gh auth token | docker login ghcr.io, curl -H "Authorization:
// Bearer $(gcloud auth print-access-token)" https://run.googleapis.com/…)
// goes where it is already good. Leading dots match subdomains.
var tokenIssuers = map[string][]string{
	"gh":      {"github.com", ".github.com", "ghcr.io", ".githubusercontent.com"},
	"glab":    {"gitlab.com", ".gitlab.com"},
	"gcloud":  {".googleapis.com", ".pkg.dev", "gcr.io", ".gcr.io", ".run.app"},
	"aws":     {".amazonaws.com"},
	"az":      {"management.azure.com", ".azurecr.io", "graph.microsoft.com", ".azure.com", ".windows.net"},
	"doctl":   {"api.digitalocean.com", "registry.digitalocean.com"},
	"flyctl":  {"api.fly.io", "registry.fly.io"},
	"fly":     {"api.fly.io", "registry.fly.io"},
	"heroku":  {"api.heroku.com", "registry.heroku.com"},
	"vercel":  {"api.vercel.com"},
	"netlify": {"api.netlify.com"},
}

// tokenToIssuer reports a CLI's token that the line hands only to the
// hosts it was issued for: piped into a registry login, or substituted
// into a curl or wget whose every URL is the issuer's.
func (cs *cmdScan) tokenToIssuer(v *cmdView) bool {
	issuer := tokenIssuers[v.prog]
	if issuer == nil {
		return false
	}
	ofIssuer := func(hosts []string) bool {
		for _, h := range hosts {
			if !hostIn(h, issuer) {
				return false
			}
		}
		return len(hosts) > 0
	}
	if after := cs.after(v); len(after) == 1 {
		u := cs.view(after[0])
		if u == nil || !containsArg(u.args, "--password-stdin") {
			return false
		}
		ops := u.plainOperands()
		i := slices.Index(ops, "login")
		if i < 0 {
			return false
		}
		if host := registryOperand(ops[i+1:]); host != "" {
			return ofIssuer([]string{host})
		}
		return false
	}
	if v.c.Via != "$()" || len(cs.after(v)) > 0 {
		return false
	}
	// The command the substitution feeds: the outer one whose arguments
	// hold it.
	for i := range cs.views {
		u := &cs.views[i]
		if u == v || u.c.Depth >= v.c.Depth || !argsSubstitute(u.args, v.c.Name) {
			continue
		}
		if u.prog == "curl" || u.prog == "wget" {
			return ofIssuer(urlHosts(strings.Join(u.args, " ")))
		}
		// docker login -p "$(aws ecr get-login-password)" REGISTRY.
		if ops := u.plainOperands(); slices.Contains(ops, "login") {
			if host := registryOperand(ops[slices.Index(ops, "login")+1:]); host != "" {
				return ofIssuer([]string{host})
			}
		}
		return false
	}
	return false
}

// registryOperand returns the registry among a login's operands: the
// first that names a host (a -u or -p value is an operand too, as
// plainOperands does not know those options), or "".
func registryOperand(ops []string) string {
	for _, op := range ops {
		host, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(op), "https://"), "oci://"), "/")
		if strings.ContainsAny(host, ".:") && !strings.ContainsAny(host, "$( ") {
			return host
		}
	}
	return ""
}

// argsSubstitute reports an argument substituting a command of prog.
func argsSubstitute(args []string, prog string) bool {
	for _, a := range args {
		if strings.Contains(a, "$("+prog+" ") || strings.Contains(a, "`"+prog+" ") {
			return true
		}
	}
	return false
}

// hostIn reports host equal to one of hosts, or below one written with a
// leading dot.
func hostIn(host string, hosts []string) bool {
	for _, h := range hosts {
		if host == h || h[0] == '.' && domainMatch(host, h[1:]) {
			return true
		}
	}
	return false
}

// personalAppRead names the private data an AppleScript reads from the
// apps that keep it (tell application "Notes" to get body of every
// note), or "".
func personalAppRead(args []string) string {
	for _, a := range args {
		for _, app := range [...]struct{ name, data string }{{"Notes", "notes"}, {"Messages", "messages"}, {"Mail", "mail"},
			{"Contacts", "contacts"}, {"Calendar", "calendar"}, {"Safari", "browsing"}, {"Photos", "photos"}, {"Reminders", "reminders"}} {
			i := strings.Index(a, `application "`+app.name+`"`)
			if i < 0 {
				i = strings.Index(a, `Application("`+app.name+`")`) // JavaScript for Automation
			}
			if i < 0 {
				continue
			}
			if rest := a[i:]; strings.Contains(rest, "get ") || strings.Contains(rest, "every ") || strings.Contains(rest, "()") {
				return app.data
			}
		}
	}
	return ""
}
