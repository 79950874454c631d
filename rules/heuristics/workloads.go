package heuristics

import (
	"encoding/json"
	"strings"
)

// Workloads handed to a cluster. kubectl apply / create / replace of a
// manifest the line shows, and kubectl patch with its -p value, tell the
// cluster what to run and whom to ask. Judged here:
//
//   - the commands of the containers a manifest or patch defines, as
//     code a container runs: a download piped to a shell, a reverse
//     shell, a miner, data sent away (kube-proxy's DaemonSet given a
//     container that runs wget … | sh);
//   - an admission webhook that sends the objects the cluster admits to a
//     URL outside it, which can read and change every one of them;
//   - an identity put in system:masters or bound to cluster-admin, also
//     when a sed in the pipeline writes it into a fetched object
//     (kubectl get cm aws-auth -o yaml | sed … | kubectl apply -f -).

// manifestInput returns the manifest text v reads on its input: a
// here-document or echo, or, when a sed or jq rewrites another command's
// output on its way to v, the text the edit puts in (the rest of the
// object is the cluster's own).
func (cs *cmdScan) manifestInput(v *cmdView) (string, bool) {
	if text, ok := cs.stdinText(v); ok {
		return text, true
	}
	var b strings.Builder
	for _, i := range cs.before(v) {
		u := cs.view(i)
		if u == nil {
			continue
		}
		switch u.prog {
		case "sed", "gsed":
			if _, _, inPlace := inPlaceScripts(u); inPlace {
				continue
			}
			script := strings.Join(operands(u.args, "ef", []string{"--expression", "--file"}), "\n")
			flagValues(u.args, 'e', "expression", func(x string) { script += "\n" + x })
			for _, sub := range sedSubstitutions(script) {
				b.WriteString(sedReplacementText(sub[1]) + "\n")
			}
			sedInsertedText(script, &b)
		case "jq", "yq", "gojq":
			if ops := operands(u.args, "", nil); len(ops) > 0 {
				b.WriteString(ops[0] + "\n")
			}
		}
	}
	return b.String(), b.Len() > 0
}

// sedReplacementText is a replacement as the text it writes: \n a
// newline, \t a tab.
func sedReplacementText(repl string) string {
	return strings.NewReplacer(`\n`, "\n", `\t`, "\t").Replace(repl)
}

// checkWorkloads judges what v, a kubectl or oc command, hands the
// cluster.
func (s *scan) checkWorkloads(cs *cmdScan, v *cmdView) {
	ops := infraOperands(v)
	if what := publicService(v, ops); what != "" && s.enabled(rNetExposedService) {
		s.add(rNetExposedService, v.prog+" "+what+": a data store or console is then open to the internet; keep it internal, or reach it with port-forward",
			v.prog+" "+evJoin(v.args))
	}
	var texts []string
	switch {
	case appliesStdin(v):
		if text, ok := cs.manifestInput(v); ok {
			texts = append(texts, text)
		}
	case len(ops) > 0 && ops[0] == "patch":
		flagValues(v.args, 'p', "patch", func(x string) { texts = append(texts, x) })
	}
	for _, text := range texts {
		if why := clusterAdminGrant(text); why != "" && s.enabled(rCloudGrant) {
			s.add(rCloudGrant, v.prog+" "+why+": granting access is for a person to do on purpose; a human should approve it", v.prog+" "+evJoin(v.args))
		}
		if url := outsideWebhook(text); url != "" && s.enabled(rCloudGrant) {
			s.add(rCloudGrant, v.prog+" registers an admission webhook that sends what the cluster admits to "+url+", outside it: that service reads and can change every object it is sent; a cluster administrator should approve it",
				v.prog+" "+evJoin(v.args))
		}
		for _, cmd := range workloadCommands(text) {
			s.judgePlanted("pod", cmd, "", v.prog+" gives the cluster a container to run")
		}
	}
}

// outsideWebhook returns the URL of an admission webhook in text that
// points outside the cluster and its network, or "".
func outsideWebhook(text string) string {
	if !strings.Contains(text, "WebhookConfiguration") {
		return ""
	}
	for line := range strings.SplitSeq(text, "\n") {
		t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "- "))
		u, ok := strings.CutPrefix(t, "url:")
		if !ok {
			continue
		}
		u = unquoteYAML(strings.TrimSpace(u))
		h := urlHost(u)
		if h != "" && !isLoopbackHost(h) && !privateHost(h) && !strings.HasSuffix(h, ".svc") && !strings.Contains(h, ".svc.") {
			return u
		}
	}
	return ""
}

// workloadCommands returns the commands of the containers text defines:
// each command: / args: list, JSON or YAML (flow or block), as one
// command line; sh -c X is X.
func workloadCommands(text string) []string {
	var out []string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[i]), "- "))
		var words []string
		switch {
		case strings.HasPrefix(t, "command:") || strings.HasPrefix(t, "args:"):
			_, rest, _ := strings.Cut(t, ":")
			rest = strings.TrimSpace(rest)
			if strings.HasPrefix(rest, "[") {
				words = flowList(rest)
				break
			}
			// A block list: the "- " lines below, indented further.
			indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
			for i+1 < len(lines) {
				next := lines[i+1]
				item := strings.TrimSpace(next)
				if !strings.HasPrefix(item, "- ") || len(next)-len(strings.TrimLeft(next, " ")) < indent {
					break
				}
				words = append(words, unquoteYAML(strings.TrimSpace(item[2:])))
				i++
			}
		case strings.HasPrefix(t, "script:"):
			// Tekton's and Argo's script: a shell script, inline or as a
			// block scalar below.
			rest := strings.TrimSpace(t[len("script:"):])
			if rest != "|" && rest != ">" && rest != "|-" && rest != ">-" {
				out = append(out, unquoteYAML(rest))
				continue
			}
			indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
			var body []string
			for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || len(lines[i+1])-len(strings.TrimLeft(lines[i+1], " ")) > indent) {
				body = append(body, strings.TrimSpace(lines[i+1]))
				i++
			}
			out = append(out, strings.Join(body, "\n"))
			continue
		default:
			// JSON: "command":["sh","-c","…"] anywhere on the line, and a
			// "script":"…" string.
			for _, key := range []string{`"command":`, `"args":`} {
				if j := strings.Index(t, key); j >= 0 {
					words = append(words, flowList(strings.TrimSpace(t[j+len(key):]))...)
				}
			}
			if j := strings.Index(t, `"script":`); j >= 0 {
				var script string
				rest := strings.TrimSpace(t[j+len(`"script":`):])
				if dec := json.NewDecoder(strings.NewReader(rest)); dec.Decode(&script) == nil && script != "" {
					out = append(out, script)
				}
			}
		}
		if len(words) == 0 {
			continue
		}
		if len(words) >= 3 && (words[0] == "sh" || words[0] == "/bin/sh" || words[0] == "bash" || words[0] == "/bin/bash" || words[0] == "ash") && words[1] == "-c" {
			out = append(out, words[2])
			continue
		}
		quoted := make([]string, len(words))
		for k, w := range words {
			quoted[k] = shellQuote(w)
		}
		out = append(out, strings.Join(quoted, " "))
	}
	return out
}

// flowList reads a JSON or YAML flow list of strings at the start of s:
// ["sh", "-c", "x"] or [sh, -c, 'x'].
func flowList(s string) []string {
	if !strings.HasPrefix(s, "[") {
		return nil
	}
	end := matchingBracket(s)
	if end < 0 {
		return nil
	}
	var words []string
	if json.Unmarshal([]byte(s[:end+1]), &words) == nil {
		return words
	}
	for _, w := range strings.Split(s[1:end], ",") {
		words = append(words, unquoteYAML(strings.TrimSpace(w)))
	}
	return words
}

// matchingBracket returns the index of the ] or } that closes the [ or {
// at s[0], quotes respected, or -1.
func matchingBracket(s string) int {
	if s == "" || s[0] != '[' && s[0] != '{' {
		return -1
	}
	open, close := s[0], byte(']')
	if open == '{' {
		close = '}'
	}
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == open:
			depth++
		case c == close:
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

// storePorts are the ports of databases, caches, search and cluster
// stores, which are not meant to face the internet.
var storePorts = map[string]bool{"5432": true, "3306": true, "6379": true, "27017": true, "9200": true, "9300": true, "2379": true,
	"11211": true, "5984": true, "8086": true, "9042": true, "1433": true, "1521": true, "26257": true}

// adminServices name consoles that control what they are attached to.
var adminServices = newFoldSet("argocd-server", "grafana", "kibana", "prometheus", "alertmanager", "kubernetes-dashboard", "jenkins",
	"vault", "rabbitmq", "pgadmin", "phpmyadmin", "adminer", "minio-console", "postgres", "mysql", "redis", "mongo", "elasticsearch", "etcd")

// publicService says how a kubectl expose or a Service patch puts a
// data store or an admin console on a public load balancer, or "".
func publicService(v *cmdView, ops []string) string {
	args := strings.Join(v.args, " ")
	public := strings.Contains(args, "LoadBalancer") || strings.Contains(args, "NodePort")
	if !public {
		return ""
	}
	switch opAt(ops, 0) {
	case "expose":
		port := ""
		flagValues(v.args, 0, "port", func(p string) { port = p })
		target := ""
		flagValues(v.args, 0, "target-port", func(p string) { target = p })
		if storePorts[port] || storePorts[target] || adminServices.in(strings.Join(ops[1:], " ")) {
			return "exposes " + strings.Join(ops[1:], " ") + " on a public load balancer"
		}
	case "patch":
		if (opAt(ops, 1) == "svc" || opAt(ops, 1) == "service") && adminServices.in(opAt(ops, 2)) || strings.Contains(args, "0.0.0.0/0") {
			return "makes " + strings.Join(ops[1:min(3, len(ops))], " ") + " a public load balancer"
		}
	}
	return ""
}
