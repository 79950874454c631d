package heuristics

import "strings"

// Encryption for impact: what ransomware does with ordinary tools. A line
// that encrypts a file and then deletes the original (openssl enc -in f
// … && rm f, gpg -c f && shred -u f), or that encrypts every file under a
// home, the workspace or a system directory (find ~ -exec openssl enc …),
// leaves the data readable only to whoever holds the key. Encrypting one
// file to send it, or decrypting, is everyday.

// encryptedInputs returns the files an encryption command names (maybe
// none: find … | xargs gpg -c), and whether v encrypts at all.
func encryptedInputs(v *cmdView) ([]string, bool) {
	switch v.prog {
	case "openssl":
		ops := v.plainOperands()
		// openssl's options are single-dash words: -pbkdf2 is not -d.
		if len(ops) == 0 || containsArg(v.args, "-d") {
			return nil, false
		}
		if c := ops[0]; c != "enc" && !isCipherName(c) {
			return nil, false
		}
		var in []string
		flagValues(v.args, 0, "in", func(p string) { in = append(in, p) })
		for i, a := range v.args { // openssl's options are single-dash words
			if a == "-in" && i+1 < len(v.args) {
				in = append(in, v.args[i+1])
			}
		}
		return in, true
	case "gpg", "gpg2":
		if !hasFlag(v.args, 'c', "symmetric") && !hasFlag(v.args, 'e', "encrypt") && !hasLongFlag(v.args, "encrypt-files") {
			return nil, false
		}
		return operands(v.args, "roRuzas", []string{"--recipient", "--output", "--passphrase", "--passphrase-file", "--local-user",
			"--compress-level", "--cipher-algo", "--homedir", "--pinentry-mode", "--default-recipient", "--hidden-recipient", "--trust-model"}), true
	case "age":
		if hasFlag(v.args, 'd', "decrypt") {
			return nil, false
		}
		return operands(v.args, "roRiJ", []string{"--recipient", "--output", "--recipients-file", "--identity", "--plugin"}), true
	case "ccrypt", "ccencrypt":
		if v.prog == "ccrypt" && (hasShortFlag(v.args, 'd') || hasShortFlag(v.args, 'c') || hasLongFlag(v.args, "decrypt")) {
			return nil, false
		}
		return operands(v.args, "KkH", []string{"--key", "--keyfile", "--suffix"}), true
	}
	return nil, false
}

// isCipherName reports openssl's cipher commands (openssl aes-256-cbc …).
func isCipherName(c string) bool {
	for _, p := range []string{"aes", "des", "bf", "camellia", "chacha", "cast", "rc2", "rc4", "seed", "sm4", "aria", "idea"} {
		if strings.HasPrefix(c, p) {
			return true
		}
	}
	return false
}

// checkEncryptImpact judges the line's encryption commands.
func (s *scan) checkEncryptImpact(cs *cmdScan) {
	if !s.enabled(rEncryptImpact) || cs.fams&famCrypt == 0 {
		return
	}
	var encrypted []string // raw words and resolved paths, in order of the line
	for i := range cs.views {
		v := &cs.views[i]
		if in, ok := encryptedInputs(v); ok {
			ev := v.prog + " " + evJoin(v.args)
			if via := v.c.Via; via == "xargs" || strings.HasPrefix(via, "find ") || v.c.Program == "xargs" {
				// Run once per file that find or xargs hands it.
				if root, why := s.bulkRoot(cs, v); why != "" {
					s.add(rEncryptImpact, v.prog+" encrypts every file under "+why+" ("+root+"): only the key's holder could read them again; refuse it", ev)
					return
				}
			}
			for _, p := range in {
				encrypted = append(encrypted, p, cs.resolveIn(v.c, p).Abs)
			}
			if (v.prog == "ccrypt" || v.prog == "ccencrypt") && hasFlag(v.args, 'r', "recursive") {
				// ccrypt replaces each file with its encrypted form.
				for _, p := range in {
					if why := criticalDir(cs.resolveIn(v.c, p), cs.root, cs.home); why != "" {
						s.add(rEncryptImpact, v.prog+" -r encrypts every file under "+why+" in place: only the key's holder could read them again; refuse it", ev)
						return
					}
				}
			}
			continue
		}
		if len(encrypted) == 0 {
			continue
		}
		switch v.prog {
		case "rm", "shred", "unlink", "srm", "wipe":
		default:
			continue
		}
		for _, op := range v.plainOperands() {
			abs := cs.resolveIn(v.c, op).Abs
			for k := 0; k < len(encrypted); k += 2 {
				if op == encrypted[k] || abs == encrypted[k+1] {
					s.add(rEncryptImpact, "encrypts "+op+" and then deletes the original with "+v.prog+": only the key's holder could read it again; refuse it",
						v.prog+" "+evJoin(v.args))
					return
				}
			}
		}
	}
}

// bulkRoot returns the directory the find that hands v its files walks,
// and why encrypting all of it would be ruinous, or "" when it is not a
// home, the workspace or a system directory. That find is the wrapper
// right before v (find … -exec), or, under xargs, a command piped into
// the xargs before v.
func (s *scan) bulkRoot(cs *cmdScan, v *cmdView) (root, why string) {
	var find *cmdView
	feeding := func(x *cmdView) { // the find piped into xargs x
		for _, k := range cs.before(x) {
			if w := cs.view(k); w != nil && w.c.Program == "find" {
				find = w
			}
		}
	}
	switch {
	case v.c.Program == "xargs": // the view of xargs itself, unwrapped
		feeding(v)
	case v.c.Via == "xargs":
		for i := v.idx - 1; i >= 0; i-- {
			if u := &cs.views[i]; u.c.Program == "xargs" {
				feeding(u)
				break
			}
		}
	case strings.HasPrefix(v.c.Via, "find"):
		for i := v.idx - 1; i >= 0 && find == nil; i-- {
			if u := &cs.views[i]; u.c.Program == "find" {
				find = u
			}
		}
	}
	if find == nil {
		return "", ""
	}
	for _, a := range find.args {
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
			break // the expression starts
		}
		if why := criticalDir(cs.resolveIn(find.c, a), cs.root, cs.home); why != "" {
			return a, why
		}
	}
	return "", ""
}
