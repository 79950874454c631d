package heuristics

import "strings"

// Infrastructure: what an agent with cloud, cluster or database
// credentials can destroy or give away. Tearing down infrastructure or a
// data store (terraform destroy, kubectl delete namespace, aws s3 rb,
// DROP DATABASE, redis FLUSHALL, docker volume prune) and granting access
// (aws iam create-access-key, a cluster-admin binding, an owner role
// assignment) are done once, on purpose, by a person: they escalate.
// Reading, planning and everyday deploys (terraform plan / apply, kubectl
// get / apply, helm upgrade, aws s3 cp) are everyday.

// infraChange says what a command destroys (destroy) or grants (grant),
// or "" for neither.
func infraChange(v *cmdView) (what string, grant bool) {
	ops := infraOperands(v)
	op := func(i int) string {
		if i < len(ops) {
			return ops[i]
		}
		return ""
	}
	switch v.prog {
	case "terraform", "tofu", "terragrunt":
		if op(0) == "destroy" || op(0) == "apply" && (hasFlag(v.args, 0, "destroy") || containsArg(v.args, "-destroy")) {
			return "destroys every resource of the configuration", false
		}
	case "pulumi", "cdk", "cdktf", "sst":
		if op(0) == "destroy" || op(0) == "down" {
			return "destroys every resource of the stack", false
		}
	case "kubectl", "oc":
		switch op(0) {
		case "delete":
			switch kind := strings.ToLower(op(1)); {
			case kind == "namespace" || kind == "namespaces" || kind == "ns" || strings.HasPrefix(kind, "namespace/") || strings.HasPrefix(kind, "ns/"):
				return "deletes a namespace and everything in it", false
			case kind == "pv" || kind == "pvc" || strings.HasPrefix(kind, "persistentvolume") || kind == "crd" || strings.HasPrefix(kind, "customresourcedefinition") || kind == "node" || kind == "nodes":
				return "deletes " + kind + ": stored data or whole classes of objects", false
			case hasLongFlag(v.args, "all") || hasFlag(v.args, 'A', "all-namespaces"):
				return "deletes every object of a kind", false
			}
		case "create":
			if op(1) == "clusterrolebinding" || op(1) == "rolebinding" {
				// The role is what --clusterrole names; the binding's own
				// name may be anything, cluster-admin included.
				role := ""
				flagValues(v.args, 0, "clusterrole", func(r string) {
					if r == "cluster-admin" || r == "admin" {
						role = r
					}
				})
				if role != "" {
					return "binds an account to " + role, true
				}
			}
		}
	case "helm":
		switch op(0) {
		case "uninstall", "delete", "del", "un":
			return "uninstalls a release and deletes its resources", false
		}
	case "aws":
		svc, verb := op(0), op(1)
		switch {
		case svc == "s3" && (verb == "rb" || verb == "rm" && hasLongFlag(v.args, "recursive")):
			return "deletes a bucket or everything under a prefix", false
		case svc == "iam" && awsIAMGrant(verb):
			return "changes who can act in the account (iam " + verb + ")", true
		// Deleting one object or a tag is as ordinary as aws s3 rm of one file.
		case strings.HasPrefix(verb, "delete-") && verb != "delete-tags" && verb != "delete-object" || strings.HasPrefix(verb, "terminate-"):
			return "runs " + svc + " " + verb, false
		}
	case "gcloud":
		for _, o := range ops {
			switch o {
			case "delete":
				return "deletes cloud resources", false
			case "add-iam-policy-binding", "set-iam-policy":
				return "changes who can act in the project (" + o + ")", true
			}
		}
		if containsArg(ops, "keys") && containsArg(ops, "create") {
			return "creates a service-account key", true
		}
	case "az":
		for i, o := range ops {
			switch {
			case o == "delete" || o == "purge":
				return "deletes cloud resources", false
			case o == "create-for-rbac" || o == "assignment" && op(i+1) == "create" || o == "credential" && op(i+1) == "reset":
				return "changes who can act in the subscription", true
			}
		}
	case "dropdb", "dropuser":
		return "drops a database or role", false
	case "psql", "mysql", "mariadb", "sqlite3", "clickhouse-client", "cockroach":
		for _, a := range v.args {
			if kw := destructiveSQL(a); kw != "" {
				return "runs " + kw, false
			}
		}
	case "redis-cli", "valkey-cli", "keydb-cli":
		if o := op(0); strings.EqualFold(o, "flushall") || strings.EqualFold(o, "flushdb") {
			return "empties the data store (" + strings.ToUpper(o) + ")", false
		}
	case "mongosh", "mongo":
		for _, a := range v.args {
			if strings.Contains(a, "dropDatabase(") || strings.Contains(a, ".drop(") {
				return "drops a database or collection", false
			}
		}
	case "docker", "podman":
		switch {
		case op(0) == "volume" && (op(1) == "rm" || op(1) == "prune"):
			return "deletes volumes and the data in them", false
		case op(0) == "system" && op(1) == "prune" && hasLongFlag(v.args, "volumes"):
			return "deletes every unused volume and the data in it", false
		}
	}
	return "", false
}

// infraOperands returns v's operands past the options that take a value
// before the subcommand (kubectl -n ns, aws --profile p, redis-cli -h h).
func infraOperands(v *cmdView) []string {
	switch v.prog {
	case "kubectl", "oc", "helm":
		return operands(v.args, "nlofcs", []string{"--namespace", "--context", "--kubeconfig", "--selector", "--output", "--cluster",
			"--user", "--filename", "--server", "--token", "--field-selector", "--timeout", "--grace-period", "--kube-context"})
	case "aws":
		return operands(v.args, "", []string{"--profile", "--region", "--output", "--endpoint-url", "--query", "--cli-read-timeout",
			"--cli-connect-timeout", "--ca-bundle", "--color"})
	case "gcloud", "az":
		return operands(v.args, "gnl", []string{"--project", "--zone", "--region", "--format", "--account", "--configuration",
			"--resource-group", "--name", "--subscription", "--output", "--query"})
	case "redis-cli", "valkey-cli", "keydb-cli":
		return operands(v.args, "hpnaus", []string{"--user", "--pass", "--tls", "--cacert"})
	}
	return v.plainOperands()
}

// awsIAMGrant reports the iam verbs that create identities, keys or
// passwords, or attach permissions.
func awsIAMGrant(verb string) bool {
	switch verb {
	case "create-user", "create-access-key", "create-login-profile", "update-login-profile", "create-role", "update-assume-role-policy",
		"attach-user-policy", "attach-role-policy", "attach-group-policy", "put-user-policy", "put-role-policy", "put-group-policy",
		"add-user-to-group", "create-service-specific-credential":
		return true
	}
	return false
}

// destructiveSQL returns the destructive statement in a SQL text (DROP
// DATABASE / SCHEMA / TABLE, TRUNCATE), or "".
func destructiveSQL(sql string) string {
	if len(sql) < 8 {
		return ""
	}
	up := strings.ToUpper(sql)
	for _, kw := range []string{"DROP DATABASE", "DROP SCHEMA", "DROP TABLE", "TRUNCATE "} {
		if i := strings.Index(up, kw); i >= 0 && (i == 0 || !isWordByte(up[i-1])) {
			return strings.TrimSpace(kw)
		}
	}
	return ""
}

// checkInfrastructure judges one command for infrastructure destruction
// and access grants.
func (s *scan) checkInfrastructure(v *cmdView) {
	if v.fam&famInfra == 0 {
		return
	}
	what, grant := infraChange(v)
	if what == "" {
		return
	}
	ev := v.prog + " " + evJoin(v.args)
	if grant {
		s.add(rCloudGrant, v.prog+" "+what+": granting access is for a person to do on purpose; a human should approve it", ev)
		return
	}
	s.add(rInfraDestroy, v.prog+" "+what+": nothing brings it back; a human should approve it", ev)
}
