package heuristics

import "strings"

// Tunnels: programs that publish a port of this machine on the internet
// or relay traffic into it (cloudflared, ngrok, localtunnel, bore, chisel,
// frp, VS Code tunnels, Tailscale Funnel, ssh to a tunnel service or with a
// remote forward). Whoever has the public address reaches what listens
// here. Version, login and listing subcommands are ordinary.

// tunnelServices are hosts whose only business is exposing ssh -R ports.
var tunnelServices = []string{"serveo.net", "localhost.run", "pinggy.io", "a.pinggy.io", "ssh.localhost.run", "tunnel.us.ngrok.com",
	"srv.us", "ssh.tunnelto.dev", "bore.pub"}

// tunnelCommand says what a command exposes, or "".
func tunnelCommand(v *cmdView) string {
	prog, args := v.prog, v.args
	ops := v.plainOperands() // of args, while they are v's own
	// npx localtunnel, pnpm dlx cloudflared, bunx …: judge the tool run.
	if p, a, ok := packageRun(v); ok {
		prog, args = p, a
		ops = operands(args, "", nil)
	}
	first := ""
	if len(ops) > 0 {
		first = ops[0]
	}
	switch prog {
	case "cloudflared":
		if (first == "" || first == "tunnel") && (hasLongFlag(args, "url") || hasLongFlag(args, "hello-world")) || (first == "tunnel" && len(ops) >= 2 && ops[1] == "run") ||
			(first == "tunnel" && len(ops) == 1) || first == "service" && len(ops) >= 2 && ops[1] == "install" {
			return "cloudflared publishes a local service through a Cloudflare tunnel"
		}
	case "ngrok":
		switch first {
		case "http", "tcp", "tls", "start", "tunnel", "service":
			return "ngrok publishes local port " + strings.Join(ops[1:], " ") + " on a public address"
		}
	case "lt", "localtunnel":
		if hasFlag(args, 'p', "port") || len(ops) > 0 {
			return prog + " publishes a local port on a public address"
		}
	case "bore":
		if first == "local" {
			return "bore publishes a local port on a public address"
		}
	case "chisel", "rathole", "gost", "frpc", "frps", "inlets", "inletsctl", "telebit", "loclx", "localxpose":
		if first == "" && (prog == "chisel") || hasLongFlag(args, "version") || hasLongFlag(args, "help") || first == "version" || first == "help" {
			return ""
		}
		return prog + " relays connections from another host into this machine"
	case "zrok":
		if first == "share" || first == "reserve" {
			return "zrok shares a local service on a public address"
		}
	case "code", "code-insiders", "code-tunnel", "devtunnel":
		if first == "tunnel" || prog == "code-tunnel" || prog == "devtunnel" && (first == "host" || first == "create") {
			return prog + " opens a remote-access tunnel into this machine (anyone signed in to it gets a shell)"
		}
	case "tailscale":
		if first == "funnel" && len(ops) > 1 && ops[1] != "status" {
			return "tailscale funnel publishes a local port on the internet"
		}
	case "kubectl", "oc":
		if kops := operands(args, "ns", []string{"--namespace", "--context", "--kubeconfig", "--cluster", "--user", "--address"}); len(kops) > 0 && kops[0] == "port-forward" {
			open := ""
			flagValues(args, 0, "address", func(a string) {
				for part := range strings.SplitSeq(a, ",") {
					if !isLoopbackHost(part) {
						open = part
					}
				}
			})
			if open != "" {
				return prog + " port-forward listens on " + open + ": a service inside the cluster is reachable by every host that reaches this one"
			}
		}
	case "ssh", "autossh":
		if bind := openForward(args); bind != "" {
			return "ssh forwards a port on " + bind + ": every host that reaches this machine reaches what the tunnel leads to"
		}
		for _, op := range operands(args, "RLDipoFlbcEeIJmOQSWwM", nil) {
			host := strings.ToLower(op)
			if u := urlHost(host); u != "" {
				host = u
			}
			if at := strings.LastIndexByte(host, '@'); at >= 0 {
				host = host[at+1:]
			}
			for _, t := range tunnelServices {
				if host == t || strings.HasSuffix(host, "."+t) {
					return "ssh to " + host + ", a public tunnel service, exposes a local port on the internet"
				}
			}
			break // the first operand is the host; the rest is the remote command
		}
	}
	return ""
}

// openForward returns the bind address of an ssh local or dynamic
// forward that listens beyond loopback (-L 0.0.0.0:5433:db:5432,
// -D *:1080, or any forward with -g), or "".
func openForward(args []string) string {
	open := ""
	check := func(spec string) {
		if open != "" {
			return
		}
		if hasShortFlag(args, 'g') {
			open = "every interface (-g)"
			return
		}
		// [bind:]port[:host:hostport]: a bind address is what comes
		// before the first port.
		parts := strings.Split(spec, ":")
		if strings.HasPrefix(spec, "[") { // [::]:1080
			if end := strings.IndexByte(spec, ']'); end > 0 {
				parts = append([]string{spec[1:end]}, strings.Split(strings.TrimPrefix(spec[end+1:], ":"), ":")...)
			}
		}
		if len(parts) != 2 && len(parts) != 4 {
			return // no bind address: loopback
		}
		switch b := parts[0]; {
		case b == "" || b == "*":
			open = "every interface"
		case !isLoopbackHost(b):
			open = b
		}
	}
	flagValues(args, 'L', "", check)
	flagValues(args, 'D', "", check)
	return open
}

// checkTunnels judges one command for tunnels.
func (s *scan) checkTunnels(v *cmdView) {
	if what := tunnelCommand(v); what != "" {
		s.add(rTunnelExpose, what+": anyone with the address reaches this machine; approve only if you know who will use it",
			v.prog+" "+evJoin(v.args))
	}
	// Remote forwards spelled as options, and autossh, which the
	// reverse-shell rule's plain "ssh -R" check does not see.
	if v.prog == "ssh" || v.prog == "autossh" {
		remote := v.prog == "autossh" && (hasShortFlag(v.args, 'R') || hasLongFlag(v.args, "remote-forward"))
		flagValues(v.args, 'o', "", func(o string) {
			k, _, _ := strings.Cut(o, "=")
			k, _, _ = strings.Cut(k, " ")
			remote = remote || strings.EqualFold(k, "RemoteForward")
		})
		if remote {
			s.add(rRevSSHTunnel, v.prog+" opens a remote forward that leads back into this machine: approve only if you know who uses the tunnel",
				v.prog+" "+evJoin(v.args))
		}
	}
}
