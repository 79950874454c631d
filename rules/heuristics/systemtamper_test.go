package heuristics

import "testing"

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

func TestSystemdRunTimer(t *testing.T) {
	runRuleCases(t, "persistence.cron", []ruleCase{
		cmdCase("systemd-run --user --on-calendar='*:0/5' /tmp/x", true),
		cmdCase("systemd-run --on-active=30 /bin/touch /tmp/f", true),
		cmdCase("systemd-run --user --scope make test", false),
		cmdCase("systemd-run -p MemoryMax=1G ./bench", false),
	})
}
