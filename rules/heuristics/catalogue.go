package heuristics

import (
	"slices"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// ruleIndex numbers the rules so the hot path can use arrays instead of maps.
type ruleIndex int

const (
	rRCEPipe ruleIndex = iota
	rRCESubstitute
	rRCESaveExec
	rRCECloneExec
	rRCEInlineFetch
	rRCEScriptWrite
	rRCEPackageURL

	rDecodeExec
	rDecodeLayer

	rRevDevTCP
	rRevNetcat
	rRevSocat
	rRevScript
	rRevSSHTunnel
	rRevX11Display

	rDelRecursive
	rDelUnsetVar
	rDiskWipe
	rForkBomb
	rRecursivePerms
	rFindDelete
	rTruncateSystem
	rDelCredential
	rDelGitHistory
	rDelCrontab
	rDelOutside
	rEraseMany

	rPrivElevation
	rPrivUnsafePerms
	rPersistCron
	rPersistSystemd
	rPersistServiceEnable
	rPersistShellRC
	rPersistAuthorizedKeys
	rPersistGitHooks
	rPersistLaunchd
	rPersistLDPreload
	rPersistPathHijack
	rPrivProcessInjection
	rDiscoverPrivesc
	rDiscoverEnum
	rCredProcessArgs
	rCredPasswordPrompt
	rSecretCommit
	rPrivAccount
	rPrivContainer

	rCredSecretFile
	rCredDotenv
	rCredSystemFile
	rCredBrowser
	rCredCLIToken
	rCredSearch
	rCredMetadata

	rExfilFile
	rExfilDNS
	rExfilGitPush
	rExfilGitRemote

	rSecretPrivateKey
	rSecretAWSKeyID
	rSecretAWSSecret
	rSecretGitHub
	rSecretGitLab
	rSecretSlackToken
	rSecretSlackWebhook
	rSecretStripe
	rSecretGoogle
	rSecretOpenAI
	rSecretAnthropic
	rSecretJWT
	rSecretNPM
	rSecretSendGrid
	rSecretInFile

	rInjectOverride
	rInjectTemplate
	rInjectOutbound
	rInjectAgentRules
	rInjectStandingExfil
	rInjectAgentDirective

	rEvInvisibleCommand
	rEvInvisibleText
	rEvHomoglyph
	rEvFullwidth
	rEvShell
	rEvEncodedPath
	rEvUnanalysable

	// Families added with issue 12 (families.go and its siblings).
	rDefSecurityOff
	rDefLogTamper
	rDefHistory
	rDisruptHalt
	rDisruptKillAll
	rAccountChange
	rTrustRootCA
	rTunnelExpose
	rExfilTransfer
	rCredClusterSecret
	rCredPrivateKey

	// System tampering and collection (systemtamper.go, collection.go).
	rSystemFileWrite
	rPersistLoginAuth
	rKernelChange
	rCollectCapture
	rCredProcessMemory
	rDisruptMiner
	rExfilURLData
	rEncryptImpact
	rAttackTool
	rExfilSecretVar
	rInfraDestroy
	rCloudGrant
	rSupplySource
	rSupplyLookalike
	rSupplyVerifyOff
	rSupplyTamper
	rSupplyPublish
	rDefAgentGuard
	rDefAntiForensics
	rDefWeakeningEdit
	rDefReviewBypass

	// Services opened to the network (exposure.go), accelerator fleets
	// (miners.go).
	rNetExposedService
	rNetExposedShell
	rDisruptAcceleratorFleet

	// The disk filled (diskfill.go); another session's SSH agent borrowed
	// (credentials.go).
	rDisruptDiskFill
	rDisruptMemoryHog
	rCredAgentHijack

	// Data staged before it is taken (staging.go).
	rCollectStaging
	rCollectDatabaseDump

	// Coding agents' configuration changed (agentconfig.go).
	rDefAgentConfig

	// Commands run inside production workloads (infra.go), changes made
	// to production (prodchange.go).
	rInfraProdExec
	rInfraProdChange

	// This machine handed to a CI server as a runner (cirunner.go).
	rRCECIRunner

	// SQL that makes a database server run a command or write a file
	// (infra.go).
	rRCEDatabaseCommand

	numRules
)

const (
	block    = pb.VerdictDecision_VERDICT_DECISION_BLOCK
	escalate = pb.VerdictDecision_VERDICT_DECISION_ESCALATE
	allow    = pb.VerdictDecision_VERDICT_DECISION_ALLOW

	medium   = pb.Severity_SEVERITY_MEDIUM
	high     = pb.Severity_SEVERITY_HIGH
	critical = pb.Severity_SEVERITY_CRITICAL
)

// rules is the catalogue, indexed by ruleIndex.
var rules = func() [numRules]Rule {
	r := baseRules
	for i, fr := range familyRules {
		r[i] = fr
	}
	return r
}()

var baseRules = [numRules]Rule{
	rRCEPipe: {"rce.download-pipe-shell", CategoryRemoteCodeExec, critical, block,
		"A download (curl, wget, …) is piped straight into an interpreter. Planted code is followed into the start-up files of Neovim (init.lua and its Lua modules, .nvim.lua, .nvimrc), psql (.psqlrc \\! lines) and gdb (.gdbinit shell and ! lines), goreleaser's and borgmatic's hooks, a Prisma generator's provider, and the commands kubectl's exec credential plugins and AWS credential_process run. An object store's object written to standard output (aws s3 cp s3://… -, gsutil cat, gcloud storage cat) counts as a download."},
	rRCESubstitute: {"rce.download-substitute-shell", CategoryRemoteCodeExec, critical, block,
		"A download is executed through process or command substitution: bash <(curl …), sh -c \"$(curl …)\", eval \"$(wget -O- …)\". Also a download given as a program's settings or start-up file through process substitution (mvn -s, gradle --init-script, ssh -F, docker compose -f, bash --rcfile), and bun run / deno run of one."},
	rRCESaveExec: {"rce.download-then-execute", CategoryRemoteCodeExec, critical, block,
		"A file is downloaded and executed in the same command line, or wired by the same line into what a build or package manager runs by itself (npm pkg set scripts.x, a build backend in pyproject.toml). Also a download saved under .github/actions/ or .github/scripts/, which workflows call. Also a downloaded pickle loaded (pickle.load, joblib.load, torch.load without weights_only=True) and a downloaded notebook executed (jupyter nbconvert --execute, papermill). Also a download loaded by java -javaagent:FILE. Also a download saved as a build wrapper (gradle-wrapper.jar, maven-wrapper.jar, gradlew, mvnw) from a host that is not the build tool's own."},
	rRCECloneExec: {"rce.clone-then-execute", CategoryRemoteCodeExec, high, escalate,
		"Clones a repository from another host and runs a script from it in the same command line (git clone URL d && bash d/install.sh): what it runs was not read. Also git told to allow its ext:: transport (protocol.ext.allow=always, protocol.allow always, GIT_ALLOW_PROTOCOL=ext), through which a repository's submodule URL runs a command."},
	rRCEInlineFetch: {"rce.interpreter-fetch-exec", CategoryRemoteCodeExec, critical, block,
		"An interpreter one-liner fetches code over the network and executes it."},

	rRCEScriptWrite: {"rce.dangerous-script-write", CategoryRemoteCodeExec, critical, block,
		"Writes a script, git hook or package lifecycle script whose commands are dangerous (curl | sh, a reverse shell, …). Also an .htaccess that maps image or text extensions to PHP (an uploaded image becomes a web shell), and a mailcap entry that hands attachments to a shell or an interpreter."},
	rRCEPackageURL: {"rce.package-from-url", CategoryRemoteCodeExec, medium, escalate,
		"Installs a package straight from a URL or git repository instead of the registry (pip, npm, gem, cargo install --git, ansible-galaxy, a vagrant box), or deploys Kubernetes manifests, Helm charts or Helm plugins from a host that is not an https host in trusted_hosts (kubectl apply -f URL, curl URL | kubectl apply -f -, helm install --repo), or adds a chart repository over plain http or by bare address, or installs an editor extension from a .vsix file, or saves a download from such a host where programs run by name or tools load plugins (~/.local/bin, ~/bin, ~/.docker/cli-plugins, ~/.terraform.d/plugins, Helm plugins): what they hold runs code. Also dotnet add package / tool install / restore and nuget install with a --source or --add-source on a host that is not trusted. A gist (gist.github.com, gist.githubusercontent.com) is one account's paste: it counts as trusted for running or applying code only when trusted_hosts names it exactly, whatever a .githubusercontent.com entry says. Also a download unpacked (curl … | tar -x -C DIR) where programs run by name, tools load plugins or editors load extensions (~/.vscode/extensions). The release hosts of widely used tools (releases.hashicorp.com, get.helm.sh, dl.k8s.io, …) count as their own. Also ansible-pull -U URL, asdf plugin add NAME URL, grafana-cli --pluginUrl URL and arduino-cli's board package indexes (--additional-urls, config add board_manager.additional_urls) from a host that is not trusted. Also uv tool install --from URL and conda env create / update -f URL."},

	rDecodeExec: {"decode.execute", CategoryDecodeExec, critical, block,
		"Encoded text (base64, hex, escapes, reversed) is decoded and executed."},
	rDecodeLayer: {"decode.dangerous-layer", CategoryDecodeExec, critical, block,
		"An encoded part of the command decodes to a dangerous command."},

	rRevDevTCP: {"revshell.dev-tcp", CategoryReverseShell, critical, block,
		"Uses bash /dev/tcp or /dev/udp sockets, the classic reverse shell."},
	rRevNetcat: {"revshell.netcat", CategoryReverseShell, critical, block,
		"netcat / ncat / telnet attached to a shell (-e, -c, pipes or a fifo)."},
	rRevSocat: {"revshell.socat", CategoryReverseShell, critical, block,
		"socat or websocat connects a network socket to a program (exec:, system:, sh-c:, cmd:): whoever is on the other end, connected to or listened for, drives it."},
	rRevScript: {"revshell.script-socket", CategoryReverseShell, critical, block,
		"An interpreter one-liner opens a socket and spawns a shell or process."},

	rRevSSHTunnel: {"revshell.ssh-tunnel", CategoryReverseShell, medium, escalate,
		"ssh -R exposes a local port (often sshd) on a remote host."},
	rRevX11Display: {"revshell.x11-display", CategoryReverseShell, critical, block,
		"Sends an X11 client (xterm, …) to a display on another host (-display host:N, DISPLAY=host:N): whoever owns that display drives it."},

	rDelRecursive: {"destructive.recursive-delete", CategoryDestructive, critical, block,
		"Recursive delete of the filesystem root, a home directory, the workspace root or a system directory. Also git clean -f with -d, -x or -X run in the home or another critical directory (cd ~ && git init && git clean -ffdx). Also mv of such a directory onto /dev/null."},
	rDelUnsetVar: {"destructive.recursive-delete-variable", CategoryDestructive, high, escalate,
		"Recursive delete of \"$VAR/\" or \"$VAR/*\": an unset variable makes it delete from /."},
	rDiskWipe: {"destructive.disk-wipe", CategoryDestructive, critical, block,
		"Formats or overwrites a disk device (mkfs, dd of=/dev/…, wipefs, shred, > /dev/sda). Also macOS diskutil erasing, reformatting or deleting a disk, volume or APFS container."},
	rForkBomb: {"destructive.fork-bomb", CategoryDestructive, high, block,
		"A fork bomb exhausts the machine's processes. Also interpreter code that forks in a loop with no way out (perl -e 'fork while 1', os.fork() under while True)."},
	rRecursivePerms: {"destructive.recursive-permissions", CategoryDestructive, critical, block,
		"Recursive chmod / chown of the filesystem root, a home or a system directory."},
	rFindDelete: {"destructive.find-delete", CategoryDestructive, critical, block,
		"find -delete / -exec rm over the filesystem root, a home or a system directory."},
	rTruncateSystem: {"destructive.system-file-truncate", CategoryDestructive, high, block,
		"Truncates or overwrites a system file."},

	rEraseMany: {"destructive.mass-erase", CategoryDestructive, high, block,
		"Deletes, shreds or empties every file a glob matches in a home, the workspace root, a user's data directory or a system directory (rm -f ~/*, shred -u ./*, truncate -s 0 src/*.py), or the files a listing hands xargs there: as ruinous as a recursive delete. Also an output redirection to a glob that a loop or find hands over (for f in ~/src/*.go; do : > $f; done). Also find's listing read by a while read loop (find … | while read f; do shred -u \"$f\"; done), judged as a for loop over it; a negated -path no longer widens find's listing."},
	rDelCredential: {"destructive.credential-destroy", CategoryDestructive, high, block,
		"Destroys keys or credentials (shred, rm, mv to /dev/null of ~/.ssh, cloud credentials, …). Also gpg --delete-secret-keys, and mv over a key file of its own name (id_ed25519, sops' keys.txt). Also ssh-keygen -f over an existing private key with the line answering its overwrite question (yes y |, echo y |, <<< y)."},
	rDelGitHistory: {"destructive.git-history", CategoryDestructive, medium, escalate,
		"Recursively deletes a repository's .git directory, losing its history. Also rm, shred, wipe or truncate of a repository's object store or refs (.git/objects, .git/refs, .git/packed-refs). Also find deleting or shredding everything under .git."},
	rDelOutside: {"destructive.delete-outside-project", CategoryDestructive, medium, escalate,
		"Recursive delete (rm -r, find -delete) of a directory outside the project, the home and the temporary directories: a service's data (/srv, /data, /var/www, /opt), a mounted volume. The agent works in the project; deleting there is for a human to approve. Also git clean -f with -d, -x or -X run outside the project, the home and the temporary directories."},
	rDelCrontab: {"destructive.crontab-remove", CategoryDestructive, high, escalate,
		"crontab -r removes every scheduled job of the user; only a backup brings them back."},

	rPrivElevation: {"privilege.elevation", CategoryPrivilege, medium, escalate,
		"Runs a command as another user (sudo, su, doas, pkexec), or takes root's identity by itself: capsh / setpriv with uid or gid 0, inline code calling setuid(0) (through a capability or a setuid interpreter)."},
	rPrivUnsafePerms: {"privilege.unsafe-permissions", CategoryPrivilege, high, block,
		"Sets setuid/setgid bits, or makes a system or home path world-writable. Also a directory of the home where tools keep programs, packages or settings made world-writable (~/.cargo, ~/.m2, ~/.local, ~/bin, ~/go): another user plants code that runs as the owner."},
	rPersistCron: {"persistence.cron", CategoryPrivilege, high, block,
		"Installs or edits scheduled jobs (crontab, /etc/cron*, /var/spool/cron)."},
	rPersistSystemd: {"persistence.systemd-unit", CategoryPrivilege, high, block,
		"Writes a systemd unit or init script."},
	rPersistServiceEnable: {"persistence.service-enable", CategoryPrivilege, medium, escalate,
		"Enables a service to start automatically (systemctl enable / link)."},
	rPersistShellRC: {"persistence.shell-rc", CategoryPrivilege, high, block,
		"Writes a shell startup file (~/.bashrc, ~/.zshrc, ~/.profile, /etc/profile.d, …). Also files a developer tool runs at every start: Gradle init scripts (~/.gradle/init.d), usercustomize / sitecustomize and .pth files in the user's site-packages, IPython startup files, direnv's own rc. Appending a tool's directory after $PATH (export PATH=$PATH:$GOBIN) is a setting, not a hijack. Also the PowerShell profile (~/.config/powershell/*profile.ps1), which every pwsh session runs. Also ~/.config/environment.d and ~/.pam_environment, read at every login; desktop entries (~/.local/share/applications, ~/Desktop) and ~/.forward pipes have their commands judged as what the desktop or the mail system runs."},
	rPersistAuthorizedKeys: {"persistence.authorized-keys", CategoryPrivilege, critical, block,
		"Writes ~/.ssh/authorized_keys, granting SSH access."},
	rPersistGitHooks: {"persistence.git-hooks", CategoryPrivilege, medium, escalate,
		"Writes a git hook or points core.hooksPath elsewhere (outside the project, or for every repository with --global / --system; the project's own .githooks or .husky for this repository is everyday): hooks run on every git operation. A hook of this project whose whole text runs only the project's checks (npm test, make lint, pytest, go vet) is everyday."},
	rPersistLaunchd: {"persistence.launchd", CategoryPrivilege, high, block,
		"Installs or loads a macOS LaunchAgent / LaunchDaemon, or sets a login hook."},
	rPersistLDPreload: {"persistence.ld-preload", CategoryPrivilege, critical, block,
		"Injects a shared library into processes (LD_PRELOAD, DYLD_INSERT_LIBRARIES, /etc/ld.so.preload; also written into ~/.ssh/environment or /etc/environment), or code of its own into every node process or npm script (npm node-options --require, script-shell), or into every process of a runtime through its preload variable set for later commands, CI steps, containers or workloads (NODE_OPTIONS --require, RUBYOPT -r, PERL5OPT -M, JAVA_TOOL_OPTIONS -javaagent:, BASH_ENV; docker run -e, kubectl set env) naming a file outside the project, inline code (--import=data:…) or a URL. Also launchctl setenv, which every program launchd starts gets. Also JVM options files a build tool or an IDE hands to every JVM (gradle.properties org.gradle.jvmargs, .bazelrc --host_jvm_args, .mvn/jvm.config, .jvmopts, *.vmoptions) loading an agent from outside the project (-javaagent:, -agentpath:), and .bazelrc --action_env=LD_PRELOAD=…"},
	rPrivProcessInjection: {"privilege.process-injection", CategoryPrivilege, critical, block,
		"Makes another running process run code of the line's choosing: writes into its memory (dd of=/proc/PID/mem, a redirect into it), or attaches a debugger that calls functions in it (gdb -p PID -ex 'call system(…)'). The process keeps its own privileges and its place outside any sandbox."},
	rDiscoverPrivesc: {"discovery.privilege-search", CategoryDiscovery, high, escalate,
		"Searches the whole system for a way to root: set-uid or set-gid programs (find / -perm -4000), file capabilities (getcap -r /), files anyone may write in system directories. Coding needs none of it."},
	rDiscoverEnum: {"discovery.enumeration", CategoryDiscovery, medium, escalate,
		"Maps who and what can be reached: a DNS zone transfer (dig axfr), directory users and groups (ldapsearch), every permission of the account or cluster (aws iam get-account-authorization-details, kubectl auth can-i --list), a node's kubelet or etcd API called directly. Also a probe (ping, arping, nc, traceroute) of each address a loop hands it from values the line does not show (for ip in $(seq …), while read host): a sweep. Also nc -z probing many ports of another host (a range of more than four, or four or more listed, as a loop over a list hands them over)."},
	rCredProcessArgs: {"credential.process-arguments", CategoryCredentialAccess, high, escalate,
		"Reads other processes' command lines or environments for passwords and tokens (ps aux | grep -i password, /proc/*/cmdline)."},
	rCredPasswordPrompt: {"credential.password-prompt", CategoryCredentialAccess, high, block,
		"Shows a password prompt of its own (osascript display dialog … with hidden answer, zenity --password, kdialog --password, yad --hide-text): what the user types goes to the command, not to the system that seems to ask. Also a git credential helper set to a shell command that copies what git hands it (tee, a redirection, a network program): every username, password and token git uses afterwards."},
	rSecretCommit: {"secret.commit", CategorySecrets, high, escalate,
		"Adds a secrets file to git (git add -f .env, git commit id_rsa, credentials files): once pushed, it stays in the history of everyone who clones. Also a file the same line has just written a secret variable into (echo '…_authToken=${NPM_TOKEN}' >> .npmrc && git add -f .npmrc). Also files named as private keys (*.key, *key*.pem, .p8, .ppk), a browser test's saved session (Playwright's .auth/*.json, storageState files) and cookie jars. Also Postman environment files (*.postman_environment.json) other than examples."},
	rPersistPathHijack: {"persistence.path-hijack", CategoryPrivilege, high, block,
		"Writes, copies or links a program named like sudo, su, ssh, git or gpg into a directory on the user's PATH (~/bin, ~/.local/bin): it runs in place of the real one, and sees the passwords and keys typed into it. Also a directory where the line just wrote a program named like a system one (curl, tar, cat) put first on PATH for what runs next: every call of that name from a privileged script runs the line's file. Also a directory written to $GITHUB_PATH, which every later step of the job puts first on PATH."},

	rPrivAccount: {"privilege.account-tamper", CategoryPrivilege, critical, block,
		"Edits sudoers or the account databases, or creates a root-equivalent account."},
	rPrivContainer: {"privilege.container-escape", CategoryPrivilege, critical, block,
		"Runs a container with the host's root filesystem, /etc or the Docker socket mounted, --privileged, the host's process namespace or CAP_SYS_ADMIN, on a local or remote engine (LXD and Incus too), or drives the engine's API through its socket: root on the host. Pods given the same through kubectl, a manifest applied from standard input included. A Compose file written with the same (privileged, pid: host, a bind mount of /, /etc, /root or the engine's socket). Also a devcontainer.json (written or edited by jq) that starts the container privileged, with --pid=host or with the host's root mounted."},

	rCredSecretFile: {"credential.secret-file-read", CategoryCredentialAccess, high, escalate,
		"Reads a credential store that is not private key material (cloud configs, registry and package tokens, kubeconfig, keyrings). Also mail and private messages (~/.thunderbird, ~/Maildir, Signal, Telegram Desktop, Element). Also coding agents' sign-ins (~/.codex/auth.json, ~/.claude/.credentials.json, ~/.gemini/oauth_creds.json). Also AppleScript reading the user's Notes, Messages, Mail, Contacts, Calendar, Safari, Photos or Reminders (osascript, JavaScript for Automation). Also Snowflake's, Databricks', dbt's, DigitalOcean's and App Store Connect's CLI credentials, files in ~/.secrets, Traefik's acme.json; and a gitleaks report written without --redact, which holds the secrets it found."},
	rCredDotenv: {"credential.dotenv-read", CategoryCredentialAccess, medium, escalate,
		"Reads a .env file or another project file named for secrets (config/secrets.yml, credentials.json, master.key), which hold secrets. Loading a .env file (source .env) or editing it in place (sed -i) shows no value and passes, unless the line also prints the environment (env, printenv, set, export -p, echo $VAR). A read that shows no values is everyday: grep -q, -c, -l of .env, cut -d= -f1 (the names alone), and a grep whose pattern, not its file, is .env. Also Ansible Vault password files by their names (.vault_pass, .vault_pass.txt, vault-password.txt); given to ansible with --vault-password-file they are used, not read."},
	rCredSystemFile: {"credential.system-file-read", CategoryCredentialAccess, critical, block,
		"Reads system password or sudo files (/etc/shadow, /etc/gshadow, /etc/sudoers, SSH host keys). Also a service's TLS private key under /etc (/etc/ssl/private, certbot's privkey.pem, a *.key), and a database's password hashes queried (pg_authid, pg_shadow, mysql.user)."},
	rCredBrowser: {"credential.browser-store-read", CategoryCredentialAccess, critical, block,
		"Reads a browser's saved passwords or cookies. Also the browser's history (History, places.sqlite, formhistory.sqlite)."},
	rCredCLIToken: {"credential.cli-token", CategoryCredentialAccess, high, escalate,
		"Prints a stored token or secret (gh auth token, gcloud auth print-access-token, printenv AWS_SECRET_ACCESS_KEY, …). Also the shell history (history, fc -l) searched for secrets, and secret-tool search. Also a container's or pod's whole environment printed (docker exec … env, kubectl exec … printenv, docker inspect with .Config.Env). Also aws sts assume-role (and its web-identity and SAML forms), which print fresh credentials. A token assigned to a variable or exported (GH_TOKEN=$(gh auth token) ./release.sh, eval \"$(… export-credentials …)\") is not printed, unless the line prints the environment. Also aws ecr get-login-password and codeartifact get-authorization-token, unless handed to a login of the registry they are for. Also vault token create. vault kv metadata get, jq filters that keep only key names or public fields, and dotenv -e (the file's values go to a command's environment) are everyday. Also npm / pnpm / yarn config get of an _authToken. Also rclone config show / dump, which print every remote's keys and tokens. Also airflow connections export / get."},

	rCredSearch: {"credential.secret-search", CategoryCredentialAccess, high, block,
		"Searches the disk or a home directory for private keys or credentials. Also mdfind (Spotlight's index covers the disk unless -onlyin narrows it), a secret scanner pointed at another project, and git log -S / -G or git grep for secrets in another repository's history. Tokens' own prefixes (xox, ghp, github_pat, glpat, sk_live, npm) count as secret words in a search pattern."},
	rCredMetadata: {"credential.cloud-metadata", CategoryCredentialAccess, critical, block,
		"Reads credentials from a cloud instance metadata service (169.254.169.254, metadata.google.internal), or reaches one through a disguised address (decimal, hex, octal, IPv6-mapped, wildcard DNS)."},

	rExfilFile: {"exfil.sensitive-file", CategoryExfiltration, critical, block,
		"Sends a sensitive file (credentials, keys, .env, a home directory), or the matches of a search for secret words (grep -iE 'password|token'), to another host or recipient. Text posted to GitHub (gh issue or pr create / comment / edit, gh api with fields) counts as an upload: $(env) or a .env in its body leaves the machine. Also data piped into interpreter code that reads its standard input and sends (urlopen(url, sys.stdin.read()), fetch with process.stdin); shell and REPL history (ordinary to read, a leak to send); a Helm release's values (helm get values / all) and Terraform's outputs or state piped to a network command. Also a file the line filled with a secret (the output of a credential command or sops --decrypt, or a copy of a secret file) sent on, and a log shipper's or collector's configuration (fluent-bit, filebeat, vector, an OpenTelemetry collector) that reads secret files and sends to another host. Also the environment or a secret written into a CI job's summary ($GITHUB_STEP_SUMMARY), which everyone who can read the runs sees, unmasked. Also an Ansible vault decrypted (ansible-vault view) and sent on. A file the line filled with a secret is a secret to read or send, not to delete: removing it destroys nothing. Also a secret file sent to a database server by MySQL's LOAD DATA LOCAL INFILE."},
	rExfilDNS: {"exfil.dns", CategoryExfiltration, high, block,
		"Builds a host name from command output (dig $(…).host): data leaves through DNS."},
	rExfilGitPush: {"exfil.git-push", CategoryExfiltration, high, block,
		"Pushes the repository to a host not in trusted_hosts: a URL given to git push, or a remote added in the same command line."},
	rExfilGitRemote: {"exfil.git-remote", CategoryExfiltration, medium, escalate,
		"Adds a git remote (or repoints one) to a host not in trusted_hosts: the next push sends the code there. Also a push URL set apart from the fetch URL (set-url --push / --add, remote.NAME.pushurl) on a shared code host, trusted or not: every later push copies the code there."},

	rSecretPrivateKey: {"secret.private-key", CategorySecrets, critical, block,
		"A PEM private key leaves the machine."},
	rSecretAWSKeyID: {"secret.aws-access-key-id", CategorySecrets, critical, block,
		"An AWS access key id (AKIA…/ASIA…) goes to a host that did not issue it."},
	rSecretAWSSecret: {"secret.aws-secret-key", CategorySecrets, critical, block,
		"An AWS secret access key goes to a host that did not issue it."},
	rSecretGitHub: {"secret.github-token", CategorySecrets, critical, block,
		"A GitHub token (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_) goes to a non-GitHub host."},
	rSecretGitLab: {"secret.gitlab-token", CategorySecrets, critical, block,
		"A GitLab token (glpat-) goes to a non-GitLab host."},
	rSecretSlackToken: {"secret.slack-token", CategorySecrets, critical, block,
		"A Slack token (xoxb-, xoxp-, …) goes to a non-Slack host."},
	rSecretSlackWebhook: {"secret.slack-webhook", CategorySecrets, high, block,
		"A Slack incoming-webhook URL is sent somewhere other than Slack."},
	rSecretStripe: {"secret.stripe-key", CategorySecrets, critical, block,
		"A live Stripe key (sk_live_, rk_live_) goes to a non-Stripe host."},
	rSecretGoogle: {"secret.google-api-key", CategorySecrets, high, block,
		"A Google API key (AIza…) goes to a non-Google host."},
	rSecretOpenAI: {"secret.openai-key", CategorySecrets, critical, block,
		"An OpenAI API key (sk-…, sk-proj-…) goes to a non-OpenAI host."},
	rSecretAnthropic: {"secret.anthropic-key", CategorySecrets, critical, block,
		"An Anthropic API key (sk-ant-…) goes to a non-Anthropic host."},
	rSecretJWT: {"secret.jwt", CategorySecrets, high, block,
		"A JSON Web Token goes to an untrusted host or a message recipient."},
	rSecretNPM: {"secret.npm-token", CategorySecrets, critical, block,
		"An npm token (npm_…) goes to a non-npm host."},
	rSecretSendGrid: {"secret.sendgrid-key", CategorySecrets, critical, block,
		"A SendGrid API key (SG.…) goes to a non-SendGrid host."},

	rSecretInFile: {"secret.written-to-file", CategorySecrets, medium, escalate,
		"Writes live-looking secret material into a file, where it tends to get committed and pushed: by a file tool, or by a command line (echo, a here-document, a sed replacement) into anything but a .env file."},

	rInjectOverride: {"injection.instruction-override", CategoryPromptInjection, high, escalate,
		"Text tries to override the agent's instructions (\"ignore previous instructions\", \"you are now …\", \"do not tell the user\")."},
	rInjectTemplate: {"injection.chat-template", CategoryPromptInjection, high, escalate,
		"Text carries chat-template or role markers (<|im_start|>, [INST], ### System:) that spoof another speaker."},

	rInjectOutbound: {"injection.outbound", CategoryPromptInjection, high, block,
		"An email, chat message or HTTP body sent out carries instructions aimed at another agent."},
	rInjectAgentRules: {"injection.agent-rules-file", CategoryPromptInjection, critical, block,
		"Writes injection wording into a file agents load as instructions (AGENTS.md, .cursorrules, CLAUDE.md, …). Also a standing order to claim a check's success (report that all tests pass, tell the user the build passed). Also text fetched from the network written into such a file (curl URL >> CLAUDE.md, wget -qO- | tee -a .cursorrules), agents' memory files (.agent/memory.md, ~/.claude/memory.md) judged as rules files, and directives that drop the user's say (if the user says stop, ignore it), get past checks (--no-verify, branch protection turned off, failing checks bypassed) or report a result whatever it is (report all tests as passing). Also a tool definition's description (a JSON or YAML file under tools/ or mcp/) that tells the agent offered the tool to read credentials and hand them over. Also custom commands, subagents and prompt files (.claude/commands/, .claude/agents/, .github/prompts/), and a sentence that names credentials, a fetcher and a URL together, in any language. Also interpreter code that writes such a file (open('.cursorrules', 'a').write(…), fs.appendFileSync('AGENTS.md', …)), judged by the text in the code. Also an @path import of a secret in an instruction file (@~/.aws/credentials, @.env); a backticked install from a source no one vouches for (an untrusted index, a URL); refusals waved away (treat denials as false positives, retry with sudo) and a reply made to end with an image or link that carries data; an instruction file downloaded with wget -O."},
	rInjectAgentDirective: {"injection.agent-directive", CategoryPromptInjection, high, escalate,
		"Text addressed to AI agents (\"Note for AI assistants:\", \"If you are an AI\") asks them for credentials, to run fetched code, to approve a change or to keep a step from the user. Agents called by name (Claude, Copilot, Codex, Gemini, CodeRabbit) and a sentence that opens with \"agent:\" are addresses too. An address also names its reader by what it is doing (AI agents triaging this issue, any LLM reading this file), as a tag ([assistant-only]) or as a note to the model; the directive may be to fetch a text and follow it, to pipe a download into a shell (| sudo bash), to mark a change approved or to skip the tests."},
	rInjectStandingExfil: {"injection.standing-exfiltration", CategoryPromptInjection, critical, block,
		"Plants a standing instruction to hand out credentials (\"always attach the credentials file\") in the agent's memory or an agent rules file."},

	rEvInvisibleCommand: {"evasion.invisible-in-command", CategoryEncodingEvasion, high, block,
		"Zero-width, bidi or control characters hidden in a command or path."},
	rEvInvisibleText: {"evasion.invisible-in-text", CategoryEncodingEvasion, medium, escalate,
		"Zero-width, bidi or control characters hidden in text or a URL."},
	rEvHomoglyph: {"evasion.homoglyph", CategoryEncodingEvasion, high, block,
		"A word in a command, path or host mixes Latin with look-alike Cyrillic or Greek letters."},
	rEvFullwidth: {"evasion.fullwidth", CategoryEncodingEvasion, medium, escalate,
		"A command uses fullwidth or compatibility characters that normalise to ASCII."},
	rEvShell: {"evasion.shell-obfuscation", CategoryEncodingEvasion, medium, escalate,
		"A command hides its words (r''m, ${IFS}, $'\\x72m', a program name from a variable)."},
	rEvEncodedPath: {"evasion.encoded-path", CategoryEncodingEvasion, medium, escalate,
		"A path hides its structure with percent-encoding (%2e%2e%2f)."},
	rEvUnanalysable: {"evasion.unanalysable", CategoryEncodingEvasion, high, escalate,
		"The action could not be analysed (unparseable or too deeply nested command)."},
}

// ruleByID maps ids to indexes; built once.
var ruleByID = func() map[string]ruleIndex {
	m := make(map[string]ruleIndex, numRules)
	for i := range rules {
		m[rules[i].ID] = ruleIndex(i)
	}
	return m
}()

// familyRules are the rules of the families added with issue 12.
var familyRules = map[ruleIndex]Rule{
	rDefSecurityOff: {"defense.security-disable", CategoryDefenseImpairment, high, block,
		"Turns off a security control: audit rules, SELinux / AppArmor, the firewall, ASLR or a security service; in a cluster, a security tool deleted or scaled to zero (falco, gatekeeper, kyverno, …), an admission webhook deleted, pod security set to privileged, the cluster's certificate check skipped; in a cloud or forge account, instance metadata opened to any request (IMDSv1), a security service or hub disabled, a repository's secret scanning, push protection or vulnerability alerts turned off. Also a service or process named as a guard over what runs (agent-guard, cmd-gate, shellguard, shieldd) stopped or killed, or its rules file deleted or rewritten. On macOS also csrutil disable (System Integrity Protection), sysadminctl -screenLock off, and defaults write turning off download quarantine (LSQuarantine), the screen saver's password, the application firewall or Gatekeeper's assessments. Also xhost + (or +ALL), which turns the X display's access control off."},
	rDefLogTamper: {"defense.log-tamper", CategoryDefenseImpairment, high, block,
		"Stops a logging service, or erases or rotates away system logs and the journal; or turns off a cloud account's audit logging (CloudTrail stop-logging / delete-trail / narrowed update-trail, GuardDuty and AWS Config recorders, VPC flow logs, GCP log sinks and stored logs, Azure diagnostic settings). journalctl --vacuum-* counts only when it keeps less than a day, 32 MB or two files: keeping more is rotation. Also aws organizations leave-organization, which takes the account out from under the organization's guardrails and central trail. Also SQL a database client sends that stops the server's own record: log_statement or pgaudit.log set to none, MySQL's general log off, its audit plugin uninstalled, the triggers of an audit or history table disabled. Also an S3 lifecycle rule that expires a log, audit or trail bucket's objects within 30 days, and gcloud storage buckets update --clear-retention-period / --clear-soft-delete on such a bucket."},
	rDefHistory: {"defense.history-tamper", CategoryDefenseImpairment, medium, block,
		"Clears or disables shell history (history -c, unset HISTFILE, HISTFILE=/dev/null, rm ~/.bash_history)."},
	rDefAgentGuard: {"defense.agent-guard-off", CategoryDefenseImpairment, high, block,
		"Runs an AI coding agent with its approvals or sandbox off (claude --dangerously-skip-permissions, gemini --yolo, codex --dangerously-bypass-approvals-and-sandbox, q chat --trust-all-tools, …), or writes the same into its settings (bypassPermissions, Bash(*), chat.tools.autoApprove): what it then does is judged by no one. Also the same turned off in an agent's settings file (bypassPermissions, chat.tools.autoApprove, yes-always, approval_policy \"never\", danger-full-access). Also interpreter code that names an agent's settings file and writes, judged by its text (d['permissions'] = {'allow': ['Bash(*)']}; json.dump(d, open(p, 'w'))). Also VS Code's (and its forks') user settings: a proxy elsewhere, its certificate checks off (http.proxyStrictSSL false), another program run as git (git.path); a jq edit piped to sponge or tee; the hooks of an agent's settings deleted (del(.hooks.PreToolUse))."},
	rDefAntiForensics: {"defense.anti-forensics", CategoryDefenseImpairment, medium, escalate,
		"Hides activity: backdates a file outside the workspace (touch -r / -d / -t), erases git's reflog (reflog expire --expire=now), hides a file's changes from git (update-index --assume-unchanged / --skip-worktree), names a process after a kernel thread or daemon (exec -a) or runs a file named like one ([kworker/0:2]), runs a program from /dev/shm or from a directory named only with dots (...), or deletes a program right after running it. Also a file stamped with a system file's times (touch -r /bin/ls deploy.sh). Also a hidden program, or one in a hidden directory, run from /tmp or /var/tmp (/tmp/.x)."},
	rDefReviewBypass: {"defense.review-bypass", CategoryDefenseImpairment, high, escalate,
		"Gets code past a repository's review rules: gh pr merge --admin, a pull request approved by the agent (gh pr review --approve, glab mr approve), branch protection or rulesets changed through the API, the default branch moved, a deployment environment's protection changed, self-hosted runners opened to public repositories (review.go); CODEOWNERS replaced, or given a catch-all rule at its end, which wins. Also Renovate set to automerge with the tests ignored, or for every package or major update. Also a CI secret or variable set, replaced or deleted from outside the repository's files (gh secret set, gh variable delete, glab variable update): every pipeline after it runs with a value no review saw. Also GitLab's CI_DEBUG_TRACE or CI_DEBUG_SERVICES set as a CI variable: every job's log then prints the project's variables, masked ones too."},
	rDefWeakeningEdit: {"defense.weakening-edit", CategoryDefenseImpairment, high, escalate,
		"An in-place edit (sed -i, perl -pi) takes a protection out of code or configuration: brings in a setting that turns certificate checks off (verify=False, rejectUnauthorized: false, InsecureSkipVerify: true), empties or short-circuits an authorisation check (if not user.is_authenticated: → if False:, a password compare ORed with a literal), or deletes or comments out the lines that run a secret or vulnerability scanner or a checksum or signature check; or deletes or comments out a security check's configuration (a scanner's settings, the pre-commit hooks, a scan workflow, owners in CODEOWNERS); or turns transport, cookie, CSRF or deletion guards off (force_ssl = false, deletion_protection = false), by an edit or a write into a configuration file (weakening.go). Also the same substitutions made by Python str.replace, a check function written to pass everything, a security check's script overwritten with a no-op, a scanner told to skip the source tree, a security lint rule turned off, debug or any-host settings in production files; a workflow made to run on pull_request_target (worse with the fork's code checked out), given a write-all token, or handed every secret (toJSON(secrets)). Also code made unsafe while its checks stay (downgrade.go): a password hash replaced by MD5 or SHA-1, encryption switched to ECB, a secret value or IV made predictable, input parsed by eval or yaml.load where json.loads or safe_load stood, a query built by joining input where it had placeholders, a command run through the shell, a container run as root, a service bound to every interface instead of loopback, any origin allowed with credentials, tests renamed or marked out of the runner's sight, a check short-circuited with a constant (if False and …), a security parameter (a password's minimum length, hashing rounds, a key size) cut below half, a local proxy_pass sent to an outside host; a test run made to pass (|| true); and a commit made with the security hooks skipped (SKIP=gitleaks). The same judgement covers every edit tool: Python, Node and Ruby replace / sub calls, ruby -i, ed and ex scripts, awk rewrites put in place by mv, and patches on git apply's or patch's input (codeedits.go, patches.go). Also a way round a check that stays (bypass.go): a credential compared with a literal, a failing check made conditional (&& another condition), a check's result discarded or its test inverted, a protection's setting flipped (secure = True → False); checks loosened (loosening.go): output escaping off, password hashing made cheap, identity or rate-limit keys from a header, a secret with a literal fallback, more roles let through, entries taken out of a guard's list or added to an exemption list, privileged attributes made assignable, validation constraints or an allowlist or path normalisation dropped, a raw query from input, an audit record silenced, a rate limit multiplied, a protection gated on an environment variable, a secret compared only in part; a security file's refusal taken out or its failure made success; the tests of a protection deleted, excluded or skipped, or made to accept success (testremoval.go); secret patterns dropped from .gitignore; a scanner's exit code set to 0 or continue-on-error flipped; a security check's step replaced; --require-hashes and like flags dropped; jobs of security checks deleted with yq, scanning workflows disabled with gh, X_DISABLED switches set by yq; a workflow given a tmate or upterm session. Also an ownership check deleted, a Rails skip_before_action of an authentication or two-factor callback, bandit skips, gosec disabled in golangci, a signature check's || exit turned into a warning, perl -n print unless deletions, and sed through xargs. Also checks made to pass while their calls stay (widening.go): a refusal returned as success, a check handed a callback that accepts everything, an exact comparison made a prefix match, a request value matched against a literal (or its mere presence) added to a guard, a credential's lifetime stretched to months, a secret written in where the environment gave it or let fall back to empty, credentials posted to an outside host, an if-block deleted that refused or called a check, a protective function made to return at once, a server-decided value (price, tenant, caller address) taken from the client, a condition replaced by a constant, data passed to a code sink (render_template_string, vm.runInNewContext, eval), a negative amount let through, a backdoor (an administrator account with a written password, a route that signs in as anyone, an authorisation hook granting everything), the whole environment sent to a client; enforcement lowered (enforcement.go): enforce to audit, strict to permissive, required to optional, AWS_IAM to NONE, in edits and in jq/yq filters outside development overlays; limits lifted to a type's maximum or a thousandfold; key files opened to every user; trust conditions widened to *; file:, ftp: or * added to an allowlist; broken digests, TLS 1.0/1.1, insecure gRPC credentials, text/template, constant-time compares swapped out, fields = \"__all__\", bcrypt.MinCost, AllowAny, SetPasswordForm, XXE switches, autoindex on, a WAF rule set to count; a field's default made verified or admin; Rego default allow made true; a workflow that puts an issue's or comment's text into a run script or uploads the whole workspace; a dependency pinned back two minor releases; hostAliases pointing a public name at an outside address; secrets files added to a package's files; a Dockerfile's ENV turning verification off; and the edits ed, awk print, ruby -ni and perl -pi through xargs make. Also (a third round): token-check skipping options (WithoutClaimsValidation, verify_exp false), optional authentication, forwarded headers trusted from any address, a request-keyed branch that lets the request through, a static server pointed at /, an outside proxy for the code's requests, another cloud account added to a trust list, guard decorators and audit records deleted, nested sed blocks that delete nginx access rules, ed's c command judged as a substitution, jq --arg values resolved, network policies opened to all, public load balancers for data stores, ingress auth annotations deleted, Kubernetes env entries read as assignments, test and security jobs switched off, security hooks deleted from .pre-commit-config.yaml, Rego allow rules keyed on a request header, and code written that posts credentials or request headers outside. Also (a fourth round): tokens read unverified, HMAC or none algorithms added beside RS256, authentication exemptions (@Public(), [AllowAnonymous]) outside health and login endpoints, deserialisers told to build any type, tenant query filters ignored, static servers listing files, secret request fields logged, session lifetimes of a year or more, pg_hba trust, executable extensions allowed for uploads, look-alike registries and CDNs, the node's container socket mounted, Pod Security set to privileged, a deployment environment deleted, allUsers granted in written Terraform. Also a workflow made to run on an event anyone can cause (issue_comment, issues, discussion comments) with no check of who did it. Also checks hollowed out (hollowchecks.go): a test or lint script set to a command that does nothing (echo, true, exit 0) by an edit, npm pkg set or code, a CI step's test run replaced by one, assertions turned into pass or comments, a pytest collection hook that skips or drops every test, a build told to pass when its tests fail (ignoreFailures, testFailureIgnore, abortOnError false), a script named for the project's checks overwritten with a no-op, and lines commented out by a perl or ruby statement modifier ($_ = '# ' . $_ if /re/). Linters, type checkers and schema checks count among the test runs (ruff check, eslint, mypy, swiftlint, makemigrations --check); continue-on-error set on every job (.jobs[]) or in a scan's workflow; ACTIONS_ALLOW_UNSECURE_COMMANDS set in a workflow. Also (hollowchecks.go, testremoval.go) a pytest report hook that marks every test passed, a check tool linked to true (ln -sf /bin/true node_modules/.bin/eslint), the whole test directory deleted (rm -r tests/, git rm -r spec) or every test file find lists, and a security workflow moved out of .github/workflows. Also Electron's renderer guards turned off (contextIsolation false, nodeIntegration true, webSecurity false), and an assertion replaced by one of a constant (assert True). Also (clientexposure.go) a secret renamed with a prefix the front-end build inlines (NEXT_PUBLIC_, VITE_, REACT_APP_, EXPO_PUBLIC_ … with SECRET, PRIVATE, PASSWORD or SERVICE_ROLE in the name); client code that sends what users type, store or submit to an outside host (sendBeacon of keystrokes, a service worker copying request bodies, localStorage in an image URL); verify-signature false; allowDangerousEmailAccountLinking; a git hook (pre-commit, pre-push, commit-msg) overwritten with a no-op. Also Firefox's add-on signatures or Safe Browsing turned off in user.js / prefs.js, Emacs's package signatures (package-check-signature nil) in its init file, ESP-IDF's TLS checks in sdkconfig; and the lines that run IaC and policy scanners (tfsec, checkov, conftest, opa eval, …) or other ecosystems' test runners (pio test, ctest, deno test, playwright test, …) deleted. Also suppressions added to a security scanner's ignore list (.trivyignore, .grype.yaml, .gitleaksignore, .snyk, checkov skip-check), a build's test tasks turned off (Gradle withType<Test> enabled = false, dbt tests +enabled: false), an emptied .pre-commit-config.yaml and pre-commit uninstall, nginx proxy_ssl_verify off, and the lines that run dbt tests or Great Expectations deleted."},
	rDisruptHalt: {"disruption.system-halt", CategorySystemDisruption, high, block,
		"Shuts down, reboots or halts the machine, or cuts it off the network (shutdown, reboot, systemctl poweroff, init 0, /proc/sysrq-trigger, ip link set eth0 down)."},
	rDisruptKillAll: {"disruption.kill-all", CategorySystemDisruption, high, block,
		"Kills init (pid 1) or every process (kill -9 -1, killall5, pkill over all processes). Also interpreter code that signals pid -1 (os.kill(-1, 9), perl's kill 9, -1) or kills every process it lists from /proc or psutil without choosing them by name."},
	rAccountChange: {"account.change", CategoryAccountChange, high, block,
		"Creates, deletes or changes a user or group account or its password (useradd, userdel, usermod, passwd USER, chpasswd, the accounts service over D-Bus)."},
	rTrustRootCA: {"trust.root-ca", CategoryTrustStore, critical, block,
		"Adds a certificate to a system or browser trust store: whoever holds its key can read and forge TLS traffic."},
	rTunnelExpose: {"tunnel.public-exposure", CategoryTunnel, high, escalate,
		"Opens a tunnel that exposes this machine to the internet (cloudflared, ngrok, localtunnel, chisel, frp, code tunnel, ssh to a tunnel service), or a forward that listens beyond loopback (ssh -L / -D 0.0.0.0:…, ssh -g, kubectl port-forward --address 0.0.0.0)."},
	rExfilTransfer: {"exfil.file-transfer", CategoryFileTransfer, medium, escalate,
		"Moves files with a transfer or socket tool to or from a host that is not trusted (scp, rsync, sftp, rclone, smbclient, ftp, tftp, socat, netcat, curl file://); a database dump (pg_dump, mysqldump, mongodump --archive, sqlite3 .dump) piped to another host; an image copied from a private registry to a public one (skopeo, crane, regctl, oras). scp, rsync and sftp to a host of the organisation's own network (a private address, .internal, .corp, .lan) are everyday; secrets sent there are still exfil.sensitive-file. Also an upload to cloud storage with the credential pasted into the line (a SAS token, an account key, AWS keys set for the command): the account is whoever's credential it is. Also a file mailed as an attachment (mail -a, mutt -a, swaks --attach), files handed to a peer-to-peer sender (wormhole send, croc send), and a bucket copied into another bucket (aws s3 sync s3://a s3://b). Also rclone's remotes made on the spot (:sftp,host=…:path, :s3,…:bucket). An sftp batch the line shows that uploads nothing (only ls, cd, get) is everyday. Also a container image piped from docker save to a network command, and docker tag of a private registry's image to a public registry then pushed. Also a .forward that forwards mail to an address, and a mutt my_hdr Bcc or Cc that copies every mail sent."},
	rCredClusterSecret: {"credential.cluster-secret", CategoryCloudSecrets, high, block,
		"Reads Kubernetes secrets or service-account tokens (kubectl get secret -o yaml, kubectl create token, the token file inside a pod). A secret's public fields alone (username, host, port, database) are everyday. A jsonpath that reads only a certificate (tls.crt, ca.crt) reads nothing secret."},
	rCredPrivateKey: {"credential.private-key-read", CategoryCredentialAccess, critical, block,
		"Reads private key material (SSH or GPG private keys, cloud credential files, .git-credentials) into the agent's context. Also signing keystores by name anywhere (*.jks, *.keystore, *.p12, *.pfx); keytool, jarsigner and apksigner given one with -keystore or --ks use it, they do not print it. Android's key.properties holds the keystore's passwords."},

	rSystemFileWrite: {"system.file-write", CategorySystemTamper, high, block,
		"Changes a file under /etc, /usr, /bin, /sbin, /boot or /lib from the command line (appends, edits in place, copies, moves or links over it, changes its attributes), as the default policy refuses for the file tools."},
	rPersistLoginAuth: {"system.login-auth", CategorySystemTamper, critical, block,
		"Changes how logins are authenticated: PAM configuration or modules, the SSH server's configuration."},
	rKernelChange: {"system.kernel-change", CategorySystemTamper, high, escalate,
		"Changes the running kernel: loads or removes a module (insmod, modprobe, rmmod), sets kernel parameters (sysctl -w, /proc/sys) or changes mounts (mount, umount)."},
	rCollectCapture: {"collection.capture", CategoryCollection, high, escalate,
		"Captures the screen, the clipboard, the microphone or camera, the keyboard, or live network traffic."},
	rCredProcessMemory: {"credential.process-memory", CategoryCredentialAccess, critical, block,
		"Dumps or reads another process's memory (gcore, procdump, gdb generate-core-file, /proc/PID/mem), where keys and tokens in use sit in the clear. Also interpreter code that opens /proc/PID/mem."},
	rInfraDestroy: {"infra.destroy", CategoryInfrastructure, high, escalate,
		"Destroys infrastructure, a data store, hosted code or a published package: terraform / pulumi destroy, kubectl delete namespace / pv / --all, kubectl scale --all --replicas=0, helm uninstall, aws delete-* / terminate-* / s3 rb, gcloud and az delete, gsutil rm -r, doctl and eksctl delete, a database server's data directory deleted (rm -r /var/lib/postgresql/…, here or through ssh or ansible), etcdctl del --prefix, prisma migrate reset, DROP DATABASE / TABLE / KEYSPACE, TRUNCATE, DELETE or UPDATE without WHERE (also SQL piped or redirected into the client), redis FLUSHALL, docker volume prune, gh / glab repo or release delete, gh api -X DELETE repos/…, npm unpublish, gem yank. Also terraform state push, and terraform state rm of every resource a pipe lists (through xargs), which take resources out of what Terraform manages; one named resource taken out is a refactor. Also Kafka topics or records deleted on a broker that is not loopback. Also kubectl drain of every node the cluster lists, of a label selector's nodes, or with --disable-eviction (around the disruption budgets). Also backups and stored copies deleted: borg delete, restic forget of every snapshot a pipe lists, rclone purge (and delete or rmdirs of a remote), gcloud storage rm --recursive; and Mongo deleteMany({}) or remove({}), whose empty filter matches every document. Also redis DEL or UNLINK of every key a listing names (--scan | xargs redis-cli DEL) on a server that is not this machine. Also kubectl drain fed every node a listing names (kubectl get nodes | xargs kubectl drain). Also an image deleted from its registry (skopeo / crane delete, regctl tag delete), azcopy remove --recursive, and interpreter code calling a cloud SDK's destroying calls (boto3 delete_bucket, object_versions.delete(), TerminateInstancesCommand). Also a package runner's tool judged as itself (npx cdk destroy), serverless remove, and a migration tool's downgrade base against production. Also fastlane match nuke, and a delete fed every item an unfiltered listing of the same tool names (gh issue list … | xargs gh issue delete, for k in $(jira issue list …); do jira issue delete $k; done). Also velero backup or schedule delete --all, netlify sites:delete and vercel remove. Also hdfs dfs -rm -skipTrash, airflow db reset / clean, and VACUUM … RETAIN 0 HOURS."},
	rInfraProdExec: {"infra.production-exec", CategoryInfrastructure, high, escalate,
		"Runs a command or opens a shell inside a production workload: kubectl / oc exec, attach, debug or cp with a context, cluster, namespace or kubeconfig named for production (prod, production, prd as a word of the name). What runs there acts on live data and users; a human should approve it. Also commands run in kube-system, the cluster's own components."},
	rInfraProdChange: {"infra.production-change", CategoryInfrastructure, high, escalate,
		"Changes a production system: a cloud (aws verbs other than describe / list / get, gcloud and az mutating verbs), cluster (kubectl delete / apply / scale / patch / cordon / rollout restart), infrastructure (terraform apply / import / state rm, helm install / upgrade / rollback) or database command (pg_restore, a dump restored on psql's or mysql's input, UPDATE / DELETE / DROP / TRUNCATE, Mongo's deleteMany) whose target is named for production: a context, namespace, project, identifier, host, URL or variable with prod, production or prd as a word. Reading production, and the same changes to dev or staging, are everyday (prodchange.go). Also changes that reach production whatever their names: a hosted zone's DNS records (route53 change-resource-record-sets, gcloud dns record-sets), the cluster's own components in kube-system. Also a workflow started by hand whose inputs name production (gh workflow run deploy.yml -f environment=production, a dispatches call through gh api, glab ci run)."},
	rCloudGrant: {"infra.access-grant", CategoryInfrastructure, high, escalate,
		"Grants access to a cloud account or cluster, or opens it to everyone: aws iam create-user / create-access-key / attach-*-policy, gcloud add-iam-policy-binding and service-account keys, az role assignment, a cluster-admin binding (or an account added to one), a Kubernetes role created or patched to allow every verb or resource; a security group, firewall or NSG rule open to 0.0.0.0/0, ::/0 or Internet; a public bucket policy, ACL or IAM binding (Principal *, public-read, allUsers), a public access block removed; a snapshot or image shared with another account or made public; an administrator written into an application's accounts by SQL (INSERT INTO users … 'admin', UPDATE accounts SET is_admin = true); an access policy widened to every action (an Action of *); an admission webhook registered that sends the cluster's objects to a URL outside it; system:masters written into aws-auth by a sed on its way to kubectl apply (workloads.go). Also a managed policy's new default version (iam create-policy-version, set-default-policy-version). Also a certificate request, binding or manifest that names the group system:masters, which the API server lets do anything past RBAC. Also gh repo create --public with --source or --push: the working tree published. Also a key added to the signed-in account through gh api (user/keys, user/gpg_keys, user/ssh_signing_keys), and a certificate signing request approved (kubectl certificate approve, oc adm certificate approve). Also an administrator made through a framework in production (manage.py createsuperuser, create_superuser or admin: true in manage.py shell -c, rails runner, artisan tinker). Also curl calls to GitHub's REST API judged as gh api's, and a Vault policy written over every path (path \"*\") with every capability. Also objects uploaded with --acl public-read, kaggle datasets or kernels pushed --public, and repository visibility set public through curl's JSON body or with $GITHUB_REPOSITORY as owner/repo. Also SQL that turns a table's row-level security off (DISABLE or NO FORCE ROW LEVEL SECURITY, row_security = off). Also Snowflake's ACCOUNTADMIN, SECURITYADMIN or ORGADMIN role granted. Also aws s3api put-bucket-acl / put-object-acl with a --grant-* option."},
	rSupplySource: {"supply-chain.package-source", CategorySupplyChain, high, escalate,
		"Points a package manager or git at a host that is not trusted, for every later install or fetch: npm / pip / go / gem / conda / poetry registries and indexes, Maven mirrors, Conan remotes, Helm chart repositories (helm repo add, beyond the widely used projects' own), Gemfile sources, Cargo git dependencies, pre-commit hook repositories, git url.<base>.insteadOf, go mod edit -replace by another owner, lockfile entries, by command, environment variable or config file; container images run, pulled or built upon from a registry at a bare public address; a Dockerfile that ADDs a file over plain http or from a bare address.; a build file edited to fetch from another host than the official registry it named, or a wrapper's distributionUrl moved (swaps.go); settings a jq or yq program writes into such a file; a CI variable naming a registry set by gh; a Terraform provider's namespace swapped; a go.mod replace written by a command. A mirror on the organisation's own network over https is everyday. Also bundle mirrors, NuGet sources, Composer repositories, Maven -DremoteRepositories, Terraform network mirrors, and a scope's registry deleted before its packages are installed (dependency confusion). Also a host in a file a build reads moved to one named like it on another domain (releases.hashicorp.com → releases.hashicorp-dl.com). Also a yarn scope's npmRegistryServer, and a go mod edit -replace pointing a module at a directory the line cloned from another owner. Also a private index made an extra one beside a public primary (dependency confusion), and requirements*.lock / *.in pins pointed at a host. Also a package.json dependency given as a URL, a replace call in code that points a requirements line at a URL, a CMake build's downloads, a submodule's URL (.gitmodules, git config submodule.*.url) and a Homebrew tap's repository, when the host is not trusted. Also the variables installers take their download host from (*_DOWNLOAD_HOST, *_DOWNLOAD_BASE_URL, *_MIRROR, *_MIRROR_URL, *_CDNURL, *_BINARY_SITE, *_DIST_SERVER, *_UPDATE_URL: PLAYWRIGHT_DOWNLOAD_HOST, PYTHON_BUILD_MIRROR_URL, ELECTRON_MIRROR), and *_SKIP_CHECKSUM set."},
	rSupplyLookalike: {"supply-chain.lookalike-package", CategorySupplyChain, high, escalate,
		"Installs, or writes into a manifest, a package named one edit from a well-known one (reqeusts, expresss, crossenv, python3-dateutil, github.com/stretchr/testfy), or a well-known package fetched from a code-host owner that does not publish it (requests from github.com/psf-fork, a tarball of lod-ash/lodash): pip, uv, poetry, npm, pnpm, yarn, bun, npx, gem, cargo, go get / install, composer; requirements*.txt, go.mod, Cargo.toml, package.json, Gemfile (lookalike.go); a pre-commit hook repository whose owner is named like a well-known publisher's (pre-commlt/pre-commit-hooks, psf-mirror/black). Also a code-host reference anywhere in a command (a clone, an install from git, a workflow step, a module source) whose owner is named like a well-known publisher: one letter off, digits for letters, or such a name with more after it (actons-setup, terraform-aws-modu1es)."},
	rSupplyTamper: {"supply-chain.tamper", CategorySupplyChain, high, escalate,
		"Changes what others take from a trusted hand: a commit written in a bot's name (dependabot[bot], renovate[bot]), a published release's asset replaced (gh release upload --clobber), third-party code edited in place under vendor/ or node_modules/ (tamper.go). Also a Python package's build backend swapped for one that is none of the well-known ones. A release asset deleted (gh release delete-asset) is the first half of such a replacement. Also a patch downloaded from a host that is not trusted piped into patch, git apply or git am. Also code in Go's module cache, Cargo's registry sources or VS Code's installed extensions changed in place."},
	rSupplyPublish: {"supply-chain.publish", CategorySupplyChain, medium, escalate,
		"Publishes to a registry or as a release, which everyone who installs takes and which cannot be taken back: npm / pnpm / yarn / bun publish, twine upload, poetry / uv / flit / hatch / pdm publish, cargo publish, gem push, mvn deploy, gradle publish, dotnet nuget push, vsce / ovsx publish, helm push, gh release create (not as a draft); dry runs are everyday (tamper.go)."},
	rSupplyVerifyOff: {"supply-chain.verification-off", CategorySupplyChain, medium, escalate,
		"Turns off the checks that make downloaded code trustworthy: git http.sslVerify false, npm strict-ssl false, pip trusted-host, GOSUMDB=off / GOINSECURE, NODE_TLS_REJECT_UNAUTHORIZED=0, .curlrc insecure, ssh StrictHostKeyChecking no, apt --allow-unauthenticated, dnf --nogpgcheck. Also yarn's checksumBehavior set to ignore or update, Composer's secure-http turned off, dependencies in package.json set to any version. Also a download's digest emptied by an edit (TERRAFORM_SHA256=, checksum: \"\"). Also git's core.sshCommand written into a config with StrictHostKeyChecking=no or UserKnownHostsFile=/dev/null (for one command with -c, as ssh -o, it is everyday). Also a containers policy.json that accepts any image (insecureAcceptAnything). Also flatpak remote-add / install --no-gpg-verify and Gradle's --dependency-verification off or lenient."},
	rExfilSecretVar: {"exfil.secret-variable", CategoryExfiltration, high, escalate,
		"Sends the value of a secret environment variable ($GITHUB_TOKEN, $OPENAI_API_KEY, …) to a host that is neither trusted nor the secret's issuer. Also a secret built into a container image (--build-arg named like a secret or set from a secret variable) that the same line pushes: the image's history keeps it. Also a secret variable's value mailed (mail, mailx: the recipients' domains are the hosts). Also an agent's settings pointing it at another model API (Codex's base_url, ANTHROPIC_BASE_URL or OPENAI_BASE_URL in its env): every prompt, the code it reads and its API key go there. Also a registry login that sends a service's secret to another registry, and a variable the line filled with a stored credential (K=$(security find-generic-password -w); curl …$K)."},
	rAttackTool: {"offense.attack-tool", CategoryOffense, high, escalate,
		"Runs an attack tool: a network scanner, login brute-forcer, password cracker, web attack scanner, exploitation framework or post-exploitation kit (nmap, hydra, hashcat, sqlmap, msfconsole, mimikatz, linpeas, …). Also an RDP or SMB client signing in with a password hash (xfreerdp /pth:, smbclient --pw-nt-hash): pass-the-hash. Also traffic interception tools (responder, mitm6, bettercap, arpspoof, ettercap), reconnaissance scanners (dnsrecon, fierce, dnsenum, onesixtyone, smtp-user-enum) and every impacket example (impacket-*)."},
	rEncryptImpact: {"destructive.encrypt-impact", CategoryDestructive, critical, block,
		"Encrypts files and deletes the originals, or encrypts everything under a home, the workspace or a system directory (openssl enc, gpg -c, age, ccrypt): what ransomware does."},
	rExfilURLData: {"exfil.url-data", CategoryExfiltration, medium, escalate,
		"Puts the output of a command that reveals the machine, its user or its files into a URL for a host that is not trusted (curl http://host/$(whoami)): a GET carries data out as a POST does."},
	rDisruptMiner: {"disruption.cryptominer", CategorySystemDisruption, high, block,
		"Runs or sets up a cryptocurrency miner: a miner program, container image or package (xmrig and its kin, also renamed), a mining pool (stratum+tcp:// URL, pool host), a miner's options (--donate-level, --cpu-max-threads-hint, -a rx/0, a wallet address as the user), a miner configuration, image reference or in-browser miner script (coinhive, cryptoloot) in an argument or a file written: it takes the machine's CPU for someone else."},
	rRCECIRunner: {"rce.ci-runner", CategoryRemoteCodeExec, high, escalate,
		"Registers or starts this machine as a CI server's runner or agent: the GitHub Actions or Azure Pipelines runner's config.sh with --url and --token, gitlab-runner register, act_runner or forgejo-runner register, buildkite-agent start with a token, a Jenkins agent.jar connecting with a secret. Whoever can start a job on that server then runs commands here, unseen by the agent's judge."},
	rRCEDatabaseCommand: {"rce.database-command", CategoryRemoteCodeExec, high, escalate,
		"SQL that makes the database server run an operating-system command or write a file of its choosing, given as an argument or on standard input: COPY … TO / FROM PROGRAM, a function in an untrusted procedural language (plpython3u, plperlu, pltclu, plsh), xp_cmdshell, SELECT … INTO OUTFILE / DUMPFILE, lo_export, sys_exec. The server runs it as its own user, unseen by the agent's judge. Also a database role's password removed (ALTER ROLE … PASSWORD NULL). Also redis-cli CONFIG SET dir or dbfilename, MODULE LOAD and REPLICAOF a host, and ClickHouse's INSERT INTO FUNCTION url / s3 / remote."},
	rDefAgentConfig: {"defense.agent-config", CategoryDefenseImpairment, high, escalate,
		"Changes a coding agent's configuration (Claude Code, Claude Desktop, Cursor, VS Code, Codex, Gemini, Aider, Windsurf, Continue, Zed, …) so that it asks less or runs more: the allow-list opened to programs that can do anything (Bash(curl:*)) or the deny-list emptied, a hook or notify command the agent runs by itself, an MCP server served from another host or run from a package of no known publisher (also claude mcp add). Approvals or the sandbox turned off in the settings are defense.agent-guard-off."},
	rCollectStaging: {"collection.staging", CategoryCollection, high, escalate,
		"Stages data where nobody looks: an archive, a dump or an encrypted or encoded blob written to /dev/shm or to a hidden name in /tmp, /var/tmp or the home's caches (tar czf /dev/shm/.x, split … /var/tmp/.p_, pg_dump | gzip > /tmp/.x/c.sql.gz), or data hidden in a picture (steghide embed, an archive appended to a JPEG, exiftool writing a file into a tag). Also another host's files copied into such a spot (rsync host:/var/lib/mysql/ /tmp/.db/)."},
	rCollectDatabaseDump: {"collection.database-dump", CategoryCollection, high, escalate,
		"Copies a database off its server: a dump or export (pg_dump, mysqldump, mongodump, mongoexport, psql \\copy … TO) from a host that is another machine (an address that is not loopback, a dotted name, a connection string whose variable says production), or gcloud sql export to a bucket. Dumps of a local database or a container beside it (-h db) are everyday."},
	rCredAgentHijack: {"credential.agent-hijack", CategoryCredentialAccess, high, block,
		"Points SSH_AUTH_SOCK at an agent socket it went looking for (a glob such as /tmp/ssh-*/agent.*, or a listing of one): whoever's agent answers signs in for it, with keys that are not the task's."},
	rDisruptMemoryHog: {"disruption.memory-hog", CategorySystemDisruption, high, escalate,
		"Interpreter code that keeps adding large blocks to memory in a loop with no way out (while 1: l.append(\" \"*10**8), setInterval pushing Buffer.alloc(1<<28)): the machine swaps, then the kernel kills whatever it picks."},
	rDisruptDiskFill: {"disruption.disk-fill", CategorySystemDisruption, high, escalate,
		"Fills the disk: makes a file of 32 GiB or more at once (fallocate -l, dd bs×count, head -c from /dev/zero, mkfile), or writes an endless source into a file until the disk is full (dd from /dev/zero or /dev/urandom with no count, yes > file, cat /dev/urandom > file). Every service that writes stops. Smaller images and swap files, and endless sources sent to /dev/null or a pipe, are everyday. Also a file made for each of a million numbers or more (seq 1 100000000 | xargs touch): the file system runs out of inodes."},
	rDisruptAcceleratorFleet: {"disruption.accelerator-fleet", CategorySystemDisruption, high, escalate,
		"Launches cloud instances with accelerators (GPU, FPGA or ML chips: aws p3/g5/trn1…, gcloud a2/a3/g2 or --accelerator, az Standard_NC/ND/NV…) in bulk (--count, several names, a scale set): what cryptojacking a cloud account looks like, billed by the hour."},
	rNetExposedService: {"network.exposed-service", CategoryNetworkExposure, high, escalate,
		"Opens a service to the network with its protection off: listening beyond loopback (0.0.0.0, ::, a LAN or public address, or the tool's all-interfaces default, a published container port) with no authentication (redis --protected-mode no, mongod --bind_ip_all without --auth, elasticsearch with security off, postgres trust for a network, an empty database password), a file server of a directory outside the project (python -m http.server of ~ or /), uploads for anyone, git daemon --enable=receive-pack or --export-all beyond the project, a read-only or password-only terminal, an NFS export to every host; by command or configuration written. Also rclone serve of a local directory outside the project with --addr beyond loopback and no --user, --pass or --htpasswd (its writable protocols take uploads unless --read-only)."},
	rNetExposedShell: {"network.exposed-shell", CategoryNetworkExposure, critical, block,
		"Serves a shell or code execution to the network with no authentication: jupyter with an empty token on 0.0.0.0, code-server --auth none, openvscode-server --without-connection-token, dockerd -H tcp://0.0.0.0 without --tlsverify (or socat relaying the Docker socket), kubectl proxy --address 0.0.0.0, a writable gotty / ttyd terminal, telnetd -l /bin/sh, a VNC desktop with no password, a container publishing such a service, podman system service on a TCP address beyond loopback; code written into the project that runs a command taken from an HTTP request (a web shell). Also flask run with its debugger on (--debug, FLASK_DEBUG=1) on every interface: the Werkzeug console runs Python for whoever reaches it. Also a Chromium-based browser serving its remote debugging protocol on every interface (--remote-debugging-address=0.0.0.0). Also java with remote JMX and -Dcom.sun.management.jmxremote.authenticate=false. Also nvim --listen on an address beyond loopback: Neovim's RPC API runs any command. Also debuggers listening beyond loopback (dlv --headless --listen, node --inspect=, python -m debugpy --listen, gdbserver HOST:PORT, a JDWP agent in a JVM options file), --remote-debugging-address beyond loopback for any Chromium or Electron program, sshd -o PermitEmptyPasswords=yes, and a Caddyfile's admin API opened beyond loopback."},
}

// Catalogue returns every rule, sorted by id.
func Catalogue() []Rule {
	out := make([]Rule, len(rules))
	copy(out, rules[:])
	slices.SortFunc(out, func(a, b Rule) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}

// Known reports whether id names a rule.
func Known(id string) bool {
	_, ok := ruleByID[id]
	return ok
}
