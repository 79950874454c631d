package heuristics

import (
	"net/url"
	"path"
	"strings"

	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/shell"
)

// Path classification shared by the destructive, persistence, credential
// and exfiltration rules. Paths are judged by their cleaned absolute form
// (action.ResolvePath), so "~/x", "$HOME/x" and "/home/dev/x" are the same.

// systemDirs are top-level directories whose loss or corruption breaks the
// machine. criticalClass looks up only paths directly under /.
var systemDirs = map[string]bool{
	"/bin": true, "/boot": true, "/dev": true, "/etc": true, "/home": true, "/lib": true, "/lib32": true,
	"/lib64": true, "/libx32": true, "/media": true, "/mnt": true, "/opt": true, "/proc": true, "/root": true,
	"/run": true, "/sbin": true, "/srv": true, "/sys": true, "/usr": true, "/var": true, "/snap": true,
	"/System": true, "/Library": true, "/Applications": true, "/Users": true, "/private": true, "/Volumes": true,
	"/nix": true,
}

func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	switch {
	case i < 0:
		return ""
	case i == 0:
		return "/"
	}
	return p[:i]
}

// homeRel splits a path inside some user's home directory: the caller's
// home, "~", /root, /home/<user> or /Users/<user>. It returns the rest
// (".ssh/id_rsa"), whether p is the home itself, and whether p is in a home.
func homeRel(abs, home string) (rest string, isHome, ok bool) {
	if home != "" && home != "/" {
		if abs == home {
			return "", true, true
		}
		if isBelow(abs, home) {
			return abs[len(home)+1:], false, true
		}
	}
	switch {
	case abs == "~":
		return "", true, true
	case strings.HasPrefix(abs, "~/"):
		return abs[2:], false, true
	case abs == "/root":
		return "", true, true
	case strings.HasPrefix(abs, "/root/"):
		return abs[6:], false, true
	}
	for _, base := range []string{"/home/", "/Users/"} {
		if strings.HasPrefix(abs, base) {
			user, r, more := strings.Cut(abs[len(base):], "/")
			if user == "" || user == "*" {
				return "", false, false
			}
			if !more {
				return "", true, true
			}
			return r, false, true
		}
	}
	return "", false, false
}

// underOrAt reports whether p is dir or below it.
func underOrAt(p, dir string) bool {
	return p == dir || isBelow(p, dir)
}

// isBelow reports whether p is strictly inside dir, without allocating.
func isBelow(p, dir string) bool {
	if dir == "/" {
		return len(p) > 1 && p[0] == '/'
	}
	return len(p) > len(dir) && p[len(dir)] == '/' && strings.HasPrefix(p, dir)
}

// stripGlobChild turns "d/*", "d/.*" and "d/." into d: deleting every
// child of d is as bad as deleting d.
func stripGlobChild(abs string) string {
	for {
		switch {
		case strings.HasSuffix(abs, "/*") || strings.HasSuffix(abs, "/."):
			abs = abs[:len(abs)-2]
		case strings.HasSuffix(abs, "/**"): // ~/**/*: every file below
			abs = abs[:len(abs)-3]
		case strings.HasSuffix(abs, "/.*"):
			abs = abs[:len(abs)-3]
		case abs == "*" || abs == ".*":
			return "."
		default:
			if abs == "" {
				return "/"
			}
			return abs
		}
	}
}

// critKind is the class of directory criticalDir describes; callers that
// only test or compare the class need no description string built.
type critKind uint8

const (
	critNone critKind = iota
	critWorkspace
	critRoot
	critHome
	critHoldsWorkspace
	critHoldsHome
	critSystem
	critUserDir
)

// criticalClass classifies p for criticalDir: the class, and the directory (or
// for critUserDir the home-relative name) its description names.
func criticalClass(p action.Path, root, home string) (critKind, string) {
	if p.Rel == "." {
		return critWorkspace, ""
	}
	d := stripGlobChild(p.Abs)
	if d == "." && root == "" {
		return critWorkspace, ""
	}
	switch {
	case d == "/":
		return critRoot, ""
	case root != "" && d == root:
		return critWorkspace, ""
	}
	if _, isHome, _ := homeRel(d, home); isHome {
		return critHome, d
	}
	switch {
	case root != "" && isBelow(root, d):
		return critHoldsWorkspace, d
	case home != "" && isBelow(home, d):
		return critHoldsHome, d
	}
	parent := parentDir(d)
	// Every system directory sits right under the root
	// (TestSystemDirsAreTopLevel): deeper paths skip the map.
	if parent == "/" && systemDirs[d] {
		return critSystem, d
	}
	switch parent {
	case "/usr", "/etc", "/boot", "/System", "/Library", "/var/lib", "/usr/lib", "/usr/local", "/usr/share":
		return critSystem, d
	case "/var":
		if d != "/var/tmp" {
			return critSystem, d
		}
	}
	if rest, _, ok := homeRel(d, home); ok && isUserDataDir(rest) {
		return critUserDir, rest
	}
	return critNone, ""
}

// isUserDataDir reports the home directories that hold the user's own
// configuration and keys (.ssh, .config, .local, Library), documents and
// media (the XDG and macOS user directories, synced folders) or the
// user's other code (~/projects, ~/src, ~/code, ~/repos, …), by their
// home-relative name.
func isUserDataDir(rest string) bool {
	switch rest {
	case ".ssh", ".config", ".local", "Library", "Documents", "Desktop", "Downloads", "Pictures", "Music", "Videos", "Movies",
		"Public", "Templates", "Dropbox", "OneDrive", "Google Drive", "iCloud Drive",
		"projects", "Projects", "src", "code", "Code", "repos", "git", "dev", "work", "workspace", "Developer", "go/src":
		return true
	}
	return false
}

// criticalKind is criticalClass without the name.
func criticalKind(p action.Path, root, home string) critKind {
	k, _ := criticalClass(p, root, home)
	return k
}

// describe is the phrase criticalDir returns for a class and its name.
func (k critKind) describe(name string) string {
	switch k {
	case critWorkspace:
		return "the whole workspace"
	case critRoot:
		return "the filesystem root"
	case critHome:
		return "a home directory (" + name + ")"
	case critHoldsWorkspace:
		return "a directory containing the workspace (" + name + ")"
	case critHoldsHome:
		return "a directory containing your home (" + name + ")"
	case critSystem:
		return "the system directory " + name
	case critUserDir:
		return "your " + name + " directory"
	}
	return ""
}

// criticalDir says why deleting (or chmod -R'ing) p would wreck the
// machine, the user's home or the whole workspace, or returns "".
func criticalDir(p action.Path, root, home string) string {
	k, name := criticalClass(p, root, home)
	return k.describe(name)
}

// isSystemFile reports whether abs is a file the system depends on, or a
// log whose truncation hides activity.
func isSystemFile(abs string) bool {
	for _, d := range []string{"/etc/", "/boot/", "/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/var/lib/", "/var/log/", "/System/", "/private/etc/"} {
		if strings.HasPrefix(abs, d) {
			return true
		}
	}
	return false
}

// isDiskDevice reports whether p names a block device (not /dev/null,
// /dev/zero, /dev/tty, /dev/std*).
func isDiskDevice(p string) bool {
	if !strings.HasPrefix(p, "/dev/") {
		return false
	}
	name := p[5:]
	for _, prefix := range []string{"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "md", "dm-", "mapper/", "loop", "sr", "nbd", "root", "by-id/", "disk/"} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// sensitivity classes of files.
type sensitivity uint8

const (
	sensNone sensitivity = iota
	sensDotenv
	sensUserSecret
	sensSystemSecret
	sensBrowser
	// sensLeakOnly: files that are ordinary to read and a leak to send
	// away: the account list (/etc/passwd, /etc/group), reconnaissance;
	// shell and REPL histories, which hold the passwords and tokens once
	// typed on a command line.
	sensLeakOnly
	// sensPrivateKey: private keys and the files that hold cloud or git
	// credentials themselves. No task needs their bytes in a prompt.
	sensPrivateKey
)

// privateKeyMaterial labels a home-relative path that holds private key
// material or stored credentials themselves, or returns "".
func privateKeyMaterial(rest string) string {
	switch {
	case underOrAt(rest, ".ssh"):
		return "an SSH private key"
	case rest == ".gnupg" || underOrAt(rest, ".gnupg/private-keys-v1.d") || rest == ".gnupg/secring.gpg" || underOrAt(rest, ".gnupg/openpgp-revocs.d"):
		return "GnuPG private keys"
	case rest == ".aws/credentials" || underOrAt(rest, ".aws/sso/cache") || underOrAt(rest, ".aws/cli/cache"):
		return "AWS credentials"
	case rest == ".config/sops/age/keys.txt":
		return "sops age private keys"
	case rest == ".config/gcloud/credentials.db" || rest == ".config/gcloud/access_tokens.db" ||
		rest == ".config/gcloud/application_default_credentials.json" || underOrAt(rest, ".config/gcloud/legacy_credentials"):
		return "Google Cloud credentials"
	case rest == ".azure/accessTokens.json" || strings.HasPrefix(rest, ".azure/msal_token_cache") || rest == ".azure/service_principal_entries.json":
		return "Azure credentials"
	case rest == ".git-credentials" || rest == ".config/git/credentials":
		return "git credentials"
	}
	return ""
}

// homeSecrets are credential files and directories relative to a home.
var homeSecrets = []struct{ rel, label string }{
	{".aws", "AWS credentials"},
	{".config/gcloud", "Google Cloud credentials"},
	{".azure", "Azure credentials"},
	{".kube/config", "Kubernetes credentials"},
	{".docker/config.json", "Docker registry credentials"},
	{".netrc", ".netrc passwords"},
	{"_netrc", ".netrc passwords"},
	{".git-credentials", "git credentials"},
	{".config/git/credentials", "git credentials"},
	{".npmrc", "npm token"},
	{".pypirc", "PyPI token"},
	{".gem/credentials", "RubyGems token"},
	{".cargo/credentials", "crates.io token"},
	{".cargo/credentials.toml", "crates.io token"},
	{".composer/auth.json", "Composer credentials"},
	{".config/gh/hosts.yml", "GitHub CLI token"},
	{".config/github-copilot/hosts.json", "GitHub Copilot token"},
	// Data platforms' and app stores' CLI sign-ins.
	{".snowsql/config", "Snowflake credentials"},
	{".config/snowflake/connections.toml", "Snowflake credentials"},
	{".databrickscfg", "Databricks token"},
	{".dbt/profiles.yml", "dbt warehouse credentials"},
	{".appstoreconnect/private_keys", "App Store Connect API keys"},
	{".config/doctl/config.yaml", "DigitalOcean token"},
	{".config/github-copilot/apps.json", "GitHub Copilot token"},
	{".config/hub", "GitHub token"},
	{".terraform.d/credentials.tfrc.json", "Terraform Cloud token"},
	{".vault-token", "Vault token"},
	{".config/sops/age/keys.txt", "sops age private keys"},
	{".pgpass", "PostgreSQL passwords"},
	{".my.cnf", "MySQL credentials"},
	{".s3cfg", "S3 credentials"},
	{".boto", "cloud credentials"},
	{".oci/config", "Oracle Cloud credentials"},
	{".config/rclone/rclone.conf", "rclone credentials"},
	{".m2/settings.xml", "Maven repository passwords"},
	{".m2/settings-security.xml", "Maven master password"},
	{".gradle/gradle.properties", "Gradle repository credentials"},
	{".nuget/NuGet/NuGet.Config", "NuGet credentials"},
	{".config/NuGet/NuGet.Config", "NuGet credentials"},
	{".ivy2/.credentials", "Ivy repository credentials"},
	{".sbt/.credentials", "sbt repository credentials"},
	{".yarnrc.yml", "Yarn registry token"},
	{".config/TCC", "macOS privacy grants"},
	{"Library/Application Support/com.apple.TCC", "macOS privacy grants"},
	{".gnupg", "GnuPG keys"},
	{".password-store", "password store"},
	{".local/share/keyrings", "keyring"},
	{"Library/Keychains", "macOS keychain"},
	{".config/op", "1Password CLI data"},
	// Coding agents' sign-ins.
	{".codex/auth.json", "Codex credentials"},
	{".claude/.credentials.json", "Claude credentials"},
	{".gemini/oauth_creds.json", "Gemini credentials"},
	{".ssh", "SSH keys"},
	// Cryptocurrency wallets: their keys are the money.
	{".electrum/wallets", "cryptocurrency wallet"},
	{".bitcoin/wallets", "cryptocurrency wallet"},
	{".bitcoin/wallet.dat", "cryptocurrency wallet"},
	{".ethereum/keystore", "cryptocurrency wallet"},
	{".config/Exodus", "cryptocurrency wallet"},
	{"Library/Application Support/Exodus", "cryptocurrency wallet"},
	{"Library/Application Support/Bitcoin/wallets", "cryptocurrency wallet"},
	{"Library/Application Support/Electrum/wallets", "cryptocurrency wallet"},
	// Private messages and mail.
	{"Library/Messages", "messages"},
	{"Library/Mail", "mail"},
	{".thunderbird", "mail"},
	{"snap/thunderbird", "mail"},
	{"Maildir", "mail"},
	{".local/share/evolution/mail", "mail"},
	{".config/Signal", "private messages"},
	{".local/share/TelegramDesktop", "private messages"},
	{"snap/telegram-desktop", "private messages"},
	{".config/Element", "private messages"},
	{".config/Wire", "private messages"},
	{".purple", "chat logs"},
}

// browserRoots are browser profile directories relative to a home.
var browserRoots = []string{
	".config/google-chrome", ".config/chromium", ".config/BraveSoftware", ".config/microsoft-edge", ".config/vivaldi", ".config/opera",
	".mozilla/firefox", "snap/firefox/common/.mozilla/firefox", "snap/chromium/common/chromium",
	"Library/Application Support/Google/Chrome", "Library/Application Support/Chromium", "Library/Application Support/BraveSoftware",
	"Library/Application Support/Microsoft Edge", "Library/Application Support/Firefox", "Library/Safari", "Library/Cookies",
	// Chat apps built on a browser keep their session cookies alike.
	".config/Slack", ".config/discord", "Library/Application Support/Slack", "Library/Application Support/discord",
}

var browserFiles = map[string]bool{
	"Login Data": true, "Login Data For Account": true, "Cookies": true, "Web Data": true, "Local State": true,
	"key3.db": true, "key4.db": true, "logins.json": true, "cookies.sqlite": true, "signons.sqlite": true,
	"Cookies.binarycookies": true,
	// What was visited and typed into forms.
	"History": true, "places.sqlite": true, "formhistory.sqlite": true,
}

var browserHistory = map[string]bool{"History": true, "places.sqlite": true, "formhistory.sqlite": true}

// classify says how sensitive a path is to read, with a label for messages.
// Percent-encoding ("%2essh") is decoded first: it hides nothing from us.
func classify(abs, home string) (sensitivity, string) {
	if strings.IndexByte(abs, '%') >= 0 {
		if d, err := url.PathUnescape(abs); err == nil && d != abs {
			abs = path.Clean(d)
		}
	}
	abs = strings.TrimPrefix(abs, "/private") // macOS /private/etc
	if abs == "" {
		return sensNone, ""
	}
	// The host's root mounted into a container (/host, /rootfs): its
	// files are the host's.
	if rest, ok := hostRootPath(abs); ok {
		if sens, label := classify(rest, home); sens != sensNone {
			label = strings.TrimPrefix(strings.TrimPrefix(label, "an "), "a ")
			return sens, "the host's " + label
		}
		return sensNone, ""
	}
	// In a directory the line does not show (cd "$X", "$(…)"/.ssh/id_rsa),
	// a file is judged as if that directory were the home.
	if rest, ok := strings.CutPrefix(abs, shell.UnknownDir+"/"); ok && home != "" {
		abs = home + "/" + rest
	}
	// Every home secret and browser root starts with '.', '_', "Library",
	// "snap" or "Maildir": other home paths (projects, documents) skip
	// the tables.
	if rest, _, ok := homeRel(abs, home); ok && rest != "" && strings.IndexByte("._LsM", rest[0]) >= 0 {
		for _, r := range browserRoots {
			if underOrAt(rest, r) {
				// Extension storage holds wallets' keys (MetaMask's vault).
				if rest == r || browserFiles[baseName(rest)] || strings.Count(rest[len(r):], "/") <= 1 || strings.Contains(rest, "/Local Extension Settings") {
					if browserHistory[baseName(rest)] {
						return sensBrowser, "the browser's history"
					}
					return sensBrowser, "browser passwords and cookies"
				}
			}
		}
		if isHistoryFile(abs, home) {
			return sensLeakOnly, "shell history (the tokens and passwords once typed)"
		}
		if strings.HasPrefix(rest, ".secrets/") {
			return sensUserSecret, "a file in ~/.secrets"
		}
		for _, h := range homeSecrets {
			if underOrAt(rest, h.rel) {
				if h.rel == ".ssh" && !isSSHPrivate(rest) {
					break
				}
				if label := privateKeyMaterial(rest); label != "" {
					return sensPrivateKey, label
				}
				return sensUserSecret, h.label
			}
		}
		// A directory that holds one (~/.claude, ~/.config): ordinary to
		// copy or list, a leak to send away.
		for _, h := range homeSecrets {
			if len(h.rel) > len(rest) && h.rel[len(rest)] == '/' && strings.HasPrefix(h.rel, rest) {
				return sensLeakOnly, "a directory holding " + h.label
			}
		}
	}
	switch {
	case !maySystemLocation(abs):
		// Not under /etc, /var, /run or /proc: none of the system
		// secrets below.
	case abs == "/etc/shadow" || abs == "/etc/shadow-" || abs == "/etc/gshadow" || abs == "/etc/gshadow-" || abs == "/etc/master.passwd" ||
		abs == "/etc/security/opasswd":
		return sensSystemSecret, "system password hashes"
	case underOrAt(abs, "/etc/sudoers") || underOrAt(abs, "/etc/sudoers.d"):
		return sensSystemSecret, "sudo configuration"
	case strings.HasPrefix(abs, "/etc/ssh/ssh_host_") && !strings.HasSuffix(abs, ".pub"):
		return sensSystemSecret, "SSH host private key"
	case serviceKeyFile(abs):
		return sensSystemSecret, "a service's TLS private key"
	case underOrAt(abs, "/var/run/secrets") || underOrAt(abs, "/run/secrets"):
		return sensSystemSecret, "service account or container secrets"
	case abs == "/etc/kubernetes/admin.conf" || abs == "/etc/kubernetes/super-admin.conf" || abs == "/etc/kubernetes/kubelet.conf" ||
		abs == "/etc/rancher/k3s/k3s.yaml" || abs == "/etc/rancher/rke2/rke2.yaml" || abs == "/var/lib/kubelet/kubeconfig" ||
		strings.HasPrefix(abs, "/etc/kubernetes/pki/") && strings.HasSuffix(abs, ".key") ||
		strings.HasPrefix(abs, "/var/lib/kubelet/pods/") && strings.Contains(abs, "/volumes/kubernetes.io~"):
		return sensSystemSecret, "Kubernetes cluster credentials"
	case underOrAt(abs, "/var/lib/etcd"):
		return sensSystemSecret, "the cluster's etcd data, every Secret in the cluster"
	case abs == "/etc/passwd" || abs == "/etc/group":
		return sensLeakOnly, "the account list"
	case strings.HasPrefix(abs, "/proc/") && strings.HasSuffix(abs, "/environ"):
		return sensUserSecret, "process environment (API keys, tokens)"
	}
	return secretFileName(baseName(abs))
}

// hostRootMounts are where containers commonly mount the host's root
// directory (docker run -v /:/host, a hostPath volume of /).
var hostRootMounts = []string{"/host/", "/hostfs/", "/host-root/", "/hostroot/", "/rootfs/", "/mnt/host/"}

// hostRootPath returns abs as the host sees it when abs lies under a
// mount of the host's root: /etc/shadow for /host/etc/shadow.
func hostRootPath(abs string) (string, bool) {
	if len(abs) < 7 || abs[1] != 'h' && abs[1] != 'r' && abs[1] != 'm' {
		return "", false
	}
	for _, m := range hostRootMounts {
		if rest, ok := strings.CutPrefix(abs, m); ok {
			return "/" + rest, true
		}
	}
	return "", false
}

// serviceKeyFile reports a private key a service keeps under /etc: in a
// directory named private (/etc/ssl/private, /etc/pki/tls/private,
// /etc/ipsec.d/private), or named as one (/etc/nginx/ssl/site.key,
// certbot's privkey.pem, a *-key.pem, a PKCS#12 bundle). Certificates
// and public keys beside them are not.
func serviceKeyFile(abs string) bool {
	rest, ok := strings.CutPrefix(abs, "/etc/")
	if !ok || strings.HasSuffix(rest, ".pub") {
		return false
	}
	if strings.Contains(rest, "/private/") {
		return true
	}
	base := strings.ToLower(baseName(rest))
	switch path.Ext(base) {
	case ".key", ".p12", ".pfx":
		return true
	case ".pem":
		stem := strings.TrimSuffix(base, ".pem")
		return strings.HasPrefix(stem, "privkey") || stem == "key" || strings.HasSuffix(stem, "-key") || strings.HasSuffix(stem, "_key") ||
			strings.HasSuffix(stem, ".key")
	}
	return false
}

// secretFileName classifies a file by its name alone, wherever it lies:
// Kerberos keytabs and ticket caches, and the project files named for
// secrets (projectSecretFile).
func secretFileName(base string) (sensitivity, string) {
	switch {
	case base == "acme.json":
		return sensPrivateKey, "Traefik's certificate store (the sites' TLS private keys)"
	case strings.HasSuffix(base, ".keytab"):
		return sensPrivateKey, "a Kerberos keytab, the keys of a service or host"
	case strings.HasPrefix(base, "krb5cc"):
		return sensUserSecret, "a Kerberos ticket cache"
	case strings.HasSuffix(base, ".jks") || strings.HasSuffix(base, ".keystore") || strings.HasSuffix(base, ".p12") || strings.HasSuffix(base, ".pfx"):
		return sensPrivateKey, "a signing keystore (an app's or a server's private key)"
	case base == "key.properties" || base == "keystore.properties":
		return sensUserSecret, "an Android signing configuration (the keystore's passwords)"
	}
	if label := projectSecretFile(base); label != "" {
		return sensDotenv, label
	}
	return sensNone, ""
}

// projectSecretFile names the kind of a project file that holds secrets
// by its name, or returns "": .env files, and secrets or credentials
// files in a data format (config/secrets.yml, credentials.json), Rails's
// master.key, WordPress's wp-config.php. Encrypted stores (credentials.yml.enc) and
// templates (secrets.example.yml) are not.
func projectSecretFile(base string) string {
	if base == "" {
		return ""
	}
	switch base[0] {
	case '.':
		if isDotenv(base) {
			return "a .env file"
		}
		if vaultPasswordFile(base) {
			return "an Ansible Vault password file"
		}
		return ""
	case 'v':
		if vaultPasswordFile(base) {
			return "an Ansible Vault password file"
		}
		return ""
	case 's', 'S', 'c', 'C', 'm', 'w':
	default:
		return "" // most names: one byte says no
	}
	switch base {
	case "master.key", "wp-config.php":
		return "a secrets file"
	}
	stem, ext, ok := strings.Cut(base, ".")
	if !ok || !(strings.EqualFold(stem, "secrets") || strings.EqualFold(stem, "secret") || strings.EqualFold(stem, "credentials") ||
		strings.EqualFold(stem, "creds")) {
		return ""
	}
	switch strings.ToLower(ext) {
	case "yml", "yaml", "json", "toml", "ini", "env", "properties", "xml", "conf", "cfg", "txt",
		"production.yml", "production.yaml", "production.json", "prod.yml", "prod.yaml", "prod.json":
		return "a secrets file"
	}
	return ""
}

// vaultPasswordFile reports Ansible Vault's password file by the names
// it conventionally has (.vault_pass, .vault_pass.txt, vault-password.txt):
// it opens every vault of the project.
func vaultPasswordFile(base string) bool {
	switch strings.TrimSuffix(strings.TrimPrefix(base, "."), ".txt") {
	case "vault_pass", "vault-pass", "vault_password", "vault-password", "vaultpass", "vault_pass_file":
		return true
	}
	return false
}

// isSSHPrivate reports whether a path under .ssh may hold a private key:
// everything except public keys, known_hosts, config and authorized_keys.
func isSSHPrivate(rest string) bool {
	if rest == ".ssh" {
		return true
	}
	b := baseName(rest)
	switch {
	case strings.HasSuffix(b, ".pub"), strings.HasPrefix(b, "known_hosts"), b == "config", b == "authorized_keys", b == "authorized_keys2":
		return false
	}
	return true
}

// isDotenv matches .env, .env.local, .env.production, .envrc, but not the
// committed templates (.env.example, .env.sample, …).
func isDotenv(base string) bool {
	if base == ".env" || base == ".envrc" {
		return true
	}
	if !strings.HasPrefix(base, ".env.") {
		return false
	}
	kind, _, _ := strings.Cut(strings.ToLower(base[5:]), ".")
	switch kind {
	case "example", "sample", "template", "dist", "defaults", "default", "schema", "tpl":
		return false
	}
	return true
}

// persistTarget says which persistence rule a write to abs falls under.
func persistTarget(p action.Path, home string) (ruleIndex, string, bool) {
	abs := strings.TrimPrefix(p.Abs, "/private")
	if rest, _, ok := homeRel(abs, home); ok && rest != "" {
		switch rest {
		case ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile", ".zshenv",
			".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".login", ".config/fish/config.fish",
			// Sourced by the distributions' default ~/.bashrc, or by
			// common conventions for local additions.
			".bash_aliases", ".bashrc.local", ".zshrc.local",
			// Run by the X session at a graphical login.
			".xsessionrc", ".xprofile", ".xinitrc", ".xsession":
			return rPersistShellRC, "the shell startup file ~/" + rest, true
		case ".ssh/authorized_keys", ".ssh/authorized_keys2", ".ssh/rc":
			return rPersistAuthorizedKeys, "~/" + rest, true
		}
		switch {
		case underOrAt(rest, ".config/fish/conf.d"):
			return rPersistShellRC, "a fish startup file", true
		case strings.HasPrefix(rest, ".config/powershell/") && strings.HasSuffix(strings.ToLower(rest), "profile.ps1"):
			return rPersistShellRC, "a PowerShell profile (~/" + rest + "), which every pwsh session runs", true
		case underOrAt(rest, ".bashrc.d"), underOrAt(rest, ".zshrc.d"), underOrAt(rest, ".oh-my-zsh/custom"):
			return rPersistShellRC, "a shell startup file (~/" + rest + ")", true
		case underOrAt(rest, ".config/environment.d"), rest == ".pam_environment":
			return rPersistShellRC, "a session environment file (~/" + rest + "), read at every login", true
		case underOrAt(rest, ".config/systemd"), underOrAt(rest, ".local/share/systemd"), underOrAt(rest, ".config/autostart"):
			return rPersistSystemd, "a user service or autostart entry (~/" + rest + ")", true
		case underOrAt(rest, "Library/LaunchAgents"):
			return rPersistLaunchd, "a LaunchAgent (~/" + rest + ")", true
		case toolStartupFile(rest):
			return rPersistShellRC, toolStartupLabel + " (~/" + rest + ")", true
		}
	}
	switch {
	case !maySystemLocation(abs):
		// Not under /etc, /var, /usr, /lib, /run, /Library, /System or
		// /private: none of the system locations below.
	case abs == "/etc/crontab" || abs == "/etc/anacrontab" || strings.HasPrefix(abs, "/etc/cron.") || strings.HasPrefix(abs, "/etc/cron/") ||
		underOrAt(abs, "/var/spool/cron") || underOrAt(abs, "/var/spool/anacron") || underOrAt(abs, "/var/at/tabs") || underOrAt(abs, "/usr/lib/cron/tabs"):
		return rPersistCron, abs, true
	case underOrAt(abs, "/etc/systemd") || underOrAt(abs, "/lib/systemd") || underOrAt(abs, "/usr/lib/systemd") || underOrAt(abs, "/run/systemd/system") ||
		underOrAt(abs, "/etc/init.d") || underOrAt(abs, "/etc/init") || abs == "/etc/rc.local" || underOrAt(abs, "/etc/rc.d") || underOrAt(abs, "/etc/xdg/autostart"):
		return rPersistSystemd, abs, true
	case abs == "/etc/profile" || underOrAt(abs, "/etc/profile.d") || abs == "/etc/bash.bashrc" || abs == "/etc/bashrc" ||
		abs == "/etc/zshrc" || abs == "/etc/zprofile" || abs == "/etc/zshenv" || underOrAt(abs, "/etc/zsh") || abs == "/etc/environment":
		return rPersistShellRC, "the system shell startup file " + abs, true
	case isAccountFile(abs):
		return rPrivAccount, abs, true
	case abs == "/etc/ld.so.preload" || abs == "/etc/ld.so.conf" || underOrAt(abs, "/etc/ld.so.conf.d"):
		return rPersistLDPreload, abs, true
	case underOrAt(abs, "/Library/LaunchAgents") || underOrAt(abs, "/Library/LaunchDaemons") ||
		underOrAt(abs, "/System/Library/LaunchAgents") || underOrAt(abs, "/System/Library/LaunchDaemons"):
		return rPersistLaunchd, abs, true
	}
	if isGitHookPath(p) {
		return rPersistGitHooks, "a git hook (" + p.Raw + ")", true
	}
	return 0, "", false
}

// toolStartupLabel starts what persistTarget says of a toolStartupFile.
const toolStartupLabel = "a file a tool runs at every start"

// toolStartupFile reports a file under the home (rest, relative to it)
// that a developer tool runs by itself every time it starts: Gradle's
// init scripts, Python's usercustomize / sitecustomize and .pth files in
// the user's site-packages, IPython's startup directory, direnv's own rc.
func toolStartupFile(rest string) bool {
	switch {
	case underOrAt(rest, ".gradle/init.d"), rest == ".gradle/init.gradle", rest == ".gradle/init.gradle.kts",
		underOrAt(rest, ".ipython/profile_default/startup"), rest == ".direnvrc", rest == ".config/direnv/direnvrc":
		return true
	case strings.HasPrefix(rest, ".local/lib/python") && strings.Contains(rest, "/site-packages/"):
		base := baseName(rest)
		return base == "usercustomize.py" || base == "sitecustomize.py" || strings.HasSuffix(base, ".pth") && !strings.Contains(rest[strings.Index(rest, "/site-packages/")+15:], "/")
	}
	return false
}

// maySystemLocation is a cheap test that abs could be one of the system
// locations classify and persistTarget list: each starts with "/e",
// "/v", "/u", "/l", "/r", "/L", "/S", or "/p" (/proc, and /private/etc/…,
// which isAccountFile trims).
func maySystemLocation(abs string) bool {
	if len(abs) < 5 || abs[0] != '/' {
		return false
	}
	switch abs[1] {
	case 'e', 'v', 'u', 'l', 'r', 'L', 'S', 'p':
		return true
	}
	return false
}

func isGitHookPath(p action.Path) bool {
	return strings.Contains(p.Abs, "/.git/hooks/") || strings.HasSuffix(p.Abs, "/.git/hooks") || strings.HasPrefix(p.Rel, ".git/hooks/") ||
		strings.HasPrefix(p.Abs, ".git/hooks/") || namedGitHook(p.Abs)
}

// gitHookNames are the hooks git runs by name ("update" aside: too
// common a name to tell).
var gitHookNames = map[string]bool{
	"applypatch-msg": true, "pre-applypatch": true, "post-applypatch": true, "pre-commit": true, "pre-merge-commit": true,
	"prepare-commit-msg": true, "commit-msg": true, "post-commit": true, "pre-rebase": true, "post-checkout": true,
	"post-merge": true, "pre-push": true, "pre-receive": true, "proc-receive": true, "post-receive": true, "post-update": true,
	"reference-transaction": true, "push-to-checkout": true, "pre-auto-gc": true, "post-rewrite": true, "fsmonitor-watchman": true,
}

// namedGitHook reports a file named after a git hook in a directory named
// hooks anywhere: a template directory's (~/.git-templates/hooks, which
// git init.templateDir copies into every new repository) or one that
// core.hooksPath names.
func namedGitHook(abs string) bool {
	dir, base := path.Split(abs)
	return strings.HasSuffix(dir, "hooks/") && gitHookNames[base]
}

const (
	actionRead   = action.AccessRead
	actionWrite  = action.AccessWrite
	actionDelete = action.AccessDelete
)
