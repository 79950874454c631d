package heuristics

import (
	"encoding/json"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/parapet-dev/parapet/rules/action"
)

// Infrastructure: what an agent with cloud, cluster or database
// credentials can destroy or give away. Tearing down infrastructure, a
// data store, a hosted repository or a published package (terraform
// destroy, kubectl delete namespace, aws s3 rb, DROP DATABASE, DELETE
// without WHERE, gh repo delete, npm unpublish) and granting access (aws
// iam create-access-key, a cluster-admin binding, a security group open
// to 0.0.0.0/0, a public bucket or a snapshot shared with another
// account) are done once, on purpose, by a person: they escalate.
// Turning off the cloud's audit logging (CloudTrail, GuardDuty, Config,
// log sinks, diagnostic settings) is defense.log-tamper, and manifests or
// charts from hosts outside trusted_hosts are rce.package-from-url.
// Reading, planning and everyday deploys (terraform plan / apply, kubectl
// get / apply, helm upgrade, aws s3 cp) are everyday.

// infraChange says what a command destroys (destroy) or grants (grant),
// or "" for neither. ops are infraOperands(v); cs gives the text piped or
// redirected into a database client.
func infraChange(cs *cmdScan, v *cmdView, ops []string) (what string, grant bool) {
	op := operandAt(ops)
	// npx cdk destroy is cdk destroy: a package runner's tool, judged as
	// itself.
	prog := v.prog
	if (prog == "npx" || prog == "bunx" || prog == "pnpx") && op(0) != "" {
		prog, _, _ = strings.Cut(op(0), "@")
		if i := strings.LastIndexByte(prog, '/'); i >= 0 && !strings.HasPrefix(prog, "@") {
			prog = prog[i+1:]
		}
		prog = strings.TrimPrefix(prog, "aws-") // the cdk's npm package is aws-cdk
		ops = ops[1:]
		op = operandAt(ops)
	}
	switch prog {
	case "terraform", "tofu", "terragrunt":
		if op(0) == "destroy" || op(0) == "apply" && (hasFlag(v.args, 0, "destroy") || containsArg(v.args, "-destroy")) {
			return "destroys every resource of the configuration", false
		}
		// The state is what Terraform knows it manages: a resource taken
		// out of it is left running unmanaged (and made again by the next
		// apply). One named resource is a refactor; every resource a pipe
		// lists (state list | xargs terraform state rm), or a state pushed
		// over the remote one, is the record gone.
		switch {
		case op(0) == "state" && op(1) == "rm" && v.c.Program == "xargs":
			return "takes every resource the pipe lists out of the Terraform state: Terraform no longer manages them", false
		case op(0) == "state" && op(1) == "push":
			return "replaces the Terraform state with a local file (state push): resources drop out of what Terraform manages", false
		}
	case "kafka-topics", "kafka-topics.sh", "kafka-delete-records", "kafka-delete-records.sh":
		if hasLongFlag(v.args, "delete") || strings.HasPrefix(v.prog, "kafka-delete-records") {
			return "deletes Kafka topics or records, and every message in them", false
		}
	case "rclone":
		// purge deletes a path with everything below it; delete and
		// rmdirs empty a remote (remote:path) of its files.
		if op(0) == "purge" || (op(0) == "delete" || op(0) == "rmdirs") && strings.Contains(op(1), ":") && !isURL(op(1)) {
			return "deletes everything under " + op(1) + " (rclone " + op(0) + ")", false
		}
	case "borg", "restic":
		if what := backupErased(v, ops); what != "" {
			return what, false
		}
	case "pulumi", "cdk", "cdktf", "sst":
		if op(0) == "destroy" || op(0) == "down" {
			return "destroys every resource of the stack", false
		}
	case "velero":
		if op(1) == "delete" && (hasLongFlag(v.args, "all") || hasLongFlag(v.args, "selector")) {
			return "deletes the cluster's backups or their schedules (velero " + op(0) + " delete --all)", false
		}
	case "netlify":
		if op(0) == "sites:delete" {
			return "deletes a deployed site with its deploys and settings (netlify sites:delete)", false
		}
	case "vercel":
		if op(0) == "remove" || op(0) == "rm" {
			return "removes a deployed project or its deployments (vercel remove)", false
		}
	case "kaggle":
		if (op(0) == "datasets" || op(0) == "kernels") && (op(1) == "create" || op(1) == "push") && hasLongFlag(v.args, "public") {
			return "publishes a dataset or notebook for everyone (kaggle " + op(0) + " " + op(1) + " --public)", true
		}
	case "fastlane":
		if op(0) == "match" && op(1) == "nuke" {
			return "revokes and deletes every certificate and profile of the account (match nuke)", false
		}
	case "serverless", "sls":
		if op(0) == "remove" {
			return "removes the service's whole stack (serverless remove)", false
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
		case "patch", "set":
			if what := kubeRoleWidened(v, ops); what != "" {
				return what, true
			}
		case "certificate", "adm":
			// A signing request approved makes its key an identity of the
			// cluster (a node's, a user's), with that identity's rights
			// (oc adm certificate approve alike).
			if op(1) == "approve" || op(0) == "adm" && op(1) == "certificate" && op(2) == "approve" {
				return "approves a certificate signing request: whoever holds its key signs in to the cluster as the identity it names", true
			}
		case "scale":
			// One named workload scaled to zero is routine; every one of
			// a kind (--all) is an outage.
			zero := false
			flagValues(v.args, 0, "replicas", func(n string) { zero = zero || strings.TrimLeft(n, "0") == "" && n != "" })
			if zero && (hasLongFlag(v.args, "all") || hasFlag(v.args, 'A', "all-namespaces")) {
				return "scales every workload of a kind to zero replicas, so none of them serves", false
			}
		case "drain":
			// Draining one node for maintenance is routine. Deleting its
			// pods around their disruption budgets, or draining every node
			// the cluster lists, takes the services down.
			if hasLongFlag(v.args, "disable-eviction") {
				return "drains a node by deleting its pods around their disruption budgets (--disable-eviction)", false
			}
			for _, o := range ops[1:] {
				// $(kubectl get nodes …), or a loop's variable over what
				// the line lists: for n in $(kubectl get nodes -o name).
				if strings.Contains(o, "get node") || strings.Contains(o, "get no ") ||
					iteratedIn(cs, o) && strings.Contains(cs.act.Command, "get node") {
					return "drains every node of the cluster, and nothing is left to run its services", false
				}
			}
			if hasFlag(v.args, 'l', "selector") && len(ops) == 1 {
				return "drains every node a label selects, and the services on them stop", false
			}
			// kubectl get nodes -o name | xargs -I{} kubectl drain {}: the
			// nodes are what the listing before it names.
			if v.c.Program == "xargs" && strings.Contains(cs.act.Command, "get node") {
				return "drains every node the listing names, and nothing is left to run the cluster's services", false
			}
		case "create":
			if (op(1) == "clusterrole" || op(1) == "role") && wildcardRule(v) {
				return "creates a role that may do anything (--verb='*' --resource='*')", true
			}
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
		// Before the delete-* catch-all: delete-public-access-block grants.
		if what := awsExposure(v, svc, verb); what != "" {
			return what, true
		}
		acl := ""
		flagValues(v.args, 0, "acl", func(a string) { acl = a })
		switch {
		case svc == "s3" && (verb == "cp" || verb == "sync" || verb == "mv") && strings.HasPrefix(acl, "public-read"):
			return "uploads objects anyone on the internet can read (--acl " + acl + ")", true
		case svc == "s3" && (verb == "rb" || verb == "rm" && hasLongFlag(v.args, "recursive")):
			return "deletes a bucket or everything under a prefix", false
		case svc == "s3api" && (verb == "put-bucket-acl" || verb == "put-object-acl") &&
			(hasLongFlag(v.args, "grant-full-control") || hasLongFlag(v.args, "grant-write") || hasLongFlag(v.args, "grant-write-acp") ||
				hasLongFlag(v.args, "grant-read") || hasLongFlag(v.args, "grant-read-acp")):
			// --grant-* id=… or uri=…/AllUsers: another account, or everyone.
			return "grants access to a bucket or object to the grantee its --grant option names (" + verb + ")", true
		case svc == "iam" && awsIAMGrant(verb):
			return "changes who can act in the account (iam " + verb + ")", true
		case svc == "kms" && (verb == "schedule-key-deletion" || verb == "disable-key"):
			// What the key encrypted is unreadable once it is gone.
			return "takes away a KMS key (" + verb + "), and with it every piece of data it encrypts", false
		case hasLongFlag(v.args, "master-user-password") || hasLongFlag(v.args, "new-password") && svc != "iam":
			return "resets a database's master password (" + svc + " " + verb + ")", true
		case svc == "ec2" && verb == "modify-instance-attribute" && (hasLongFlag(v.args, "user-data") || awsAttribute(v.args) == "userData"):
			return "replaces the script an instance runs at boot (its user data)", true
		// Deleting one object or a tag is as ordinary as aws s3 rm of one file.
		case strings.HasPrefix(verb, "delete-") && verb != "delete-tags" && verb != "delete-object" || strings.HasPrefix(verb, "terminate-") ||
			strings.HasPrefix(verb, "batch-delete-"):
			return "runs " + svc + " " + verb, false
		}
	case "gcloud":
		if what := gcloudExposure(v, ops); what != "" {
			return what, true
		}
		if op(0) == "storage" && op(1) == "rm" && hasFlag(v.args, 'r', "recursive") {
			return "deletes a bucket or everything under a prefix", false
		}
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
		if what := azExposure(v, ops); what != "" {
			return what, true
		}
		for i, o := range ops {
			switch {
			case o == "delete" || o == "purge" || strings.HasPrefix(o, "delete-"):
				return "deletes cloud resources (" + o + ")", false
			case o == "create-for-rbac" || o == "assignment" && op(i+1) == "create" || o == "credential" && op(i+1) == "reset":
				return "changes who can act in the subscription", true
			}
		}
	case "skopeo", "crane", "gcrane":
		if op(0) == "delete" {
			return "deletes an image from its registry: whatever deploys it fails to pull", false
		}
	case "regctl", "oras":
		if (op(0) == "tag" || op(0) == "manifest" || op(0) == "image") && (op(1) == "delete" || op(1) == "rm") {
			return "deletes an image from its registry: whatever deploys it fails to pull", false
		}
	case "azcopy":
		if (op(0) == "remove" || op(0) == "rm") && (slices.Contains(v.args, "--recursive") || slices.Contains(v.args, "--recursive=true")) {
			return "deletes everything under a storage container or prefix (azcopy remove --recursive)", false
		}
	case "gsutil":
		// gsutil iam ch allUsers:objectViewer gs://b, acl ch -u AllUsers:R,
		// acl set public-read: the bucket or object is readable by anyone.
		switch sub, act := op(0), op(1); {
		case sub == "rm" && (hasShortFlag(v.args, 'r') || hasShortFlag(v.args, 'R')) || sub == "rb":
			return "deletes a bucket or everything under a prefix", false
		case (sub == "iam" || sub == "acl" || sub == "defacl") && act == "ch" && publicMemberArg(v.args):
			return "makes a bucket or object readable by everyone on the internet (" + sub + " ch)", true
		case (sub == "acl" || sub == "defacl") && act == "set" && publicCannedACL(op(2)):
			return "makes a bucket or object public (" + sub + " set " + op(2) + ")", true
		}
	case "gh", "glab":
		switch {
		case op(0) == "repo" && op(1) == "delete":
			return "deletes a hosted repository with its history, issues and releases (repo delete)", false
		case op(0) == "release" && op(1) == "delete":
			return "deletes a published release and its assets for everyone who downloads them (release delete)", false
		case op(0) == "api" && apiDeletesRepo(v, op(1)):
			return "sends DELETE to " + op(1) + " through the API, removing hosted repository or package data", false
		case op(0) == "repo" && op(1) == "edit" && repoMadePublic(v):
			return "makes a repository public: its code and history become readable by everyone (repo edit --visibility public)", true
		case op(0) == "repo" && op(1) == "create" && repoMadePublic(v) && (hasLongFlag(v.args, "push") || hasLongFlag(v.args, "source")):
			// gh repo create NAME --public --source=. --push: this
			// working tree, published under a new name.
			return "publishes the working tree as a new public repository (repo create --public --source): its code and history become readable by everyone", true
		case op(0) == "api":
			if what := forgeAPIGrant(v, apiMethod(v.args), op(1)); what != "" {
				return what, true
			}
		case (op(0) == "ssh-key" || op(0) == "gpg-key") && op(1) == "add" && !ownKey(cs, v, op(2)):
			return "adds a key that is not one of yours under ~/.ssh or ~/.gnupg to the account: whoever holds it pushes and signs as you (" + op(0) + " add)", true
		case op(0) == "repo" && op(1) == "deploy-key" && op(2) == "add" && (hasLongFlag(v.args, "allow-write") || hasShortFlag(v.args, 'w')):
			return "adds a deploy key that can push to the repository (repo deploy-key add --allow-write)", true
		}
	case "python", "python3", "php", "rails", "rake", "bundle", "alembic", "flask":
		if what := frameworkReset(v); what != "" && productionTarget(v) {
			return what + " against production", false
		}
		if what := frameworkAdmin(v); what != "" && productionTarget(v) {
			return what + " in production", true
		}
	case "npm", "gem":
		// A published version removed from the registry breaks everyone
		// who depends on it, and its number cannot be published again.
		if v.prog == "npm" && op(0) == "unpublish" || v.prog == "gem" && op(0) == "yank" {
			return "removes a published package version from the registry for everyone (" + op(0) + ")", false
		}
	case "dropdb", "dropuser":
		return "drops a database or role", false
	case "vault":
		// A policy written that covers every path with every capability.
		if op(0) == "policy" && op(1) == "write" {
			text := strings.Join(ops, " ")
			if in, ok := cs.stdinText(v); ok {
				text += "\n" + in
			}
			if flat := strings.Join(strings.Fields(text), ""); (strings.Contains(flat, `path"*"`) || strings.Contains(flat, `path"+/*"`)) &&
				(strings.Contains(flat, `"sudo"`) || strings.Contains(flat, `"delete"`) && strings.Contains(flat, `"update"`)) {
				return "writes a Vault policy that grants every path (path \"*\"): whoever holds it reads and changes every secret", true
			}
		}
		switch {
		case op(0) == "secrets" && op(1) == "disable":
			return "unmounts a secrets engine, and every secret stored in it is deleted (secrets disable)", false
		case op(0) == "kv" && (op(1) == "destroy" || op(1) == "metadata" && op(2) == "delete"):
			return "destroys stored secret versions for good (kv " + op(1) + ")", false
		}
	case "hdfs":
		// hdfs dfs -rm -r -skipTrash: gone for good, not moved to .Trash.
		if op(0) == "dfs" && (containsArg(v.args, "-rm") || containsArg(v.args, "-rmr")) && containsArg(v.args, "-skipTrash") {
			return "deletes HDFS paths for good (-rm -skipTrash)", false
		}
	case "airflow":
		if op(0) == "db" && (op(1) == "reset" || op(1) == "clean") {
			return "erases Airflow's metadata database (db " + op(1) + "): runs, connections and variables", false
		}
	case "psql", "mysql", "mariadb", "sqlite3", "clickhouse-client", "cockroach", "cqlsh", "snowsql", "spark-sql", "trino", "bq":
		for _, a := range v.args {
			if kw := destructiveSQL(optionValue(a)); kw != "" {
				return "runs " + kw, false
			}
			if role := sqlRoleGrant(optionValue(a)); role != "" {
				return "creates or raises a privileged account (" + role + ")", true
			}
		}
		// echo 'DROP TABLE t;' | psql, psql <<EOF … EOF, mysql <<< '…'
		if text, ok := cs.stdinText(v); ok {
			if kw := destructiveSQL(text); kw != "" {
				return "runs " + kw + " given on its standard input", false
			}
			if role := sqlRoleGrant(text); role != "" {
				return "creates or raises a privileged account (" + role + ") given on its standard input", true
			}
		}
	case "eksctl":
		if op(0) == "delete" {
			return "deletes EKS resources (eksctl delete " + op(1) + ")", false
		}
	case "doctl":
		if containsArg(ops, "delete") || containsArg(ops, "rm") || containsArg(ops, "d") && len(ops) > 2 {
			return "deletes cloud resources (doctl … delete)", false
		}
	case "etcdctl":
		if (op(0) == "del" || op(0) == "rm" || op(0) == "rmdir") && (hasLongFlag(v.args, "prefix") || hasLongFlag(v.args, "from-key") || hasShortFlag(v.args, 'r')) {
			return "deletes every key under a prefix of the cluster's store", false
		}
	case "prisma":
		if op(0) == "migrate" && op(1) == "reset" || op(0) == "db" && op(1) == "push" && hasLongFlag(v.args, "force-reset") {
			return "drops and recreates the database (prisma " + op(0) + " " + op(1) + "): every row is lost", false
		}
	case "flyway", "liquibase":
		// flyway clean, liquibase dropAll: every object in the schema.
		for _, o := range ops {
			if o == "clean" || strings.EqualFold(o, "dropAll") || o == "drop-all" {
				return "drops every object in the database's schemas (" + v.prog + " " + o + "): every row is lost", false
			}
		}
	case "redis-cli", "valkey-cli", "keydb-cli":
		if o := op(0); strings.EqualFold(o, "flushall") || strings.EqualFold(o, "flushdb") {
			return "empties the data store (" + strings.ToUpper(o) + ")", false
		}
		// redis-cli --scan --pattern 'x:*' | xargs redis-cli DEL: every key
		// a listing names, on a server that is not this machine's.
		if o := op(0); (strings.EqualFold(o, "del") || strings.EqualFold(o, "unlink")) && v.c.Program == "xargs" && !localDataStore(v) {
			return "deletes every key the listing names (" + strings.ToUpper(o) + " through xargs)", false
		}
	case "mongosh", "mongo":
		for _, a := range v.args {
			if strings.Contains(a, "dropDatabase(") || strings.Contains(a, ".drop(") {
				return "drops a database or collection", false
			}
			if emptyFilterDelete.MatchString(a) {
				return "deletes every document of a collection (an empty filter)", false
			}
			if strings.Contains(a, "createUser(") || strings.Contains(a, "grantRolesToUser(") {
				for _, role := range []string{`"root"`, `'root'`, "userAdminAnyDatabase", "dbOwner", "clusterAdmin", "readWriteAnyDatabase"} {
					if strings.Contains(a, role) {
						return "creates or raises a database user with an administrator's role", true
					}
				}
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

// backupErased says how a borg or restic command deletes backups, or
// "": borg delete of a repository or its archives, restic forget of
// every snapshot a pipe lists (restic snapshots | xargs restic forget).
// Pruning by a --keep-* policy is retention, and forgetting one named
// snapshot is as ordinary as deleting one file.
func backupErased(v *cmdView, ops []string) string {
	for _, a := range v.args {
		if strings.HasPrefix(a, "--keep") {
			return ""
		}
	}
	op := operandAt(ops)
	switch {
	case v.prog == "borg" && op(0) == "delete":
		return "deletes a backup repository or its archives (borg delete)"
	case v.prog == "restic" && op(0) == "forget" && v.c.Program == "xargs":
		return "forgets every backup snapshot the pipe lists (restic forget)"
	}
	return ""
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
			"--cli-connect-timeout", "--ca-bundle", "--color", "--acl", "--storage-class", "--exclude", "--include", "--sse",
			"--sse-kms-key-id", "--content-type", "--cache-control", "--expires", "--metadata", "--grants"})
	case "gcloud", "az":
		return operands(v.args, "gnl", []string{"--project", "--zone", "--region", "--format", "--account", "--configuration",
			"--resource-group", "--name", "--subscription", "--output", "--query"})
	case "redis-cli", "valkey-cli", "keydb-cli":
		// --tls is a switch; -r repeats, -i waits, -d and -D delimit.
		return operands(v.args, "hpnausridD", []string{"--user", "--pass", "--cacert", "--cacertdir", "--cert", "--key", "--sni",
			"--tls-ciphers", "--tls-ciphersuites", "--pattern", "--count"})
	case "etcdctl":
		return operands(v.args, "w", []string{"--endpoints", "--cacert", "--cert", "--key", "--user", "--password", "--dial-timeout",
			"--command-timeout", "--write-out", "--discovery-srv"})
	case "gh", "glab":
		// gh api -X DELETE repos/o/r: the method is not the path.
		return operands(v.args, "XHfFqtpR", []string{"--method", "--header", "--field", "--raw-field", "--jq", "--template", "--input",
			"--hostname", "--cache", "--preview", "--repo"})
	case "gsutil":
		return operands(v.args, "hiou", nil)
	case "borg", "restic":
		return operands(v.args, "r", []string{"--repo", "--repository", "--password-file", "--password-command", "--cache-dir", "--host",
			"--tag", "--path", "--remote-path", "--rsh", "--lock-wait"})
	case "npm":
		return operands(v.args, "wC", []string{"--registry", "--otp", "--workspace", "--userconfig", "--cache", "--prefix", "--tag"})
	}
	return v.plainOperands()
}

// awsIAMGrant reports the iam verbs that create identities, keys or
// passwords, or attach permissions.
func awsIAMGrant(verb string) bool {
	switch verb {
	case "create-user", "create-access-key", "create-login-profile", "update-login-profile", "create-role", "update-assume-role-policy",
		"attach-user-policy", "attach-role-policy", "attach-group-policy", "put-user-policy", "put-role-policy", "put-group-policy",
		"add-user-to-group", "create-service-specific-credential",
		// A managed policy's new default version changes what every
		// identity it is attached to may do.
		"create-policy-version", "set-default-policy-version":
		return true
	}
	return false
}

// awsExposure says how an aws command opens the account's network or
// data to everyone or to another account, or "".
func awsExposure(v *cmdView, svc, verb string) string {
	switch {
	case svc == "ec2" && (verb == "authorize-security-group-ingress" || verb == "modify-security-group-rules"):
		// --cidr 0.0.0.0/0, or the range inside the --ip-permissions text
		// (IpRanges=[{CidrIp=0.0.0.0/0}] or JSON).
		r := ""
		for _, f := range []string{"cidr", "ip-permissions", "security-group-rules"} {
			flagValues(v.args, 0, f, func(t string) {
				if r == "" {
					r = openRange(t)
				}
			})
		}
		if r != "" {
			return "opens a security group to the whole internet (" + r + ")"
		}
	case svc == "s3api" && (verb == "put-bucket-acl" || verb == "put-object-acl"):
		acl := ""
		flagValues(v.args, 0, "acl", func(a string) {
			if publicCannedACL(a) {
				acl = "--acl " + a
			}
		})
		for _, g := range []string{"grant-read", "grant-write", "grant-full-control", "grant-read-acp", "grant-write-acp"} {
			flagValues(v.args, 0, g, func(t string) {
				if acl == "" && (strings.Contains(t, "/global/AllUsers") || strings.Contains(t, "/global/AuthenticatedUsers")) {
					acl = "--" + g + " to all users"
				}
			})
		}
		if acl != "" {
			return "makes a bucket or object public (" + verb + " " + acl + ")"
		}
	case (svc == "s3api" || svc == "s3control") && verb == "delete-public-access-block":
		return "removes the public access block, so buckets can be made public (" + verb + ")"
	case (svc == "s3api" || svc == "s3control") && verb == "put-public-access-block":
		off := false
		flagValues(v.args, 0, "public-access-block-configuration", func(t string) { off = off || publicBlockOff(t) })
		if off {
			return "turns public access blocking off, so buckets can be made public (" + verb + ")"
		}
	case svc == "lambda" && verb == "add-permission":
		anyone := false
		flagValues(v.args, 0, "principal", func(p string) { anyone = anyone || p == "*" })
		if anyone {
			return "lets anyone invoke a function (lambda add-permission --principal *)"
		}
	case (strings.HasPrefix(verb, "put-") || strings.HasPrefix(verb, "set-")) && strings.HasSuffix(verb, "-policy") && svc != "iam":
		// A resource policy given inline (s3api put-bucket-policy, ecr
		// set-repository-policy, kms put-key-policy, …); a file:// policy
		// cannot be read here and is left alone.
		pub := false
		for _, f := range []string{"policy", "policy-text", "resource-policy"} {
			flagValues(v.args, 0, f, func(t string) { pub = pub || publicPolicy(t) })
		}
		if pub {
			return "grants everyone access in a resource policy (" + svc + " " + verb + " with Principal \"*\")"
		}
	case svc == "ec2" && (verb == "modify-snapshot-attribute" || verb == "modify-image-attribute"):
		// --operation-type add --user-ids 1234…, --launch-permission
		// "Add=[{Group=all}]", --group-names all; removing is ordinary.
		add, all := false, false
		flagValues(v.args, 0, "operation-type", func(o string) { add = add || strings.EqualFold(o, "add") })
		for _, f := range []string{"launch-permission", "create-volume-permission"} {
			flagValues(v.args, 0, f, func(t string) {
				t = squeeze(t)
				add = add || strings.Contains(t, "add=") || strings.Contains(t, "add:")
				all = all || strings.Contains(t, "group=all") || strings.Contains(t, "group:all")
			})
		}
		multiValues(v.args, "group-names", func(g string) { all = all || g == "all" })
		switch {
		case add && all:
			return "makes a snapshot or image public, for any account to copy (" + verb + ")"
		case add:
			return "shares a snapshot or image with another account (" + verb + ")"
		}
	case svc == "rds" && (verb == "modify-db-snapshot-attribute" || verb == "modify-db-cluster-snapshot-attribute") && hasLongFlag(v.args, "values-to-add"):
		all := false
		multiValues(v.args, "values-to-add", func(a string) { all = all || a == "all" })
		if all {
			return "makes a database snapshot public, for any account to restore (" + verb + ")"
		}
		return "shares a database snapshot with another account (" + verb + " --values-to-add)"
	}
	return ""
}

// gcloudExposure says how a gcloud command opens the project's network or
// data to everyone, or "".
func gcloudExposure(v *cmdView, ops []string) string {
	has := func(w string) bool { return containsArg(ops, w) }
	switch {
	case has("firewall-rules") && (has("create") || has("update")):
		egress, deny := false, false
		flagValues(v.args, 0, "direction", func(d string) { egress = egress || strings.EqualFold(d, "egress") || strings.EqualFold(d, "out") })
		flagValues(v.args, 0, "action", func(a string) { deny = deny || strings.EqualFold(a, "deny") })
		if egress || deny {
			return ""
		}
		r := ""
		flagValues(v.args, 0, "source-ranges", func(t string) {
			if r == "" {
				r = openRange(t)
			}
		})
		// An ingress rule created without a source takes 0.0.0.0/0.
		if r == "" && has("create") && !hasLongFlag(v.args, "source-ranges") && !hasLongFlag(v.args, "source-tags") && !hasLongFlag(v.args, "source-service-accounts") {
			r = "0.0.0.0/0, the default without --source-ranges"
		}
		if r != "" {
			return "opens a firewall rule to the whole internet (" + r + ")"
		}
	case has("sql") && (has("patch") || has("create")):
		r := ""
		flagValues(v.args, 0, "authorized-networks", func(t string) {
			if r == "" {
				r = openRange(t)
			}
		})
		if r != "" {
			return "lets the whole internet reach a database instance (--authorized-networks " + r + ")"
		}
	case has("add-iam-policy-binding"):
		m := ""
		flagValues(v.args, 0, "member", func(x string) {
			if publicMember(x) {
				m = x
			}
		})
		if m != "" {
			return "makes a resource public (add-iam-policy-binding --member " + m + ", everyone on the internet)"
		}
	case has("update"):
		acl := ""
		for _, f := range []string{"predefined-acl", "predefined-default-object-acl"} {
			flagValues(v.args, 0, f, func(a string) {
				if publicCannedACL(a) {
					acl = a
				}
			})
		}
		if acl != "" {
			return "makes a bucket or object public (--predefined-acl " + acl + ")"
		}
		if hasLongFlag(v.args, "no-public-access-prevention") {
			return "turns public access prevention off, so the bucket can be made public"
		}
	}
	return ""
}

// azExposure says how an az command opens the subscription's network or
// data to everyone, or "".
func azExposure(v *cmdView, ops []string) string {
	has := func(w string) bool { return containsArg(ops, w) }
	switch {
	case has("nsg") && has("rule") && (has("create") || has("update")):
		out, deny := false, false
		flagValues(v.args, 0, "direction", func(d string) { out = out || strings.EqualFold(d, "outbound") })
		flagValues(v.args, 0, "access", func(a string) { deny = deny || strings.EqualFold(a, "deny") })
		if out || deny {
			return ""
		}
		r := ""
		anySource := func(p string) {
			if r == "" && (p == "*" || strings.EqualFold(p, "internet") || strings.EqualFold(p, "any") || openRange(p) != "") {
				r = p
			}
		}
		multiValues(v.args, "source-address-prefixes", anySource)
		multiValues(v.args, "source-address-prefix", anySource)
		if r != "" {
			return "opens a network security group rule to the whole internet (source " + r + ")"
		}
	case has("firewall-rule") && (has("create") || has("update")):
		// az sql server / postgres / mysql … firewall-rule: a start and
		// end address; 0.0.0.0 to 0.0.0.0 is "Azure services", not all.
		start, end := "", ""
		flagValues(v.args, 0, "start-ip-address", func(a string) { start = a })
		flagValues(v.args, 0, "end-ip-address", func(a string) { end = a })
		if wideIPRange(start, end) {
			return "opens a database firewall to the whole internet (" + start + " to " + end + ")"
		}
	case has("storage") && has("account") && (has("create") || has("update")):
		on := false
		flagValues(v.args, 0, "allow-blob-public-access", func(b string) { on = on || strings.EqualFold(b, "true") })
		if on {
			return "lets the storage account's containers be made public (--allow-blob-public-access true)"
		}
	case has("storage") && has("container"):
		level := ""
		flagValues(v.args, 0, "public-access", func(l string) {
			if strings.EqualFold(l, "blob") || strings.EqualFold(l, "container") {
				level = l
			}
		})
		if level != "" {
			return "makes a storage container public (--public-access " + level + ")"
		}
	}
	return ""
}

// openRange returns the first address range in text that takes in the
// whole internet, or "": a prefix wider than /8 that is not private
// (0.0.0.0/0, ::/0, 0.0.0.0/1 which with 128.0.0.0/1 is the same).
// text may be one CIDR, a comma-separated list or an ip-permissions
// structure (CidrIp=0.0.0.0/0, "CidrIpv6":"::/0").
func openRange(text string) string {
	for _, f := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F' || r == '.' || r == ':' || r == '/')
	}) {
		if len(f) > 1 && f[0] == ':' && f[1] != ':' {
			f = f[1:] // CidrIp:0.0.0.0/0
		}
		if p, err := netip.ParsePrefix(f); err == nil && p.Bits() < 8 && !p.Masked().Addr().IsPrivate() {
			return f
		}
	}
	return ""
}

// wideIPRange reports an IPv4 start-end range wider than a /8.
func wideIPRange(start, end string) bool {
	a, err1 := netip.ParseAddr(start)
	b, err2 := netip.ParseAddr(end)
	if err1 != nil || err2 != nil || !a.Is4() || !b.Is4() {
		return false
	}
	x, y := a.As4(), b.As4()
	lo := uint32(x[0])<<24 | uint32(x[1])<<16 | uint32(x[2])<<8 | uint32(x[3])
	hi := uint32(y[0])<<24 | uint32(y[1])<<16 | uint32(y[2])<<8 | uint32(y[3])
	return hi >= lo && hi-lo >= 1<<24
}

// publicPolicy reports a JSON resource policy with a statement that
// allows everyone: Principal "*" or {"AWS": "*"}, or NotPrincipal. A
// statement with a condition is scoped (an organisation, a VPC endpoint)
// unless the condition is itself an open address range. Text that is
// not JSON is left alone.
func publicPolicy(text string) bool {
	if !strings.Contains(text, "*") && !strings.Contains(text, "NotPrincipal") {
		return false
	}
	var doc struct{ Statement json.RawMessage }
	if json.Unmarshal([]byte(text), &doc) != nil || len(doc.Statement) == 0 {
		return false
	}
	var sts []policyStatement
	if json.Unmarshal(doc.Statement, &sts) != nil {
		var one policyStatement
		if json.Unmarshal(doc.Statement, &one) != nil {
			return false
		}
		sts = append(sts, one)
	}
	for _, st := range sts {
		cond := strings.TrimSpace(string(st.Condition))
		scoped := cond != "" && cond != "null" && cond != "{}" && openRange(cond) == ""
		if strings.EqualFold(st.Effect, "Allow") && !scoped && (len(st.NotPrincipal) > 0 || anyonePrincipal(st.Principal)) {
			return true
		}
	}
	return false
}

type policyStatement struct {
	Effect       string
	Principal    json.RawMessage
	NotPrincipal json.RawMessage
	Condition    json.RawMessage
}

// anyonePrincipal reports "*", {"AWS": "*"} and {"AWS": ["*", …]}.
func anyonePrincipal(raw json.RawMessage) bool {
	var p any
	if json.Unmarshal(raw, &p) != nil {
		return false
	}
	star := func(x any) bool { s, ok := x.(string); return ok && s == "*" }
	switch p := p.(type) {
	case string:
		return p == "*"
	case map[string]any:
		for _, x := range p {
			if star(x) {
				return true
			}
			if l, ok := x.([]any); ok {
				for _, e := range l {
					if star(e) {
						return true
					}
				}
			}
		}
	}
	return false
}

// publicBlockOff reports a public-access-block configuration that sets
// one of its blocks false (shorthand Key=false or JSON "Key": false).
func publicBlockOff(text string) bool {
	t := squeeze(text)
	for _, k := range []string{"blockpublicacls", "ignorepublicacls", "blockpublicpolicy", "restrictpublicbuckets"} {
		if strings.Contains(t, k+"=false") || strings.Contains(t, k+":false") {
			return true
		}
	}
	return false
}

// squeeze lower-cases text and drops blanks and quotes, so shorthand and
// JSON spellings compare alike.
func squeeze(text string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\n', '"', '\'':
			return -1
		}
		if r >= 'A' && r <= 'Z' {
			return r + 32
		}
		return r
	}, text)
}

// publicCannedACL reports the canned ACLs that open a bucket or object to
// everyone (public-read, public-read-write, authenticated-read, and the
// gcloud spellings publicRead, publicReadWrite, authenticatedRead).
func publicCannedACL(a string) bool {
	switch strings.ReplaceAll(strings.ToLower(a), "-", "") {
	case "publicread", "publicreadwrite", "authenticatedread":
		return true
	}
	return false
}

// publicMember reports the Google Cloud members that stand for everyone:
// allUsers and allAuthenticatedUsers (also as AllUsers:R in gsutil acl ch).
func publicMember(m string) bool {
	m = strings.ToLower(m)
	return strings.HasPrefix(m, "allusers") || strings.HasPrefix(m, "allauthenticatedusers")
}

// publicMemberArg reports a gsutil iam / acl ch argument that adds a
// public member; the member after -d is being removed.
func publicMemberArg(args []string) bool {
	for i := 0; i < len(args); i++ {
		if args[i] == "-d" {
			i++
			continue
		}
		if publicMember(args[i]) {
			return true
		}
	}
	return false
}

// multiValues calls fn with each value of an option that takes several
// (az --source-address-prefixes a b, aws --values-to-add a b): the words
// after it up to the next option, or the value after "=".
func multiValues(args []string, long string, fn func(string)) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || name != long {
			continue
		}
		if hasVal {
			fn(val)
			continue
		}
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			fn(args[i])
		}
	}
}

// repoMadePublic reports gh repo edit --visibility public and glab's
// --visibility public / --public.
func repoMadePublic(v *cmdView) bool {
	public := hasLongFlag(v.args, "public") && !containsArg(v.args, "--public=false")
	flagValues(v.args, 0, "visibility", func(x string) { public = public || strings.EqualFold(x, "public") })
	return public
}

// apiDeletesRepo reports gh / glab api calls that send DELETE to a
// repository, project or package path (repos/o/r, repos/o/r/releases/1,
// projects/42, user/packages/npm/x).
// frameworkReset says how a web framework's task empties or drops the
// application's database, or "": manage.py flush, rails db:drop /
// db:reset / db:schema:load, artisan migrate:fresh / db:wipe.
func frameworkReset(v *cmdView) string {
	args := v.args
	if v.prog == "bundle" && len(args) > 0 && args[0] == "exec" {
		args = args[1:]
	}
	for i, a := range args {
		switch {
		case strings.HasSuffix(a, "manage.py") && i+1 < len(args) && (args[i+1] == "flush" || args[i+1] == "reset_db"):
			return "empties the database (manage.py " + args[i+1] + ")"
		case a == "artisan" && i+1 < len(args):
			switch args[i+1] {
			case "migrate:fresh", "migrate:reset", "migrate:refresh", "db:wipe":
				return "drops every table (artisan " + args[i+1] + ")"
			}
		}
		if a == "downgrade" && i+1 < len(args) && args[i+1] == "base" {
			return "reverts every migration, dropping the tables they made (downgrade base)"
		}
		switch a {
		case "db:drop", "db:reset", "db:schema:load", "db:purge", "db:truncate_all", "db:migrate:reset":
			return "drops or empties the database (" + a + ")"
		case "--truncate", "--drop", "--drop-all", "--wipe", "--purge", "--reset-db", "--flush":
			// A project's own seed or maintenance script told to empty
			// what it touches.
			return "runs a script told to empty the data it touches (" + a + ")"
		}
	}
	return ""
}

// adminCodeMarks are what framework shell code writes to make an
// account an administrator.
var adminCodeMarks = []string{"create_superuser(", "is_superuser=true", "is_superuser = true", "is_staff=true", "is_staff = true",
	"admin: true", "admin=true", "admin = true", "role: 'admin'", `role: "admin"`, "role='admin'", `role="admin"`, "assignrole('admin')",
	`assignrole("admin")`, "add_role(:admin)"}

// frameworkAdmin says how a web framework's task or shell makes an
// administrator account, or "": manage.py createsuperuser, and code run
// by manage.py shell -c, rails runner or artisan tinker --execute that
// calls create_superuser or sets an admin flag.
func frameworkAdmin(v *cmdView) string {
	for i, a := range v.args {
		switch {
		case strings.HasSuffix(a, "manage.py") && i+1 < len(v.args) && v.args[i+1] == "createsuperuser":
			return "creates an administrator account (manage.py createsuperuser)"
		case strings.HasSuffix(a, "manage.py") && i+1 < len(v.args) && v.args[i+1] == "shell",
			a == "runner" || a == "r" && i > 0 && strings.HasSuffix(v.args[i-1], "rails"), a == "tinker":
			code := strings.ToLower(strings.Join(v.args[i+1:], " "))
			if containsAnyOf(code, adminCodeMarks) {
				return "creates or raises an administrator account from the framework's shell"
			}
		}
	}
	return ""
}

// productionTarget reports a command pointed at production by its
// environment or options: RAILS_ENV=production, --env=production,
// --settings=….production, DISABLE_DATABASE_ENVIRONMENT_CHECK=1.
func productionTarget(v *cmdView) bool {
	prod := func(w string) bool {
		name, value, ok := strings.Cut(w, "=")
		if !ok {
			return false
		}
		l := strings.ToLower(value)
		switch strings.TrimLeft(name, "-") {
		case "RAILS_ENV", "RACK_ENV", "APP_ENV", "NODE_ENV", "MIX_ENV", "env", "environment", "e":
			return l == "production" || l == "prod"
		case "settings", "DJANGO_SETTINGS_MODULE":
			return strings.Contains(l, "prod")
		case "DISABLE_DATABASE_ENVIRONMENT_CHECK":
			return l == "1" || l == "true"
		case "DATABASE_URL", "DB_URL", "SQLALCHEMY_DATABASE_URI", "DSN":
			return strings.Contains(l, "prod") // "$PROD_DATABASE_URL", a prod-db host
		}
		return false
	}
	for _, a := range v.c.Assigns {
		if prod(a) {
			return true
		}
	}
	for i, a := range v.args {
		if prod(a) || (a == "--env" || a == "-e" || a == "--settings") && i+1 < len(v.args) && prod(strings.TrimLeft(a, "-")+"="+v.args[i+1]) {
			return true
		}
	}
	return false
}

// sdkDestroyCalls are cloud SDK calls that delete a store, its data or
// machines: boto3's, google-cloud's and Azure's.
var sdkDestroyCalls = []string{"object_versions.delete(", "objects.all().delete(", "delete_bucket(", "delete_objects(", "delete_table(",
	"terminate_instances(", "delete_db_instance(", "delete_db_cluster(", "delete_stack(", "delete_file_system(", "delete_cluster(",
	"delete_container(", "delete_blobs(", "bucket.delete(force", "deletebucketcommand", "deleteobjectscommand", "terminateinstancescommand",
	"deletetablecommand", "deletedbinstancecommand"}

// sdkDestroy returns the destroying SDK call code makes, or "".
// The JavaScript SDK's commands (DeleteBucketCommand) are matched
// without case.
func sdkDestroy(code string) string {
	lower := strings.ToLower(code)
	for _, c := range sdkDestroyCalls {
		if strings.Contains(code, c) || strings.HasSuffix(c, "command") && strings.Contains(lower, c) {
			return strings.TrimSuffix(c, "(")
		}
	}
	return ""
}

// checkForgeAPIOverHTTP judges a curl (or wget, xh) call to GitHub's
// REST API as gh api's is judged: a collaborator, a deploy key or an
// account key added is access granted however it is sent.
func (s *scan) checkForgeAPIOverHTTP(v *cmdView) {
	if !s.enabled(rCloudGrant) {
		return
	}
	for _, a := range v.args {
		rest, ok := strings.CutPrefix(a, "https://api.github.com/")
		if !ok {
			continue
		}
		method := ""
		flagValues(v.args, 'X', "request", func(m string) { method = strings.ToUpper(m) })
		flagValues(v.args, 0, "method", func(m string) { method = strings.ToUpper(m) })
		if method == "" && (hasShortFlag(v.args, 'd') || hasLongFlag(v.args, "data") || hasLongFlag(v.args, "data-raw") ||
			hasLongFlag(v.args, "json") || hasLongFlag(v.args, "post-data")) {
			method = "POST"
		}
		rest, _, _ = strings.Cut(rest, "?")
		if what := forgeAPIGrant(v, method, rest); what != "" {
			s.add(rCloudGrant, v.prog+" "+what+": granting access is for a person to do on purpose; a human should approve it", v.prog+" "+evJoin(v.args))
		}
		return
	}
}

// jsonBodySets reports a request body among args (curl -d '{…}') that
// sets one of settings, written without spaces.
func jsonBodySets(args []string, settings ...string) bool {
	for _, a := range args {
		if strings.HasPrefix(strings.TrimSpace(a), "{") {
			flat := strings.Join(strings.Fields(a), "")
			for _, st := range settings {
				if strings.Contains(flat, st) {
					return true
				}
			}
		}
	}
	return false
}

// forgeAPIGrant says how a call to GitHub's REST API (method, path)
// hands out access to a hosted repository or organization, or "": a
// collaborator, member or team
// membership PUT, a webhook or deploy key POSTed (fields given make gh
// POST), a key added to the signed-in account, workflows allowed to
// write and approve.
func forgeAPIGrant(v *cmdView, method, path string) string {
	// $GITHUB_REPOSITORY is OWNER/REPO: two segments of the path.
	if strings.Contains(path, "GITHUB_REPOSITORY") {
		path = strings.ReplaceAll(strings.ReplaceAll(path, "${GITHUB_REPOSITORY}", "owner/repo"), "$GITHUB_REPOSITORY", "owner/repo")
	}
	p := strings.Split(strings.Trim(path, "/"), "/")
	at := func(i int) string {
		if i < len(p) {
			return p[i]
		}
		return ""
	}
	switch {
	case method == "PUT" && at(0) == "repos" && at(3) == "collaborators" && at(4) != "",
		method == "PUT" && at(0) == "orgs" && (at(2) == "memberships" || at(2) == "outside_collaborators") && at(3) != "",
		method == "PUT" && at(0) == "orgs" && at(2) == "teams" && at(4) == "memberships":
		return "gives an account access to a hosted repository or organization through the API (" + path + ")"
	case method == "POST" && (at(0) == "repos" && at(3) == "hooks" || at(0) == "orgs" && at(2) == "hooks"):
		return "sends a repository's or organization's events, pushes included, to a webhook (" + path + ")"
	case method == "POST" && at(0) == "repos" && at(3) == "keys":
		return "adds a deploy key to a repository through the API (" + path + ")"
	case method == "POST" && at(0) == "user" && (at(1) == "keys" || at(1) == "ssh_signing_keys" || at(1) == "gpg_keys"):
		return "adds a key to the signed-in account through the API (" + path + "): whoever holds it can push or sign as that account"
	case method == "PATCH" && at(0) == "repos" && at(2) != "" && at(3) == "" &&
		(apiFieldSet(v.args, "visibility", "public", "internal") || apiFieldSet(v.args, "private", "false") || jsonBodySets(v.args, `"private":false`, `"visibility":"public"`)):
		return "makes a repository readable by others through the API (" + path + ")"
	case method == "PUT" && at(0) == "repos" && at(3) == "actions" && at(4) == "permissions":
		for _, a := range v.args {
			if strings.Contains(a, "default_workflow_permissions=write") || strings.Contains(a, "can_approve_pull_request_reviews=true") {
				return "lets the repository's workflows write to it and approve pull requests (" + path + ")"
			}
		}
	}
	return ""
}

// ownKey reports a public key file under ~/.ssh or ~/.gnupg: a developer
// adding their own key. A key from elsewhere (/tmp, a download) is not.
func ownKey(cs *cmdScan, v *cmdView, file string) bool {
	if file == "" {
		return false
	}
	abs := cs.resolveIn(v.c, file).Abs
	return cs.home != "" && (isBelow(abs, cs.home+"/.ssh") || isBelow(abs, cs.home+"/.gnupg"))
}

func apiDeletesRepo(v *cmdView, path string) bool {
	del := false
	flagValues(v.args, 'X', "method", func(m string) { del = del || strings.EqualFold(m, "DELETE") })
	if !del {
		return false
	}
	p := strings.TrimPrefix(path, "/")
	return strings.HasPrefix(p, "repos/") || strings.HasPrefix(p, "projects/") || strings.Contains(p, "/packages/")
}

// remoteSources calls fn with each URL a command deploys from: kubectl
// apply / create / replace -f URL or -k URL, helm repo add NAME URL, helm
// install / upgrade of a chart URL or with --repo URL, helm plugin
// install URL; ansible-pull -U URL, asdf plugin add NAME URL,
// grafana-cli --pluginUrl URL, arduino-cli's board package indexes; and
// with "-" for manifests read from a pipe.
func remoteSources(v *cmdView, ops []string, fn func(src string)) {
	op := operandAt(ops)
	each := func(f string) {
		for u := range strings.SplitSeq(f, ",") {
			if isURL(u) || u == "-" {
				fn(u)
			}
		}
	}
	switch v.prog {
	case "kubectl", "oc":
		switch op(0) {
		case "apply", "create", "replace":
			flagValues(v.args, 'f', "filename", each)
			flagValues(v.args, 'k', "kustomize", each)
		case "krew":
			// kubectl krew install --manifest-url=URL --archive=URL: a
			// plugin from outside the index, run as a kubectl command.
			if op(1) == "install" {
				flagValues(v.args, 0, "manifest-url", each)
				flagValues(v.args, 0, "archive", each)
			}
		}
	case "helm":
		from := 0
		switch {
		case op(0) == "repo" && op(1) == "add", op(0) == "plugin" && op(1) == "install":
			from = 2
		case op(0) == "install" || op(0) == "upgrade":
			from = 1
			flagValues(v.args, 0, "repo", each)
		default:
			return
		}
		for _, o := range ops[min(from, len(ops)):] {
			if isURL(o) {
				fn(o)
			}
		}
	case "ansible-pull":
		// The playbook repository it clones and runs as the user.
		flagValues(v.args, 'U', "url", each)
	case "asdf":
		// asdf plugin add NAME URL: the plugin's scripts run at every install.
		if op(0) == "plugin" && (op(1) == "add" || op(1) == "install") && isURL(op(3)) {
			fn(op(3))
		}
	case "grafana-cli":
		flagValues(v.args, 0, "pluginUrl", each)
	case "arduino-cli":
		// Board package indexes: every core installed from them runs its
		// tools at every build and upload.
		flagValues(v.args, 0, "additional-urls", each)
		if op(0) == "config" && (op(1) == "add" || op(1) == "set") && op(2) == "board_manager.additional_urls" {
			for _, o := range ops[min(3, len(ops)):] {
				each(o)
			}
		}
	}
}

// namedHTTPS reports an https URL whose host is a name, not an address.
func namedHTTPS(u string) bool {
	scheme, _, _ := strings.Cut(u, "://")
	h := urlHost(u)
	_, err := netip.ParseAddr(h)
	return strings.EqualFold(scheme, "https") && h != "" && err != nil
}

// isURL reports a word that starts with a URL scheme (https://, oci://).
func isURL(w string) bool {
	i := strings.Index(w, "://")
	if i <= 0 {
		return false
	}
	for j := 0; j < i; j++ {
		if c := w[j]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// trustedSource reports a URL served over TLS (https, oci) by a host in
// trusted_hosts. Plain http and bare IP addresses are never trusted.
func (s *scan) trustedSource(u string) bool {
	h := urlHost(u)
	if isLoopbackHost(h) {
		return true // a chart or manifest server on this machine
	}
	scheme, _, _ := strings.Cut(u, "://")
	if !strings.EqualFold(scheme, "https") && !strings.EqualFold(scheme, "oci") {
		return false
	}
	if _, err := netip.ParseAddr(h); err == nil || h == "" {
		return false
	}
	return codeHost(&s.an.trusted, h)
}

// cloudAuditOff says how a command turns off or deletes the cloud's
// audit logging (CloudTrail, GuardDuty, AWS Config, VPC flow logs, GCP
// log sinks, Azure diagnostic settings), or "".
func cloudAuditOff(v *cmdView, ops []string) string {
	op := operandAt(ops)
	has := func(w string) bool { return containsArg(ops, w) }
	switch v.prog {
	case "aws":
		switch svc, verb := op(0), op(1); svc {
		case "s3api":
			// A lifecycle rule that expires a log or audit bucket's objects
			// within days erases the record as surely as a delete.
			bucket := ""
			flagValues(v.args, 0, "bucket", func(b string) { bucket = b })
			if verb == "put-bucket-lifecycle-configuration" && recordBucket(bucket) {
				if days := lifecycleExpiryDays(strings.Join(v.args, " ")); days >= 0 && days <= 30 {
					return "s3api put-bucket-lifecycle-configuration expires the objects of " + bucket + ", a bucket of logs or audit records, after " + strconv.Itoa(days) + " days"
				}
			}
		case "cloudtrail":
			switch verb {
			case "stop-logging", "delete-trail":
				return "cloudtrail " + verb + " stops the account's audit trail"
			case "put-event-selectors":
				if strings.Contains(strings.ToLower(strings.Join(v.args, " ")), `"includemanagementevents":false`) {
					return "cloudtrail put-event-selectors stops the trail recording management events"
				}
			case "update-trail":
				for _, f := range []string{"no-include-global-service-events", "no-is-multi-region-trail", "no-enable-log-file-validation"} {
					if hasLongFlag(v.args, f) {
						return "cloudtrail update-trail --" + f + " narrows what the audit trail records or proves"
					}
				}
			}
		case "guardduty":
			if verb == "delete-detector" || verb == "update-detector" && hasLongFlag(v.args, "no-enable") {
				return "guardduty " + verb + " turns threat detection off"
			}
			if verb == "create-ip-set" || verb == "update-ip-set" || verb == "create-filter" && strings.Contains(strings.ToLower(strings.Join(v.args, " ")), "archive") {
				return "guardduty " + verb + " tells threat detection to trust or archive what it would report"
			}
		case "configservice", "config":
			if verb == "stop-configuration-recorder" || verb == "delete-configuration-recorder" || verb == "delete-delivery-channel" {
				return svc + " " + verb + " stops recording configuration changes"
			}
		case "ec2":
			if verb == "delete-flow-logs" {
				return "ec2 delete-flow-logs stops recording network traffic"
			}
		case "organizations":
			if verb == "leave-organization" {
				return "organizations leave-organization takes the account out from under the organization's guardrails and its central audit trail"
			}
		}
	case "gcloud":
		// gcloud storage buckets update gs://audit-… --clear-retention-period:
		// what the bucket keeps for the audit can then be deleted.
		if op(0) == "storage" && op(1) == "buckets" && op(2) == "update" && recordBucket(op(3)) &&
			(hasLongFlag(v.args, "clear-retention-period") || hasLongFlag(v.args, "clear-soft-delete")) {
			return "storage buckets update takes the retention off " + op(3) + ", a bucket of logs or audit records"
		}
		if !has("logging") {
			return ""
		}
		switch {
		case has("sinks") && has("delete"):
			return "logging sinks delete stops exporting the project's logs"
		case has("sinks") && has("update") && hasLongFlag(v.args, "disabled"):
			return "logging sinks update --disabled stops exporting the project's logs"
		case (has("logs") || has("buckets")) && has("delete"):
			return "logging delete erases the project's stored logs"
		}
	case "vault":
		if op(0) == "audit" && op(1) == "disable" {
			return "audit disable stops recording who reads and writes the secrets"
		}
	case "az":
		if has("monitor") && (has("diagnostic-settings") || has("log-profiles")) && has("delete") {
			return "monitor delete removes where the resource's logs are sent"
		}
	}
	return ""
}

// recordBucket reports a bucket named as one of logs, audit records or
// trails (s3://acme-audit-logs, gs://org-cloudtrail, access_logs), by the
// words of its name: a blog's or a catalog's bucket is not one.
func recordBucket(name string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) {
		if w == "log" || w == "logs" || strings.HasSuffix(w, "logs") && !strings.HasSuffix(w, "blogs") && !strings.HasSuffix(w, "catalogs") ||
			strings.HasPrefix(w, "audit") || strings.Contains(w, "trail") {
			return true
		}
	}
	return false
}

// lifecycleExpiryDays returns the smallest "Days" an S3 lifecycle
// configuration's Expiration (or NoncurrentVersionExpiration) gives, or -1.
func lifecycleExpiryDays(text string) int {
	flat := strings.ToLower(strings.Join(strings.Fields(text), ""))
	least := -1
	for _, key := range []string{`"expiration":{"days":`, `"noncurrentversionexpiration":{"noncurrentdays":`} {
		for rest := flat; ; {
			i := strings.Index(rest, key)
			if i < 0 {
				break
			}
			rest = rest[i+len(key):]
			j := 0
			for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
				j++
			}
			if d, err := strconv.Atoi(rest[:j]); err == nil && (least < 0 || d < least) {
				least = d
			}
		}
	}
	return least
}

// optionValue returns the value glued to an option (--execute=SQL gives
// SQL, -eSQL gives SQL), or the word itself.
func optionValue(a string) string {
	if strings.HasPrefix(a, "--") {
		if _, val, ok := strings.Cut(a, "="); ok {
			return val
		}
		return a
	}
	if len(a) > 2 && a[0] == '-' && (a[1] == 'e' || a[1] == 'c') {
		return a[2:]
	}
	return a
}

// destructiveSQL returns the destructive statement in a SQL text (DROP
// DATABASE / SCHEMA / TABLE, TRUNCATE, a DELETE or UPDATE without WHERE),
// or "".
func destructiveSQL(sql string) string {
	if len(sql) < 8 {
		return ""
	}
	up := strings.ToUpper(sql)
	if strings.Contains(up, "VACUUM") && strings.Contains(strings.Join(strings.Fields(up), " "), "RETAIN 0 HOURS") {
		return "VACUUM … RETAIN 0 HOURS (every earlier version of the table)"
	}
	for _, kw := range []string{"DROP DATABASE", "DROP SCHEMA", "DROP TABLE", "DROP KEYSPACE", "TRUNCATE "} {
		if i := strings.Index(up, kw); i >= 0 && (i == 0 || !isWordByte(up[i-1])) {
			return strings.TrimSpace(kw)
		}
	}
	if !strings.Contains(up, "DELETE") && !strings.Contains(up, "UPDATE") {
		return ""
	}
	for st := range strings.SplitSeq(sqlCode(up), ";") {
		st = strings.TrimSpace(st)
		verb, rest, _ := strings.Cut(st, " ")
		// A join or USING limits the rows as a WHERE does.
		if containsWord(rest, "JOIN") || containsWord(rest, "USING") || sqlFilters(rest) {
			continue
		}
		switch {
		case verb == "DELETE" && strings.HasPrefix(strings.TrimSpace(rest), "FROM "):
			return "DELETE without WHERE (every row of the table)"
		case verb == "UPDATE" && containsWord(rest, "SET"):
			return "UPDATE without WHERE (every row of the table)"
		}
	}
	return ""
}

// sqlRoleGrant says which SQL statement creates a login or superuser role
// or grants everything, or "".
func sqlRoleGrant(sql string) string {
	if len(sql) < 10 {
		return ""
	}
	up := strings.ToUpper(sql)
	switch {
	case (strings.Contains(up, "CREATE ROLE") || strings.Contains(up, "CREATE USER") || strings.Contains(up, "ALTER ROLE") ||
		strings.Contains(up, "ALTER USER")) && (containsWord(up, "SUPERUSER") || containsWord(up, "BYPASSRLS")):
		return "SUPERUSER"
	case strings.Contains(up, "GRANT ALL") && (strings.Contains(up, "*.*") || strings.Contains(up, "ON DATABASE") || strings.Contains(up, "WITH GRANT OPTION")):
		return "GRANT ALL"
	case strings.Contains(up, "GRANT ROLE ACCOUNTADMIN") || strings.Contains(up, "GRANT ROLE SECURITYADMIN") || strings.Contains(up, "GRANT ROLE ORGADMIN"):
		return "Snowflake's ACCOUNTADMIN, SECURITYADMIN or ORGADMIN role"
	}
	return appAdminAccount(up)
}

// accountTables mark a table of an application's accounts.
// emptyFilterDelete matches a Mongo delete with an empty filter:
// deleteMany({}), remove({}), which match every document.
var emptyFilterDelete = regexp.MustCompile(`\.(?:deleteMany|remove)\(\s*\{\s*\}\s*[,)]`)

var accountTables = []string{"USER", "ACCOUNT", "ADMIN", "MEMBER", "STAFF", "OPERATOR"}

// adminMarks mark a value or column that makes an account an
// administrator.
var adminMarks = []string{"'ADMIN'", "'SUPERUSER'", "'SUPERADMIN'", "'ROOT'", "'OWNER'", "IS_ADMIN", "IS_SUPERUSER", "IS_STAFF",
	"ISADMIN", "SUPERUSER = TRUE", "ADMIN = TRUE", "ADMIN=TRUE"}

// appAdminAccount returns a description when upper-case SQL inserts an
// administrator into an application's accounts, or raises one to it
// (INSERT INTO users … 'admin', UPDATE accounts SET role = 'admin'), or "".
func appAdminAccount(up string) string {
	for _, verb := range []string{"INSERT INTO ", "UPDATE "} {
		i := strings.Index(up, verb)
		if i < 0 {
			continue
		}
		table := strings.TrimLeft(up[i+len(verb):], " `\"")
		if j := strings.IndexAny(table, " (`\"\n;"); j >= 0 {
			table = table[:j]
		}
		isAccounts := false
		for _, t := range accountTables {
			isAccounts = isAccounts || strings.Contains(table, t)
		}
		if !isAccounts {
			continue
		}
		rest := up[i:]
		if verb == "INSERT INTO " && strings.Contains(table, "ADMIN") {
			return "an account in the application's " + strings.ToLower(table) + " table"
		}
		for _, m := range adminMarks {
			if strings.Contains(rest, m) {
				return "an administrator in the application's " + strings.ToLower(table) + " table"
			}
		}
	}
	return ""
}

// sqlCode returns upper-case SQL with comments, string literals, psql
// meta-commands (\c db) and parenthesised parts left out, so a WHERE in
// a subquery or a string does not count for its statement.
func sqlCode(up string) string {
	out := make([]byte, 0, len(up))
	depth, lineStart := 0, true
	for i := 0; i < len(up); i++ {
		c := up[i]
		switch {
		case c == '-' && i+1 < len(up) && up[i+1] == '-' || c == '\\' && lineStart:
			// Up to the end of the line; the newline itself is kept.
			j := strings.IndexByte(up[i:], '\n')
			if j < 0 {
				return string(out)
			}
			i += j - 1
			continue
		case c == '\'':
			j := strings.IndexByte(up[i+1:], '\'')
			if j < 0 {
				return string(out)
			}
			i += j + 1
			c = '0' // the literal stands as a value
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
			continue
		}
		lineStart = c == '\n' || lineStart && (c == ' ' || c == '\t' || c == '\r')
		if c == '\n' || c == '\t' || c == '\r' {
			c = ' '
		}
		if depth == 0 {
			out = append(out, c)
		}
	}
	return string(out)
}

// sqlFilters reports a WHERE clause that is not always true (WHERE 1=1
// and WHERE TRUE select every row).
func sqlFilters(rest string) bool {
	padded := " " + rest + " "
	i := strings.Index(padded, " WHERE ")
	if i < 0 {
		return false
	}
	switch strings.ReplaceAll(padded[i+len(" WHERE "):], " ", "") {
	case "", "1=1", "TRUE", "1", "'1'='1'":
		return false
	}
	return true
}

// checkInfrastructure judges one command for infrastructure destruction,
// access grants, cloud audit logging turned off and deploys from hosts
// that are not trusted.
func (s *scan) checkInfrastructure(cs *cmdScan, v *cmdView) {
	if v.hasCode && (strings.Contains(v.code, "delete") || strings.Contains(v.code, "Delete") || strings.Contains(v.code, "terminate") || strings.Contains(v.code, "Terminate")) {
		if call := sdkDestroy(v.code); call != "" && s.enabled(rInfraDestroy) {
			s.add(rInfraDestroy, "a "+v.prog+" program deletes cloud resources through the provider's SDK ("+call+"): nothing brings them back; a human should approve it", v.code)
		}
	}
	if v.fam&famInfra == 0 {
		return
	}
	ops := infraOperands(v)
	ev := func() string { return v.prog + " " + evJoin(v.args) }
	if where := kubeProductionExec(v, ops); where != "" && s.enabled(rInfraProdExec) {
		s.add(rInfraProdExec, v.prog+" "+ops[0]+" runs in production ("+where+"): what runs there acts on live data and users; a human should approve it", ev())
	}
	if what := acceleratorFleet(v, ops); what != "" {
		s.add(rDisruptAcceleratorFleet, what+": a fleet of accelerators bills by the hour and is how a hijacked cloud account is mined with; a human should approve it", ev())
	}
	if srcs, dst, ok := bucketUpload(v, ops); ok {
		for _, src := range srcs {
			if what := wholeTree(cs, v, src); what != "" && s.enabled(rExfilTransfer) {
				s.add(rExfilTransfer, v.prog+" uploads "+what+" to "+dst+": approve only if you know the bucket and what is sent", ev())
				break
			}
		}
	}
	if dst := foreignAccountUpload(v, ops); dst != "" && s.enabled(rExfilTransfer) {
		s.add(rExfilTransfer, v.prog+" uploads to "+dst+" with a credential written into the line, not the account this machine signs in to: that account is whoever wrote the credential's; approve only if you know it", ev())
	}
	// Reported once, as log tampering: not also as a delete-*.
	if what := cloudAuditOff(v, ops); what != "" {
		s.add(rDefLogTamper, v.prog+" "+what+": what is done in the account afterwards would go unrecorded; refuse it", ev())
		return
	}
	if what, access := databaseProtectionOff(cs, v); what != "" {
		if access {
			s.add(rCloudGrant, v.prog+" "+what+": granting access is for a person to do on purpose; a human should approve it", ev())
		} else {
			s.add(rDefLogTamper, v.prog+" "+what+": what is done in the database afterwards would go unrecorded; refuse it", ev())
		}
	}
	if file := localInfile(cs, v); file != "" && s.enabled(rExfilFile) {
		p, _ := action.ResolvePath(file, cs.root, cs.home)
		if sens, label := classify(p.Abs, cs.home); sens != sensNone {
			s.add(rExfilFile, v.prog+" LOAD DATA LOCAL INFILE sends "+label+" ("+file+") to the database server, where anyone who reads the table has it: secrets must not leave the machine", ev())
		}
	}
	if s.enabled(rRCEPackageURL) {
		s.checkRemoteSources(cs, v, ops)
	}
	if what := databaseCommand(cs, v); what != "" && s.enabled(rRCEDatabaseCommand) {
		s.add(rRCEDatabaseCommand, v.prog+" "+what+": the server does it as its own user, where this judge does not look; a human should approve it", ev())
	}
	what, grant := infraChange(cs, v, ops)
	if what == "" && !dryRun(v.args) && s.enabled(rInfraProdChange) {
		if where := productionChange(cs, v, ops); where != "" {
			s.add(rInfraProdChange, v.prog+" changes production ("+where+"): what changes there reaches live data and users at once; a human should approve it", ev())
		}
	}
	if what == "" || dryRun(v.args) || !grant && localDataStore(v) {
		return
	}
	if grant {
		s.add(rCloudGrant, v.prog+" "+what+": granting access is for a person to do on purpose; a human should approve it", ev())
		return
	}
	s.add(rInfraDestroy, v.prog+" "+what+": nothing brings it back; a human should approve it", ev())
}

// kubeProductionExec returns the production context, cluster, namespace
// or kubeconfig a kubectl exec, attach, debug or cp runs in, or "".
func kubeProductionExec(v *cmdView, ops []string) string {
	if v.prog != "kubectl" && v.prog != "oc" || len(ops) == 0 {
		return ""
	}
	switch ops[0] {
	case "exec", "attach", "debug", "cp", "rsh", "rsync":
	default:
		return ""
	}
	where := ""
	if kubeNamespace(v.args) == "kube-system" {
		// Inside the cluster's own components: what runs there runs for
		// every workload (kube-proxy, the DNS, the network plugin).
		where = "kube-system"
	}
	for _, f := range []struct {
		short byte
		long  string
	}{{0, "context"}, {0, "cluster"}, {'n', "namespace"}, {0, "kubeconfig"}} {
		flagValues(v.args, f.short, f.long, func(val string) {
			if where == "" && namedForProduction(val) {
				where = val
			}
		})
	}
	return where
}

// namedForProduction reports a name with prod, production or prd as one
// of its words (gke_acme-prod_us-central1, production, eu-prd-1), not
// inside one (product, prodigy).
func namedForProduction(name string) bool {
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	for _, w := range words {
		switch strings.TrimRight(w, "0123456789") {
		case "prod", "production", "prd":
			return true
		}
	}
	return false
}

// kubeRoleWidened says how kubectl patch / set subject widens RBAC, or "":
// rules that allow every verb or resource patched into a role (patch
// clusterrole view -p '…"verbs":["*"]…'), or an account added to the
// cluster-admin binding (set subject clusterrolebinding cluster-admin
// --user …, a patch of its subjects).
func kubeRoleWidened(v *cmdView, ops []string) string {
	op := operandAt(ops)
	if op(0) == "set" {
		kind, name := splitKubeRef(op(2), op(3))
		if op(1) == "subject" && kind == "clusterrolebinding" && (name == "cluster-admin" || name == "admin") {
			return "adds an account to the " + name + " binding"
		}
		return ""
	}
	kind, name := splitKubeRef(op(1), op(2))
	patch := ""
	flagValues(v.args, 'p', "patch", func(p string) { patch = p })
	switch kind {
	case "clusterrole", "role":
		if strings.Contains(patch, "*") && (strings.Contains(patch, "verbs") || strings.Contains(patch, "resources")) {
			return "widens the " + kind + " " + name + " to every verb or resource"
		}
	case "clusterrolebinding":
		if (name == "cluster-admin" || strings.Contains(patch, "cluster-admin")) && strings.Contains(patch, "subjects") {
			return "adds an account to a cluster-admin binding"
		}
	case "mutatingwebhookconfiguration", "validatingwebhookconfiguration":
		// clientConfig.url sends every object the webhook matches to
		// that server, and a mutating one's answer rewrites it.
		if strings.Contains(patch, "clientConfig") && strings.Contains(patch, "url") {
			return "points the admission webhook " + name + " at a URL: that server sees every object the cluster admits, and may rewrite them"
		}
	}
	return ""
}

// splitKubeRef reads KIND NAME or KIND/NAME, with the kind lower-cased and
// its API group (clusterroles.rbac.authorization.k8s.io) and plural dropped.
func splitKubeRef(kind, name string) (string, string) {
	if k, n, ok := strings.Cut(kind, "/"); ok {
		kind, name = k, n
	}
	kind, _, _ = strings.Cut(strings.ToLower(kind), ".")
	return strings.TrimSuffix(kind, "s"), name
}

// wildcardRule reports kubectl create role flags that allow every verb
// and every resource.
func wildcardRule(v *cmdView) bool {
	verbs, resources := false, false
	flagValues(v.args, 0, "verb", func(x string) { verbs = verbs || strings.Contains(x, "*") })
	flagValues(v.args, 0, "resource", func(x string) { resources = resources || strings.Contains(x, "*") })
	return verbs && resources
}

// awsAttribute returns the value of --attribute (ec2 modify-instance-attribute).
func awsAttribute(args []string) string {
	attr := ""
	flagValues(args, 0, "attribute", func(a string) { attr = a })
	return attr
}

// dryRun reports the options that make a cloud, cluster or chart tool
// only show what it would do: aws --dryrun / --dry-run, kubectl and helm
// --dry-run[=client|server], terraform's plan is another verb.
// --dry-run=none runs for real.
func dryRun(args []string) bool {
	for _, a := range args {
		switch a {
		case "--dryrun", "--dry-run", "--dry-run=client", "--dry-run=server", "--dry-run=true":
			return true
		}
	}
	return false
}

// checkRemoteSources escalates manifests, charts and chart repositories
// that come from a host outside trusted_hosts: what they hold runs in the
// cluster. Manifests piped in (curl URL | kubectl apply -f -) are judged
// by the URL the download fetches.
func (s *scan) checkRemoteSources(cs *cmdScan, v *cmdView, ops []string) {
	bad := ""
	// helm repo add registers a named source that charts must then name
	// (bitnami/nginx): it hijacks no other name, unlike a registry or
	// index switch, so an https source on a named host is everyday; only
	// plain http and bare addresses ask.
	repoAdd := v.prog == "helm" && len(ops) > 1 && ops[0] == "repo" && ops[1] == "add"
	check := func(u string) {
		if bad != "" || s.trustedSource(u) || repoAdd && namedHTTPS(u) {
			return
		}
		bad = u
	}
	remoteSources(v, ops, func(src string) {
		if src != "-" {
			check(src)
			return
		}
		for _, i := range cs.before(v) {
			if u := cs.view(i); u != nil && isFetcher(u) {
				for _, a := range u.args {
					if isURL(a) {
						check(a)
					}
				}
			}
		}
	})
	if bad != "" {
		runs := "runs in the cluster"
		if len(ops) > 0 && ops[0] == "krew" {
			runs = "runs as a kubectl command, with your credentials"
		}
		s.add(rRCEPackageURL, v.prog+" deploys from "+bad+", which is not an https source in trusted_hosts: what it serves "+runs+"; review it, or add the host to trusted_hosts if it is yours",
			v.prog+" "+evJoin(v.args))
	}
}

// localDataStore reports a database client whose server is this machine,
// named as loopback (-h localhost, postgresql://127.0.0.1/…), or
// redis-cli with no host, whose default is loopback (psql and mysql
// without one follow PGHOST and its kin, which the line does not show).
// Emptying a development database on the machine is everyday; a server
// named by address, host name or a variable ($DATABASE_URL), or not
// named, may be anyone's, and still asks.
func localDataStore(v *cmdView) bool {
	hostFlag, named := "host", false
	switch v.prog {
	case "psql", "dropdb", "dropuser", "mysql", "mariadb":
	case "redis-cli", "valkey-cli", "keydb-cli":
		named = true // loopback unless told otherwise
	case "mongosh", "mongo":
		hostFlag = ""
	case "aws", "awslocal":
		// LocalStack and other emulators: --endpoint-url http://localhost:4566.
		local, named := v.prog == "awslocal", v.prog == "awslocal"
		flagValues(v.args, 0, "endpoint-url", func(u string) { named, local = true, loopbackURL(u) })
		return named && local
	case "kafka-topics", "kafka-topics.sh", "kafka-delete-records", "kafka-delete-records.sh":
		// Every broker named must be loopback: localhost:9092.
		local, named := true, false
		flagValues(v.args, 0, "bootstrap-server", func(list string) {
			for _, b := range strings.Split(list, ",") {
				host, _, _ := strings.Cut(b, ":")
				named, local = true, local && isLoopbackHost(host)
			}
		})
		return named && local
	default:
		return false
	}
	for _, a := range v.c.Assigns {
		if strings.HasPrefix(a, "PGHOST=") || strings.HasPrefix(a, "MYSQL_HOST=") || strings.HasPrefix(a, "REDISCLI_") {
			return false
		}
	}
	local := true
	see := func(loopback bool) { named, local = true, local && loopback }
	if hostFlag != "" {
		flagValues(v.args, 'h', hostFlag, func(h string) { see(isLoopbackHost(h)) })
	}
	switch v.prog {
	case "redis-cli", "valkey-cli", "keydb-cli":
		flagValues(v.args, 'u', "uri", func(u string) { see(loopbackURL(u)) }) // mysql's -u is its user
	case "psql":
		flagValues(v.args, 'd', "dbname", func(d string) {
			if strings.Contains(d, "://") || strings.Contains(d, "=") {
				see(loopbackURL(d))
			}
		})
	}
	for _, a := range v.plainOperands() {
		switch {
		case strings.Contains(a, "://"):
			see(loopbackURL(a))
		case strings.ContainsAny(a, "$`") || strings.Contains(a, "host="):
			see(false) // a connection named by a variable or a keyword string
		}
	}
	return named && local
}

// loopbackURL reports a connection URL whose host is loopback.
func loopbackURL(u string) bool {
	if strings.ContainsAny(u, "$`") {
		return false
	}
	h := urlHost(u)
	return h != "" && isLoopbackHost(h)
}

// bucketUpload returns the local sources and the destination of a copy
// to cloud storage: aws s3 cp|sync|mv, gsutil cp|rsync|mv, gcloud storage
// cp|rsync|mv, azcopy copy|sync. ok is false for any other command, and
// for copies from storage.
func bucketUpload(v *cmdView, ops []string) (srcs []string, dst string, ok bool) {
	files, ok := storageCopy(v, ops)
	if !ok {
		return nil, "", false
	}
	dst = files[len(files)-1]
	if !strings.Contains(dst, "://") {
		return nil, "", false
	}
	for _, f := range files[:len(files)-1] {
		if !strings.Contains(f, "://") && f != "-" {
			srcs = append(srcs, f)
		}
	}
	return srcs, dst, len(srcs) > 0
}

// storageCopy returns the operands of a cloud storage copy (aws s3
// cp|sync|mv, gsutil cp|rsync|mv, gcloud storage cp|rsync|mv, azcopy
// copy|cp|sync) among v's operands ops: its sources, then its
// destination, two at least.
func storageCopy(v *cmdView, ops []string) ([]string, bool) {
	switch {
	case v.prog == "aws" && len(ops) > 3 && ops[0] == "s3" && (ops[1] == "cp" || ops[1] == "sync" || ops[1] == "mv"):
		return ops[2:], true
	case v.prog == "gsutil" && len(ops) > 2 && (ops[0] == "cp" || ops[0] == "rsync" || ops[0] == "mv"):
		return ops[1:], true
	case v.prog == "gcloud" && len(ops) > 3 && ops[0] == "storage" && (ops[1] == "cp" || ops[1] == "rsync" || ops[1] == "mv"):
		return ops[2:], true
	case v.prog == "azcopy" && len(ops) > 2 && (ops[0] == "copy" || ops[0] == "cp" || ops[0] == "sync"):
		return ops[1:], true
	}
	return nil, false
}

// kubeNamespace returns the namespace kubectl's -n / --namespace names,
// or "".
func kubeNamespace(args []string) string {
	ns := ""
	flagValues(args, 'n', "namespace", func(n string) { ns = n })
	return ns
}

// foreignAccountUpload returns where v uploads to when the command
// carries the storage credential itself (a SAS token, an account key or
// connection string, AWS keys set for the command, a SAS in the URL),
// or "": an upload authorised by the machine's own sign-in goes to the
// organisation's accounts, one with a credential pasted in goes to the
// account of whoever supplied it.
func foreignAccountUpload(v *cmdView, ops []string) string {
	op := operandAt(ops)
	switch v.prog {
	case "az":
		if op(0) != "storage" || !slices.Contains(ops, "upload") && !slices.Contains(ops, "upload-batch") && !slices.Contains(ops, "copy") {
			return ""
		}
		if hasLongFlag(v.args, "sas-token") || hasLongFlag(v.args, "account-key") || hasLongFlag(v.args, "connection-string") {
			account := "a storage account"
			flagValues(v.args, 0, "account-name", func(n string) { account = "the storage account " + n })
			return account
		}
	case "aws":
		if op(0) != "s3" || op(1) != "cp" && op(1) != "sync" && op(1) != "mv" {
			return ""
		}
		for _, a := range v.c.Assigns {
			if strings.HasPrefix(a, "AWS_ACCESS_KEY_ID=") || strings.HasPrefix(a, "AWS_SECRET_ACCESS_KEY=") {
				if dst := ops[len(ops)-1]; strings.HasPrefix(dst, "s3://") {
					return dst
				}
			}
		}
	case "azcopy":
		if op(0) == "copy" || op(0) == "cp" || op(0) == "sync" {
			if dst := op(len(ops) - 1); strings.Contains(dst, "://") && strings.Contains(dst, "sig=") {
				host, _, _ := strings.Cut(dst[strings.Index(dst, "://")+3:], "/")
				return host
			}
		}
	}
	return ""
}

// wholeTree says which whole tree src is, when it is the home directory
// or the workspace root ("the home directory", "the whole project"), or "".
func wholeTree(cs *cmdScan, v *cmdView, src string) string {
	abs := strings.TrimSuffix(cs.resolveIn(v.c, src).Abs, "/")
	switch {
	case abs == "" || abs == "/":
		return ""
	case cs.home != "" && abs == strings.TrimSuffix(cs.home, "/"):
		return "the home directory"
	case cs.root != "" && abs == strings.TrimSuffix(cs.root, "/"):
		return "the whole project"
	}
	return ""
}

// apiMethod returns the HTTP method gh api sends: -X / --method, else
// POST when fields or an input body are given, else GET ("" when none
// is named and no body is given).
func apiMethod(args []string) string {
	method := ""
	flagValues(args, 'X', "method", func(m string) { method = strings.ToUpper(m) })
	if method == "" && (hasShortFlag(args, 'f') || hasShortFlag(args, 'F') || hasLongFlag(args, "field") || hasLongFlag(args, "raw-field") ||
		hasLongFlag(args, "input")) {
		method = "POST"
	}
	return method
}

// apiFields calls fn with the name and value of each gh api field
// (-f / -F / --field / --raw-field NAME=VALUE).
func apiFields(args []string, fn func(name, value string)) {
	each := func(f string) {
		if k, val, ok := strings.Cut(f, "="); ok {
			fn(k, val)
		}
	}
	flagValues(args, 'f', "raw-field", each)
	flagValues(args, 'F', "field", each)
}

// apiFieldNamed reports a gh api field that sets name, whatever to.
func apiFieldNamed(args []string, name string) bool {
	found := false
	apiFields(args, func(k, _ string) { found = found || k == name })
	return found
}

// apiFieldSet reports a gh api field that sets name to one of values.
func apiFieldSet(args []string, name string, values ...string) bool {
	found := false
	apiFields(args, func(k, val string) { found = found || k == name && slices.Contains(values, strings.ToLower(val)) })
	return found
}

// databaseCommand says what SQL a database client sends (as an argument
// or on its standard input) makes the server run or write, or "".
func databaseCommand(cs *cmdScan, v *cmdView) string {
	switch v.prog {
	case "psql", "mysql", "mariadb", "clickhouse-client", "cockroach":
	case "redis-cli", "valkey-cli", "keydb-cli":
		text := strings.Join(infraOperands(v), " ")
		if in, ok := cs.stdinText(v); ok {
			text += "\n" + in
		}
		return redisServerCommand(text)
	default:
		return ""
	}
	for _, a := range v.args {
		if what := sqlServerCommand(optionValue(a)); what != "" {
			return what
		}
	}
	if text, ok := cs.stdinText(v); ok {
		return sqlServerCommand(text)
	}
	return ""
}

// databaseProtectionOff says what SQL a client sends (as an argument or
// on its standard input) turns off of the server's own records or
// access checks, or "": access is true for access checks.
func databaseProtectionOff(cs *cmdScan, v *cmdView) (what string, access bool) {
	switch v.prog {
	case "psql", "mysql", "mariadb", "cockroach":
	default:
		return "", false
	}
	for _, a := range v.args {
		if what, access := sqlProtectionOff(optionValue(a)); what != "" {
			return what, access
		}
	}
	if text, ok := cs.stdinText(v); ok {
		return sqlProtectionOff(text)
	}
	return "", false
}

// sqlProtectionOff returns what a SQL text turns off of what the server
// records (statement logging, pgaudit, MySQL's general log and audit
// plugin, a table's triggers, which audit tables are filled by) or of
// the access checks it makes (row-level security), or "".
func sqlProtectionOff(sql string) (what string, access bool) {
	if len(sql) < 16 {
		return "", false
	}
	up := strings.ToUpper(sql)
	if !strings.Contains(up, "SET") && !strings.Contains(up, "DISABLE") && !strings.Contains(up, "PLUGIN") && !strings.Contains(up, "FORCE") {
		return "", false // most SQL: one pass says no
	}
	flat := squeeze(up) // lower case, without spaces or quotes
	switch {
	case strings.Contains(flat, "disablerowlevelsecurity") || strings.Contains(flat, "noforcerowlevelsecurity") ||
		strings.Contains(flat, "row_security=off") || strings.Contains(flat, "row_securitytooff"):
		return "turns off row-level security: every role that reaches the table reads and changes every row, whoever they belong to", true
	case strings.Contains(flat, "pgaudit.log=none") || strings.Contains(flat, "pgaudit.logtonone"):
		return "turns pgaudit's session log off (pgaudit.log = none)", false
	case strings.Contains(flat, "log_statement=none") || strings.Contains(flat, "log_statementtonone"):
		return "stops the server logging statements (log_statement = none)", false
	case strings.Contains(flat, "general_log=off") || strings.Contains(flat, "general_log=0;") || strings.HasSuffix(flat, "general_log=0"):
		return "turns MySQL's general query log off", false
	case strings.Contains(flat, "uninstallplugin") && strings.Contains(flat, "audit"):
		return "uninstalls the server's audit plugin", false
	case strings.Contains(flat, "disabletrigger"):
		if table := auditTableTriggersOff(up); table != "" {
			return "disables the triggers of " + table + ", which guard or fill an audit trail", false
		}
	}
	return "", false
}

// localInfile returns the client's file a MySQL LOAD DATA LOCAL INFILE
// statement sends to the server (as an argument or on the standard
// input), or "".
func localInfile(cs *cmdScan, v *cmdView) string {
	if v.prog != "mysql" && v.prog != "mariadb" {
		return ""
	}
	find := func(sql string) string {
		up := strings.ToUpper(sql)
		i := strings.Index(up, "LOCAL INFILE")
		if i < 0 {
			return ""
		}
		rest := strings.TrimLeft(sql[i+len("LOCAL INFILE"):], " \t\n")
		if rest == "" || rest[0] != '\'' && rest[0] != '"' {
			return ""
		}
		lit, _, _ := strings.Cut(rest[1:], rest[:1])
		return lit
	}
	for _, a := range v.args {
		if f := find(a); f != "" {
			return f
		}
	}
	if text, ok := cs.stdinText(v); ok {
		return find(text)
	}
	return ""
}

// auditTableTriggersOff returns the table, named as an audit trail or a
// history, whose triggers upper-case SQL disables (ALTER TABLE audit_log
// DISABLE TRIGGER ALL), or "". Other tables' triggers are turned off
// for bulk loads every day.
func auditTableTriggersOff(up string) string {
	for st := range strings.SplitSeq(up, ";") {
		_, rest, ok := strings.Cut(st, "ALTER TABLE ")
		if !ok || !strings.Contains(rest, "DISABLE TRIGGER") {
			continue
		}
		for _, f := range strings.Fields(rest) {
			if f == "ONLY" || f == "IF" || f == "EXISTS" {
				continue // ALTER TABLE IF EXISTS ONLY name
			}
			name := strings.Trim(f, `"`+"`")
			for _, mark := range []string{"AUDIT", "HISTORY", "CHANGELOG", "_LOG", "EVENTS"} {
				if strings.Contains(name, mark) {
					return strings.ToLower(name)
				}
			}
			break
		}
	}
	return ""
}

// redisServerCommand returns what redis-cli's commands make the server
// run or write, or "": CONFIG SET dir or dbfilename (the next SAVE writes
// the database, with whatever a key holds, to that file: a crontab, an
// authorized_keys), MODULE LOAD (a shared library run inside the
// server), REPLICAOF / SLAVEOF a host (the server takes its data, and
// modules, from there).
func redisServerCommand(text string) string {
	up := strings.ToUpper(strings.Join(strings.Fields(text), " "))
	switch {
	case strings.Contains(up, "CONFIG SET DIR") || strings.Contains(up, "CONFIG SET DBFILENAME"):
		return "points the server's database file at a path of its choosing (CONFIG SET dir / dbfilename): the next SAVE writes it there"
	case strings.Contains(up, "MODULE LOAD"):
		return "loads a shared library into the database server (MODULE LOAD)"
	case (strings.Contains(up, "REPLICAOF ") || strings.Contains(up, "SLAVEOF ")) && !strings.Contains(up, "NO ONE"):
		return "makes the server a replica of another host (REPLICAOF): it takes that host's data and runs its modules"
	}
	return ""
}

// untrustedLanguages are procedural languages whose functions reach the
// server's operating system.
var untrustedLanguages = []string{"PLPYTHON3U", "PLPYTHONU", "PLPYTHON2U", "PLPERLU", "PLTCLU", "PLSH"}

// sqlServerCommand returns what a SQL text makes the server run or
// write, or "".
func sqlServerCommand(sql string) string {
	if len(sql) < 10 {
		return ""
	}
	up := strings.ToUpper(sql)
	switch {
	case containsWord(up, "COPY") && containsWord(up, "PROGRAM"):
		return "runs a shell command on the database server (COPY … PROGRAM)"
	case strings.Contains(up, "XP_CMDSHELL"):
		return "runs a shell command on the database server (xp_cmdshell)"
	case strings.Contains(up, "SYS_EXEC(") || strings.Contains(up, "SYS_EVAL("):
		return "runs a shell command on the database server (sys_exec)"
	case strings.Contains(up, "INTO OUTFILE") || strings.Contains(up, "INTO DUMPFILE"):
		return "writes a file of its choosing on the database server (INTO OUTFILE)"
	case strings.Contains(up, "LO_EXPORT("):
		return "writes a file of its choosing on the database server (lo_export)"
	case (strings.Contains(up, "ALTER ROLE") || strings.Contains(up, "ALTER USER")) && strings.Contains(squeeze(up), "passwordnull"):
		return "removes a database role's password (PASSWORD NULL)"
	case strings.Contains(up, "INSERT INTO FUNCTION") && (strings.Contains(up, "URL(") || strings.Contains(up, "S3(") || strings.Contains(up, "REMOTE(")):
		return "has the server send rows to another host (INSERT INTO FUNCTION url / s3 / remote)"
	}
	if strings.Contains(up, "CREATE") {
		for _, lang := range untrustedLanguages {
			if containsWord(up, lang) {
				return "creates a function in the untrusted language " + strings.ToLower(lang) + ", which reaches the server's operating system"
			}
		}
	}
	return ""
}

// checkMastersGroup flags a certificate, binding or manifest that names
// the group system:masters (openssl req -subj "/O=system:masters", a
// RoleBinding's subject): the API server lets that group do anything,
// past every RBAC rule, and a certificate for it cannot be revoked.
func (s *scan) checkMastersGroup(cs *cmdScan) {
	if !s.enabled(rCloudGrant) {
		return
	}
	for i := range cs.views {
		v := &cs.views[i]
		named := false
		for _, a := range v.args {
			named = named || strings.Contains(a, "system:masters")
		}
		if text, ok := cs.stdinText(v); ok && strings.Contains(text, "system:masters") {
			named = true
		}
		if named {
			s.add(rCloudGrant, v.prog+" names the group system:masters, which the Kubernetes API server lets do anything past every RBAC rule (and whose certificates cannot be revoked): a human should approve it",
				v.prog+" "+evJoin(v.args))
			return
		}
	}
}

// checkListedDeletes judges a delete fed every item a listing of the same
// tool names: gh issue list … | xargs gh issue delete, for k in $(jira
// issue list …); do jira issue delete "$k"; done. One item deleted is
// routine; the listing's every item, unfiltered, is the whole store. Local
// housekeeping (git, docker, package managers) is left to its own rules.
func (s *scan) checkListedDeletes(cs *cmdScan, v *cmdView) {
	switch v.prog {
	case "", "git", "docker", "podman", "rm", "kill", "npm", "pip", "pip3", "brew", "apt", "apt-get", "cargo", "go", "find", "xargs":
		return
	}
	verb := ""
	for _, a := range v.args {
		switch a {
		case "delete", "remove", "rm", "destroy", "purge", "secret:delete":
			verb = a
		}
		if verb != "" {
			break
		}
	}
	if verb == "" || !s.enabled(rInfraDestroy) {
		return
	}
	fed := v.c.Program == "xargs"
	for _, a := range v.args {
		fed = fed || iteratedIn(cs, a)
	}
	if !fed {
		return
	}
	for i := range cs.views {
		u := &cs.views[i]
		if u == v || u.prog != v.prog {
			continue
		}
		lists := false
		for j, a := range u.args {
			switch {
			case a == "list" || a == "ls" || a == "search" || a == "secret:list":
				lists = true
			case a == "-l" || a == "--selector" || a == "--field-selector" || a == "--label" || a == "--filter" || a == "--search" ||
				a == "--jql" || a == "--status" || a == "--author" || a == "--assignee" ||
				(a == "--state" || a == "-s") && j+1 < len(u.args) && u.args[j+1] != "all" || strings.HasPrefix(a, "--state=") && a != "--state=all":
				return // a filtered listing: chosen items, not all
			}
		}
		if lists && !cs.grepsBetween(u, v) {
			s.add(rInfraDestroy, v.prog+" "+verb+" deletes every item a listing of "+v.prog+" names: nothing brings them back; delete only the ones you mean, or have a human approve",
				v.prog+" "+evJoin(v.args))
			return
		}
	}
}

// grepsBetween reports a grep on the way from u's output to v: the
// listing is filtered.
func (cs *cmdScan) grepsBetween(u, v *cmdView) bool {
	for i := u.idx + 1; i < v.idx && i < len(cs.views); i++ {
		if w := &cs.views[i]; w.prog == "grep" || w.prog == "egrep" || w.prog == "rg" {
			return true
		}
	}
	return false
}
