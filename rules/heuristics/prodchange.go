package heuristics

import "strings"

// Changes to production. An agent working on a project needs to read
// production (describe, logs, metrics, a plan) far more often than it
// needs to change it, and a change there (a deployment deleted, a group
// scaled to zero, backups switched off, a dump restored over live data, a
// mass UPDATE) lands on users at once. A cloud, cluster, infrastructure or
// database command that changes something and names production as its
// target (a context, namespace, project, resource group, identifier, host,
// URL or variable with prod, production or prd as a word) is escalated;
// the same command against dev or staging, and reading production, are
// everyday. Destruction and access grants keep their own, sharper rules.

// productionChange says what v changes in production, or "".
func productionChange(cs *cmdScan, v *cmdView, ops []string) string {
	if !mutates(cs, v, ops) {
		return ""
	}
	if where := productionByNature(v, ops); where != "" {
		return where
	}
	for _, a := range v.c.Args {
		if namedForProduction(a) {
			return a
		}
	}
	for _, a := range v.c.Assigns {
		if namedForProduction(a) {
			return a
		}
	}
	return ""
}

// productionByNature names what a change reaches whatever its names say,
// or "": a hosted zone's DNS records (every client of the name follows
// them), the cluster's own components in kube-system (DNS, the proxy,
// the controllers every workload relies on).
func productionByNature(v *cmdView, ops []string) string {
	op := operandAt(ops)
	switch v.prog {
	case "aws":
		if op(0) == "route53" && op(1) == "change-resource-record-sets" {
			return "a hosted zone's DNS records"
		}
	case "gcloud":
		if op(0) == "dns" && op(1) == "record-sets" {
			return "a managed zone's DNS records"
		}
	case "kubectl", "oc":
		if kubeNamespace(v.args) == "kube-system" {
			return "the cluster's own components in kube-system"
		}
	}
	return ""
}

// mutates reports whether v, a cloud, cluster, IaC or database command,
// changes what it targets rather than reading it.
func mutates(cs *cmdScan, v *cmdView, ops []string) bool {
	op := operandAt(ops)
	switch v.prog {
	case "aws":
		verb := op(1)
		for _, read := range []string{"describe-", "list-", "get-", "head-", "wait", "ls", "tail", "filter-log-events", "lookup-", "search-", "query", "help", "presign", "estimate-"} {
			if strings.HasPrefix(verb, read) {
				return false
			}
		}
		return verb != ""
	case "gcloud", "az":
		for _, o := range ops {
			if mutatingVerb(o) {
				return true
			}
		}
	case "kubectl", "oc":
		switch op(0) {
		case "delete", "apply", "create", "replace", "patch", "edit", "scale", "cordon", "drain", "taint", "label", "annotate",
			"set", "autoscale", "expose", "run":
			return true
		case "rollout":
			return op(1) == "restart" || op(1) == "undo" || op(1) == "pause"
		}
	case "terraform", "tofu", "terragrunt", "pulumi":
		switch op(0) {
		case "apply", "destroy", "import", "taint", "untaint", "up", "refresh", "state":
			return op(0) != "state" || op(1) == "rm" || op(1) == "mv" || op(1) == "push" || op(1) == "replace-provider"
		}
	case "helm":
		switch op(0) {
		case "install", "upgrade", "uninstall", "delete", "rollback":
			return true
		}
	case "pg_restore":
		return true
	case "psql", "mysql", "mariadb", "mongosh", "mongo", "sqlite3", "clickhouse-client", "cockroach", "cqlsh":
		// What it runs: -c / -e / --eval text, a here-document or piped
		// text (stdinText), or a file on its input (a dump restored).
		for _, r := range v.c.Redirects {
			if r.Op == "<" && (r.FD == "" || r.FD == "0") {
				return true
			}
		}
		for _, a := range v.args {
			if mutatingStatement(a) {
				return true
			}
		}
		if text, ok := cs.stdinText(v); ok && mutatingStatement(text) {
			return true
		}
	case "gh", "glab":
		// A workflow started by hand (gh workflow run deploy.yml -f
		// environment=production, or its API dispatch) deploys what its
		// inputs say.
		switch {
		case op(0) == "workflow" && op(1) == "run", op(0) == "ci" && op(1) == "run":
			return true
		case op(0) == "api":
			return strings.HasSuffix(strings.Trim(op(1), "/"), "/dispatches") && apiMethod(v.args) == "POST"
		}
	case "redis-cli", "valkey-cli", "keydb-cli":
		for _, a := range ops {
			switch strings.ToUpper(a) {
			case "DEL", "FLUSHALL", "FLUSHDB", "SET", "CONFIG", "EXPIRE", "UNLINK", "SHUTDOWN":
				return true
			}
		}
	}
	return false
}

// mutatingVerb reports a gcloud or az verb that changes a resource.
func mutatingVerb(o string) bool {
	switch o {
	case "create", "delete", "patch", "update", "resize", "deallocate", "stop", "start", "restart", "reset", "deploy", "scale",
		"apply", "import", "remove", "set", "disable", "enable", "failover", "promote", "restore", "rollback", "upgrade", "move",
		"swap", "purge", "rotate", "revoke", "grant", "assign", "detach", "attach", "cordon", "drain":
		return true
	}
	return strings.HasPrefix(o, "add-") || strings.HasPrefix(o, "remove-") || strings.HasPrefix(o, "set-")
}

// mutatingStatement reports SQL or a shell-run database command that
// writes: UPDATE, DELETE, INSERT, DROP, TRUNCATE, ALTER, GRANT, Mongo's
// deleteMany / updateMany / drop().
func mutatingStatement(text string) bool {
	if len(text) < 4 {
		return false
	}
	return mutatingSQL.in(text)
}

var mutatingSQL = newFoldSet("update ", "delete from", "insert into", "drop table", "drop database", "drop schema", "truncate ",
	"alter table", "alter database", "grant ", "revoke ", "deletemany(", "updatemany(", "insertmany(", ".drop(", "dropdatabase(",
	"remove(", "replaceone(", "updateone(", "deleteone(")
