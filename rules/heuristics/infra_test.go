package heuristics

import "testing"

func TestInfraDestroy(t *testing.T) {
	runRuleCases(t, "infra.destroy", []ruleCase{
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
		cmdCase("redis-cli -n 2 flushdb", true),
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
		// The binding's name is not its role.
		cmdCase("kubectl create rolebinding cluster-admin-readers --clusterrole=view --group=auditors", false),
		cmdCase("gcloud projects get-iam-policy proj", false),
		cmdCase("az role assignment list --assignee me@example.com", false),
	})
}
