package shell

import "strings"

// ScriptRun returns the file a command runs as code, placed in the
// command's directory (PathOf), and its language when the runner says it
// ("shell", "python", "js", "perl", "ruby", "php", "lua", "make", "npm";
// "" when the file's name or #! line must tell): ./run.sh, bash run.sh,
// source env.sh, python3 tool.py, make (the Makefile), npm test
// (package.json), pytest (conftest.py), direnv allow (.envrc), git commit
// (its pre-commit hook). implicit is true for files the tool looks for by
// itself (Makefile, hooks, …), which need not exist.
func ScriptRun(c *Command) (file, lang string, implicit, ok bool) {
	if c.Program == "" {
		return "", "", false, false
	}
	if strings.Contains(c.Name, "/") && !systemProgram(c.Name) {
		return c.PathOf(c.Name), "", false, true
	}
	args := c.Args
	switch c.Program {
	case "source", ".":
		if len(args) > 0 {
			return c.PathOf(args[0]), "shell", false, true
		}
		return "", "", false, false
	case "make", "gmake":
		if f, ok := flagValue(args, "f", "file"); ok {
			return c.PathOf(f), "make", false, f != "-" && f != "/dev/stdin"
		}
		return c.PathOf("Makefile"), "make", true, true
	case "npm", "pnpm", "yarn", "bun":
		if len(args) > 0 {
			switch args[0] {
			case "run", "run-script", "test", "start", "install", "i", "ci", "build", "t", "tst", "restart", "stop", "publish", "pack", "prepare":
				return c.PathOf("package.json"), "npm", true, true
			}
		}
		return "", "", false, false
	case "pytest", "py.test":
		return c.PathOf("conftest.py"), "python", true, true
	case "direnv":
		if len(args) > 0 && (args[0] == "allow" || args[0] == "exec" || args[0] == "reload") {
			return c.PathOf(".envrc"), "shell", true, true
		}
		return "", "", false, false
	case "git":
		if hook := gitHook(args); hook != "" {
			return c.PathOf(".git/hooks/" + hook), "shell", true, true
		}
		return "", "", false, false
	case "pwsh", "powershell", "powershell.exe", "pwsh-preview":
		if f, ok := PowershellScript(args); ok {
			return c.PathOf(f), "powershell", false, true
		}
		return "", "", false, false
	}
	if shells[c.Program] || otherShells[c.Program] {
		if f, ok := shellScriptOperand(args); ok {
			return c.PathOf(f), "shell", false, true
		}
		return "", "", false, false
	}
	lang = interpreterLang(c.Program)
	if lang == "" || lang == "awk" {
		return "", "", false, false
	}
	if _, inline := inlineProgram(lang, plainFields(args)); inline {
		return "", "", false, false
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-m" || strings.HasPrefix(a, "-m") && lang == "python":
			return "", "", false, false // a module, found on the path
		case a == "--":
			if i+1 < len(args) {
				return c.PathOf(args[i+1]), lang, false, true
			}
			return "", "", false, false
		case a == "-W" || a == "-X" || a == "-r" || a == "--require" || a == "-I" || a == "-M":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return c.PathOf(a), lang, false, true
		}
	}
	return "", "", false, false
}

// systemProgram reports a program named by a system path (/usr/bin/env),
// which is not a workspace script.
func systemProgram(name string) bool {
	for _, p := range []string{"/usr/", "/bin/", "/sbin/", "/lib/", "/opt/", "/snap/", "/nix/"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// shellScriptOperand returns the script file a shell runs (bash x.sh),
// or false when it runs -c text or reads stdin.
func shellScriptOperand(args []string) (string, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" || a == "-":
			if a == "--" && i+1 < len(args) {
				return args[i+1], true
			}
			return "", false
		case a == "--rcfile" || a == "--init-file" || a == "-o" || a == "-O" || a == "+O" || a == "+o":
			i++
		case strings.HasPrefix(a, "--"):
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			if a[0] == '-' && strings.ContainsAny(a[1:], "cs") {
				return "", false
			}
		default:
			return a, true
		}
	}
	return "", false
}

// gitHook names the hook a git subcommand runs first.
func gitHook(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-C" || a == "-c" {
			i++
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		switch a {
		case "commit":
			return "pre-commit"
		case "push":
			return "pre-push"
		case "merge", "pull":
			return "post-merge"
		case "checkout", "switch":
			return "post-checkout"
		case "rebase":
			return "pre-rebase"
		case "am":
			return "applypatch-msg"
		}
		return ""
	}
	return ""
}
