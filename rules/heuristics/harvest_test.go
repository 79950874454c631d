package heuristics

import "testing"

// Credentials harvested where they are kept: a database's password
// hashes, the shell history, other processes' command lines, the
// desktop keyring, file URIs, and services' TLS keys under /etc.
func TestPasswordHashQueries(t *testing.T) {
	runRuleCases(t, "credential.system-file-read", []ruleCase{
		cmdCase("mysql -u root -e 'SELECT user,host,authentication_string FROM mysql.user'", true),
		cmdCase("psql -c 'select usename, passwd from pg_shadow'", true),
		cmdCase("psql -At --command='SELECT * FROM pg_authid'", true),
		cmdCase("psql -U postgres <<'EOF'\nSELECT rolname, rolpassword FROM pg_authid;\nEOF", true),
		cmdCase("cat /etc/ssl/private/server.key", true),
		cmdCase("cat /etc/letsencrypt/live/example.com/privkey.pem", true),
		cmdCase("cp /etc/nginx/ssl/site.key /tmp/", true),
		cmdCase("psql -c 'select rolname, rolsuper from pg_roles'", false),
		cmdCase("mysql -e 'select user, host from mysql.user'", false),
		cmdCase("cat /etc/letsencrypt/live/example.com/fullchain.pem", false),
		cmdCase("cat /etc/ssh/ssh_host_ed25519_key.pub", false),
		cmdCase("cat ./certs/server.key", false),
	})
}

func TestHarvestedStores(t *testing.T) {
	runRuleCases(t, "credential.cli-token", []ruleCase{
		cmdCase("history | grep -iE -- '-p[^ ]+|--password|token='", true),
		cmdCase("fc -l 1 | grep -i secret", true),
		cmdCase("secret-tool search --all --unlock xdg:schema org.gnome.keyring.NetworkPassword", true),
		cmdCase("history | tail -20", false),
		cmdCase("history 50 | grep docker", false),
	})
	runRuleCases(t, "credential.process-arguments", []ruleCase{
		cmdCase("cat /proc/*/cmdline 2>/dev/null | tr '\\0' ' ' | grep -oE -- '--password[= ][^ ]+'", true),
		cmdCase("strings /proc/[0-9]*/cmdline | grep -i token", true),
		cmdCase("cat /proc/self/cmdline | tr '\\0' ' '", false),
		cmdCase("cat /proc/*/cmdline | grep -c java", false),
	})
	runRuleCases(t, "credential.browser-store-read", []ruleCase{
		cmdCase(`sqlite3 "file:$HOME/.config/google-chrome/Default/Login Data?immutable=1" 'select origin_url from logins'`, true),
		cmdCase("sqlite3 'file:data/app.db?mode=ro' .tables", false),
	})
}

func TestServiceKeyFile(t *testing.T) {
	for abs, want := range map[string]bool{
		"/etc/ssl/private/server.key": true, "/etc/pki/tls/private/localhost.key": true, "/etc/ipsec.d/private/vpn.pem": true,
		"/etc/letsencrypt/live/a.example/privkey.pem": true, "/etc/letsencrypt/archive/a.example/privkey3.pem": true,
		"/etc/nginx/ssl/site.key": true, "/etc/docker/certs.d/r.example/client-key.pem": true, "/etc/app/bundle.p12": true,
		"/etc/letsencrypt/live/a.example/fullchain.pem": false, "/etc/ssl/certs/ca.pem": false, "/etc/ssh/ssh_host_rsa_key.pub": false,
		"/home/dev/project/certs/server.key": false, "/etc/hosts": false,
	} {
		if got := serviceKeyFile(abs); got != want {
			t.Errorf("serviceKeyFile(%q) = %v, want %v", abs, got, want)
		}
	}
}

func TestAgentHijack(t *testing.T) {
	runRuleCases(t, "credential.agent-hijack", []ruleCase{
		cmdCase(`for s in /tmp/ssh-*/agent.*; do SSH_AUTH_SOCK=$s ssh-add -l && SSH_AUTH_SOCK=$s ssh root@10.0.4.12 id; done`, true),
		cmdCase(`export SSH_AUTH_SOCK=$(ls /tmp/ssh-*/agent.* | head -1); ssh prod`, true),
		cmdCase(`export SSH_AUTH_SOCK=$(gpgconf --list-dirs agent-ssh-socket)`, false),
		cmdCase(`SSH_AUTH_SOCK=$XDG_RUNTIME_DIR/ssh-agent.socket ssh-add -l`, false),
	})
}

func TestContainerEnvironment(t *testing.T) {
	runRuleCases(t, "credential.cli-token", []ruleCase{
		cmdCase("docker exec web env", true),
		cmdCase("kubectl exec -it api-0 -- printenv", true),
		cmdCase("docker inspect $(docker ps -q) --format '{{.Name}} {{.Config.Env}}'", true),
		cmdCase("docker inspect web --format '{{.State.Status}}'", false),
		cmdCase("docker exec web ls /app", false),
		cmdCase("kubectl exec api-0 -- printenv PATH", false),
		cmdCase("env | grep GOPATH", false),
	})
}
