package shell

import (
	"slices"
	"strings"
)

// maxWrapChain bounds wrappers of wrappers (sudo env nice timeout …).
const maxWrapChain = 16

// wrapper describes a program that runs another program given in its
// arguments. The wrapper stays a Command; the wrapped program is added as
// another Command at the same depth, with Via set to the wrapper.
type wrapper struct {
	// valueShort lists short options that take a value (-u root, -uroot).
	valueShort string
	// valueLong lists long options that take the next argument as value
	// (--user root); --opt=value needs no entry.
	valueLong []string
	// noRun lists short options that mean nothing is run (command -v x).
	noRun string
	// operands is how many operands come before the program
	// (timeout DURATION, chroot DIR).
	operands int
	// assigns: NAME=VAL before the program sets its environment.
	assigns bool
	// keepsStdio: the program inherits the wrapper's redirections, so a
	// heredoc given to "sudo bash <<EOF" reaches bash.
	keepsStdio bool
	// sub: the wrapper runs a program only under one of these
	// subcommands (uv run, poetry run, bundle exec, conda run); the
	// options above are the subcommand's.
	sub []string
}

var wrappers = map[string]wrapper{
	"sudo": {
		valueShort: "ugpCDrtURT",
		valueLong:  []string{"user", "group", "prompt", "close-from", "chdir", "role", "type", "other-user", "command-timeout", "host"},
		noRun:      "elvVK",
		assigns:    true, keepsStdio: true,
	},
	"doas":    {valueShort: "uC", keepsStdio: true},
	"pkexec":  {valueLong: []string{"user"}, keepsStdio: true},
	"env":     {valueShort: "uC", valueLong: []string{"unset", "chdir"}, assigns: true, keepsStdio: true},
	"nohup":   {keepsStdio: true},
	"timeout": {valueShort: "sk", valueLong: []string{"signal", "kill-after"}, operands: 1, keepsStdio: true},
	"nice":    {valueShort: "n", valueLong: []string{"adjustment"}, keepsStdio: true},
	"ionice":  {valueShort: "cn", valueLong: []string{"class", "classdata"}, noRun: "pPu", keepsStdio: true},
	"time":    {valueShort: "fo", valueLong: []string{"format", "output"}, keepsStdio: true},
	"command": {noRun: "vV", keepsStdio: true},
	"builtin": {keepsStdio: true},
	"exec":    {valueShort: "a", keepsStdio: true},
	"stdbuf":  {valueShort: "ioe", valueLong: []string{"input", "output", "error"}, keepsStdio: true},
	"setsid":  {keepsStdio: true},
	"chroot":  {valueLong: []string{"userspec", "groups"}, operands: 1, keepsStdio: true},
	"xargs": {
		valueShort: "adEILnPs",
		valueLong:  []string{"arg-file", "delimiter", "eof", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"},
	},
	"watch": {valueShort: "nq", valueLong: []string{"interval", "equexit"}},
	// Programs that run a command to trace, limit, schedule or isolate it
	// (GTFOBins lists each as a way to run anything).
	"chrt":        {valueShort: "TPD", valueLong: []string{"sched-runtime", "sched-period", "sched-deadline"}, noRun: "pm", operands: 1, keepsStdio: true},
	"taskset":     {noRun: "p", operands: 1, keepsStdio: true},
	"strace":      {valueShort: "abeEIoOpPsSUuX", keepsStdio: true},
	"ltrace":      {valueShort: "aAeEfFlLnopsuxXD", keepsStdio: true},
	"rlwrap":      {valueShort: "abCDefFgHlOpPqsStwz", keepsStdio: true},
	"cpulimit":    {valueShort: "lpe", valueLong: []string{"limit", "pid", "exe"}, keepsStdio: true},
	"firejail":    {keepsStdio: true},
	"unbuffer":    {keepsStdio: true},
	"dbus-launch": {keepsStdio: true},
	"xvfb-run":    {valueShort: "nsfep", valueLong: []string{"server-num", "server-args", "auth-file", "error-file", "xauth-protocol"}, keepsStdio: true},
	"unshare":     {valueShort: "SGRw", valueLong: []string{"setuid", "setgroups", "root", "wd"}, keepsStdio: true},
	"nsenter":     {valueShort: "tSGw", valueLong: []string{"target", "setuid", "setgid", "wd"}, keepsStdio: true},
	"sshpass":     {valueShort: "pfde", keepsStdio: true},
	// A project's or a toolchain's environment around a command: uv run,
	// poetry run, conda run -n ENV, bundle exec, direnv exec DIR,
	// aws-vault exec PROFILE --, a secrets manager's run -- (op, doppler).
	"uv": {sub: []string{"run"}, valueShort: "p", valueLong: []string{"with", "with-editable", "with-requirements", "python", "package",
		"directory", "project", "env-file", "extra", "group", "only-group", "no-group", "index", "index-url", "extra-index-url",
		"find-links", "config-file"}, keepsStdio: true},
	"uvx":        {valueShort: "p", valueLong: []string{"from", "with", "with-editable", "with-requirements", "python", "index-url"}, keepsStdio: true},
	"pipx":       {sub: []string{"run"}, valueLong: []string{"spec", "python", "index-url", "pip-args"}, keepsStdio: true},
	"poetry":     {sub: []string{"run"}, valueShort: "CP", valueLong: []string{"directory", "project"}, keepsStdio: true},
	"pipenv":     {sub: []string{"run"}, keepsStdio: true},
	"pdm":        {sub: []string{"run"}, valueShort: "p", valueLong: []string{"project"}, keepsStdio: true},
	"hatch":      {sub: []string{"run"}, keepsStdio: true},
	"rye":        {sub: []string{"run"}, keepsStdio: true},
	"pixi":       {sub: []string{"run", "exec"}, valueShort: "e", valueLong: []string{"environment", "manifest-path"}, keepsStdio: true},
	"conda":      {sub: []string{"run"}, valueShort: "np", valueLong: []string{"name", "prefix", "cwd"}, keepsStdio: true},
	"mamba":      {sub: []string{"run"}, valueShort: "np", valueLong: []string{"name", "prefix", "cwd"}, keepsStdio: true},
	"micromamba": {sub: []string{"run"}, valueShort: "np", valueLong: []string{"name", "prefix", "cwd"}, keepsStdio: true},
	"bundle":     {sub: []string{"exec"}, valueLong: []string{"gemfile"}, keepsStdio: true},
	"direnv":     {sub: []string{"exec"}, operands: 1, keepsStdio: true},
	"asdf":       {sub: []string{"exec"}, keepsStdio: true},
	"rbenv":      {sub: []string{"exec"}, keepsStdio: true},
	"pyenv":      {sub: []string{"exec"}, keepsStdio: true},
	"nodenv":     {sub: []string{"exec"}, keepsStdio: true},
	"opam":       {sub: []string{"exec"}, keepsStdio: true},
	"devbox":     {sub: []string{"run"}, keepsStdio: true},
	"aws-vault":  {sub: []string{"exec"}, operands: 1, valueShort: "d", valueLong: []string{"duration", "region", "mfa-token"}, keepsStdio: true},
	"op":         {sub: []string{"run"}, valueLong: []string{"env-file"}, keepsStdio: true},
	"doppler":    {sub: []string{"run"}, valueShort: "pc", valueLong: []string{"project", "config"}, keepsStdio: true},
	"dotenvx":    {sub: []string{"run"}, valueShort: "f", valueLong: []string{"env-file"}, keepsStdio: true},
	"infisical":  {sub: []string{"run"}, valueLong: []string{"env", "path", "projectId"}, keepsStdio: true},
	"systemd-run": {
		valueShort: "pEuMH",
		valueLong: []string{"property", "setenv", "unit", "uid", "gid", "nice", "working-directory", "description", "slice", "machine",
			"host", "on-calendar", "on-active", "on-boot", "on-startup", "on-unit-active", "on-unit-inactive", "timer-property",
			"path-property", "socket-property", "service-type"},
	},
}

// unwrap adds the program a wrapper runs. fields are the wrapper's
// arguments.
func (w *walker) unwrap(program string, args []field, redirs []Redirect, fr frame) {
	if program == "find" {
		w.findExec(args, fr)
		return
	}
	spec, ok := wrappers[program]
	if !ok {
		return
	}
	inner, ok := w.wrapFrame(fr, program, args)
	if !ok {
		return
	}
	if program == "env" {
		if script, ok := envSplitString(args); ok {
			inner.via = "env -S"
			w.sameDepthScript(script, inner)
			return
		}
	}
	if len(spec.sub) > 0 {
		// The subcommand is the first word that is no option (program
		// options before it, such as poetry -C DIR run, are skipped).
		i := 0
		for i < len(args) && strings.HasPrefix(args[i].text, "-") {
			i++
		}
		if i == len(args) || !slices.Contains(spec.sub, args[i].text) {
			return // uv pip install, poetry add, bundle install: nothing wrapped
		}
		args = args[i+1:]
	}
	start, assigns, ok := spec.commandStart(args)
	if !ok {
		return
	}
	if d, ok := wrapperDir(program, args[:start]); ok {
		inner.chdir = joinDir(w.curDir(fr), d)
	}
	if !spec.keepsStdio {
		redirs = nil
	}
	if program == "watch" && !watchExecs(args[:start]) {
		// watch hands its arguments, joined, to sh -c.
		w.sameDepthScript(strings.Join(texts(args[start:]), " "), inner)
		return
	}
	w.emitCall(args[start:], assigns, redirs, inner)
}

// commandStart finds where the wrapped program starts in args, collecting
// environment assignments before it. ok is false when nothing is run.
func (spec wrapper) commandStart(args []field) (start int, assigns []string, ok bool) {
	operands := spec.operands
	optionsDone := false
	for i := 0; i < len(args); i++ {
		a := args[i].text
		if !optionsDone && a == "--" {
			optionsDone = true
			continue
		}
		if !optionsDone && len(a) > 1 && a[0] == '-' {
			if strings.HasPrefix(a, "--") {
				if !strings.Contains(a, "=") && slices.Contains(spec.valueLong, a[2:]) {
					i++
				}
				continue
			}
			opts := a[1:]
			for j := 0; j < len(opts); j++ {
				if strings.IndexByte(spec.noRun, opts[j]) >= 0 {
					return 0, nil, false
				}
				if strings.IndexByte(spec.valueShort, opts[j]) >= 0 {
					if j == len(opts)-1 {
						i++ // value is the next argument
					}
					break
				}
			}
			continue
		}
		if spec.assigns && isAssignment(a) {
			assigns = append(assigns, a)
			continue
		}
		if operands > 0 {
			operands--
			continue
		}
		return i, assigns, true
	}
	return 0, nil, false
}

// isAssignment reports whether a word is NAME=value.
func isAssignment(s string) bool {
	eq := strings.IndexByte(s, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := s[i]
		if !(c == '_' || isAlnum(c)) || (i == 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// findExec adds the programs of find's -exec, -execdir, -ok and -okdir
// actions, each running up to ";" or "+". The files find hands them are
// put in place of {} as the globs they stand for (findGlobs), one call
// each, so find ~ -name '*.py' -exec shred -u {} + is judged as shred -u
// ~/*.py, as ls | xargs rm is judged as rm *. In the program's place {}
// stays: what running every file found does is not a path's question.
func (w *walker) findExec(args []field, fr frame) {
	var globs []string // made when an action first names {}
	for i := 0; i < len(args); i++ {
		action := args[i].text
		switch action {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		start := i + 1
		end := start
		for end < len(args) && args[end].text != ";" && args[end].text != "+" {
			end++
		}
		if end > start {
			call := args[start:end]
			if !namesFound(call[1:]) {
				w.wrapped(call, nil, fr, "find "+action)
			} else {
				if globs == nil {
					globs = findGlobs(texts(args[:i]))
				}
				for _, g := range globs[:min(len(globs), maxXargsItems)] {
					w.wrapped(foundIn(call, g), nil, fr, "find "+action)
				}
			}
		}
		i = end
	}
}

// namesFound reports arguments of a find action that name the file found.
func namesFound(args []field) bool {
	for _, f := range args {
		if strings.Contains(f.text, "{}") {
			return true
		}
	}
	return false
}

// foundIn is call with the glob g in place of {} in its arguments.
func foundIn(call []field, g string) []field {
	run := slices.Clone(call)
	for k := 1; k < len(run); k++ {
		if f := &run[k]; strings.Contains(f.text, "{}") {
			f.text = strings.ReplaceAll(f.text, "{}", g)
			f.raw = strings.ReplaceAll(f.raw, "{}", g)
			f.glob = true
		}
	}
	return run
}

// watchExecs reports whether watch was given -x/--exec, so it runs its
// arguments directly instead of through sh -c.
func watchExecs(opts []field) bool {
	for _, f := range opts {
		a := f.text
		if a == "--exec" {
			return true
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], 'x') >= 0 {
			return true
		}
	}
	return false
}

// envSplitString returns the command line given to env -S / --split-string,
// with any arguments after it, which env splits and runs.
func envSplitString(args []field) (string, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i].text
		var script string
		rest := i + 1
		switch {
		case a == "-S" || a == "--split-string":
			if rest >= len(args) {
				return "", false
			}
			script = args[rest].text
			rest++
		case strings.HasPrefix(a, "--split-string="):
			script = a[len("--split-string="):]
		case strings.HasPrefix(a, "-S") && !strings.HasPrefix(a, "--"):
			script = a[2:]
		case a == "--" || !strings.HasPrefix(a, "-"):
			return "", false
		default:
			continue
		}
		if rest < len(args) {
			script += " " + strings.Join(texts(args[rest:]), " ")
		}
		return script, true
	}
	return "", false
}

// sameDepthScript analyses a command line a wrapper runs through a shell
// (watch, env -S) as if its commands were wrapped directly.
func (w *walker) sameDepthScript(src string, fr frame) {
	if !w.takeNestedBudget(src) {
		w.s.TooDeep = true
		w.evasion("too-deep", src)
		return
	}
	w.parseScript(src, fr, false)
}

// wrapped emits the program a command runs with its arguments (find
// -exec, flock, busybox APPLET, docker exec, …), as unwrap does for a
// wrapper.
func (w *walker) wrapped(call []field, redirs []Redirect, fr frame, via string) {
	if len(call) == 0 {
		return
	}
	if inner, ok := w.wrapFrame(fr, via, call); ok {
		w.emitCall(call, nil, redirs, inner)
	}
}

// wrapFrame is the frame of a program run by another one, Via it; past
// maxWrapChain the line is too deep (evidence: the words run) and ok is
// false.
func (w *walker) wrapFrame(fr frame, via string, evidence []field) (inner frame, ok bool) {
	if fr.wrap >= maxWrapChain {
		w.s.TooDeep = true
		w.evasion("too-deep", strings.Join(texts(evidence), " "))
		return fr, false
	}
	inner = fr
	inner.via = via
	inner.wrap++
	return inner, true
}
