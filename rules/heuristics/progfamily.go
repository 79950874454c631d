package heuristics

// family marks the per-command rule families that can concern a program.
// checkFamilies asks once per command, with one switch, and skips the
// families whose programs it is not: their code is then neither run nor
// loaded into the instruction cache, which on the varied command lines
// of real traffic costs more than the comparisons themselves.
//
// Only families that judge nothing but their own programs are here; the
// others (defense, disruption, trust stores, metadata hosts) also judge
// what any command writes or contacts and run for every command.
// TestProgFamilyCoversRules checks these lists against the rules' switches.
type family uint8

const (
	famAccounts family = 1 << iota // checkAccounts
	famTunnel                      // checkTunnels (tunnelCommand, ssh -o RemoteForward)
	famTransfer                    // checkTransfer
	famCluster                     // checkClusterSecrets
)

// progFamily returns the families that judge prog (an effective program
// name, cmdView.prog).
func progFamily(prog string) family {
	switch prog {
	case "useradd", "adduser", "newusers", "userdel", "deluser", "usermod", "chsh", "chfn", "vigr",
		"groupadd", "addgroup", "groupdel", "delgroup", "groupmod", "gpasswd", "chpasswd", "chgpasswd",
		"passwd", "chage", "dscl", "sysadminctl", "net", "net.exe", "smbpasswd", "htpasswd":
		return famAccounts
	case "npx", "bunx", "pnpx", "pnpm", "yarn", "cloudflared", "ngrok", "lt", "localtunnel", "bore",
		"chisel", "rathole", "gost", "frpc", "frps", "inlets", "inletsctl", "telebit", "loclx", "localxpose",
		"zrok", "code", "code-insiders", "code-tunnel", "devtunnel", "tailscale", "ssh", "autossh":
		return famTunnel
	case "scp", "rsync", "sftp", "smbclient", "ftp", "lftp", "ncftp", "pftp", "tnftp", "rclone", "openssl",
		"python", "python3", "php", "ruby", "ncftpput", "curlftpfs", "wput", "tftp", "atftp", "socat",
		"nc", "ncat", "netcat", "nc.traditional", "nc.openbsd", "pwncat", "curl", "wget":
		return famTransfer
	case "kubectl", "oc", "kubectl-view_secret", "k9s":
		return famCluster
	}
	return 0
}
