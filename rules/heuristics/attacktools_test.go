package heuristics

import "testing"

func TestAttackTool(t *testing.T) {
	runRuleCases(t, "offense.attack-tool", []ruleCase{
		cmdCase("nmap -sS 10.0.0.0/24", true),
		cmdCase("sudo masscan -p1-65535 10.0.0.0/16", true),
		cmdCase("hydra -l root -P p.txt ssh://h", true),
		cmdCase("hashcat -m 0 h.txt w.txt", true),
		cmdCase("/opt/john/run/john h.txt", true),
		cmdCase("timeout 60 sqlmap -u http://h/?id=1", true),
		cmdCase("./linpeas.sh", true),
		cmdCase("msfvenom -p linux/x64/shell_reverse_tcp LHOST=h -f elf", true),
		cmdCase("nmap --version", false),
		cmdCase("hashcat -h", false),
		cmdCase("which nmap", false),
		cmdCase("man hydra", false),
		cmdCase("grep -r sqlmap docs", false),
		cmdCase("nc -zv localhost 5432", false),
	})
}

func TestAttackToolLoopbackScan(t *testing.T) {
	runRuleCases(t, "offense.attack-tool", []ruleCase{
		cmdCase("nmap -p 5432,6379 localhost", false),
		cmdCase("nmap -sV -T4 127.0.0.1", false),
		cmdCase("rustscan -a ::1", false),
		cmdCase("nmap -p- 10.0.0.0/24", true),
		cmdCase("nmap localhost 192.168.1.5", true),
		cmdCase("nmap -iL targets.txt", true),
		cmdCase("nmap -p 22", true), // no target named
	})
}

func TestAttackToolFamilies(t *testing.T) {
	runRuleCases(t, "offense.attack-tool", []ruleCase{
		cmdCase("impacket-GetUserSPNs corp.internal/dev:'Passw0rd!' -dc-ip 10.0.0.10 -request", true),
		cmdCase("dnsrecon -d corp-example.com -t axfr", true),
		cmdCase("responder -I eth0 -wd", true),
		cmdCase("onesixtyone -c communities.txt -i hosts.txt", true),
		cmdCase("dig example.com MX", false),
		cmdCase("dnsrecon --help", false),
	})
}
