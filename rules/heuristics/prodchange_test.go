package heuristics

import "testing"

func TestProductionChange(t *testing.T) {
	runRuleCases(t, "infra.production-change", []ruleCase{
		cmdCase("aws rds modify-db-instance --db-instance-identifier payments-prod --backup-retention-period 0 --apply-immediately", true),
		cmdCase("aws autoscaling update-auto-scaling-group --auto-scaling-group-name web-prod-asg --min-size 0 --max-size 0 --desired-capacity 0", true),
		cmdCase("gcloud sql instances patch orders-prod --no-backup --project acme-prod-2291", true),
		cmdCase(`for n in $(kubectl --context prod get nodes -o name); do kubectl --context prod cordon "$n"; done`, true),
		cmdCase("terraform -chdir=infra/prod apply -auto-approve -replace=aws_db_instance.primary", true),
		cmdCase("pg_restore --clean --if-exists -h prod-pg.acme.internal -U postgres -d customers ./dumps/customers.dump", true),
		cmdCase("mysql -h orders-prod.cluster-c8xk2lq0vz.us-east-1.rds.amazonaws.com -u admin orders < ./backups/orders.sql", true),
		cmdCase("psql \"$PROD_DATABASE_URL\" <<'SQL'\nUPDATE accounts SET balance_cents = 0 WHERE currency = 'EUR';\nSQL", true),
		cmdCase(`mongosh "mongodb+srv://admin:${MONGO_PW}@prod-cluster.x8kq2.mongodb.net/app" --eval 'db.sessions.deleteMany({expired: true})'`, true),
		// Reading production, and changing dev or staging.
		cmdCase("aws rds describe-db-instances --db-instance-identifier payments-prod", false),
		cmdCase("kubectl --context prod get pods -n shop", false),
		cmdCase("gcloud container clusters get-credentials prod-gke --zone europe-west1-b", false),
		cmdCase("terraform -chdir=infra/prod plan -out prod.tfplan", false),
		cmdCase("psql \"$PROD_DATABASE_URL\" -c 'SELECT count(*) FROM accounts'", false),
		cmdCase("kubectl --context staging scale deploy/web --replicas=3", false),
		cmdCase("terraform -chdir=infra/dev apply -auto-approve", false),
		cmdCase("helm upgrade web ./chart -n staging", false),
		// Production data copied anywhere, this machine included, is moved
		// out of production: a person approves it.
		cmdCase("aws s3 cp s3://acme-prod-customer-data/users.csv ./", true),
		cmdCase("aws s3 cp ./dist/app.zip s3://acme-prod-artifacts/app.zip", true),
		cmdCase("aws s3 sync s3://acme-prod-customer-data s3://jdev-personal-backup-2024", true),
	})
}

// A workflow started by hand deploys what its inputs name.
func TestProductionWorkflowDispatch(t *testing.T) {
	runRuleCases(t, "infra.production-change", []ruleCase{
		cmdCase("gh workflow run deploy.yml -f environment=production", true),
		cmdCase(`gh api -X POST repos/acme/api/actions/workflows/deploy.yml/dispatches -f ref=hotfix -f 'inputs[environment]=production'`, true),
		cmdCase("glab ci run --branch main --variables ENVIRONMENT:prod", true),
		cmdCase("gh workflow run deploy.yml -f environment=staging", false),
		cmdCase("gh workflow run ci.yml --ref feature/search", false),
		cmdCase("gh api repos/acme/api/actions/workflows/deploy.yml/runs --jq '.workflow_runs[0].status'", false),
	})
}
