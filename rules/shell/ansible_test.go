package shell

import (
	"maps"
	"slices"
	"testing"
)

func TestAnsibleArgs(t *testing.T) {
	got := ansibleArgs(`user=root key='ssh-rsa AAAA x@y' mode="0440" state=present  junk`)
	want := map[string]string{"user": "root", "key": "ssh-rsa AAAA x@y", "mode": "0440", "state": "present"}
	if !maps.Equal(got, want) {
		t.Errorf("ansibleArgs = %v, want %v", got, want)
	}
}

func TestAnsibleCommand(t *testing.T) {
	for _, c := range []struct{ module, args, want string }{
		{"shell", "id -u", "id -u"},
		{"ansible.builtin.command", "uname -a", "uname -a"},
		{"copy", `content="x y" dest=/etc/motd`, `printf '%s' 'x y' > '/etc/motd'`},
		{"copy", "src=dist/ dest=/srv/www/", "cp 'dist/' '/srv/www/'"},
		{"authorized_key", "user=root key='ssh-ed25519 AAAA k'", `printf '%s\n' 'ssh-ed25519 AAAA k' >> '/root/.ssh/authorized_keys'`},
		{"authorized_key", "user=deploy key='k' state=absent", ""},
		{"lineinfile", "path=/etc/hosts line='1.2.3.4 x'", `printf '%s\n' '1.2.3.4 x' >> '/etc/hosts'`},
		{"file", "path=/srv/data state=absent", "rm -rf '/srv/data'"},
		{"get_url", "url=http://x/a dest=/tmp/a", "curl -fsSL -o '/tmp/a' 'http://x/a'"},
		{"service", "name=auditd state=stopped enabled=no", "systemctl stop 'auditd'; systemctl disable 'auditd'"},
		{"systemd", "name=nginx state=restarted", "systemctl restart 'nginx'"},
		{"cron", "name=x job='curl x | sh'", `(crontab -l; printf '%s\n' '* * * * * curl x | sh') | crontab -`},
		{"ping", "", ""},
	} {
		if got := ansibleCommand(c.module, c.args, nil); got != c.want {
			t.Errorf("ansibleCommand(%q, %q) = %q, want %q", c.module, c.args, got, c.want)
		}
	}
}

func TestPlaybookCommands(t *testing.T) {
	book := `
- hosts: all
  become: true
  pre_tasks:
    - name: ping
      ping:
  tasks:
    - name: clean
      shell: find /var/lib/mysql -type f -delete
    - block:
        - ansible.builtin.command:
            cmd: id -u
    - copy:
        content: "x"
        dest: /etc/motd
  handlers:
    - service: name=nginx state=reloaded
`
	want := []string{"find /var/lib/mysql -type f -delete", "id -u", `printf '%s' 'x' > '/etc/motd'`, "systemctl reload 'nginx'"}
	if got := playbookCommands(book); !slices.Equal(got, want) {
		t.Errorf("playbookCommands = %q, want %q", got, want)
	}
	if got := playbookCommands("not: [a playbook"); got != nil {
		t.Errorf("playbookCommands of bad YAML = %q", got)
	}
}

func FuzzAnsible(f *testing.F) {
	f.Add("copy", `content="a'b" dest=/x`)
	f.Add("authorized_key", "user=root key='k")
	f.Add("- hosts: all\n  tasks:\n    - shell: id\n", "")
	f.Fuzz(func(t *testing.T, module, args string) {
		_ = ansibleCommand(module, args, nil)
		_ = playbookCommands(module + "\n" + args)
	})
}

// In check mode the hosts only report what would change: nothing is run.
func TestAnsibleCheckMode(t *testing.T) {
	for _, src := range []string{
		"ansible web -b -m lineinfile -a 'path=/etc/x line=y' --check --diff",
		"ansible web -C -m shell -a 'rm -rf /srv'",
		"ansible-playbook -i inv --check /dev/stdin <<'EOF'\n- hosts: all\n  tasks:\n    - shell: rm -rf /srv\nEOF",
	} {
		s := Parse(src)
		for _, c := range s.Commands {
			if c.Depth > 0 {
				t.Errorf("%q: check mode ran %q", src, summary(c))
			}
		}
		s.Release()
	}
}
