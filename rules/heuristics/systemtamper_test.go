package heuristics

import (
	"strings"
	"testing"
)

func TestSystemFileWrite(t *testing.T) {
	runRuleCases(t, "system.file-write", []ruleCase{
		cmdCase("echo '203.0.113.7 github.com' >> /etc/hosts", true),
		cmdCase("sed -i 's/a/b/' /etc/sysctl.conf", true),
		cmdCase("perl -pi -e 's/a/b/' /etc/apt/sources.list", true),
		cmdCase("cp evil /usr/bin/ls", true),
		cmdCase("install -m 755 x /usr/local/bin/x", true),
		cmdCase("ln -sf /tmp/x /bin/su", true),
		cmdCase("mv x /sbin/init", true),
		cmdCase("tee -a /etc/environment.d/x.conf < a", true),
		cmdCase("dd if=x of=/boot/vmlinuz", true),
		cmdCase("cd /etc && echo x >> hosts", true),
		cmdCase("chattr +i /etc/resolv.conf", true),
		cmdCase("chattr -R -i /usr/bin", true),
		cmdCase("chattr -v 2 +a /etc/x", true),
		// Files judged by more specific rules are not reported twice.
		cmdCase("echo x >> /etc/crontab", false),
		cmdCase("echo x >> /etc/passwd", false),
		// …unless only their attributes change.
		cmdCase("chattr -i /etc/passwd", true),
		cmdCase("cat /etc/hosts", false),
		cmdCase("cp /etc/hosts ./hosts", false),
		cmdCase("sed -i 's/a/b/' config.yaml", false),
		cmdCase("echo x > /dev/null", false),
		cmdCase("chattr +i ./data.db", false),
		cmdCase("lsattr /etc/hosts", false),
		cmdCase("echo x >> /etcetera/hosts", false),
		cmdCase("echo x >> /var/tmp/x", false),
	})
}

func TestLoginAuth(t *testing.T) {
	runRuleCases(t, "system.login-auth", []ruleCase{
		cmdCase("echo 'auth sufficient pam_permit.so' >> /etc/pam.d/common-auth", true),
		cmdCase("sed -i 's/no/yes/' /etc/ssh/sshd_config", true),
		cmdCase("cp x.conf /etc/ssh/sshd_config.d/", true),
		cmdCase("cp pam_x.so /lib/x86_64-linux-gnu/security/pam_unix.so", true),
		cmdCase("cp pam_x.so /usr/lib64/security/", true),
		cmdCase("echo x >> /etc/security/access.conf", true),
		cmdCase("echo '* soft nofile 65535' >> /etc/security/limits.conf", false),
		cmdCase("cat /etc/ssh/sshd_config", false),
		cmdCase("echo x >> /etc/ssh/ssh_config", false),
		cmdCase("cp x /usr/lib/python3/dist-packages/security/x.py", false),
		toolCase("write_file /etc/pam.d/sshd", "write_file", map[string]any{"path": "/etc/pam.d/sshd", "content": "auth sufficient pam_permit.so"}, true),
	})
}

func TestKernelChange(t *testing.T) {
	runRuleCases(t, "system.kernel-change", []ruleCase{
		cmdCase("insmod /tmp/x.ko", true),
		cmdCase("modprobe br_netfilter", true),
		cmdCase("modprobe -a a b", true),
		cmdCase("rmmod apparmor", true),
		cmdCase("sysctl -w vm.swappiness=10", true),
		cmdCase("sysctl vm.swappiness=10", true),
		cmdCase("sysctl -p", true),
		cmdCase("sysctl --system", true),
		cmdCase("echo 1 > /proc/sys/net/ipv4/ip_forward", true),
		cmdCase("mount -o remount,rw /", true),
		cmdCase("mount --bind /tmp/e /proc/1", true),
		cmdCase("mount -a", true),
		cmdCase("umount /mnt/x", true),
		cmdCase("lsmod", false),
		cmdCase("modinfo ext4", false),
		cmdCase("modprobe -n overlay", false),
		cmdCase("modprobe --show-depends overlay", false),
		cmdCase("sysctl -a", false),
		cmdCase("sysctl -n vm.swappiness", false),
		cmdCase("mount", false),
		cmdCase("mount -l -t ext4", false),
		cmdCase("cat /proc/sys/fs/file-max", false),
	})
}

func TestCollectionCapture(t *testing.T) {
	runRuleCases(t, "collection.capture", []ruleCase{
		cmdCase("import -window root s.png", true),
		cmdCase("scrot", true),
		cmdCase("xwd -root -out s.xwd", true),
		cmdCase("xclip -o", true),
		cmdCase("xclip -selection clipboard -out", true),
		cmdCase("xsel --clipboard --output", true),
		cmdCase("xsel -bo", true),
		cmdCase("pbpaste | head", true),
		cmdCase("arecord -d 5 a.wav", true),
		cmdCase("ffmpeg -f pulse -i default a.wav", true),
		cmdCase("ffmpeg -video_size 800x600 -f x11grab -i :0 s.mp4", true),
		cmdCase("cat /dev/input/event3", true),
		cmdCase(`python3 -c "f=open('/dev/input/event0','rb');o=open('/tmp/.k','ab');o.write(f.read(24))"`, true),
		cmdCase(`python3 -c 'import cv2; cv2.VideoCapture("/dev/video0").read()'`, true),
		cmdCase("python3 -c 'import os; print(os.listdir(\"/dev\"))'", false),
		cmdCase("cat < /dev/input/mice", true),
		cmdCase("dd if=/dev/video0 of=f bs=1M count=1", true),
		cmdCase("xinput test 9", true),
		cmdCase("tcpdump -i eth0", true),
		cmdCase("sudo tcpdump -w x.pcap", true),
		cmdCase("tshark -i any", true),
		cmdCase("xclip -selection clipboard < a.txt", false),
		cmdCase("xsel --clipboard --input < a", false),
		cmdCase("arecord -l", false),
		cmdCase("ffmpeg -i a.mp4 -f webm b.webm", false),
		cmdCase("tcpdump -r x.pcap", false),
		cmdCase("tcpdump -D", false),
		cmdCase("tshark -r x.pcapng", false),
		cmdCase("xinput list", false),
		cmdCase("ls /dev/input/", false),
		cmdCase("stat /dev/video0", false),
	})
}

func TestProcessMemory(t *testing.T) {
	runRuleCases(t, "credential.process-memory", []ruleCase{
		cmdCase("gcore 1234", true),
		cmdCase("gcore -o /tmp/d $(pgrep ssh-agent)", true),
		cmdCase("gdb -p 1 -batch -ex 'generate-core-file x'", true),
		cmdCase("gdb -p 1 -batch -ex 'dump memory m 0x1 0x2'", true),
		cmdCase("cat /proc/1234/mem", true),
		cmdCase("dd if=/proc/self/mem of=m", true),
		cmdCase("procdump -p 1", true),
		cmdCase("gdb ./app core", false),
		cmdCase("gdb -p 1234", false),
		cmdCase("cat /proc/1234/maps", false),
		cmdCase("cat /proc/meminfo", false),
	})
}

func TestCryptominer(t *testing.T) {
	runRuleCases(t, "disruption.cryptominer", []ruleCase{
		cmdCase("xmrig -c config.json", true),
		cmdCase("./xmrig --url pool:443", true),
		cmdCase("nohup ./x -o stratum+tcp://pool.example:3333 -u w &", true),
		cmdCase("./x -o stratum2+ssl://pool.example:443", true),
		cmdCase("./sshd --donate-level=1 -o pool.example:443", true),
		cmdCase("bash -c './kdevtmpfsi'", true),
		cmdCase("grep -r stratum docs", false),
		cmdCase("grep -rn 'stratum+tcp://' docs/", false),
		cmdCase("git log -S 'stratum+tcp://'", false),
		cmdCase("echo stratum+tcp is a scheme", false),
		cmdCase("curl https://example.com/stratum", false),
	})
}

func TestCryptominerIdentity(t *testing.T) {
	wallet := "4" + strings.Repeat("8edfHu7V9Z", 9) + "ABCd"
	runRuleCases(t, "disruption.cryptominer", []ruleCase{
		cmdCase("./xmrig-6.21.0/xmrig --threads 4", true),
		cmdCase("docker run -d --restart always metal3d/xmrig", true),
		cmdCase("podman run -d ghcr.io/someone/monero-miner:latest", true),
		cmdCase("kubectl run pod1 --image=docker.io/xmrig/xmrig:6", true),
		cmdCase("kubectl set image deploy/api api=quay.io/x/xmr-stak:2", true),
		cmdCase("kubectl -n prod set image deploy/api api=quay.io/x/xmr-stak:2", true),
		cmdCase(`kubectl patch ds agent -p '{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"reg.example/xmr:1"}]}}}}'`, true),
		cmdCase("helm install m ./chart --set image.repository=xmrig/xmrig", true),
		cmdCase("./kworker -o 198.51.100.7:3333 -u w1 -p x", true),
		cmdCase("./kworker -a rx/0 -o 198.51.100.7:80", true),
		cmdCase("./kworker --algo=kawpow -o host.example:8080", true),
		cmdCase("./svc --coin XMR -o host.example:443", true),
		cmdCase("./svc -o host.example:443 -u "+wallet, true),
		cmdCase("./svc -u "+wallet+".rig1", true),
		cmdCase("./svc --url gulf.moneroocean.stream:10128", true),
		cmdCase("./svc --randomx-1gb-pages", true),
		cmdCase("npx coin-miner --threads 2", true),
		cmdCase("npm install --save cpuminer-js", true),
		cmdCase("npm run mine:xmr", true),
		cmdCase(`echo '{"pools":[{"url":"10.0.0.1:3333","user":"x"}]}' > /tmp/.c.json`, true),
		cmdCase("echo '<script src=https://authedmine.com/lib/authedmine.min.js></script>' >> public/index.html", true),
		cmdCase(`sed -i 's#</body>#<script>var m=new CoinHive.Anonymous("k");m.start();</script></body>#' index.html`, true),
		toolCase("compose file", "write_file", map[string]any{"path": "docker-compose.yml",
			"content": "services:\n  worker:\n    image: xmrig/xmrig:latest\n"}, true),
		toolCase("miner config", "write_file", map[string]any{"path": "config.json",
			"content": `{"donate-level": 0, "cpu": {"enabled": true}}`}, true),

		cmdCase("npm install xml2js", false),
		cmdCase("npm run determine-version", false),
		cmdCase("docker run -d -p 127.0.0.1:5432:5432 postgres:16", false),
		cmdCase("kubectl create deployment web --image=nginx", false),
		cmdCase("./app -o out.txt -u admin -p x", false),
		cmdCase("curl -s https://api.moneroocean.stream/pool/stats", false),
		cmdCase("echo 'Mining cryptocurrency on CI is forbidden' >> README.md", false),
		cmdCase("python3 -m minecraft_server", false),
		cmdCase("tar -xzf data-mining.tar.gz", false),
		cmdCase("git log --grep=xmrig", false),
		cmdCase("zpool status", false),
		toolCase("pool settings", "write_file", map[string]any{"path": "db.json", "content": `{"pools": {"size": 10}, "url": "postgres://db"}`}, false),
	})
}

func TestAcceleratorFleet(t *testing.T) {
	runRuleCases(t, "disruption.accelerator-fleet", []ruleCase{
		cmdCase("aws ec2 run-instances --image-id ami-1 --instance-type p4d.24xlarge --count 8", true),
		cmdCase("aws ec2 run-instances --instance-type g5.12xlarge --count 2:20 --user-data file:///tmp/boot.sh", true),
		cmdCase(`aws ec2 request-spot-instances --instance-count 12 --launch-specification '{"InstanceType":"g4dn.xlarge"}'`, true),
		cmdCase("gcloud compute instances create w1 w2 w3 --machine-type a2-highgpu-1g", true),
		cmdCase("gcloud compute instances bulk-create --count 20 --machine-type n1-standard-8 --accelerator type=nvidia-tesla-t4,count=1", true),
		cmdCase("az vm create -g rg -n m --size Standard_ND96asr_v4 --count 4", true),
		cmdCase("az vmss create -g rg -n s --vm-sku Standard_NC6s_v3 --image Ubuntu2204", true),

		cmdCase("aws ec2 run-instances --instance-type t3.micro --count 1", false),
		cmdCase("aws ec2 run-instances --instance-type g5.xlarge --user-data file://infra/init.sh", false),
		cmdCase("aws ec2 run-instances --instance-type c6i.large --count 30", false),
		cmdCase("gcloud compute instances create dev-1 --machine-type e2-standard-4", false),
		cmdCase("gcloud compute instances create trainer --machine-type a2-highgpu-1g", false),
		cmdCase("az vm create -g rg -n ci --size Standard_D4s_v5 --count 3", false),
		cmdCase("aws ec2 describe-instances --filters Name=instance-type,Values=p3.2xlarge", false),
	})
}

func TestSystemdRunTimer(t *testing.T) {
	runRuleCases(t, "persistence.cron", []ruleCase{
		cmdCase("systemd-run --user --on-calendar='*:0/5' /tmp/x", true),
		cmdCase("systemd-run --on-active=30 /bin/touch /tmp/f", true),
		cmdCase("systemd-run --user --scope make test", false),
		cmdCase("systemd-run -p MemoryMax=1G ./bench", false),
	})
}

// macOS protections turned off.
func TestMacProtectionsOff(t *testing.T) {
	runRuleCases(t, "defense.security-disable", []ruleCase{
		cmdCase("defaults write com.apple.LaunchServices LSQuarantine -bool false", true),
		cmdCase("defaults write com.apple.screensaver askForPassword -int 0", true),
		cmdCase("sudo defaults write /Library/Preferences/com.apple.alf globalstate -int 0", true),
		cmdCase("csrutil disable", true),
		cmdCase("sysadminctl -screenLock off -password -", true),
		cmdCase("defaults write com.apple.dock autohide -bool true", false),
		cmdCase("defaults read com.apple.screensaver askForPassword", false),
		cmdCase("csrutil status", false),
	})
}
