package shell

import (
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// What Ansible does on each host it manages, as the shell commands that
// would do the same: an ad hoc module call (ansible HOSTS -m copy -a
// 'content=… dest=…') and the tasks of a playbook given on the line
// (ansible-playbook /dev/stdin <<EOF). The shell, command and raw
// modules run their command; copy, lineinfile, blockinfile,
// authorized_key, file, get_url, service / systemd and cron change
// files and services as printf > FILE, rm -rf, curl -o, systemctl or
// crontab would. Other modules are not followed.

// maxAnsibleTasks bounds the tasks of one playbook that are followed.
const maxAnsibleTasks = 64

// ansibleCommand returns the shell command a module call amounts to on
// a managed host, or "". args is the module's argument text (k=v pairs,
// or the command of shell, command and raw), kv its parsed pairs when
// the call came as a mapping.
func ansibleCommand(module, args string, kv map[string]string) string {
	module = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(module, "ansible.builtin."), "ansible.posix."), "ansible.legacy.")
	switch module {
	case "shell", "command", "raw":
		if kv != nil {
			return kv["cmd"]
		}
		return args
	}
	if kv == nil {
		kv = ansibleArgs(args)
	}
	first := func(keys ...string) string {
		for _, k := range keys {
			if v := kv[k]; v != "" {
				return v
			}
		}
		return ""
	}
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	dest := first("dest", "path", "name")
	switch module {
	case "copy", "template":
		if dest = first("dest", "path"); dest == "" {
			return ""
		}
		if content, ok := kv["content"]; ok {
			return "printf '%s' " + q(content) + " > " + q(dest)
		}
		if src := kv["src"]; src != "" {
			return "cp " + q(src) + " " + q(dest)
		}
	case "lineinfile", "blockinfile":
		text := first("line", "block")
		if dest == "" || text == "" || kv["state"] == "absent" {
			return ""
		}
		return "printf '%s\\n' " + q(text) + " >> " + q(dest)
	case "authorized_key":
		user, key := kv["user"], kv["key"]
		if user == "" || key == "" || kv["state"] == "absent" {
			return ""
		}
		home := "/home/" + user
		if user == "root" {
			home = "/root"
		}
		return "printf '%s\\n' " + q(key) + " >> " + q(home+"/.ssh/authorized_keys")
	case "file":
		switch {
		case dest == "":
		case kv["state"] == "absent":
			return "rm -rf " + q(dest)
		case kv["mode"] != "":
			return "chmod " + q(kv["mode"]) + " " + q(dest)
		}
	case "get_url":
		if url := kv["url"]; url != "" && dest != "" {
			return "curl -fsSL -o " + q(dest) + " " + q(url)
		}
	case "service", "systemd", "systemd_service":
		name := kv["name"]
		if name == "" {
			return ""
		}
		var cmds []string
		switch kv["state"] {
		case "stopped":
			cmds = append(cmds, "systemctl stop "+q(name))
		case "started":
			cmds = append(cmds, "systemctl start "+q(name))
		case "restarted":
			cmds = append(cmds, "systemctl restart "+q(name))
		case "reloaded":
			cmds = append(cmds, "systemctl reload "+q(name))
		}
		if e := kv["enabled"]; e == "no" || e == "false" || e == "False" {
			cmds = append(cmds, "systemctl disable "+q(name))
		}
		if m := kv["masked"]; m == "yes" || m == "true" || m == "True" {
			cmds = append(cmds, "systemctl mask "+q(name))
		}
		return strings.Join(cmds, "; ")
	case "cron":
		if job := kv["job"]; job != "" && kv["state"] != "absent" {
			return "(crontab -l; printf '%s\\n' " + q("* * * * * "+job) + ") | crontab -"
		}
	}
	return ""
}

// ansibleCheckMode reports ansible --check / -C: the hosts report what
// would change, and nothing runs.
func ansibleCheckMode(words []string) bool {
	return slices.Contains(words, "--check") || slices.Contains(words, "-C")
}

// ansibleArgs parses an ad hoc module's k=v arguments, with values in
// single or double quotes.
func ansibleArgs(s string) map[string]string {
	kv := map[string]string{}
	for len(s) > 0 {
		s = strings.TrimLeft(s, " \t\n")
		eq := strings.IndexAny(s, "= \t\n")
		if eq <= 0 || s[eq] != '=' {
			if sp := strings.IndexAny(s, " \t\n"); sp >= 0 {
				s = s[sp:]
				continue
			}
			break
		}
		key, rest := s[:eq], s[eq+1:]
		var val strings.Builder
		i := 0
		for ; i < len(rest) && rest[i] != ' ' && rest[i] != '\t' && rest[i] != '\n'; i++ {
			if c := rest[i]; c == '\'' || c == '"' {
				end := strings.IndexByte(rest[i+1:], c)
				if end < 0 {
					val.WriteString(rest[i+1:])
					i = len(rest)
					break
				}
				val.WriteString(rest[i+1 : i+1+end])
				i += end + 1
				continue
			}
			val.WriteByte(rest[i])
		}
		kv[key] = val.String()
		s = rest[i:]
	}
	return kv
}

// playbookCommands returns the commands of a playbook's tasks, in order:
// each play's pre_tasks, tasks, post_tasks and handlers, into blocks.
// Text that is not a playbook gives none.
func playbookCommands(text string) []string {
	var plays []map[string]any
	if yaml.Unmarshal([]byte(text), &plays) != nil {
		return nil
	}
	var out []string
	var tasks func(list any)
	tasks = func(list any) {
		items, _ := list.([]any)
		for _, it := range items {
			if len(out) >= maxAnsibleTasks {
				return
			}
			task, ok := it.(map[string]any)
			if !ok {
				continue
			}
			for _, k := range []string{"block", "rescue", "always"} {
				if sub, ok := task[k]; ok {
					tasks(sub)
				}
			}
			for _, module := range slices.Sorted(maps.Keys(task)) { // one module a task; sorted, so a verdict is the same each time
				v := task[module]
				var c string
				switch args := v.(type) {
				case string:
					c = ansibleCommand(module, args, nil)
				case map[string]any:
					kv := make(map[string]string, len(args))
					for k, val := range args {
						if s, ok := val.(string); ok {
							kv[k] = s
						}
					}
					c = ansibleCommand(module, "", kv)
				}
				if c != "" {
					out = append(out, c)
				}
			}
		}
	}
	for _, play := range plays {
		for _, k := range []string{"pre_tasks", "tasks", "post_tasks", "handlers"} {
			tasks(play[k])
		}
	}
	return out
}
