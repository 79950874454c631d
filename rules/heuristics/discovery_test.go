package heuristics

import "testing"

func TestDiscoveryPrivilegeSearch(t *testing.T) {
	runRuleCases(t, "discovery.privilege-search", []ruleCase{
		cmdCase("find / -perm -4000 -type f 2>/dev/null", true),
		cmdCase("find / -type f -perm /6000 -ls", true),
		cmdCase("find /usr/bin -perm -u=s", true),
		cmdCase("find / -writable -type d 2>/dev/null", true),
		cmdCase("find /etc -perm -o+w", true),
		cmdCase("getcap -r / 2>/dev/null", true),
		cmdCase("getcap -r /usr/bin", true),
		cmdCase("find . -perm -u+x -type f", false),
		cmdCase("find ~/project -perm -4000", false),
		cmdCase("find / -name '*.pem' -path '*/certs/*'", false),
		cmdCase("getcap ./target/release/server", false),
	})
}

func TestDiscoveryEnumeration(t *testing.T) {
	runRuleCases(t, "discovery.enumeration", []ruleCase{
		cmdCase("dig axfr corp.local @10.0.0.2", true),
		cmdCase("dig -t AXFR example.com @ns1.example.com", true),
		cmdCase("host -l corp.local 10.0.0.2", true),
		cmdCase(`ldapsearch -x -H ldap://dc01 -b "dc=corp,dc=local" "(objectClass=user)"`, true),
		cmdCase("kubectl -n kube-system auth can-i --list", true),
		cmdCase("aws --profile prod iam get-account-authorization-details", true),
		cmdCase("curl -sk https://10.0.0.5:10250/pods", true),
		cmdCase("curl -s http://172.16.0.3:2379/v2/keys/?recursive=true", true),
		cmdCase("dig +short example.com", false),
		cmdCase("host github.com", false),
		cmdCase("kubectl auth can-i create deployments", false),
		cmdCase("aws iam get-user", false),
		cmdCase("curl -s http://localhost:10250/healthz", false),
		cmdCase("curl -s https://metrics.example.com:10250/", false),
	})
}

func TestProcessArguments(t *testing.T) {
	runRuleCases(t, "credential.process-arguments", []ruleCase{
		cmdCase(`ps auxww | grep -iE "pass(word)?=|token="`, true),
		cmdCase("ps -ef | grep -i secret", true),
		cmdCase("pgrep -af java | grep -e password", true),
		cmdCase("ps aux | grep node", false),
		cmdCase("ps -ef | grep postgres", false),
	})
}

func TestPasswordPrompt(t *testing.T) {
	runRuleCases(t, "credential.password-prompt", []ruleCase{
		cmdCase(`osascript -e 'display dialog "Password:" default answer "" with hidden answer'`, true),
		cmdCase("zenity --password --title=Authentication", true),
		cmdCase("kdialog --password 'Enter your password'", true),
		cmdCase(`osascript -e 'display notification "Build done"'`, false),
		cmdCase(`osascript -e 'display dialog "Deploy to staging?" buttons {"No", "Yes"}'`, false),
		cmdCase("zenity --info --text='Build finished'", false),
	})
}

func TestSecurityProductSurvey(t *testing.T) {
	runRuleCases(t, "discovery.enumeration", []ruleCase{
		cmdCase("ps auxww | grep -iE 'falcon|crowdstrike|sentinel|osquery'", true),
		cmdCase("ps -ef | egrep 'wazuh|ossec|auditd'", true),
		cmdCase("ps aux | grep osquery", false),
		cmdCase("ps aux | grep -E 'node|python'", false),
	})
}

func TestLoopSweeps(t *testing.T) {
	runRuleCases(t, "discovery.enumeration", []ruleCase{
		cmdCase("for i in $(seq 1 254); do (ping -c1 -W1 10.0.0.$i >/dev/null && echo 10.0.0.$i) & done; wait", true),
		cmdCase(`aws ec2 describe-instances --output text | while read ip; do nc -zw1 "$ip" 22 && echo "$ip ssh"; done`, true),
		cmdCase("for h in $(cat hosts.txt); do arping -c1 ${h}; done", true),
		cmdCase("for h in web1 web2; do ping -c1 $h; done", false),
		cmdCase("until nc -z localhost 5432; do sleep 1; done", false),
		cmdCase("while ! nc -z $DB_HOST 5432; do sleep 1; done", false),
		cmdCase("for p in $(seq 8000 8010); do nc -z localhost $p && echo $p; done", false),
	})
	runRuleCases(t, "credential.process-memory", []ruleCase{
		cmdCase(`python3 -c "pid=5; m=open(f'/proc/{pid}/maps').read(); f=open(f'/proc/{pid}/mem','rb')"`, true),
		cmdCase(`python3 -c "print(open('/proc/meminfo').read())"`, false),
	})
}

func TestPortScanByNetcat(t *testing.T) {
	runRuleCases(t, "discovery.enumeration", []ruleCase{
		cmdCase("for p in 22 80 443 445 3306 5432 6379; do nc -zvw1 10.0.5.20 $p; done 2>&1 | grep succeeded", true),
		cmdCase("nc -zv 10.0.5.20 1-1000", true),
		cmdCase("nc -zv localhost 5432", false),
		cmdCase("nc -z localhost 3000-3010", false),
		cmdCase("nc -zv db.internal 5432", false),
		cmdCase("nc -zv api.example.com 80 443", false),
	})
}
