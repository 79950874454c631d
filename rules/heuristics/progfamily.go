package heuristics

import "strings"

// family marks the rules that can concern a command, by its program.
// newCmdScan works it out once per command with one switch (cmdView.fam,
// and cmdScan.fams for the line), and the rules below are skipped for the
// commands (or lines) they cannot concern: their code is then neither run
// nor loaded into the instruction cache, which on the varied command
// lines of real traffic costs more than the comparisons themselves.
//
// Only rules that judge nothing but their own programs are here; the
// others (defense, disruption, trust stores, metadata hosts, …) also
// judge what any command writes or contacts and run for every command.
// TestProgFamilyCoversRules checks these lists against the rules' source.
type family uint32

const (
	famAccounts     family = 1 << iota // checkAccounts
	famTunnel                          // checkTunnels (tunnelCommand, ssh -o RemoteForward)
	famTransfer                        // checkTransfer
	famCluster                         // checkClusterSecrets
	famGit                             // checkGitExfil
	famNetcat                          // checkNetcat
	famPkgScript                       // checkPackageScriptCommands
	famPkgInstall                      // checkPackageFromURL (isPackageInstall)
	famSecretSearch                    // checkSecretSearch
	famCLIToken                        // cliTokenCommand
	famDestroy                         // checkDestructive's program switches
	famPriv                            // checkPrivilege's program switch
	famSystem                          // checkSystemTamper's program switch
	famCapture                         // checkCollection's program switch
	famMiner                           // checkMiners
	famCrypt                           // checkEncryptImpact (encryptedInputs)
	famAttack                          // checkAttackTool (attackTool)
	famInfra                           // checkInfrastructure (infraChange)
	famExpose                          // checkExposure (exposure)
	famDeps                            // checkLookalikeInstalls (installedDeps)
	famStaging                         // checkStaging (packer, packedOutputs, hiddenInImage, dumpedServer)
	famDiskFill                        // checkDiskFill
)

// viewFamily returns the families of a view whose prog and kind are set.
func viewFamily(v *cmdView) family {
	f := progFamily(v.prog)
	if attackTool(v.prog) != "" || hashLoginClient(v.prog) {
		f |= famAttack
	}
	if v.kind == "python" {
		f |= famPkgInstall | famExpose | famDeps // python -m pip install, python -m http.server
	}
	if v.kind == "node" {
		f |= famExpose // node --inspect=0.0.0.0
	}
	if f != 0 || len(v.prog) < 4 {
		return f // the prefixes below name none of the programs above
	}
	switch v.prog[0] {
	case 'd':
		if strings.HasPrefix(v.prog, "docker-credential-") {
			f |= famCLIToken
		}
	case 'm':
		if strings.HasPrefix(v.prog, "mkfs") {
			f |= famDestroy // mkfs, mkfs.ext4, …
		}
	}
	return f
}

// progFamily returns the families that judge prog (an effective program
// name, cmdView.prog).
func progFamily(prog string) family {
	switch prog {
	// Staging (staging.go) and the disk filled (diskfill.go).
	case "gpg", "gpg2":
		return famCLIToken | famCrypt | famStaging | famDestroy // gpg --delete-secret-keys
	case "aws", "gcloud":
		return famCLIToken | famInfra | famStaging
	case "age":
		return famCrypt | famStaging
	case "dd":
		return famDestroy | famDiskFill
	case "fallocate", "head", "mkfile", "pv", "seq", "xfs_mkfile", "yes":
		return famDiskFill
	case "redis-cli", "valkey-cli":
		return famInfra | famExpose | famStaging
	case "cockroach", "gsutil", "psql", "sqlite3":
		return famInfra | famStaging
	case "7z", "7za", "base64", "bzip2", "cpio", "exiftool", "gzip", "lz4", "mariadb-dump", "mongodump", "mongoexport",
		"mysqldump", "openstego", "outguess", "pg_dump", "pg_dumpall", "pigz", "rar", "split", "steghide", "stegify",
		"stegosuite", "tar", "xz", "zip", "zstd":
		return famStaging
	case "cat":
		return famStaging | famDiskFill
	case "openssl":
		return famTransfer | famNetcat | famCrypt | famStaging
	case "rclone":
		return famTransfer | famStaging | famInfra | famCLIToken | famExpose // rclone purge remote:, config show, serve
	case "rsync", "scp":
		return famTransfer | famStaging
	case "newusers", "userdel", "deluser", "chsh", "chfn", "vigr", "groupadd", "addgroup", "groupdel",
		"delgroup", "chgpasswd", "chage", "dscl", "sysadminctl", "net", "net.exe", "smbpasswd", "htpasswd",
		"dbus-send", "gdbus", "busctl", "qdbus":
		return famAccounts
	case "useradd", "adduser", "usermod", "groupmod", "gpasswd", "chpasswd", "passwd":
		return famAccounts | famPriv
	case "npx", "bunx", "pnpx":
		return famTunnel | famPkgInstall | famInfra | famExpose | famDeps // npx prisma migrate reset, npx http-server
	case "uvx", "conda", "mamba", "micromamba":
		return famPkgInstall // conda env create -f URL
	case "code", "code-insiders":
		return famTunnel | famPkgInstall | famExpose // code tunnel; code --install-extension x.vsix; code serve-web
	case "codium", "cursor", "windsurf", "code-oss":
		return famPkgInstall
	case "cloudflared", "ngrok", "lt", "localtunnel", "bore", "chisel", "rathole",
		"gost", "frpc", "frps", "inlets", "inletsctl", "telebit", "loclx", "localxpose", "zrok",
		"code-tunnel", "devtunnel", "tailscale", "autossh":
		return famTunnel
	case "ssh":
		return famTunnel | famTransfer // cmd | ssh HOST 'cat > F'
	case "pnpm", "yarn":
		return famTunnel | famPkgScript | famPkgInstall | famExpose | famDeps | famCLIToken
	case "sftp", "smbclient", "ftp", "lftp", "ncftp", "pftp", "tnftp", "ncftpput", "curlftpfs", "wput", "tftp", "atftp",
		"wormhole", "croc", "ffsend", "onionshare-cli", "sendme", "mail",
		"mailx", "mutt", "neomutt", "swaks", "s-nail", "bsd-mailx":
		return famTransfer
	case "skopeo", "crane", "gcrane", "regctl", "oras":
		return famTransfer | famInfra // an image copied out; an image deleted
	case "wget":
		return famTransfer | famCLIToken // the CI job's OIDC token
	case "python", "python3", "php", "ruby", "socat":
		return famTransfer | famExpose | famInfra // manage.py flush, artisan migrate:fresh against production
	case "rails", "rake", "bundle", "kafka-topics", "kafka-topics.sh", "kafka-delete-records", "kafka-delete-records.sh":
		return famInfra
	case "curl":
		return famTransfer | famPriv | famCLIToken // curl --unix-socket docker.sock; the CI job's OIDC token
	case "nc", "ncat", "netcat", "nc.traditional", "nc.openbsd", "pwncat":
		return famTransfer | famNetcat
	case "oc":
		return famCluster | famPriv | famInfra | famTunnel | famExpose
	case "etcdctl":
		return famInfra | famCluster // etcdctl get /registry/secrets
	case "kubectl-view_secret", "k9s":
		return famCluster
	case "kubectl":
		return famCluster | famCLIToken | famPriv | famInfra | famTunnel | famExpose
	case "git":
		return famGit | famSecretSearch | famPriv | famCLIToken | famExpose | famDestroy // git clean
	case "telnet", "mkfifo", "mknod":
		return famNetcat
	case "npm":
		return famPkgScript | famPkgInstall | famInfra | famDeps | famCLIToken // npm config get …_authToken
	case "composer":
		return famPkgScript | famDeps
	case "gem":
		return famPkgInstall | famInfra | famDeps
	case "pip", "pip3", "pipx", "uv", "poetry", "easy_install", "bun", "cnpm":
		return famPkgInstall | famDeps
	case "deno", "dotnet", "nuget":
		return famPkgInstall
	case "pipenv", "go", "pre-commit":
		return famDeps
	case "cargo":
		return famDeps | famPkgInstall // cargo install --git URL
	case "ansible-galaxy", "vagrant":
		return famPkgInstall // ansible-galaxy collection install URL, vagrant box add URL
	case "locate", "mlocate", "plocate", "mdfind", "fd", "grep", "egrep", "rg", "ag", "ack",
		"trufflehog", "gitleaks", "detect-secrets", "noseyparker", "ggshield", "secretlint":
		return famSecretSearch
	case "find":
		return famSecretSearch | famDestroy
	case "ccrypt", "ccencrypt":
		return famCrypt
	case "az":
		return famCLIToken | famInfra
	case "terraform", "tofu":
		return famInfra | famCLIToken // terraform state pull
	case "terragrunt", "pulumi", "cdk", "cdktf", "sst", "helm", "dropdb", "dropuser", "mysql", "mariadb",
		"clickhouse-client", "mongosh", "mongo", "glab", "cqlsh", "doctl", "eksctl", "pg_restore", "prisma", "azcopy",
		"flyway", "liquibase", "borg", "restic", "serverless", "sls", "alembic", "kaggle", "fastlane", "velero", "netlify", "vercel",
		"ansible-pull", "asdf", "grafana-cli", "arduino-cli", "hdfs", "snowsql", "spark-sql", "trino", "bq":
		return famInfra
	case "airflow":
		return famInfra | famCLIToken // airflow db reset, airflow connections export
	case "google-chrome", "google-chrome-stable", "chromium", "chromium-browser", "chrome", "microsoft-edge", "brave-browser":
		return famExpose // --remote-debugging-address=0.0.0.0
	case "java":
		return famExpose // -Dcom.sun.management.jmxremote.authenticate=false
	case "flask":
		return famInfra | famExpose // flask db downgrade base in production; flask run --debug on 0.0.0.0
	case "keydb-cli":
		return famInfra | famExpose // CONFIG SET protected-mode no
	case "gh":
		return famCLIToken | famInfra
	case "vault":
		return famCLIToken | famInfra
	case "printenv", "echo", "printf", "security", "op", "pass", "gopass",
		"heroku", "secret-tool", "bw", "lpass", "keepassxc-cli", "rbw":
		return famCLIToken
	case "ssh-keygen", "rm", "srm", "shred", "wipe", "unlink", "mv", "chown", "chgrp", "wipefs", "blkdiscard", "sgdisk", "mkswap",
		"truncate", "mke2fs", "newfs", "diskutil":
		return famDestroy
	case "chmod", "crontab":
		return famDestroy | famPriv
	case "docker", "podman":
		return famPriv | famInfra | famExpose | famTransfer // docker tag private public && docker push
	case "nerdctl":
		return famPriv | famExpose | famTransfer
	case "at", "batch", "vipw", "visudo", "ctr", "lxc", "incus", "osascript", "systemctl", "update-rc.d",
		"chkconfig", "rc-update", "launchctl", "export", "env", "declare", "typeset", "systemd-run", "nsenter", "defaults":
		return famPriv
	case "chattr", "insmod", "modprobe", "rmmod", "kldload", "kldunload", "kextload", "kextunload", "sysctl", "mount",
		"umount":
		return famSystem
	case "scrot", "gnome-screenshot", "spectacle", "flameshot", "grim", "maim", "screencapture", "xfce4-screenshooter",
		"ksnip", "shutter", "import", "xwd", "xclip", "xsel", "pbpaste", "wl-paste", "termux-clipboard-get", "arecord",
		"parecord", "parec", "pw-record", "rec", "fswebcam", "streamer", "imagesnap", "termux-microphone-record", "ffmpeg",
		"avconv", "logkeys", "showkey", "evtest", "xinput", "tcpdump", "tshark", "dumpcap", "tcpflow", "ngrep", "ettercap",
		"bettercap", "dsniff", "urlsnarf", "arpspoof", "responder", "gcore", "procdump", "mimipenguin", "gdb":
		return famCapture
	case "xmrig", "xmrig-notls", "xmr-stak", "xmr-stak-rx", "xmr-stak-cpu", "cpuminer", "cpuminer-multi", "cpuminer-opt",
		"minerd", "ccminer", "cgminer", "bfgminer", "sgminer", "ethminer", "nbminer", "t-rex", "lolminer", "phoenixminer",
		"gminer", "nanominer", "srbminer", "srbminer-multi", "teamredminer", "wildrig-multi", "xmrigdaemon", "kdevtmpfsi", "kinsing":
		return famMiner
	case "jupyter", "jupyter-lab", "jupyter-notebook", "jupyter-server", "jupyter-nbclassic", "redis-server",
		"valkey-server", "keydb-server", "mongod", "elasticsearch", "opensearch", "dockerd", "code-server", "openvscode-server",
		"gotty", "ttyd",
		"telnetd", "in.telnetd", "utelnetd", "x11vnc", "vncserver", "Xvnc", "tigervncserver", "Xtigervnc", "x0vncserver",
		"x0tigervncserver", "exportfs", "httpd", "caddy", "http-server", "serve", "live-server", "darkhttpd", "miniserve", "dufs", "updog",
		"nvim", "dlv", "gdbserver", "sshd":
		return famExpose
	}
	return 0
}
