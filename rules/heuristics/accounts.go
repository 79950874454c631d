package heuristics

import "strings"

// Account changes: creating, deleting or changing user and group accounts
// and their passwords. Root-equivalent changes (uid 0, the sudo group,
// sudoers) are privilege.account-tamper; every other change to who can
// log in is account.change. Looking accounts up (id, getent, passwd -S,
// chage -l) is ordinary.

// checkAccounts judges one command for account changes.
func (s *scan) checkAccounts(v *cmdView) {
	what := ""
	ops := v.plainOperands()
	// Asked only by the account programs: most commands are none.
	help := func() bool {
		return hasLongFlag(v.args, "help") || hasLongFlag(v.args, "version") || hasShortFlag(v.args, 'h') && len(v.args) == 1
	}
	switch v.prog {
	case "useradd", "adduser", "newusers":
		if !help() && !(v.prog == "useradd" && hasShortFlag(v.args, 'D') && len(v.args) == 1) {
			what = "creates an account"
		}
	case "userdel", "deluser":
		if !help() {
			what = "deletes an account"
		}
	case "usermod", "chsh", "chfn", "vigr":
		if !help() && len(v.args) > 0 {
			what = "changes an account"
		}
	case "groupadd", "addgroup", "groupdel", "delgroup", "groupmod", "gpasswd":
		if !help() && len(v.args) > 0 {
			what = "changes the groups"
		}
	case "chpasswd", "chgpasswd":
		what = "sets account passwords"
	case "passwd":
		// passwd -S / --status reports; everything else sets, locks,
		// deletes or expires a password (of the caller, or another user).
		if !help() && !hasShortFlag(v.args, 'S') && !hasLongFlag(v.args, "status") {
			what = "changes a password"
			if len(ops) > 0 {
				what = "changes the password of " + ops[0]
			}
		}
	case "chage":
		if !help() && !hasShortFlag(v.args, 'l') && !hasLongFlag(v.args, "list") {
			what = "changes password ageing"
		}
	case "dscl":
		for _, a := range v.args {
			switch strings.ToLower(a) {
			case "-create", "-delete", "-passwd", "-append", "-merge", "-change":
				what = "changes a macOS directory account"
			}
		}
	case "sysadminctl":
		if containsArg(v.args, "-addUser") || containsArg(v.args, "-deleteUser") || containsArg(v.args, "-resetPasswordFor") {
			what = "changes a macOS account"
		}
	case "net", "net.exe":
		if len(ops) >= 2 && (strings.EqualFold(ops[0], "user") || strings.EqualFold(ops[0], "localgroup")) &&
			(containsFoldArg(v.args, "/add") || containsFoldArg(v.args, "/delete") || len(ops) >= 3) {
			what = "changes a Windows account"
		}
	case "dbus-send", "gdbus", "busctl", "qdbus":
		// The accounts service over D-Bus: CreateUser, DeleteUser,
		// SetPassword (the polkit races of CVE-2021-3560 go this way).
		if containsArgSub(v.args, "org.freedesktop.Accounts") {
			for _, m := range []string{"CreateUser", "DeleteUser", "SetPassword", "SetAccountType"} {
				if containsArgSub(v.args, m) {
					what = "calls the accounts service (" + m + ")"
				}
			}
		}
	case "smbpasswd", "htpasswd":
		// htpasswd edits a web server's password file, not accounts.
		if v.prog == "smbpasswd" && !help() {
			what = "changes a Samba account"
		}
	}
	if what != "" {
		s.add(rAccountChange, v.prog+" "+what+": accounts decide who can log in to this machine; make this change yourself",
			v.prog+" "+evJoin(v.args))
	}
}

// containsArgSub reports whether an argument contains w.
func containsArgSub(args []string, w string) bool {
	for _, a := range args {
		if strings.Contains(a, w) {
			return true
		}
	}
	return false
}

func containsFoldArg(args []string, w string) bool {
	for _, a := range args {
		if strings.EqualFold(a, w) {
			return true
		}
	}
	return false
}
