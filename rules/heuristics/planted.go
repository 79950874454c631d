package heuristics

import (
	"encoding/base64"
	"encoding/hex"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parapet-dev/parapet/internal/textcut"
	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/shell"
)

// Code that runs later is judged as that code: a command line that writes
// a file and then runs it (echo … > run.sh && bash run.sh), or writes a
// file that build and test tools run by themselves (Makefile, package.json
// scripts, conftest.py, setup.py, .envrc, git hooks, CI workflows, git
// configuration), is judged by what the file's code would do. The engine
// also attaches the current content of workspace scripts a command runs
// (action.Attachment); a script it could not read is unknown.

// maxPlanted bounds the files one command line is followed through.
const maxPlanted = 16

// planted is a file the command line writes, with what it writes.
type planted struct {
	abs     string
	content string
	run     bool // the line runs the file after writing it
}

// checkPlantedCode judges files written by the line, scripts the line
// runs, and the attached contents of scripts the line runs.
func (s *scan) checkPlantedCode(cs *cmdScan) {
	if s.nested >= maxNested {
		return
	}
	var files []planted
	for i := range cs.views {
		v := &cs.views[i]
		if v.prog == "" || len(files) >= maxPlanted {
			continue
		}
		if v.hasCode {
			s.checkCodeWrittenInstructions(cs, v)
			s.checkCodeWrittenSettings(v)
			s.checkCodePackageScripts(v)
		}
		if len(v.c.Redirects) == 0 && v.prog != "tee" && v.prog != "sed" && v.prog != "gsed" && v.prog != "perl" && v.prog != "yq" && v.prog != "jq" && v.prog != "curl" && v.prog != "wget" &&
			v.prog != "git" && v.prog != "patch" && !(v.hasCode && hasWriteEffect(v.hostedProgram().effects)) && len(files) == 0 &&
			len(s.act.Attachments) == 0 {
			continue // writes nothing the line shows, runs nothing known
		}
		if len(v.c.Redirects) > 0 || v.prog == "tee" || v.prog == "curl" || v.prog == "wget" {
			s.checkOwnersWrite(cs, v)
			s.checkFetchedInstructions(cs, v)
		}
		_, _, inPlace := inPlaceScripts(v) // its substitutions are judged with their patterns (weakening.go)
		if text, ok := cs.patchText(v); ok {
			inPlace = true // so are a patch's hunks
			s.checkPatchEdits(v, unifiedDiff(text))
		}
		for _, f := range cs.writtenFiles(v) {
			files = append(files, f)
			s.judgeWrittenFile(f.abs, f.content)
			s.checkSecretWrittenBy(f.abs, f.content)
			if !inPlace {
				s.checkWeakeningWrite(f.abs, f.content)
				s.checkGrantWrite(f.abs, f.content)
			}
		}
		if file, filter, ok := cs.filterEdit(v); ok {
			s.judgeFilterEdit(file, filter)
		}
		if v.prog == "curl" {
			s.checkCurlConfig(cs, v, files)
		}
		if len(files) == 0 && len(s.act.Attachments) == 0 {
			continue // nothing written before, nothing attached
		}
		file, lang, _, ok := shell.ScriptRun(v.c)
		if !ok {
			continue
		}
		abs := cs.resolveIn(nil, file).Abs
		written := false
		for k := range files {
			if f := &files[k]; f.abs == abs {
				written, f.run = true, true
				s.judgePlanted(scriptLang(lang, f.abs, f.content), f.content, abs, "runs "+baseName(abs)+", written just before")
			}
		}
		if !written {
			s.judgeAttachment(cs, abs, lang)
		}
	}
	// Code written into a source file and not run here runs later: when
	// the project is built, tested or imports it.
	for k := range files {
		f := &files[k]
		if f.run || hookKind(f.abs) != "" {
			continue
		}
		if lang := codeFileLang(f.abs); lang != "" {
			s.judgePlanted(lang, f.content, f.abs, writesCodeInto(f.abs))
		} else if dir := commandDir(f.abs, cs.home); dir != "" {
			s.judgePlanted(scriptLang("", f.abs, f.content), f.content, f.abs,
				"writes "+baseName(f.abs)+" into "+dir+", where it runs whenever "+baseName(f.abs)+" is called")
		}
	}
}

// checkCurlConfig judges the options curl reads from a configuration
// file the line shows (curl -K FILE after writing FILE, curl -K - with
// the text on its input) as the command line they stand for: a config
// can name what to fetch and where to write it (output = ~/.bashrc) as
// well as any option can.
func (s *scan) checkCurlConfig(cs *cmdScan, v *cmdView, files []planted) {
	named := false
	for _, a := range v.args {
		named = named || strings.HasPrefix(a, "--config") || len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a, 'K') > 0
	}
	if !named {
		return
	}
	flagValues(v.args, 'K', "config", func(cfg string) {
		content, found := "", false
		if cfg == "-" || cfg == "/dev/stdin" {
			content, found = cs.stdinText(v)
		} else {
			abs := cs.resolveIn(v.c, cfg).Abs
			for k := range files {
				if files[k].abs == abs {
					content, found = files[k].content, true
					files[k].run = true
				}
			}
		}
		if args := shell.CurlConfigArgs(content); found && args != "" {
			s.judgePlanted("shell", "curl "+args, cfg, "curl reads its options from "+cfg)
		}
	})
}

// commandDir returns the directory on a user's PATH that abs is written
// into (~/bin, ~/.local/bin, …), or "": a script there named git or
// python3 runs in place of the real one.
func commandDir(abs, home string) string {
	dir := parentDir(abs)
	if !isCommandDir(dir, home) {
		return ""
	}
	rest, _, _ := homeRel(dir, home)
	return "~/" + rest
}

// programDir returns the directory abs lies in when programs there run
// by name or are loaded by a tool (~/bin, ~/.local/bin, Terraform
// providers, Docker CLI plugins, Helm plugins), or "".
func programDir(abs, home string) string {
	if dir := commandDir(abs, home); dir != "" {
		return dir
	}
	rest, _, ok := homeRel(abs, home)
	if !ok {
		return ""
	}
	for _, d := range []string{".terraform.d/plugins", ".docker/cli-plugins", ".local/share/helm/plugins", ".krew/bin", ".tflint.d/plugins",
		// Editors load every extension found here, with their rights.
		".vscode/extensions", ".vscode-server/extensions", ".vscode-oss/extensions", ".cursor/extensions", ".windsurf/extensions"} {
		if isBelow(rest, d) {
			return "~/" + d
		}
	}
	return ""
}

// isCommandDir reports a directory on a user's PATH (commandDir).
func isCommandDir(dir, home string) bool {
	rest, _, ok := homeRel(dir, home)
	if !ok {
		return false
	}
	switch rest {
	case "bin", ".local/bin", ".cargo/bin", "go/bin", ".npm-global/bin", ".yarn/bin", ".deno/bin", ".bun/bin", ".pyenv/shims":
		return true
	}
	return false
}

// judgeWrittenFile judges text written into abs, by a command or by the
// file tools, for what the file does by itself: the commands of a file
// that tools run (hookKind), agent settings that switch approvals off, a
// Dockerfile's base images, a service's configuration opening it to the
// network, a miner's configuration or an in-browser miner.
func (s *scan) judgeWrittenFile(abs, content string) {
	kind, base := hookKind(abs), baseName(abs)
	if kind != "" {
		s.judgePlanted(kind, content, abs, "writes "+baseName(abs)+", which "+hookRunner(kind))
	}
	if off := agentSettingsOff(abs, content); off != "" {
		s.add(rDefAgentGuard, "writes "+baseName(abs)+", which "+off+": what the agent then does is judged by no one; refuse it", abs)
	}
	s.checkShipperConfig(abs, content)
	if what := mailCopies(base, content); what != "" && s.enabled(rExfilTransfer) {
		s.add(rExfilTransfer, "writes "+base+", which "+what+": approve only if that mailbox is yours", abs)
	}
	if ext := uploadsRunAsCode(base, content); ext != "" && s.enabled(rRCEScriptWrite) {
		s.add(rRCEScriptWrite, "writes "+base+", which has the web server run "+ext+" files as PHP: an uploaded image becomes a web shell; refuse it", abs)
	}
	if addr := caddyAdminOpen(base, content); addr != "" && s.enabled(rNetExposedShell) {
		s.add(rNetExposedShell, "writes "+base+", which opens Caddy's admin API on "+addr+": whoever reaches it reconfigures the server (serves any file, proxies anywhere); keep it on localhost", abs)
	}
	if typ := mailcapRunsAttachments(base, content); typ != "" && s.enabled(rRCEScriptWrite) {
		s.add(rRCEScriptWrite, "writes "+base+", which runs every "+typ+" attachment opened as a script: whoever sends a mail runs code here; refuse it", abs)
	}
	if host := agentEndpoint(abs, content); host != "" && !s.an.trusted.match(host) && s.enabled(rExfilSecretVar) {
		s.add(rExfilSecretVar, "writes "+baseName(abs)+", which points the agent at "+host+": every prompt, the code it reads and its API key would go there; refuse it unless it is your own gateway", abs)
	}
	if environmentFile(abs) && s.enabled(rPersistLDPreload) {
		// ~/.ssh/environment, /etc/environment: every session started
		// gets the variables they set.
		s.checkPreloadWords(strings.Fields(content), false)
	}
	if jvmOptionsFile(abs, base) {
		s.checkJVMOptions(abs, content)
	}
	if editorEnvFile(abs) && s.enabled(rPersistLDPreload) {
		s.checkPreloadWords(jsonEnvAssignments(content), false)
	}
	if kind == "docker" {
		s.checkBaseImages(abs, content)
	}
	if kind == "build-script" && baseName(abs) == "build.rs" {
		s.judgePlanted("rust", content, abs, "writes build.rs, which cargo runs before every build")
	}
	if b := baseName(abs); kind == "build-script" && (b == "Rakefile" || b == "Vagrantfile") {
		// Ruby, run whole by rake or vagrant: its code, not only its sh calls.
		s.judgePlanted("ruby", content, abs, "writes "+b+", Ruby that "+hookRunner(kind))
	}
	if isDevcontainer(base) && s.enabled(rPrivContainer) {
		if why := devcontainerHostAccess(content); why != "" {
			s.add(rPrivContainer, "writes "+base+", which starts the dev container with "+why+": that is root on the host once it is opened; keep containers unprivileged and mount only the project", abs)
		}
	}
	if composeFile(abs) && s.enabled(rPrivContainer) {
		if why := composeHostAccess(content); why != "" {
			s.add(rPrivContainer, "writes "+baseName(abs)+", which gives a container "+why+": that is root on the host once the stack is up; keep containers unprivileged and mount only the project", abs)
		}
	}
	if kind == "build-script" && s.enabled(rSupplyVerifyOff) && strings.Contains(strings.Join(strings.Fields(content), ""), "allowInsecureProtocol=true") {
		s.add(rSupplyVerifyOff, "writes "+baseName(abs)+" with allowInsecureProtocol = true: its repository is fetched over plain http, where anyone on the path can serve the build's dependencies; use https", abs)
	}
	if why := clusterAdminGrant(content); why != "" && (strings.HasSuffix(abs, ".yaml") || strings.HasSuffix(abs, ".yml") || strings.HasSuffix(abs, ".json")) {
		s.add(rCloudGrant, "writes "+baseName(abs)+", which "+why+": granting access is for a person to do on purpose; a human should approve it", abs)
	}
	s.checkExposedConfig(abs, content)
	s.checkMinerFile(abs, content)
	if _, ok := manifestEcosystem(baseName(abs)); ok {
		s.checkLookalikeManifest(abs, content, "this write")
	}
	if s.act.Type == "execute_command" { // the file tools' writes: checkInjection
		s.judgeAgentRulesText(abs, content)
	}
	if toolDefinitionFile(abs) {
		s.judgeToolDescription(abs, content)
	}
}

// filterEdit returns the file a jq or yq program rewrites and the
// program: yq -i FILTER FILE, or jq FILTER FILE > TMP followed by mv TMP
// FILE. What the program sets is in its text.
func (cs *cmdScan) filterEdit(v *cmdView) (abs, filter string, ok bool) {
	if v.prog != "jq" && v.prog != "yq" && v.prog != "gojq" {
		return "", "", false
	}
	// --arg NAME VALUE (and --argjson, --slurpfile, --rawfile) take two
	// words; the filter's $NAME is VALUE.
	args, vars := v.args, map[string]string{}
	if slices.ContainsFunc(args, func(a string) bool { return a == "--arg" || a == "--argjson" || a == "--slurpfile" || a == "--rawfile" }) {
		args = nil
		for i := 0; i < len(v.args); i++ {
			switch a := v.args[i]; {
			case (a == "--arg" || a == "--argjson" || a == "--slurpfile" || a == "--rawfile") && i+2 < len(v.args):
				if a == "--arg" {
					vars[v.args[i+1]] = strconv.Quote(v.args[i+2])
				}
				i += 2
			default:
				args = append(args, a)
			}
		}
	}
	ops := operands(args, "", []string{"--indent", "--front-matter", "--output-format", "--input-format"})
	if len(ops) < 2 {
		return "", "", false
	}
	filter, file := ops[0], ops[len(ops)-1]
	if file == "-" && len(ops) > 2 {
		// jq -s '.[0] * .[1]' package.json - : the text on its input is
		// merged in, and what it sets is in that text.
		file = ops[len(ops)-2]
		if text, ok := cs.stdinText(v); ok {
			filter += "\n" + text
		}
	}
	names := slices.Collect(maps.Keys(vars))
	slices.SortFunc(names, func(a, b string) int { return len(b) - len(a) }) // $ab before $a
	for _, name := range names {
		filter = strings.ReplaceAll(filter, "$"+name, vars[name])
	}
	if v.prog == "yq" && (hasShortFlag(v.args, 'i') || hasLongFlag(v.args, "inplace")) {
		return cs.resolveIn(v.c, file).Abs, filter, true
	}
	if cs.rewritesVia(v, file) {
		return cs.resolveIn(v.c, file).Abs, filter, true
	}
	return "", "", false
}

// judgeFilterEdit judges what a jq or yq program sets in abs: agent
// settings it switches off, and, in a file tools run by themselves, each
// quoted value it sets that reads as a command (a package.json script, a
// workflow step, a pre-commit entry).
func (s *scan) judgeFilterEdit(abs, filter string) {
	if off := agentSettingsOff(abs, filter); off != "" {
		s.add(rDefAgentGuard, "rewrites "+baseName(abs)+" so that it "+off+": what the agent then does is judged by no one; refuse it", abs)
	}
	if host := agentEndpoint(abs, filter); host != "" && !s.an.trusted.match(host) && s.enabled(rExfilSecretVar) {
		s.add(rExfilSecretVar, "rewrites "+baseName(abs)+" so that it points the agent at "+host+": every prompt, the code it reads and its API key would go there; refuse it unless it is your own gateway", abs)
	}
	base := baseName(abs)
	if what := buildTestsOff(base, filter); what != "" && s.enabled(rDefWeakeningEdit) {
		s.add(rDefWeakeningEdit, "rewrites "+base+", which then "+what+": make the change by hand, in review", abs)
	}
	if isDevcontainer(base) && s.enabled(rPrivContainer) {
		if why := devcontainerHostAccess(filter); why != "" {
			s.add(rPrivContainer, "rewrites "+base+" so that the dev container starts with "+why+": that is root on the host once it is opened; keep containers unprivileged and mount only the project", abs)
		}
	}
	if baseName(abs) == "package.json" && strings.Contains(filter, ".scripts.") {
		// jq '.scripts.test = "echo ok"': a check's script made a no-op.
		eachScriptAssignment(filter, func(name, val string) { s.checkHollowScript(name, val, "a jq or yq filter") })
	}
	agentSettings := strings.Contains(abs, "/.claude/settings") || editorEnvFile(abs)
	if agentSettings && s.enabled(rPersistLDPreload) {
		// .env.NODE_OPTIONS = "--require …": every command the agent or
		// the editor starts gets it.
		s.checkPreloadWords(append(jsonEnvAssignments(filter), filterEnvAssignments(filter)...), false)
	}
	if agentSettings && s.enabled(rDefAgentGuard) {
		for _, del := range filterDeletions(filter) {
			if strings.Contains(del, "hooks") {
				s.add(rDefAgentGuard, "rewrites "+baseName(abs)+" without "+del+": the hooks that check or record the agent's tool calls stop running; refuse it", abs)
				break
			}
		}
	}
	if why := clusterAdminGrant(filter); why != "" {
		s.add(rCloudGrant, "rewrites "+baseName(abs)+" so that it "+why+": granting access is for a person to do on purpose; a human should approve it", abs)
	}
	kind := hookKind(abs)
	s.judgeFilterSettings(abs, filter)
	for _, del := range filterDeletions(filter) {
		switch {
		case (kind == "ci" || kind == "pre-commit") && (securityChecks.in(del) || workflowScanNames.in(del)):
			s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" so that it no longer runs "+del+": a security check leaves the pipeline without a word about it; make the change by hand, in review", abs)
		case kind == "ci" && strings.HasSuffix(strings.TrimSpace(del), ".environment"):
			s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" without "+del+": the job deploys without its environment's reviewers and branch rules; make the change by hand, in review", abs)
		case containsAnyOf(strings.ToLower(del), []string{"auth-url", "auth-signin", "auth-type", "auth-secret", "whitelist-source-range",
			"allowlist-source-range", "auth-tls-verify-client"}):
			s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" without "+del+": the ingress stops asking who the caller is; make the change by hand, in review", abs)
		case lockFile(baseName(abs)) && lockDigests.in(del):
			s.add(rSupplyVerifyOff, "rewrites "+baseName(abs)+" without "+del+": the install no longer checks that each package is the one locked; keep the lockfile's hashes", abs)
		default:
			continue
		}
		break
	}
	if kind == "" && baseName(abs) != ".pre-commit-config.yaml" {
		return
	}
	runner := "its tooling runs by itself"
	if kind != "" {
		runner = hookRunner(kind)
	}
	if kind == "ci" {
		// yq '.permissions = "write-all"' is permissions: write-all.
		if risk := workflowRisk(strings.ReplaceAll(filter, "=", ":")); risk != "" && s.enabled(rDefWeakeningEdit) {
			s.add(rDefWeakeningEdit, "rewrites "+baseName(abs)+" so that it "+risk+": make the change by hand, in review", abs)
		}
	}
	shell.CodeLiterals(filter, func(lit string) {
		if strings.IndexByte(lit, ' ') > 0 {
			if kind == "ci" {
				lit = ciExpressions(lit) // ${{ github.sha }} is the runner's, not the shell's
			}
			if cmd, ok := permissionRule(lit); ok {
				if cmd == "" {
					return // a rule about files or hosts, not a command
				}
				lit = cmd
			}
			s.judgePlanted("shell", lit, abs, "sets a value in "+baseName(abs)+", which "+runner)
		}
	})
}

// permissionRule reads an agent's permission rule (Bash(npm run test:*),
// Read(./src/**), WebFetch(domain:x)): for Bash, the command it lets the
// agent run, without its trailing wildcard; "" for the other tools. ok is
// false for text that is no such rule.
func permissionRule(lit string) (cmd string, ok bool) {
	open := strings.IndexByte(lit, '(')
	if open <= 0 || !strings.HasSuffix(lit, ")") {
		return "", false
	}
	tool := lit[:open]
	for i := 0; i < len(tool); i++ {
		if c := tool[i]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return "", false
		}
	}
	if tool[0] < 'A' || tool[0] > 'Z' {
		return "", false // rules name tools with a capital: Bash, Read, WebFetch
	}
	if tool != "Bash" {
		return "", true
	}
	inner := strings.TrimSpace(lit[open+1 : len(lit)-1])
	inner = strings.TrimSuffix(strings.TrimSuffix(inner, ":*"), " *")
	return inner, true
}

// clusterAdminGrant says how text hands out a Kubernetes cluster's
// administration: the system:masters group (aws-auth's mapUsers and
// mapRoles, a certificate's organisation) or the cluster-admin role; "".
func clusterAdminGrant(text string) string {
	switch {
	case strings.Contains(text, "system:masters"):
		return "puts an identity in system:masters, the group that administers the cluster"
	case strings.Contains(text, "cluster-admin") && (strings.Contains(text, "roleRef") || strings.Contains(text, "ClusterRoleBinding")):
		return "binds the cluster-admin role"
	}
	return ""
}

// writesCodeInto is the reason code written into a source file is judged.
func writesCodeInto(abs string) string {
	return "writes code into " + baseName(abs) + ", which runs when the project runs or imports it"
}

// judgeAttachment judges the attached content of a script the line runs.
func (s *scan) judgeAttachment(cs *cmdScan, abs, lang string) {
	for i := range s.act.Attachments {
		at := &s.act.Attachments[i]
		if at.Path == "" {
			continue
		}
		p, _ := action.ResolvePath(at.Path, cs.root, cs.home)
		if p.Abs != abs {
			continue
		}
		if at.Unreadable {
			s.add(rEvUnanalysable, "runs "+at.Path+", whose content could not be read: what it does is unknown; show the script or run its commands directly", at.Path)
			return
		}
		s.judgePlanted(scriptLang(lang, abs, at.Content), at.Content, abs, "runs "+baseName(abs))
		return
	}
}

// judgePlanted judges content as code of a kind and reports what it would
// do, under the rule that would have stopped it, saying where it is.
func (s *scan) judgePlanted(kind, content, abs, what string) {
	s.checkRequestCommand(kind, content, what)
	src, fragment := "", false
	switch read := hookCommands[kind]; {
	case read != nil:
		cmds := read(content)
		if len(cmds) == 0 && yamlCommandFile(kind) {
			// No command key: a piece of a step, as an edit writes one
			// (sed -i 's|npm ci|…|'). Its lines that are not keys are
			// commands.
			cmds, fragment = fragmentCommands(content), true
		}
		src = strings.Join(cmds, "\n")
		if kind == "ci" {
			src = ciExpressions(src)
		}
	case kind == "shell" || kind == "venv" || kind == "pod":
		src = content
	case kind == "powershell":
		cmds, opaque := shell.PowershellCommands(content)
		src = strings.Join(cmds, "\n")
		if opaque != "" && s.enabled(rEvUnanalysable) {
			s.add(rEvUnanalysable, what+": PowerShell that cannot be analysed ("+opaque+")", abs)
		}
	case kind == "make":
		src = shell.MakeRecipes(content)
	case kind == "python":
		src = "python3 -c " + shellQuote(content)
	case kind == "js":
		src = "node -e " + shellQuote(content)
	case kind == "perl" || kind == "ruby" || kind == "lua":
		src = kind + " -e " + shellQuote(content)
	case kind == "nvim":
		src = "lua -e " + shellQuote(content)
	case kind == "php":
		src = "php -r " + shellQuote(content)
	case compiledLang(kind):
		// Compiled code: what go generate runs, and what the code itself
		// runs when it is built and run or tested (exec.Command,
		// system(), ProcessBuilder literals).
		var cmds []string
		if kind == "go" {
			cmds = goGenerateCommands(content)
		}
		if startsProcesses(kind, content) { // most code starts no process: skip the reader
			cmds = append(cmds, shell.CodeCommands(kind, content)...)
			s.checkCompiledReverseShell(content, abs, what)
		}
		s.checkCompiledExfil(content, what)
		src = strings.Join(cmds, "\n")
	default:
		return
	}
	if strings.TrimSpace(src) == "" {
		return
	}
	found := s.nestedFindings(src, func(inner *scan, cs *cmdScan) {
		if fragment {
			return // a piece of YAML need not parse as a script
		}
		sc := cs.script
		if len(sc.Commands) > 0 || sc.ParseError != "" || sc.TooDeep {
			inner.checkUnanalysable(cs) // text of comments alone is no code
		}
		for _, e := range sc.Evasions {
			switch e.Kind {
			case "dialect", "opaque-code", "too-deep":
				inner.add(rEvUnanalysable, "cannot be analysed ("+e.Evidence+")", e.Evidence)
			}
		}
	})
	for _, f := range found {
		r, ok := ruleByID[f.RuleID]
		if !ok || (kind == "docker" || kind == "pod") && !buildStepFinding(f) {
			continue
		}
		s.add(r, what+": its code "+f.Message, f.Evidence)
	}
}

// buildStepFinding reports what counts in a Dockerfile's build steps.
// They run in a build container on the build context, so what they do
// to its files (/usr/local/bin, /etc, rm -rf /var/lib/apt/lists) is the
// image's business; what reaches the network and what the image is made
// from are not: code fetched and run, data sent away, a reverse shell, a
// miner, packages from untrusted sources.
func buildStepFinding(f Finding) bool {
	switch f.Category {
	case CategoryRemoteCodeExec, CategoryExfiltration, CategoryReverseShell, CategorySupplyChain, CategoryEncodingEvasion, CategoryDecodeExec:
		return true
	}
	// A key or a password baked into the image opens every container
	// started from it, as does its SSH server told to let root in.
	return f.RuleID == "disruption.cryptominer" || f.RuleID == "persistence.authorized-keys" || f.RuleID == "persistence.ld-preload" ||
		f.RuleID == "system.login-auth" || f.RuleID == "privilege.account-tamper" && strings.Contains(f.Message, "password")
}

// compiledLang reports the kinds of source judgePlanted reads as compiled
// code: for the commands it starts, and for what it sends.
func compiledLang(kind string) bool {
	return kind == "go" || kind == "c" || kind == "java" || kind == "rust"
}

// compiledExfilHints are what compiled code that sends a secret names:
// a dotfile path, or the environment. One pass finds any of them.
var compiledExfilHints = newFoldSet("/.", "environ", "env::vars", "getenv()")

// checkCompiledExfil reports compiled code that names a secret file or
// the whole environment and talks to the network: a build.rs that reads
// ~/.ssh/id_rsa and writes it to a TcpStream, a TestMain that posts
// os.Environ(). what says where the code is.
func (s *scan) checkCompiledExfil(content, what string) {
	// Cheap looks first: a dotfile path or the environment, then the
	// network; most code has neither.
	if !s.enabled(rExfilFile) || !compiledExfilHints.in(content) {
		return
	}
	const net = traitFetch | traitPost | traitSocket
	if codeMarkers.scanBits(content, net) == 0 {
		return
	}
	// The caller's directories resolve the code's paths; no command line
	// is involved.
	cs := &cmdScan{act: s.act, root: s.act.Caller.WorkspaceRoot, home: s.act.Caller.Home}
	folded := shell.FoldCode(content) // os.homedir() + "/.ssh/id_rsa" → "$HOME/.ssh/id_rsa"
	if raw, label, found := cs.sensitiveMention(folded); found {
		s.add(rExfilFile, what+": its code sends "+label+" ("+raw+") over the network: secrets must not leave the machine", raw)
		return
	}
	if readsHome(content) {
		// A path formatted onto the home: format!("{}/.ssh/id_rsa", home),
		// filepath.Join(home, ".aws/credentials"), "%s/.kube/config".
		var hit, label string
		shell.CodeLiterals(content, func(lit string) {
			if hit != "" {
				return
			}
			rest := lit
			if i := strings.Index(lit, "/."); i >= 0 {
				rest = lit[i+1:]
			}
			if strings.HasPrefix(rest, ".") && strings.IndexByte(rest, ' ') < 0 {
				if sens, l := classify(cs.resolveIn(nil, "~/"+rest).Abs, cs.home); sens != sensNone {
					hit, label = lit, l
				}
			}
		})
		if hit != "" {
			s.add(rExfilFile, what+": its code sends "+label+" ("+hit+" under the home) over the network: secrets must not leave the machine", hit)
			return
		}
	}
	if codeDumpsEnvironment(content) {
		s.add(rExfilFile, what+": its code sends the environment variables (API keys, tokens) over the network: secrets must not leave the machine", "")
	}
}

// readsHome reports code that finds the user's home: env::var("HOME"),
// os.UserHomeDir(), getenv("HOME"), System.getProperty("user.home").
func readsHome(content string) bool {
	for _, m := range []string{`"HOME"`, "UserHomeDir", "home_dir", "homedir", "user.home"} {
		if strings.Contains(content, m) {
			return true
		}
	}
	return false
}

// startsProcesses reports whether compiled code of a kind names a call
// that starts a process, the cheap test before its calls are read.
func startsProcesses(kind, content string) bool {
	switch kind {
	case "go":
		return strings.Contains(content, "Command(")
	case "c":
		return strings.Contains(content, "system(") || strings.Contains(content, "popen(") || strings.Contains(content, "exec")
	case "java":
		return strings.Contains(content, "exec(") || strings.Contains(content, "ProcessBuilder")
	}
	return false
}

// checkCompiledReverseShell reports compiled code that opens a socket,
// starts a shell and hands it the socket as its input and output:
// net.Dial, then exec.Command("/bin/sh") with cmd.Stdin = conn, or
// socket(), connect(), dup2() and execl("/bin/sh"). A program that only
// talks to the network and also runs a tool is not one.
func (s *scan) checkCompiledReverseShell(content, abs, what string) {
	if !s.enabled(rRevScript) || codeMarkers.scanBits(content, traitSocket)&traitSocket == 0 {
		return
	}
	shell := false
	for _, sh := range []string{"/bin/sh", "/bin/bash", "/bin/zsh", `"sh"`, `"bash"`, "cmd.exe"} {
		shell = shell || strings.Contains(content, sh)
	}
	tied := false
	for _, tie := range []string{"dup2(", ".Stdin =", ".Stdin,", "redirectInput(", "redirectErrorStream(", "inheritIO("} {
		tied = tied || strings.Contains(content, tie)
	}
	if shell && tied {
		s.add(rRevScript, what+": its code connects a socket to a shell and hands it the connection: this is a reverse shell", abs)
	}
}

// shellQuote single-quotes text for a synthetic command line.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// writtenFiles returns the files v writes with text the line shows:
// echo/printf > F, cat > F <<EOF, tee F <<EOF, echo … | tee F, and the
// text sed -i / perl -pi insert (inPlaceEdit).
func (cs *cmdScan) writtenFiles(v *cmdView) []planted {
	content, ok := cs.producedText(v)
	var out []planted
	if ok {
		for _, r := range v.c.Redirects {
			if (r.Op == ">" || r.Op == ">>" || r.Op == ">|" || r.Op == "&>") && (r.FD == "" || r.FD == "1") && r.Target != "" && !strings.HasPrefix(r.Target, "&") {
				if ciEnvFile(r.Target) {
					out = append(out, planted{abs: ciEnvPath, content: content})
					continue
				}
				out = append(out, planted{abs: cs.resolveIn(v.c, r.Target).Abs, content: content})
			}
		}
	}
	if files, text, ok := inPlaceEdit(v); ok {
		for _, f := range files {
			out = append(out, planted{abs: cs.resolveIn(v.c, f).Abs, content: text})
		}
	}
	if text, ok := cs.patchText(v); ok {
		for _, p := range unifiedDiff(text) {
			if p.added != "" {
				out = append(out, planted{abs: cs.resolveIn(v.c, p.path).Abs, content: p.added})
			}
		}
	}
	if v.prog == "tee" {
		if text, ok := cs.stdinText(v); ok {
			for _, op := range v.plainOperands() {
				out = append(out, planted{abs: cs.resolveIn(v.c, op).Abs, content: text})
			}
		}
	}
	if v.hasCode {
		// Interpreter code writing a literal into a literal path:
		// file_put_contents('public/x.php', '<?php …'), as > would.
		if prog := v.hostedProgram(); prog.code != "" && hasWriteEffect(prog.effects) {
			for _, w := range shell.CodeTexts(prog.code) {
				out = append(out, planted{abs: cs.resolveIn(v.c, w.Path).Abs, content: w.Text})
			}
		}
	}
	return out
}

// hasWriteEffect reports a write among code's effects with a literal path.
func hasWriteEffect(effects []shell.CodeEffect) bool {
	for _, e := range effects {
		if e.Op == shell.CodeWrite && e.Path != "" {
			return true
		}
	}
	return false
}

// stdinText returns the text v reads on its standard input when the line
// shows it: a here-document or here-string, else what the command just
// before it in a pipeline writes (echo, printf, cat <<EOF).
func (cs *cmdScan) stdinText(v *cmdView) (string, bool) {
	if text, ok := heredocText(v.c.Redirects); ok {
		return text, true
	}
	if b := cs.before(v); len(b) > 0 {
		if u := cs.view(b[len(b)-1]); u != nil {
			return cs.producedText(u)
		}
	}
	return "", false
}

// producedText returns the text a command writes to its output when the
// line shows it: echo and printf arguments, cat of a here-document.
func (cs *cmdScan) producedText(v *cmdView) (string, bool) {
	switch v.prog {
	case "echo":
		args, escapes := v.args, false
		for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "neE") == "" {
			escapes = escapes || strings.Contains(args[0], "e")
			args = args[1:]
		}
		text := strings.Join(args, " ") + "\n"
		if escapes { // echo -e 'a\nb' writes two lines
			text = strings.ReplaceAll(strings.ReplaceAll(text, `\n`, "\n"), `\t`, "\t")
		}
		return text, true
	case "printf":
		if len(v.args) == 0 {
			return "", false
		}
		args := v.args
		if args[0] == "--" && len(args) > 1 {
			args = args[1:] // printf -- FORMAT
		}
		return shell.PrintfText(shell.PrintfEscapes(args[0]), args[1:]), true
	case "cat":
		if len(v.plainOperands()) == 0 {
			return heredocText(v.c.Redirects)
		}
	case "base64", "gbase64", "xxd":
		// A decoder of text the line shows writes that text decoded:
		// echo aW1w… | base64 -d >> app/__init__.py plants what it decodes.
		if len(v.plainOperands()) > 0 {
			return "", false
		}
		if in, ok := cs.stdinText(v); ok {
			return decodedText(v.prog, v.args, in)
		}
	}
	return "", false
}

// decodedText returns what base64 -d or xxd -r -p makes of in; ok is
// false for any other use of the tools or input they would refuse.
func decodedText(prog string, args []string, in string) (string, bool) {
	var out []byte
	var err error
	switch {
	case prog == "xxd" && slices.Contains(args, "-r") && (slices.Contains(args, "-p") || slices.Contains(args, "-ps")):
		out, err = hex.DecodeString(strings.Join(strings.Fields(in), ""))
	case prog != "xxd" && (slices.Contains(args, "-d") || slices.Contains(args, "--decode") || slices.Contains(args, "-D")):
		clean := strings.Join(strings.Fields(in), "")
		out, err = base64.StdEncoding.DecodeString(clean)
		if err != nil {
			out, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(clean, "="))
		}
	default:
		return "", false
	}
	if err != nil || !utf8.Valid(out) {
		return "", false
	}
	return string(out), true
}

// heredocText is the stdin text of the first here-document or
// here-string, with the newline the shell adds to a here-string.
func heredocText(rs []shell.Redirect) (string, bool) {
	for _, r := range rs {
		if text, ok := r.Input(); ok {
			if r.Op == "<<<" {
				text += "\n"
			}
			return text, true
		}
	}
	return "", false
}

// scriptLang decides the language of a script from the runner, else
// from its #! line, else from its name.
func scriptLang(lang, abs, content string) string {
	if lang != "" {
		return lang
	}
	if strings.HasPrefix(content, "#!") {
		line, _, _ := strings.Cut(content, "\n")
		for _, l := range []struct{ word, lang string }{{"python", "python"}, {"node", "js"}, {"perl", "perl"}, {"ruby", "ruby"}, {"php", "php"}, {"lua", "lua"}, {"sh", "shell"}} {
			if strings.Contains(line, l.word) {
				return l.lang
			}
		}
	}
	switch {
	case strings.HasSuffix(abs, ".py"):
		return "python"
	case strings.HasSuffix(abs, ".js") || strings.HasSuffix(abs, ".mjs") || strings.HasSuffix(abs, ".cjs"):
		return "js"
	case strings.HasSuffix(abs, ".pl"):
		return "perl"
	case strings.HasSuffix(abs, ".rb"):
		return "ruby"
	case strings.HasSuffix(abs, ".php"):
		return "php"
	case strings.HasSuffix(abs, ".lua"):
		return "lua"
	case strings.HasSuffix(abs, ".ps1"):
		return "powershell"
	}
	return "shell"
}

// checkHookWrites judges files written by the file tools that tools run
// by themselves (Makefile, package.json scripts, conftest.py, CI
// workflows, git configuration, hooks, editor tasks) and source files,
// which run when the project does.
func (s *scan) checkHookWrites() {
	switch s.act.Type {
	case "write_file", "edit_file":
	default:
		return
	}
	for i := range s.act.Paths {
		p := &s.act.Paths[i]
		if p.Access != actionWrite {
			continue
		}
		abs, lang := p.Abs, ""
		hook := hookKind(abs) != ""
		if !hook {
			lang = codeFileLang(abs)
		}
		s.writtenContents(func(content string) bool {
			s.judgeWrittenFile(abs, content)
			s.checkWeakeningWrite(abs, content)
			if lang != "" {
				s.judgePlanted(lang, content, abs, writesCodeInto(abs))
			}
			return true
		})
		if hook || lang != "" {
			return // the file the tool writes
		}
	}
}

// environmentFile reports files whose variables every session or
// service gets: ~/.ssh/environment (sshd), /etc/environment and
// ~/.pam_environment (pam_env), environment.d (systemd).
func environmentFile(abs string) bool {
	base := baseName(abs)
	return abs == "/etc/environment" || base == ".pam_environment" || strings.HasSuffix(abs, "/.ssh/environment") ||
		strings.Contains(abs, "/environment.d/") && strings.HasSuffix(base, ".conf")
}

// editorEnvFile reports an editor's or dev container's settings, whose
// env maps (terminal.integrated.env.linux, a launch configuration's env,
// remoteEnv) reach every terminal or program they start.
func editorEnvFile(abs string) bool {
	if !strings.HasSuffix(abs, "json") && !strings.HasSuffix(abs, "workspace") {
		return false
	}
	base := baseName(abs)
	return strings.Contains(abs, "/.vscode/") && strings.HasSuffix(base, ".json") || strings.HasSuffix(base, ".code-workspace") ||
		isDevcontainer(base)
}

// jsonEnvAssignments returns the loader variables a JSON text sets, as
// NAME=value words: "LD_PRELOAD": "/x.so" gives LD_PRELOAD=/x.so.
func jsonEnvAssignments(text string) []string {
	var out []string
	for _, name := range loaderVars {
		shell.EachIndex(text, `"`+name+`"`, func(i int) bool {
			rest := strings.TrimLeft(text[i+len(name)+2:], " \t\n")
			if !strings.HasPrefix(rest, ":") {
				return true
			}
			rest = strings.TrimLeft(rest[1:], " \t\n")
			if val, _, ok := strings.Cut(strings.TrimPrefix(rest, `"`), `"`); ok && strings.HasPrefix(rest, `"`) {
				out = append(out, name+"="+val)
			}
			return true
		})
	}
	return out
}

// shipperMarks are the sections and keys of log shippers' and
// collectors' configurations: what they read, where they send it.
var shipperMarks = newFoldSet("[input]", "[output]", "filebeat.", "receivers:", "exporters:", "[sources.", "[sinks.", "sinks:",
	"output.elasticsearch", "output.logstash", "<source>", "<match", "[[inputs.", "[[outputs.", "promtail", "scrape_configs:")

// checkShipperConfig judges a configuration that names secret files as
// its inputs and another host as its output: a log shipper or collector
// (fluent-bit, filebeat, vector, an OpenTelemetry collector) told to
// tail ~/.ssh/* and post it elsewhere sends the secrets on and on.
func (s *scan) checkShipperConfig(abs, content string) {
	if !s.enabled(rExfilFile) || len(content) > 64<<10 || !strings.Contains(content, "/.") && !strings.Contains(content, "history") ||
		!shipperMarks.in(content) {
		return
	}
	secret, host := "", ""
	for _, tok := range strings.FieldsFunc(content, func(r rune) bool { return strings.ContainsRune(" \t\n,[]\"'=", r) }) {
		switch {
		case secret == "" && (strings.HasPrefix(tok, "/") || strings.HasPrefix(tok, "~/")):
			p := tok
			if strings.HasPrefix(p, "~/") {
				p = s.act.Caller.Home + p[1:]
			}
			if i := strings.IndexAny(p, "*?"); i >= 0 { // a glob: the directory it lists
				p = parentDir(p[:i] + "x")
			}
			if sens, label := classify(p, s.act.Caller.Home); sens != sensNone {
				secret = label + " (" + tok + ")"
			}
		case host == "":
			if h := urlHost(tok); h != "" && !isLoopbackHost(h) && !s.an.trusted.match(h) {
				host = h
			} else if looksLikeHost(tok) && strings.Count(tok, ".") >= 2 && !isLoopbackHost(tok) && !s.an.trusted.match(tok) && !strings.ContainsAny(tok, "/") {
				host = tok // Host collector.example.net
			}
		}
	}
	if secret != "" && host != "" {
		s.add(rExfilFile, "writes "+baseName(abs)+", a configuration that reads "+secret+" and sends to "+host+": whatever runs it ships the secrets on; refuse it", abs)
	}
}

// jvmOptionsFile reports a file whose text a build tool or an IDE hands
// to every JVM it starts: Gradle's gradle.properties (org.gradle.jvmargs),
// Bazel's .bazelrc (--host_jvm_args, --action_env), Maven's
// .mvn/jvm.config, sbt's .jvmopts / .sbtopts, JetBrains' *.vmoptions.
func jvmOptionsFile(abs, base string) bool {
	switch base {
	case "gradle.properties", ".bazelrc", "bazel.bazelrc", ".jvmopts", ".sbtopts", "jvm.options":
		return true
	case "jvm.config":
		return strings.HasSuffix(abs, "/.mvn/jvm.config")
	default:
		return strings.HasSuffix(base, ".vmoptions")
	}
}

// checkJVMOptions judges the JVM options a jvmOptionsFile gives: an agent
// loaded from outside the project (-javaagent:, -agentpath:) runs inside
// every build or IDE from now on; a debugger listening beyond loopback
// (-agentlib:jdwp=…,server=y,address=*:5005) runs code for whoever
// connects; Bazel's --action_env=LD_PRELOAD=… injects a library into
// every build action.
func (s *scan) checkJVMOptions(abs, content string) {
	for _, f := range strings.FieldsFunc(content, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '"' || r == '\'' }) {
		if name, val, ok := strings.Cut(f, "=-"); ok && (strings.HasPrefix(name, "--") || strings.HasSuffix(name, "jvmargs")) && !strings.HasSuffix(name, "_env") {
			f = "-" + val // --host_jvm_args=-javaagent:…, org.gradle.jvmargs=-javaagent:…
		}
		switch {
		case strings.HasPrefix(f, "-javaagent:") || strings.HasPrefix(f, "-agentpath:"):
			if _, file := interpreterPreload("JAVA_TOOL_OPTIONS="+f, ""); file != "" && s.enabled(rPersistLDPreload) {
				s.add(rPersistLDPreload, "writes "+baseName(abs)+", whose JVM options load "+file+" into every JVM the tool starts from now on: refuse unless it is your own instrumentation", f)
			}
		case strings.HasPrefix(f, "-agentlib:jdwp=") || strings.HasPrefix(f, "-Xrunjdwp:"):
			if addr := jdwpListen(f); addr != "" && s.enabled(rNetExposedShell) {
				s.add(rNetExposedShell, "writes "+baseName(abs)+", whose JVM options open a Java debugger on "+addr+": whoever reaches it runs code in the JVM; keep it on localhost", f)
			}
		case strings.HasPrefix(f, "--action_env=") || strings.HasPrefix(f, "--host_action_env=") || strings.HasPrefix(f, "--test_env="):
			if s.enabled(rPersistLDPreload) {
				_, kv, _ := strings.Cut(f, "=")
				s.checkPreloadWords([]string{kv}, false)
			}
		}
	}
}

// jdwpListen returns the address a JDWP agent option listens on when it
// is a server reachable beyond loopback (address=*:5005, 0.0.0.0:5005),
// or "". A bare port is loopback since Java 9.
func jdwpListen(opt string) string {
	if !strings.Contains(opt, "server=y") {
		return ""
	}
	for part := range strings.SplitSeq(opt[strings.IndexAny(opt, "=:")+1:], ",") {
		if addr, ok := strings.CutPrefix(part, "address="); ok {
			if h, _, hasPort := strings.Cut(addr, ":"); hasPort && (h == "*" || openBind(addr)) {
				if h == "localhost" || strings.HasPrefix(h, "127.") {
					return ""
				}
				return addr
			}
		}
	}
	return ""
}

// isDevcontainer reports a dev container's definition by its file name.
func isDevcontainer(base string) bool {
	return base == "devcontainer.json" || base == ".devcontainer.json"
}

// devcontainerHostAccess says what of the host a devcontainer.json (or a
// jq filter over one) hands the container through its docker run
// arguments or its "privileged" key, or "": privileged mode, the host's
// processes, the host's root mounted. (The Docker socket, which
// docker-outside-of-docker setups mount on purpose, is judged as in
// compose files: not here.)
func devcontainerHostAccess(text string) string {
	flat := flatSetting(text)
	switch {
	case strings.Contains(flat, "--privileged") || strings.Contains(flat, "privileged:true"):
		return "privileged mode"
	case strings.Contains(flat, "--pid=host"):
		return "the host's processes (--pid=host)"
	case strings.Contains(flat, ",/:/") || strings.Contains(flat, "[/:/") || strings.Contains(flat, "source=/,"):
		return "the host's root directory mounted"
	}
	return ""
}

// uploadsRunAsCode returns the image or document extension an Apache
// .htaccess maps to PHP's handler (AddType application/x-httpd-php .jpg,
// AddHandler php-script .png), or "".
func uploadsRunAsCode(base, content string) string {
	if base != ".htaccess" {
		return ""
	}
	for line := range strings.SplitSeq(strings.ToLower(content), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "addtype" && f[0] != "addhandler" || !strings.Contains(f[1], "php") {
			continue
		}
		for _, ext := range f[2:] {
			switch strings.TrimPrefix(ext, ".") {
			case "jpg", "jpeg", "png", "gif", "webp", "svg", "ico", "txt", "pdf", "bmp":
				return ext
			}
		}
	}
	return ""
}

// caddyAdminOpen returns the address a Caddyfile's global admin option
// listens on when it reaches beyond loopback, or "".
func caddyAdminOpen(base, content string) string {
	if base != "Caddyfile" && !strings.HasSuffix(base, ".caddyfile") {
		return ""
	}
	for line := range strings.SplitSeq(content, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "admin" && f[1] != "off" && strings.Contains(f[1], ":") && openBind(f[1]) {
			return f[1]
		}
	}
	return ""
}

// mailCopies says where a mail configuration sends a copy of every
// message: a .forward address (not a pipe, a file or the user's own
// \name), a mutt my_hdr Bcc or Cc; "" for none.
func mailCopies(base, content string) string {
	switch {
	case base == ".forward":
		for line := range strings.SplitSeq(content, "\n") {
			for _, entry := range strings.Split(line, ",") {
				entry = strings.Trim(strings.TrimSpace(entry), `"`)
				if strings.Contains(entry, "@") && !strings.HasPrefix(entry, "|") && !strings.HasPrefix(entry, "/") && !strings.HasPrefix(entry, "\\") {
					return "forwards every message delivered to you to " + textcut.Cut(entry, maxEvidence)
				}
			}
		}
	case base == ".muttrc" || base == "muttrc" || base == ".neomuttrc" || base == "neomuttrc":
		for line := range strings.SplitSeq(content, "\n") {
			if _, hdr, ok := strings.Cut(line, "my_hdr"); ok {
				hdr = strings.Trim(strings.TrimSpace(hdr), `'"`)
				if len(hdr) > 4 && (strings.EqualFold(hdr[:4], "bcc:") || strings.EqualFold(hdr[:3], "cc:")) {
					return "copies every mail you send to " + textcut.Cut(hdr, maxEvidence)
				}
			}
		}
	}
	return ""
}

// mailcapRunsAttachments returns the type of attachment a mailcap entry
// hands to a shell or an interpreter as its script (text/plain; sh %s),
// or "".
func mailcapRunsAttachments(base, content string) string {
	if base != ".mailcap" && base != "mailcap" {
		return ""
	}
	for line := range strings.SplitSeq(content, "\n") {
		typ, cmd, ok := strings.Cut(line, ";")
		if !ok {
			continue
		}
		fields := strings.Fields(cmd)
		if len(fields) < 2 || !strings.Contains(cmd, "%s") {
			continue
		}
		if k := interpreterKind(baseName(fields[0])); k != "" {
			return strings.TrimSpace(typ)
		}
	}
	return ""
}

// filterEnvAssignments returns the loader variables a jq or yq filter
// sets under env, as NAME=value words: .env.NODE_OPTIONS = "--require x".
func filterEnvAssignments(filter string) []string {
	var out []string
	if !strings.Contains(filter, ".env.") {
		return nil
	}
	names := append(slices.Clone(loaderVars), slices.Collect(maps.Keys(preloadRuntime))...)
	slices.Sort(names)
	for _, name := range names {
		shell.EachIndex(filter, ".env."+name, func(i int) bool {
			rest := strings.TrimLeft(filter[i+len(".env.")+len(name):], " \t")
			if rest, ok := strings.CutPrefix(rest, "="); ok {
				if lit, _, ok := codeLiteralAt(strings.TrimLeft(rest, " \t"), 0); ok {
					out = append(out, name+"="+lit)
				}
			}
			return true
		})
	}
	return out
}

// yamlCommandFile reports the hook kinds whose commands sit under YAML
// keys (run:, script:, cmds:, entry:).
func yamlCommandFile(kind string) bool {
	return kind == "ci" || kind == "taskfile" || kind == "pre-commit"
}

// fragmentCommands returns the lines of a piece of such a file that are
// not YAML keys: the commands an edit writes into a step.
func fragmentCommands(text string) []string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		t := strings.TrimPrefix(strings.TrimSpace(line), "- ")
		if _, _, isKey := yamlKeyLine(t); t == "" || isKey {
			continue
		}
		out = append(out, unquoteYAML(t))
	}
	return out
}

// checkCodeWrittenInstructions judges interpreter code that writes a file
// agents load as instructions (pathlib.Path('.cursorrules').write_text(…),
// fs.appendFileSync('AGENTS.md', …)): the text it writes is in the code,
// and is judged as text written into the file.
func (s *scan) checkCodeWrittenInstructions(cs *cmdScan, v *cmdView) {
	for _, e := range v.hostedProgram().effects {
		if e.Op != shell.CodeWrite || e.Path == "" || !mayBeInstructionFile(e.Path) && !strings.Contains("/"+v.c.Dir, "/.") {
			continue
		}
		if abs := cs.resolveIn(v.c, e.Path).Abs; agentInstructionFile(abs) {
			s.judgeAgentRulesText(abs, v.hostedProgram().code)
			return
		}
	}
}

// codeAsJSON reads Python's and JavaScript's dict code as the JSON it
// writes: d['key'] = v is "key": v, and Python's booleans are JSON's.
var codeAsJSON = strings.NewReplacer(`']=`, `"=`, `'] =`, `"=`, `"]=`, `"=`, `"] =`, `"=`, "'", `"`, "False", "false", "True", "true")

// checkCodeWrittenSettings judges interpreter code that names an
// agent's settings file and writes: d['permissions'] = {'allow':
// ['Bash(*)']}; json.dump(d, open(p, 'w')) is the settings written
// whatever variable carries the path, so the code's text is judged as
// the file's.
func (s *scan) checkCodeWrittenSettings(v *cmdView) {
	if !s.enabled(rDefAgentGuard) || !v.codeAny(traitWrites) || !strings.Contains(v.code, "settings") && !strings.Contains(v.code, "config.toml") &&
		!strings.Contains(v.code, ".claude.json") {
		return
	}
	text, done := "", false // text: the code with Python's and JavaScript's quotes as JSON's, made once
	eachCodeLiteral(v.code, func(lit string) {
		if done || !strings.Contains(lit, ".claude") && !strings.Contains(lit, ".codex") && !strings.Contains(lit, ".gemini") &&
			!strings.Contains(lit, ".cursor") && !strings.Contains(lit, ".vscode") && !editorUserSettings(lit) {
			return
		}
		if text == "" {
			// d['key'] = v is "key": v; Python's booleans are JSON's.
			text = codeAsJSON.Replace(v.code)
		}
		if off := agentSettingsOff(lit, text); off != "" {
			s.add(rDefAgentGuard, "a "+v.prog+" program writes "+baseName(lit)+" so that it "+off+": what the agent then does is judged by no one; refuse it", v.code)
			done = true
		}
	})
}

// mayBeInstructionFile is agentInstructionFile's answer for a path as
// written, before resolving it (which most written paths need not be):
// its names and directories, without the leading slash.
func mayBeInstructionFile(p string) bool {
	base := baseName(p)
	if agentRulesFiles[base] || memoryFileName(base) {
		return true
	}
	for _, dir := range instructionDirs {
		if strings.Contains(p, dir[1:]) {
			return true
		}
	}
	return false
}
