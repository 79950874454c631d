package heuristics

import (
	"encoding/json"
	"html"
	"slices"
	"strconv"
	"strings"

	"github.com/parapet-dev/parapet/rules/shell"
)

// Files that tools run by themselves, and the commands they hold: a
// Makefile's recipes, package.json's scripts, a CI workflow's steps, git
// configuration that names programs. checkPlantedCode and checkHookWrites
// judge those commands as the code they are.

// hookKind says whether a file is run by build, test or git tooling by
// itself, and as what.
func hookKind(abs string) string {
	base := baseName(abs)
	// Most paths hold no dot directory: the tests for one are skipped.
	dot := strings.Contains(abs, "/.")
	switch {
	case abs == ciEnvPath:
		return "ci-env"
	case base == "Makefile" || base == "makefile" || base == "GNUmakefile" || strings.HasSuffix(base, ".mk"):
		return "make"
	case base == "package.json":
		return "npm"
	case base == "composer.json":
		return "composer"
	case base == "conftest.py" || base == "setup.py" || base == "noxfile.py" || base == "sitecustomize.py" ||
		base == "usercustomize.py" || strings.HasSuffix(base, ".pth"):
		return "python"
	case base == ".envrc" || dot && strings.Contains(abs, "/.git/hooks/") || dot && strings.Contains(abs, "/.husky/") || namedGitHook(abs):
		return "shell"
	case base == "activate" && strings.HasSuffix(parentDir(abs), "/bin"):
		return "venv" // a virtualenv's activate script, sourced by every shell that activates it
	case dot && githubRunner(abs) || base == ".gitlab-ci.yml" || base == ".travis.yml" ||
		base == "azure-pipelines.yml" || base == "bitbucket-pipelines.yml" || strings.HasSuffix(abs, "/.circleci/config.yml") ||
		dot && strings.Contains(abs, "/.buildkite/") && (strings.HasSuffix(base, ".yml") || strings.HasSuffix(base, ".yaml")) ||
		base == ".drone.yml" || base == ".woodpecker.yml" || dot && strings.Contains(abs, "/.woodpecker/") || base == "cloudbuild.yaml" ||
		base == "cloudbuild.yml" || base == "buildspec.yml" || base == "appveyor.yml" || base == ".cirrus.yml" || base == "bitrise.yml" ||
		base == "codemagic.yaml" || dot && strings.Contains(abs, "/.tekton/"):
		return "ci"
	case base == "Taskfile.yml" || base == "Taskfile.yaml" || base == "taskfile.yml" || base == "taskfile.yaml":
		return "taskfile"
	case base == ".goreleaser.yml" || base == ".goreleaser.yaml" || base == "goreleaser.yml" || base == "goreleaser.yaml":
		return "release"
	case (strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml")) && strings.Contains(abs, "/borgmatic"):
		return "backup"
	case base == "schema.prisma" || strings.HasSuffix(base, ".prisma") && strings.Contains(abs, "/prisma/"):
		return "prisma"
	case base == ".pre-commit-config.yaml" || base == "lefthook.yml" || base == ".lefthook.yml":
		return "pre-commit"
	case strings.HasSuffix(abs, "/.git/config") || base == ".gitconfig" || strings.HasSuffix(abs, "/.config/git/config"):
		return "gitconfig"
	case base == "Dockerfile" || base == "Containerfile" || strings.HasPrefix(base, "Dockerfile.") || strings.HasSuffix(base, ".dockerfile"):
		return "docker"
	case strings.HasSuffix(abs, "/.vscode/tasks.json") || strings.HasSuffix(abs, "/.vscode/mcp.json") ||
		dot && strings.Contains(abs, "/.claude/settings") && strings.HasSuffix(base, ".json") || base == ".mcp.json" ||
		strings.HasSuffix(abs, "/.cursor/mcp.json") || base == "devcontainer.json" || base == ".devcontainer.json" ||
		base == "claude_desktop_config.json" || strings.HasSuffix(abs, "/.gemini/settings.json") ||
		// The editor's settings: terminal profiles and their environment.
		strings.HasSuffix(abs, "/.vscode/settings.json") || strings.HasSuffix(abs, "/Code/User/settings.json") ||
		strings.HasSuffix(base, ".code-workspace"):
		return "json-commands"
	case strings.HasSuffix(abs, "/.ssh/config") || abs == "/etc/ssh/ssh_config" || strings.HasPrefix(abs, "/etc/ssh/ssh_config.d/"):
		return "sshconfig"
	case strings.HasSuffix(abs, "/.aws/config") || strings.HasSuffix(abs, "/.aws/credentials"):
		return "awsconfig"
	case strings.HasSuffix(base, ".desktop") && (dot && (strings.Contains(abs, "/.local/share/applications/") || strings.Contains(abs, "/.config/autostart/")) ||
		strings.Contains(abs, "/Desktop/")):
		return "desktop"
	case dot && strings.HasSuffix(abs, "/.forward"):
		return "forward"
	case strings.HasSuffix(base, ".tf"):
		return "terraform"
	case dot && strings.Contains(abs, "/.gradle/init.d/") || strings.HasSuffix(abs, "/.gradle/init.gradle") || strings.HasSuffix(abs, "/.gradle/init.gradle.kts"):
		return "build-script" // run before every Gradle build of the user
	case base == "build.rs" || base == "build.gradle" || base == "build.gradle.kts" || base == "settings.gradle" || base == "settings.gradle.kts" ||
		base == "build.sbt" || base == "CMakeLists.txt" || base == "meson.build" || base == "Rakefile" || base == "Vagrantfile":
		return "build-script"
	case base == "Jenkinsfile" || strings.HasSuffix(base, ".jenkinsfile") || strings.HasPrefix(base, "Jenkinsfile."):
		return "jenkins"
	case base == "tox.ini":
		return "tox"
	case base == "gradle-wrapper.jar" || base == "maven-wrapper.jar" || base == "gradlew" || base == "mvnw":
		// The wrapper every build of the project starts with.
		return "build-wrapper"
	case base == "pom.xml":
		return "maven"
	case base == ".tmux.conf" || base == "tmux.conf" && (strings.HasSuffix(abs, "/tmux/tmux.conf") || abs == "/etc/tmux.conf"):
		return "tmux"
	case base == ".vimrc" || base == ".exrc" || base == ".gvimrc" || base == "_vimrc" || base == ".nvimrc" || strings.HasSuffix(abs, "/nvim/init.vim"):
		return "vim"
	case strings.HasSuffix(base, ".lua") && (strings.Contains(abs, "/nvim/") || base == ".nvim.lua"):
		// Neovim's init.lua and the Lua modules it requires; a project's
		// .nvim.lua, which 'exrc' runs.
		return "nvim"
	case base == ".psqlrc" || base == ".gdbinit" || strings.HasSuffix(abs, "/gdb/gdbinit"):
		return "tool-rc"
	case strings.HasSuffix(base, ".vim") && (dot && strings.Contains(abs, "/.vim/") || strings.Contains(abs, "/nvim/") || strings.Contains(abs, "/vimfiles/")):
		// Plugins, ftplugins and autoload scripts vim sources by itself.
		return "vim"
	}
	return ""
}

// hookCommands reads the commands a file of each kind holds, for the
// kinds that are not code themselves (see judgePlanted).
var hookCommands = map[string]func(string) []string{
	"npm": packageScripts, "composer": composerScripts, "ci": workflowCommands, "taskfile": workflowCommands, "pre-commit": workflowCommands, "gitconfig": gitConfigCommands, "docker": dockerRunCommands,
	"json-commands": jsonCommands, "sshconfig": sshConfigCommands, "vim": vimCommands, "ci-env": ciEnvCommands,
	"build-script": buildScriptCommands, "tmux": tmuxCommands, "terraform": terraformCommands,
	"jenkins": buildScriptCommands, "tox": toxCommands, "maven": mavenCommands, "awsconfig": awsConfigCommands,
	"desktop": desktopCommands, "forward": forwardCommands, "tool-rc": toolRCCommands,
	"release": workflowCommands, "backup": workflowCommands, "prisma": prismaGenerators,
}

// prismaGenerators returns the provider of each generator block of a
// Prisma schema: prisma generate runs one that names no package as a
// command ("node ./gen.js", or any shell line).
func prismaGenerators(schema string) []string {
	var out []string
	in := false
	for line := range strings.SplitSeq(schema, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "generator "):
			in = true
		case strings.HasPrefix(t, "}"):
			in = false
		case in:
			if k, v, ok := strings.Cut(t, "="); ok && strings.TrimSpace(k) == "provider" {
				if v = unquoteYAML(strings.TrimSpace(v)); !strings.HasPrefix(v, "prisma-client") {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// toolRCCommands returns the shell commands an interactive tool's start-up
// file runs: psql's \! lines, gdb's shell and ! lines.
func toolRCCommands(rc string) []string {
	var out []string
	for line := range strings.SplitSeq(rc, "\n") {
		t := strings.TrimSpace(line)
		for _, p := range []string{`\!`, "shell ", "!"} {
			if cmd, ok := strings.CutPrefix(t, p); ok {
				out = append(out, cmd)
				break
			}
		}
	}
	return out
}

// toxCommands returns the commands of a tox.ini: the values of
// commands, commands_pre and commands_post with their continuation
// lines. A piece with no such key (a line an edit inserts under one) is
// read as commands, its other keys and sections apart.
func toxCommands(ini string) []string {
	var out []string
	keyed, in := false, false
	for line := range strings.SplitSeq(ini, "\n") {
		t := strings.TrimSpace(line)
		key, val, isKey := strings.Cut(t, "=")
		isKey = isKey && !strings.ContainsAny(strings.TrimSpace(key), " \t\"'") && key != ""
		switch {
		case t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, ";"):
		case strings.HasPrefix(t, "["):
			in = false
		case isKey && line == strings.TrimLeft(line, " \t"):
			k := strings.TrimSpace(key)
			in = k == "commands" || k == "commands_pre" || k == "commands_post"
			keyed = keyed || in
			if v := strings.TrimSpace(val); in && v != "" {
				out = append(out, v)
			}
		case in:
			out = append(out, t)
		}
	}
	if !keyed {
		for line := range strings.SplitSeq(ini, "\n") {
			t := strings.TrimSpace(line)
			if key, _, isKey := strings.Cut(t, "="); t != "" && !strings.HasPrefix(t, "[") && !strings.HasPrefix(t, "#") &&
				!(isKey && !strings.ContainsAny(strings.TrimSpace(key), " \t")) {
				out = append(out, t)
			}
		}
	}
	for i, c := range out {
		if strings.Contains(c, "{") {
			out[i] = toxSubstitutions(c)
		}
	}
	return out
}

// toxSubstitutions writes tox's substitutions as the shell's:
// {env:HOME} and {env:HOME:default} as $HOME, {homedir} as $HOME.
func toxSubstitutions(c string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(c, '{')
		j := -1
		if i >= 0 {
			j = strings.IndexByte(c[i+1:], '}')
		}
		if j < 0 {
			b.WriteString(c)
			return b.String()
		}
		b.WriteString(c[:i])
		inner := c[i+1 : i+1+j]
		switch name, _, _ := strings.Cut(strings.TrimPrefix(inner, "env:"), ":"); {
		case inner == "homedir":
			b.WriteString("$HOME")
		case strings.HasPrefix(inner, "env:") && name != "":
			b.WriteString("$" + name)
		default:
			b.WriteString(c[i : i+2+j])
		}
		c = c[i+2+j:]
	}
}

// mavenCommands returns the commands a pom.xml runs during the build:
// exec-maven-plugin's <executable> with its <argument>s, and antrun's
// <exec executable="…"> with its <arg value="…"/> / <arg line="…"/>.
func mavenCommands(pom string) []string {
	var out []string
	for _, start := range []string{"<executable>", "<exec executable="} {
		shell.EachIndex(pom, start, func(i int) bool {
			rest := pom[i+len(start):]
			var exe string
			if start == "<executable>" {
				exe, _, _ = strings.Cut(rest, "<")
			} else if len(rest) > 1 {
				exe, _, _ = strings.Cut(rest[1:], rest[:1])
			}
			end := len(rest)
			for _, stop := range []string{"</configuration>", "</exec>", "</execution>"} {
				if j := strings.Index(rest, stop); j >= 0 && j < end {
					end = j
				}
			}
			words := []string{strings.TrimSpace(exe)}
			for _, arg := range xmlValues(rest[:end], "<argument>", "</argument>") {
				words = append(words, shellQuote(arg))
			}
			for _, attr := range []string{`<arg value="`, `<arg line="`} {
				for _, arg := range xmlValues(rest[:end], attr, `"`) {
					if attr == `<arg line="` {
						words = append(words, arg)
					} else {
						words = append(words, shellQuote(arg))
					}
				}
			}
			if words[0] != "" {
				out = append(out, strings.Join(words, " "))
			}
			return true
		})
	}
	return out
}

// xmlValues returns the texts between each open and the next close in s,
// with XML's character entities decoded.
func xmlValues(s, open, close string) []string {
	var out []string
	for {
		i := strings.Index(s, open)
		if i < 0 {
			return out
		}
		s = s[i+len(open):]
		v, rest, ok := strings.Cut(s, close)
		if !ok {
			return out
		}
		out = append(out, html.UnescapeString(v)) // XML's five entities are HTML's too
		s = rest
	}
}

// terraformCommands returns the commands a Terraform file runs on plan
// or apply: a local-exec provisioner's command = "…" and an external
// data source's program = ["sh", "-c", "…"].
func terraformCommands(tf string) []string {
	var out []string
	for _, key := range []string{"command", "program"} {
		shell.EachIndex(tf, key, func(i int) bool {
			if i > 0 && isWordByte(tf[i-1]) {
				return true
			}
			rest := strings.TrimLeft(tf[i+len(key):], " \t")
			if !strings.HasPrefix(rest, "=") {
				return true
			}
			rest = strings.TrimLeft(rest[1:], " \t")
			if end := strings.IndexByte(rest, ']'); key == "program" && strings.HasPrefix(rest, "[") && end > 0 {
				var words []string
				shell.CodeLiterals(rest[1:end], func(lit string) { words = append(words, shellQuote(lit)) })
				out = append(out, strings.Join(words, " "))
			} else if lit, _, ok := strings.Cut(strings.TrimPrefix(rest, `"`), `"`); key == "command" && ok && strings.HasPrefix(rest, `"`) {
				out = append(out, lit)
			}
			return true
		})
	}
	return out
}

// goGenerateCommands returns the commands of a Go file's //go:generate
// lines, which go generate runs.
func goGenerateCommands(src string) []string {
	var out []string
	for line := range strings.SplitSeq(src, "\n") {
		if cmd, ok := strings.CutPrefix(strings.TrimSpace(line), "//go:generate "); ok {
			out = append(out, cmd)
		}
	}
	return out
}

// tmuxCommands returns the shell commands a tmux configuration runs when
// a server starts: run-shell / run CMD, if-shell / if CMD …, and the
// default-command / default-shell a new pane starts.
func tmuxCommands(conf string) []string { return tmuxCommandsAt(conf, 0) }

// tmuxCommandsAt is tmuxCommands for a command held depth levels down
// (a hook's or a key binding's).
func tmuxCommandsAt(conf string, depth int) []string {
	var out []string
	for line := range strings.SplitSeq(conf, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' {
			continue
		}
		// tmux quotes its arguments as the shell does.
		sc := shell.Parse(t)
		if sc.ParseError != "" || len(sc.Commands) == 0 {
			sc.Release()
			continue
		}
		c := sc.Commands[0]
		switch c.Program {
		case "run-shell", "run", "if-shell", "if":
			for _, w := range c.Args {
				if !strings.HasPrefix(w, "-") {
					out = append(out, w)
					break
				}
			}
		case "set", "set-option", "setw", "set-window-option":
			for i, w := range c.Args {
				if w == "default-command" && i+1 < len(c.Args) {
					out = append(out, c.Args[i+1])
				}
			}
		case "set-hook", "bind", "bind-key":
			// set-hook -g session-created 'run-shell "…"', bind r
			// run-shell "…": the tmux command they hold, as a line of its own.
			for i, w := range c.Args {
				if w == "run-shell" || w == "run" {
					if i+1 < len(c.Args) {
						out = append(out, c.Args[len(c.Args)-1])
					}
					break
				}
				if i == len(c.Args)-1 && strings.Contains(w, " ") && depth < 2 {
					out = append(out, tmuxCommandsAt(w, depth+1)...)
				}
			}
		}
		sc.Release()
	}
	return out
}

// buildScriptCommands returns the quoted strings of a build script in a
// general-purpose language (build.rs, Gradle, sbt, CMake, Rake) that
// read as a command line: the build hands them to a process or a shell
// (Command::new("sh").arg("-c").arg("…"), exec { commandLine(…) },
// execute_process(COMMAND …)).
func buildScriptCommands(content string) []string {
	var out []string
	shell.CodeLiterals(content, func(lit string) {
		if strings.IndexByte(lit, ' ') > 0 && (strings.ContainsAny(lit, "|;&>") || strings.Contains(lit, "://")) {
			out = append(out, lit)
		}
	})
	return out
}

func hookRunner(kind string) string {
	switch kind {
	case "make":
		return "make runs"
	case "npm":
		return "npm runs"
	case "composer":
		return "composer runs"
	case "python":
		return "Python tooling runs by itself"
	case "ci":
		return "CI runs on the next push"
	case "taskfile":
		return "task runs"
	case "pre-commit":
		return "git runs as hooks on every commit"
	case "gitconfig":
		return "configures commands git runs"
	case "docker":
		return "docker build runs"
	case "venv":
		return "every shell that activates the virtualenv sources"
	case "json-commands":
		return "an editor, agent or dev container runs by itself"
	case "sshconfig":
		return "ssh runs on every connection"
	case "awsconfig":
		return "every AWS CLI and SDK call runs for its credentials"
	case "desktop":
		return "the desktop runs when it is opened, or at login from autostart"
	case "forward":
		return "the mail system runs for every message delivered"
	case "vim":
		return "vim runs at start"
	case "nvim":
		return "Neovim runs at every start"
	case "tool-rc":
		return "the tool runs at every start"
	case "release":
		return "goreleaser runs at the next release"
	case "backup":
		return "borgmatic runs around every backup"
	case "prisma":
		return "prisma generate runs"
	case "build-script":
		return "the build runs"
	case "terraform":
		return "terraform runs on plan or apply"
	case "ci-env":
		return "sets the environment of every later CI step"
	case "tmux":
		return "tmux runs when it starts"
	case "jenkins":
		return "Jenkins runs on the next build"
	case "tox":
		return "tox runs with the tests"
	case "build-wrapper":
		return "every build of the project starts"
	case "maven":
		return "Maven runs during the build"
	}
	return "runs by itself"
}

// packageScripts returns the values of package.json's "scripts" object.
func packageScripts(pkg string) []string {
	var rest string
	if i := strings.Index(pkg, `"scripts"`); i >= 0 {
		rest = pkg[i+len(`"scripts"`):]
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			return nil
		}
		rest = rest[open+1:]
		if end := strings.IndexByte(rest, '}'); end >= 0 {
			rest = rest[:end]
		}
	} else if !strings.Contains(pkg, `"name"`) {
		// An edit's fragment ("test": "…"): its pairs may be scripts.
		rest = pkg
	}
	var out []string
	n := 0
	shell.CodeLiterals(rest, func(lit string) {
		if n%2 == 1 {
			out = append(out, lit)
		}
		n++
	})
	return out
}

// composerScripts returns the commands of a composer.json's "scripts":
// each value, a string or a list of strings ("post-install-cmd":
// ["…", "…"]), that composer runs at install, update or by name. A
// fragment without "scripts" (an edit's) is read whole.
func composerScripts(doc string) []string {
	block := doc
	if i := strings.Index(doc, `"scripts"`); i >= 0 {
		rest := doc[i+len(`"scripts"`):]
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			return nil
		}
		block = rest[open+1:]
		if end := matchingBracket(rest[open:]); end > 0 {
			block = rest[open+1 : open+end]
		}
	}
	var out []string
	shell.CodeLiterals(block, func(lit string) {
		if strings.IndexByte(lit, ' ') > 0 { // a command line, not a script's name
			out = append(out, lit)
		}
	})
	return out
}

// workflowCommands returns the shell commands of a CI file: run: values
// (inline or block) and the items of script: lists.
func workflowCommands(yml string) []string {
	var out []string
	lines := strings.Split(yml, "\n")
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		t = strings.TrimPrefix(t, "- ")
		key, val, ok := strings.Cut(t, ":")
		if !ok {
			continue
		}
		key = strings.TrimSpace(key)
		val = strings.TrimSpace(val)
		if !commandKey(key) {
			continue
		}
		indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
		if val != "" && val != "|" && val != ">" && val != "|-" && val != ">-" {
			out = append(out, unquoteYAML(val))
			continue
		}
		for i+1 < len(lines) {
			next := lines[i+1]
			ni := len(next) - len(strings.TrimLeft(next, " "))
			if strings.TrimSpace(next) != "" && ni <= indent && !strings.HasPrefix(strings.TrimSpace(next), "- ") {
				break
			}
			if strings.TrimSpace(next) != "" && ni < indent {
				break
			}
			i++
			line := strings.TrimPrefix(strings.TrimSpace(next), "- ")
			// A step written as a mapping (CircleCI's run: with name: and
			// command:): its command key holds the command, the others
			// are not commands.
			if k, v, ok := yamlKeyLine(line); ok {
				if v = strings.TrimSpace(v); commandKey(k) && v != "" && v != "|" && v != ">" && v != "|-" && v != ">-" {
					out = append(out, unquoteYAML(v))
				}
				continue
			}
			out = append(out, unquoteYAML(line))
		}
	}
	return out
}

// unquoteYAML returns a scalar without the quotes that enclose all of it:
// bash -c 'x | y' keeps its own.
func unquoteYAML(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// commandKey reports the keys of CI, task-runner and hook files whose
// value is a shell command or a list of them.
func commandKey(key string) bool {
	switch key {
	case "run", "script", "before_script", "after_script", "command", "cmd", "cmds", "entry",
		// goreleaser's hooks (before: hooks:, a build's hooks: pre: /
		// post:), borgmatic's before_backup and kin.
		"hooks", "pre", "post", "before_backup", "after_backup", "before_everything", "after_everything", "on_error",
		"before_prune", "before_check", "before_extract":
		return true
	}
	return false
}

// yamlKeyLine splits a line that is a plain YAML mapping entry (name:,
// working_directory: ~/x, no-output-timeout: 10m) into its key and
// value; a line that starts a command (echo a:b, http://…) is not one.
func yamlKeyLine(line string) (key, val string, ok bool) {
	k, v, found := strings.Cut(line, ":")
	if !found || k == "" || v != "" && v[0] != ' ' {
		return "", "", false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return "", "", false
		}
	}
	return k, v, true
}

// ciExpressions rewrites the ${{ … }} expressions CI substitutes into a
// step before the shell runs it as the shell values they stand for: the
// whole secrets context as the whole environment, one secret as a
// variable whose name says it is a secret, anything else as a word.
func ciExpressions(cmds string) string {
	if !strings.Contains(cmds, "${{") {
		return cmds
	}
	var b strings.Builder
	for {
		i := strings.Index(cmds, "${{")
		if i < 0 {
			b.WriteString(cmds)
			return b.String()
		}
		end := strings.Index(cmds[i:], "}}")
		if end < 0 {
			b.WriteString(cmds)
			return b.String()
		}
		b.WriteString(cmds[:i])
		expr := strings.TrimSpace(cmds[i+3 : i+end])
		switch name, one := strings.CutPrefix(expr, "secrets."); {
		case one && name != "" && !strings.ContainsAny(name, " ()"):
			b.WriteString("${" + name + "_SECRET}")
		case strings.Contains(expr, "secrets"):
			b.WriteString("$(printenv)")
		default:
			b.WriteString("CI_EXPRESSION")
		}
		cmds = cmds[i+end+2:]
	}
}

// gitConfigCommands returns the commands set in a git configuration file
// under keys git runs (core.pager, alias.x = !…, filter.x.clean, …).
func gitConfigCommands(ini string) []string {
	var out []string
	section := ""
	for line := range strings.SplitSeq(ini, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") {
			sec := strings.Trim(t, "[]")
			name, sub, hasSub := strings.Cut(sec, " ")
			section = strings.ToLower(name)
			if hasSub {
				section += "." + strings.Trim(strings.TrimSpace(sub), `"`)
			}
			continue
		}
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			continue
		}
		key := section + "." + strings.TrimSpace(k)
		v = strings.Trim(strings.TrimSpace(v), `"`)
		if shell.GitExecKey(key) {
			if strings.HasPrefix(strings.ToLower(key), "alias.") && !strings.HasPrefix(v, "!") {
				continue
			}
			out = append(out, strings.TrimPrefix(v, "!"))
		}
	}
	return out
}

// codeFileLang is the language of a source file by its name, or "" when
// it is not one judgePlanted reads. A template is read as the file it
// renders: service.py.j2 as Python.
func codeFileLang(abs string) string {
	base := baseName(abs)
	ext := base[strings.LastIndexByte(base, '.')+1:]
	switch ext {
	case "j2", "jinja", "jinja2", "tmpl", "tpl", "template", "in":
		if stem := base[:len(base)-len(ext)-1]; strings.IndexByte(stem, '.') >= 0 {
			ext = stem[strings.LastIndexByte(stem, '.')+1:]
		}
	}
	switch ext {
	case "py":
		return "python"
	case "js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx":
		return "js"
	case "rb":
		return "ruby"
	case "pl", "pm":
		return "perl"
	case "php":
		return "php"
	case "lua":
		return "lua"
	case "sh", "bash", "zsh":
		return "shell"
	case "go":
		return "go"
	case "c", "h", "cc", "cpp", "cxx", "hh", "hpp", "hxx":
		return "c"
	case "java", "kt", "kts", "scala", "groovy":
		return "java"
	case "rs":
		return "rust"
	}
	return ""
}

// ciEnvFile reports a redirect target that is one of the files a CI step
// writes to set the environment or PATH of every later step.
func ciEnvFile(target string) bool {
	return namesVariable(target, "GITHUB_ENV") || namesVariable(target, "GITHUB_PATH") || namesVariable(target, "BASH_ENV")
}

// namesVariable reports a redirection target that is the file a
// variable names: "$GITHUB_PATH", ${GITHUB_STEP_SUMMARY}.
func namesVariable(target, name string) bool {
	t, ok := variableRefName(strings.Trim(target, `"`))
	return ok && t == name
}

// ciEnvCommands turns NAME=VALUE lines written to $GITHUB_ENV into the
// exports they amount to for every later step; a line written to
// $GITHUB_PATH is a directory put first on PATH.
func ciEnvCommands(content string) []string {
	var out []string
	for line := range strings.SplitSeq(content, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if name, val, ok := strings.Cut(line, "="); ok && !strings.ContainsAny(name, " /") {
			out = append(out, "export "+name+"="+shellQuote(val))
		} else {
			out = append(out, "export PATH="+shellQuote(line)+":$PATH")
		}
	}
	return out
}

// dockerInstruction is one instruction of a Dockerfile, its
// continuation lines joined: the keyword upper-cased, its --flags, and
// the arguments after them.
type dockerInstruction struct {
	line, word, rest string
	flags            []string
}

// pinned reports an ADD whose --checksum lets the build check what it
// fetched.
func (in *dockerInstruction) pinned() bool {
	return slices.ContainsFunc(in.flags, func(f string) bool { return strings.HasPrefix(f, "--checksum=") })
}

// urlSources returns the URLs an ADD fetches (its sources, the last
// word being the destination) and that destination.
func (in *dockerInstruction) urlSources() (urls []string, dest string) {
	words := dockerWords(in.rest)
	if len(words) < 2 {
		return nil, ""
	}
	for _, src := range words[:len(words)-1] {
		if strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://") {
			urls = append(urls, src)
		}
	}
	return urls, words[len(words)-1]
}

// eachDockerInstruction calls fn with each instruction of a Dockerfile,
// comments skipped and continuation lines joined.
func eachDockerInstruction(dockerfile string, fn func(in *dockerInstruction)) {
	var logical strings.Builder
	flush := func() {
		line := strings.TrimSpace(logical.String())
		logical.Reset()
		word, rest, _ := strings.Cut(line, " ")
		if len(word) == len(line) {
			word, rest, _ = strings.Cut(line, "\t")
		}
		in := dockerInstruction{line: line, word: strings.ToUpper(word), rest: strings.TrimSpace(rest)}
		for strings.HasPrefix(in.rest, "--") { // --mount=…, --network=…, --chown=…, --platform=…
			var flag string
			flag, in.rest, _ = strings.Cut(in.rest, " ")
			in.flags = append(in.flags, flag)
			in.rest = strings.TrimSpace(in.rest)
		}
		if in.word != "" {
			fn(&in)
		}
	}
	for line := range strings.SplitSeq(dockerfile, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if cont, ok := strings.CutSuffix(line, "\\"); ok {
			logical.WriteString(cont)
			logical.WriteByte(' ')
			continue
		}
		logical.WriteString(line)
		flush()
	}
	flush()
}

// dockerRunCommands returns what a Dockerfile's build runs, as
// commands: each RUN (the shell form as written, the exec form's words
// joined) and each ADD of a URL as the download it is (curl -o DEST URL;
// not when --checksum pins the content), in order, so a file added from
// a URL and then run reads as downloaded, then run.
func dockerRunCommands(dockerfile string) []string {
	var out []string
	eachDockerInstruction(dockerfile, func(in *dockerInstruction) {
		switch in.word {
		case "RUN":
			if cmd := dockerCommand(in.rest); cmd != "" {
				out = append(out, cmd)
			}
		case "ENV":
			// ENV GOSUMDB=off holds for every later RUN, as an export
			// does for the commands after it. The old form ENV KEY value
			// sets one variable to the rest of the line.
			if strings.Contains(in.rest, "=") {
				out = append(out, "export "+in.rest)
			} else if key, val, ok := strings.Cut(strings.TrimSpace(in.rest), " "); ok {
				out = append(out, "export "+key+"="+shellQuote(strings.TrimSpace(val)))
			}
		case "ADD":
			if in.pinned() {
				return // the build checks what it fetched
			}
			urls, dest := in.urlSources()
			for _, src := range urls {
				to := dest
				if strings.HasSuffix(to, "/") {
					to += baseName(src)
				}
				out = append(out, "curl -fsSL -o "+shellQuote(to)+" "+shellQuote(src))
			}
		}
	})
	return out
}

// dockerCommand is the command of a RUN: the shell form as written, the
// exec form's words joined (["sh", "-c", X] is X).
func dockerCommand(arg string) string {
	if !strings.HasPrefix(arg, "[") {
		return arg
	}
	words := dockerWords(arg)
	if len(words) >= 3 && (words[1] == "-c" || words[1] == "-lc") {
		return words[2]
	}
	return strings.Join(words, " ")
}

// dockerWords returns an instruction's arguments: the exec form's
// literals (["a", "b"]) or the shell form's words.
func dockerWords(arg string) []string {
	if !strings.HasPrefix(arg, "[") {
		return strings.Fields(arg)
	}
	var words []string
	shell.CodeLiterals(arg, func(lit string) {
		if len(words) < 64 {
			words = append(words, lit)
		}
	})
	return words
}

// commandKeys are the JSON keys whose values editors, agents and dev
// containers run as commands: a VS Code task, a Claude Code hook or MCP
// server, a dev container's lifecycle commands.
var commandKeys = map[string]bool{
	"command": true, "postCreateCommand": true, "postStartCommand": true, "postAttachCommand": true,
	"initializeCommand": true, "onCreateCommand": true, "updateContentCommand": true,
	// A shell runs it before every prompt, wherever the variable is set.
	"PROMPT_COMMAND": true,
}

// jsonCommands returns the commands a JSON settings file holds under
// commandKeys, a sibling "args" list joined to its "command". A fragment
// that does not parse is read pair by pair.
func jsonCommands(text string) []string {
	var doc any
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return jsonCommandPairs(text)
	}
	var out []string
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > 32 {
			return
		}
		switch t := v.(type) {
		case map[string]any:
			// A terminal profile: {"path": "bash", "args": ["-c", "…"]}.
			if p, ok := t["path"].(string); ok {
				if args, ok := t["args"].([]any); ok {
					out = append(out, p+" "+joinQuoted(args))
				}
			}
			for k, val := range t {
				if !commandKeys[k] {
					walk(val, depth+1)
					continue
				}
				switch c := val.(type) {
				case string:
					if args, ok := t["args"].([]any); ok && k == "command" {
						c += " " + joinQuoted(args)
					}
					out = append(out, c)
				case []any:
					out = append(out, joinQuoted(c))
				case map[string]any:
					// A dev container's lifecycle command may name several
					// commands: {"deps": "npm ci", "db": ["make", "db"]}.
					for _, each := range c {
						switch e := each.(type) {
						case string:
							out = append(out, e)
						case []any:
							out = append(out, joinQuoted(e))
						}
					}
				}
			}
		case []any:
			for _, e := range t {
				walk(e, depth+1)
			}
		}
	}
	walk(doc, 0)
	return out
}

// joinQuoted joins a JSON list of words into one shell-quoted line.
func joinQuoted(words []any) string {
	var b strings.Builder
	for i, w := range words {
		s, ok := w.(string)
		if !ok {
			continue
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(shellQuote(s))
	}
	return b.String()
}

// jsonCommandPairs reads "key": "value" pairs of commandKeys from text
// that is not a whole JSON document.
func jsonCommandPairs(text string) []string {
	var out []string
	for k := range commandKeys {
		rest := text
		for {
			i := strings.Index(rest, `"`+k+`"`)
			if i < 0 {
				break
			}
			rest = strings.TrimLeft(rest[i+len(k)+2:], " \t\n")
			if !strings.HasPrefix(rest, ":") {
				continue
			}
			rest = strings.TrimLeft(rest[1:], " \t\n")
			if !strings.HasPrefix(rest, `"`) {
				continue
			}
			end := 1
			for end < len(rest) && rest[end] != '"' {
				if rest[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(rest) {
				break
			}
			var s string
			if json.Unmarshal([]byte(rest[:end+1]), &s) == nil {
				out = append(out, s)
			}
			rest = rest[end+1:]
		}
	}
	return out
}

// sshTokens are the tokens ssh expands in the commands of its
// configuration that name the local user, machine and home, written as
// the shell would ask for them: a command that sends them out is judged
// as one that sends $(whoami) out.
var sshTokens = strings.NewReplacer("%u", "$(whoami)", "%r", "$(whoami)", "%l", "$(hostname)", "%L", "$(hostname)", "%d", "$HOME", "%%", "%")

// sshConfigCommands returns the commands an ssh client configuration
// runs: ProxyCommand, LocalCommand, KnownHostsCommand and Match exec.
func sshConfigCommands(cfg string) []string {
	var out []string
	for line := range strings.SplitSeq(cfg, "\n") {
		t := strings.TrimSpace(line)
		key, val, _ := strings.Cut(t, " ")
		if k, v, ok := strings.Cut(t, "="); ok && !strings.Contains(k, " ") {
			key, val = k, v
		}
		val = strings.TrimSpace(val)
		switch strings.ToLower(key) {
		case "proxycommand", "localcommand", "knownhostscommand":
			out = append(out, sshTokens.Replace(val))
		case "match":
			if i := strings.Index(strings.ToLower(val), "exec "); i >= 0 {
				out = append(out, sshTokens.Replace(strings.Trim(strings.TrimSpace(val[i+5:]), `"`)))
			}
		}
	}
	return out
}

// desktopCommands returns the command of each Exec= line of a desktop
// entry (%u, %f and the like left as words).
func desktopCommands(entry string) []string {
	var out []string
	for line := range strings.SplitSeq(entry, "\n") {
		if cmd, ok := strings.CutPrefix(strings.TrimSpace(line), "Exec="); ok {
			out = append(out, cmd)
		}
	}
	return out
}

// forwardCommands returns the programs a ~/.forward pipes each message
// to: its "|command" entries, quoted or not.
func forwardCommands(forward string) []string {
	var out []string
	for line := range strings.SplitSeq(forward, "\n") {
		for _, entry := range strings.Split(line, ",") {
			entry = strings.TrimSpace(entry)
			if len(entry) > 1 && entry[0] == '"' && entry[len(entry)-1] == '"' {
				entry = entry[1 : len(entry)-1] // "|cmd": the quotes hold the entry
			}
			if cmd, ok := strings.CutPrefix(entry, "|"); ok {
				out = append(out, strings.ReplaceAll(cmd, `\"`, `"`))
			}
		}
	}
	return out
}

// awsConfigCommands returns the commands of an AWS config file: the
// value of each credential_process, which the CLI and SDKs run to get
// credentials.
func awsConfigCommands(cfg string) []string {
	var out []string
	for line := range strings.SplitSeq(cfg, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == "credential_process" {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}

// vimCommands returns the shell commands of a vim or neovim startup file:
// what follows a "!" command (:!cmd, silent !cmd, autocmd … !cmd) and
// the string given to system().
func vimCommands(rc string) []string {
	var out []string
	for line := range strings.SplitSeq(rc, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, `"`) {
			continue // a comment
		}
		for i := 0; i < len(t); i++ {
			if t[i] == '!' && (i == 0 || t[i-1] == ' ' || t[i-1] == ':' || t[i-1] == '\t') && (i+1 >= len(t) || t[i+1] != '=') {
				out = append(out, t[i+1:])
				break
			}
		}
		if i := strings.Index(t, "system("); i >= 0 {
			shell.CodeLiterals(t[i:], func(lit string) {
				out = append(out, lit)
			})
		}
		if code, ok := strings.CutPrefix(t, "lua "); ok {
			out = append(out, shell.CodeCommands("lua", code)...) // lua os.execute("…")
		}
	}
	return out
}

// ciEnvPath stands for $GITHUB_ENV and its kin among written files.
const ciEnvPath = "$GITHUB_ENV"

// filterDeletions returns the paths a jq or yq program deletes: the
// arguments of each del(…).
func filterDeletions(filter string) []string {
	var out []string
	shell.EachIndex(filter, "del(", func(i int) bool {
		depth, start := 1, i+len("del(")
		for j := start; j < len(filter); j++ {
			switch filter[j] {
			case '(':
				depth++
			case ')':
				if depth--; depth == 0 {
					out = append(out, filter[start:j])
					return true
				}
			}
		}
		return true
	})
	return out
}

// lockDigests mark the fields of a lockfile that pin each package's
// content.
var lockDigests = newFoldSet("integrity", "hash", "checksum", "sha512", "sha256", "shasum")

// lockFile reports a package manager's lockfile.
func lockFile(base string) bool {
	switch base {
	case "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "Pipfile.lock", "Cargo.lock",
		"composer.lock", "Gemfile.lock", "go.sum", "uv.lock", "bun.lock":
		return true
	}
	return false
}

// filterAssignments returns the key = "value" pairs a jq or yq program
// sets (.a.b = "v", .a.b |= "v") and the "key": "value" pairs of the
// objects it writes, keys as their last path component.
func filterAssignments(filter string) [][2]string {
	var out [][2]string
	for i := 0; i < len(filter) && len(out) < 64; i++ {
		c := filter[i]
		if c != '=' && c != ':' || i+1 < len(filter) && filter[i+1] == '=' || i > 0 && (filter[i-1] == '=' || filter[i-1] == '!' || filter[i-1] == '<' || filter[i-1] == '>') {
			continue
		}
		left := strings.TrimRight(strings.TrimSuffix(strings.TrimSpace(filter[:i]), "|"), " ")
		key := trailingOperand(left)
		key = strings.Trim(key[strings.LastIndexByte(key, '.')+1:], "\"' []")
		rest := strings.TrimLeft(filter[i+1:], " ")
		if key == "" || len(rest) == 0 || rest[0] != '"' && rest[0] != '\'' {
			continue
		}
		if end := strings.IndexByte(rest[1:], rest[0]); end >= 0 {
			out = append(out, [2]string{key, rest[1 : 1+end]})
		}
	}
	return out
}

// judgeFilterSettings judges the values a jq or yq program sets in a
// package manager's or CI's configuration as settings of that file
// (.npmRegistryServer = "https://…", include += [{"remote": "https://…"}]),
// the switches it turns on that take a protection away (.variables.SAST_DISABLED
// = "true"), and the dependencies it gives a manifest.
func (s *scan) judgeFilterSettings(abs, filter string) {
	pairs := filterAssignments(filter)
	if tool := configFileTool(abs); tool != "" {
		for _, kv := range pairs {
			if s.judgeSetting(nil, setting{tool + ":" + kv[0], kv[1]}) {
				return
			}
		}
	}
	if grant := policyWildcard(filter); grant != "" && s.enabled(rCloudGrant) {
		s.add(rCloudGrant, "rewrites "+baseName(abs)+" so that an access policy allows "+grant+": granting access is for a person to do on purpose; a human should approve it", abs)
		return
	}
	lower := strings.ToLower(filter)
	if testConfigFile(baseName(abs)) && s.enabled(rDefWeakeningEdit) {
		if excl := testsExcluded("", lower); excl != "" {
			s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" so that it leaves the tests of a protection out of the run ("+excl+")", abs)
			return
		}
	}
	if lintConfig(abs) && strings.Contains(lower, "disable") && (securityChecks.in(lower) || containsAnyOf(lower, securityMarks)) && s.enabled(rDefWeakeningEdit) {
		s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" so that a security linter or rule is disabled: make the change by hand, in review", abs)
		return
	}
	if baseName(abs) == "package.json" && (strings.Contains(filter, `"*"`) || strings.Contains(filter, `"latest"`)) && strings.Contains(lower, "dependencies") && s.enabled(rSupplyVerifyOff) {
		s.add(rSupplyVerifyOff, "rewrites "+baseName(abs)+" so that dependencies take any version (\"*\" or \"latest\"): the next install takes whatever is published; keep them pinned", abs)
		return
	}
	if off := podHardeningOff(filter); off != "" && s.enabled(rDefWeakeningEdit) {
		s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" so that it takes a pod's hardening away ("+off+"): make the change by hand, in review", abs)
		return
	}
	for _, kv := range pairs {
		if on, ok := boolWord(strings.ToLower(kv[1])); ok && on && absenceKey(strings.ToLower(kv[0])) && s.enabled(rDefWeakeningEdit) {
			s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" so that "+kv[0]+" is true, which turns a protection off: make the change by hand, in review", abs)
			return
		}
		if enforcementValue(kv[0], kv[1], lower) && !developmentPath(abs, s.act.Caller.WorkspaceRoot) && s.enabled(rDefWeakeningEdit) {
			s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" so that "+kv[0]+" is "+kv[1]+", which stops enforcing a protection: make the change by hand, in review", abs)
			return
		}
	}
	if composeFile(abs) && s.enabled(rPrivContainer) {
		// The program's settings and host paths as Compose lines.
		var b strings.Builder
		for _, kv := range pairs {
			b.WriteString(kv[0] + ": " + kv[1] + "\n")
		}
		for _, kv := range filterBools(filter) {
			b.WriteString(kv + "\n")
		}
		for _, w := range quotedWords(filter) {
			if strings.HasPrefix(w, "/") && strings.Contains(w, ":") {
				b.WriteString("- " + w + "\n")
			}
		}
		if why := composeHostAccess(b.String()); why != "" {
			s.add(rPrivContainer, "rewrites "+baseName(abs)+" so that it gives a container "+why+": that is root on the host once the stack is up; keep containers unprivileged and mount only the project", abs)
		}
	}
	if _, ok := manifestEcosystem(baseName(abs)); ok {
		var b strings.Builder
		b.WriteString("{\n")
		for _, kv := range pairs {
			b.WriteString("  \"" + kv[0] + "\": \"" + kv[1] + "\",\n")
		}
		b.WriteString("}\n")
		s.checkLookalikeManifest(abs, b.String(), "this edit")
	}
	s.judgeFilterWeakening(abs, filter, lower)
}

// judgeFilterWeakening judges what else a filter's settings take away:
// switches with their whole path, insecure values, a host name pointed
// at an outside address, secrets files published with a package, a
// security step allowed to fail. One finding is enough.
func (s *scan) judgeFilterWeakening(abs, filter, lower string) {
	if !s.enabled(rDefWeakeningEdit) {
		return
	}
	// Unquoted switches, judged with their whole path: ["auth.anonymous"].enabled = true.
	for _, st := range boolSettings(filter) {
		if st.on && absenceKey(st.key) || !st.on && protectionKeys.in(st.key) && !absenceKey(st.key) {
			s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" so that "+st.key+" is "+strconv.FormatBool(st.on)+", which turns a protection off: make the change by hand, in review", abs)
			return
		}
	}
	if setting := insecureSetting(envPairs(filter)); setting != "" {
		s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" so that it sets "+setting+", which turns a protection off: make the change by hand, in review", abs)
		return
	}
	if host, ip := hijackedHost(lower); host != "" {
		s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" so that the workload resolves "+host+" to "+ip+": what it sends there goes to whoever holds that address", abs)
		return
	}
	if baseName(abs) == "package.json" && strings.Contains(lower, ".files") {
		for _, w := range quotedWords(filter) {
			if isSecretFileName(w) {
				s.add(rDefWeakeningEdit, "rewrites package.json so that the published package carries "+w+", a secrets file: everyone who installs it gets the secrets", abs)
				return
			}
		}
	}
	if strings.Contains(lower, "secretref") {
		for _, h := range urlHosts(lower) {
			if !privateHost(h) && !internalNetworkHost(h) {
				s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" so that a container given the workload's secrets sends to "+h+": make the change by hand, in review", abs)
				return
			}
		}
	}
	if strings.Contains(lower, "hostpath") && containsAnyOf(lower, []string{"docker.sock", "containerd.sock", "crio.sock", "path\": \"/\"", "path: /,"}) {
		s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" so that a workload mounts the node's container runtime socket or root: that is root on the node; make the change by hand, in review", abs)
		return
	}
	for _, w := range quotedWords(filter) {
		// An image or URL whose registry borrows a known name.
		if strings.ContainsAny(w, " '\"$") || !containsAnyOf(lower, []string{"image", "registry", "repository", "url", "src", "mirror"}) {
			continue
		}
		host := w
		if i := strings.Index(host, "://"); i >= 0 {
			host = host[i+3:]
		}
		host, _, _ = strings.Cut(host, "/")
		if looksLikeHost(host) && strings.Contains(w, "/") && brandLookalike(host) != "" {
			s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" so that it pulls from "+host+", a look-alike of a well-known registry or host: make the change by hand, in review", abs)
			return
		}
	}
	if f := squeeze(filter); strings.Contains(f, "ingress=[{}]") || strings.Contains(f, "egress=[{}]") {
		s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" so that its network policy allows all traffic ([{}]): make the change by hand, in review", abs)
		return
	}
	if f := squeeze(filter); (strings.Contains(f, "type=loadbalancer") || strings.Contains(f, "type:loadbalancer")) && containsAnyOf(lower+abs, dataStoreNames) {
		s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" so that a data store gets a public load balancer: make the change by hand, in review", abs)
		return
	}
	if job := disabledJob(filter); job != "" {
		s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" so that the "+job+" job never runs: make the change by hand, in review", abs)
		return
	}
	if strings.Contains(lower, "continue-on-error") && strings.Contains(lower, "true") {
		// The check named in the filter, the workflow named for a scan,
		// or every job at once (.jobs[]).
		switch {
		case securityChecks.in(lower) || workflowScanNames.in(baseName(abs)):
			s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" so that a security check's failure no longer fails the build (continue-on-error): make the change by hand, in review", abs)
			return
		case checkRuns.in(lower) || strings.Contains(lower, ".jobs[]") || strings.Contains(lower, ".jobs.*"):
			s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" so that the tests' or every job's failure no longer fails the build (continue-on-error): make the change by hand, in review", abs)
			return
		}
	}
}

// checkHollowScript judges a package script set to val: a check's
// script (test, lint) set to a command that does nothing.
func (s *scan) checkHollowScript(name, val, who string) {
	if s.enabled(rDefWeakeningEdit) && hollowScript(`"`+name+`": "`+val+`"`) != "" {
		s.add(rDefWeakeningEdit, who+" sets the "+name+" script of package.json to a command that does nothing ("+val+"): the checks pass without running; make the change by hand, in review", "scripts."+name+"="+val)
	}
}

// checkCodePackageScripts judges interpreter code that sets a package
// script and writes package.json (p.scripts.preinstall = "…";
// fs.writeFileSync("package.json", …)): the script is judged as npm pkg
// set's would be.
func (s *scan) checkCodePackageScripts(v *cmdView) {
	if !strings.Contains(v.code, "package.json") || !v.codeAny(traitWrites) {
		return
	}
	eachScriptAssignment(v.code, func(name, val string) {
		s.judgePlanted("shell", val, "package.json", "a "+v.prog+" program sets scripts."+name+" in package.json, a script npm runs by itself,")
		s.checkHollowScript(name, val, "a "+v.prog+" program")
	})
}

// eachScriptAssignment calls fn with each package script that code or a
// jq filter assigns a literal: p.scripts.test = "…", d['scripts']['x'] =
// '…', .scripts.lint = "true".
func eachScriptAssignment(text string, fn func(name, val string)) {
	for rest := text; ; {
		i := strings.Index(rest, "scripts")
		if i < 0 {
			return
		}
		rest = rest[i+len("scripts"):]
		if strings.HasPrefix(rest, `']`) || strings.HasPrefix(rest, `"]`) {
			rest = rest[2:] // d['scripts']['postinstall']
		}
		name := ""
		switch {
		case strings.HasPrefix(rest, "."):
			j := 1
			for j < len(rest) && (isWordByte(rest[j]) || rest[j] == ':') && rest[j] != '.' {
				j++
			}
			name, rest = rest[1:j], rest[j:]
		case strings.HasPrefix(rest, "["):
			lit, end, ok := codeLiteralAt(rest, 1)
			if !ok || end >= len(rest) || rest[end] != ']' {
				continue
			}
			name, rest = lit, rest[end+1:]
		default:
			continue
		}
		after := strings.TrimLeft(rest, " \t")
		if name == "" || !strings.HasPrefix(after, "=") || strings.HasPrefix(after, "==") {
			continue
		}
		after = strings.TrimLeft(after[1:], " \t")
		if val, _, ok := codeLiteralAt(after, 0); ok && after[0] != '/' {
			fn(name, val)
		}
	}
}

// checkPackageSet judges npm pkg set (pnpm, yarn alike): a script it
// sets is a command npm runs by itself (postinstall runs on every
// install), and a dependency it sets is judged as one written into
// package.json.
func (s *scan) checkPackageSet(v *cmdView) {
	ops := v.plainOperands()
	if len(ops) < 3 || ops[0] != "pkg" || ops[1] != "set" {
		return
	}
	var deps strings.Builder
	for _, o := range ops[2:] {
		key, val, ok := strings.Cut(o, "=")
		if !ok {
			continue
		}
		key = strings.TrimSuffix(key, "[]")
		switch {
		case strings.HasPrefix(key, "scripts."):
			s.judgePlanted("shell", val, "package.json", v.prog+" pkg set "+key+", a script npm runs by itself,")
			s.checkHollowScript(key[len("scripts."):], val, v.prog+" pkg set")
		case strings.Contains(key, "ependencies."):
			name := key[strings.IndexByte(key, '.')+1:]
			deps.WriteString("\"" + name + "\": \"" + val + "\",\n")
		}
	}
	if deps.Len() > 0 {
		s.checkLookalikeManifest("package.json", deps.String(), v.prog+" pkg set")
	}
}

// filterBools returns "key: true" for each .a.key = true a jq or yq
// program sets.
func filterBools(filter string) []string {
	var out []string
	for _, st := range boolSettings(filter) {
		if st.on {
			out = append(out, st.key[strings.LastIndexByte(st.key, '.')+1:]+": true")
		}
	}
	return out
}

// hijackedHost returns a public host name a workload's hostAliases
// point at a public address, and the address; "" when it sets none.
func hijackedHost(filter string) (host, ip string) {
	if !strings.Contains(filter, "hostaliases") {
		return "", ""
	}
	for _, w := range quotedWords(filter) {
		if ip == "" && strings.Count(w, ".") == 3 && strings.Trim(w, "0123456789.") == "" && !privateHost(w) && !isLoopbackHost(w) {
			ip = w
		}
	}
	if ip == "" {
		return "", ""
	}
	for _, w := range quotedWords(filter) {
		if strings.Contains(w, ".") && strings.Trim(w, "0123456789.") != "" && !privateHost(w) && !internalNetworkHost(w) && looksLikeHost(w) {
			return w, ip
		}
	}
	return "", ""
}

// isSecretFileName reports a file name that holds secrets by its name
// (.env, .env.production, id_rsa, *.pem, *.key, .npmrc, credentials).
func isSecretFileName(name string) bool {
	b := strings.ToLower(baseName(strings.TrimSuffix(name, "/")))
	return b == ".env" || strings.HasPrefix(b, ".env.") && !strings.HasSuffix(b, ".example") && !strings.HasSuffix(b, ".sample") ||
		strings.HasPrefix(b, "id_rsa") || strings.HasPrefix(b, "id_ed25519") || strings.HasSuffix(b, ".pem") || strings.HasSuffix(b, ".key") ||
		b == ".npmrc" || b == ".pypirc" || b == "credentials" || b == "credentials.json"
}

// dataStoreNames name services that hold data and should not face the
// internet.
var dataStoreNames = []string{"redis", "postgres", "mysql", "mariadb", "mongo", "elasticsearch", "opensearch", "memcached", "kafka",
	"etcd", "rabbitmq", "cassandra", "clickhouse", "minio"}

// envPairs rewrites a filter's Kubernetes-style env entries ({"name":
// "X", "value": "Y"}) as X=Y, so settings judge them as assignments.
func envPairs(filter string) string {
	f := squeeze(filter)
	var b strings.Builder
	b.WriteString(filter)
	for off := 0; ; {
		i := strings.Index(f[off:], "name:")
		if i < 0 {
			break
		}
		i += off
		name, rest, _ := strings.Cut(f[i+len("name:"):], ",")
		off = i + len("name:")
		if v, ok := strings.CutPrefix(rest, "value:"); ok {
			val, _, _ := strings.Cut(v, "}")
			b.WriteString("\n" + name + "=" + val)
		}
	}
	return b.String()
}

// disabledJob returns the name of a test or security job a filter turns
// off (.jobs.test.if = "false"), or "".
func disabledJob(filter string) string {
	f := squeeze(filter)
	i := strings.Index(f, ".if=")
	if i < 0 {
		return ""
	}
	if v := f[i+4:]; !strings.HasPrefix(v, "false") && !strings.HasPrefix(v, "${{false}}") {
		return ""
	}
	job := f[:i]
	job = job[strings.LastIndexByte(job, '.')+1:]
	if containsAnyOf(job, []string{"test", "lint", "scan", "security", "check", "audit", "sast", "codeql"}) {
		return job
	}
	return ""
}

// githubRunner reports a path under .github/ that Actions runs: a
// workflow, or the actions and scripts workflows call.
func githubRunner(abs string) bool {
	i := strings.Index(abs, "/.github/")
	if i < 0 {
		return false
	}
	rest := abs[i+len("/.github/"):]
	return strings.HasPrefix(rest, "workflows/") || strings.HasPrefix(rest, "actions/") || strings.HasPrefix(rest, "scripts/")
}

// hookRunsOnlyChecks reports a git hook of this project that v writes,
// whose whole text the line shows and that runs nothing but its checks: npm test,
// make lint, pytest, go vet. A hook that gates commits on the tests is
// everyday; anything else it might run is for a person to read.
func (cs *cmdScan) hookRunsOnlyChecks(v *cmdView, abs string) bool {
	if !isBelow(abs, cs.root) {
		return false // a template or global hook reaches every repository
	}
	for _, f := range cs.writtenFiles(v) {
		if f.abs == abs {
			return checksOnlyScript(f.content)
		}
	}
	return false
}

// checksOnlyScript reports a shell script whose every command is a
// project's build, test or lint tool (or exit / set / echo), with no
// substitution, background job or redirection beyond /dev/null.
func checksOnlyScript(text string) bool {
	sc := shell.Parse(text)
	defer sc.Release()
	if sc.ParseError != "" || sc.TooDeep || len(sc.Commands) == 0 || len(sc.Evasions) > 0 {
		return false
	}
	for i := range sc.Commands {
		c := &sc.Commands[i]
		if c.Depth > 0 || c.Background || len(c.Assigns) > 0 {
			return false
		}
		for _, r := range c.Redirects {
			if r.Target != "/dev/null" && !strings.HasPrefix(r.Target, "&") {
				return false
			}
		}
		switch c.Program {
		case "npm", "pnpm", "yarn", "bun", "npx", "make", "go", "cargo", "pytest", "tox", "nox", "ruff", "black", "isort", "mypy",
			"flake8", "eslint", "prettier", "tsc", "gofmt", "golangci-lint", "lint-staged", "mvn", "gradle", "./gradlew", "gradlew",
			"dotnet", "rubocop", "bundle", "rake", "phpunit", "composer", "exit", "set", "echo", "true", "test", "[":
		default:
			return false
		}
		if c.Program == "npx" && len(c.Args) > 0 && c.Args[0] != "lint-staged" && c.Args[0] != "eslint" && c.Args[0] != "prettier" && c.Args[0] != "tsc" {
			return false // npx fetches whatever it is named
		}
	}
	return true
}
