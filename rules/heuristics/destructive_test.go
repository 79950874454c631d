package heuristics

import "testing"

func TestDestructiveRecursiveDelete(t *testing.T) {
	runRuleCases(t, "destructive.recursive-delete", []ruleCase{
		cmdCase("rm -rf /", true),
		cmdCase("rm -rf --no-preserve-root /", true),
		cmdCase("rm -rf /*", true),
		cmdCase("sudo rm -rf /", true),
		cmdCase("rm -r ~", true),
		cmdCase("rm -rf ~/", true),
		cmdCase("rm -rf $HOME", true),
		cmdCase(`rm -rf "${HOME}/"`, true),
		cmdCase("rm -rf .", true),
		cmdCase("rm -rf ./", true),
		cmdCase("rm -rf *", true),
		cmdCase("rm -rf /home/dev/project", true),
		cmdCase("rm -rf ..", true),
		cmdCase("rm -R /etc", true),
		cmdCase("rm --recursive --force /usr", true),
		cmdCase("rm -fr /var/lib", true),
		cmdCase("rm -rf /boot", true),
		cmdCase("rm -rf /home", true),
		cmdCase("rm -rf ~/.ssh", true),
		cmdCase(`bash -c "rm -rf /"`, true),
		toolCase("delete_file home", "delete_file", map[string]any{"path": "~", "recursive": true}, true),
		cmdCase("rm -rf node_modules", false),
		cmdCase("rm -rf ./build dist", false),
		cmdCase("rm file.txt", false),
		cmdCase("rm -rf /tmp/build-123", false),
		cmdCase("rm -rf ~/.cache/pip", false),
		cmdCase("rm -f /", false), // not recursive: rm refuses directories
		cmdCase("rm -rf src/generated/*", false),
		toolCase("delete_file in workspace", "delete_file", map[string]any{"path": "build"}, false),
	})
}

func TestDestructiveRecursiveDeleteVariable(t *testing.T) {
	runRuleCases(t, "destructive.recursive-delete-variable", []ruleCase{
		cmdCase(`rm -rf "$STEAMROOT/"*`, true),
		cmdCase(`rm -rf $BUILD_DIR/`, true),
		cmdCase(`rm -rf "${PREFIX}/*"`, true),
		cmdCase(`rm -rf "${BUILD_DIR:?}/"`, false),
		cmdCase(`rm -rf $BUILD_DIR/out`, false),
		cmdCase(`rm -rf "$HOME/.cache/x"`, false),
	})
}

func TestDestructiveDiskWipe(t *testing.T) {
	runRuleCases(t, "destructive.disk-wipe", []ruleCase{
		cmdCase("mkfs.ext4 /dev/sda1", true),
		cmdCase("sudo mkfs -t xfs /dev/nvme0n1", true),
		cmdCase("dd if=/dev/zero of=/dev/sda bs=1M", true),
		cmdCase("dd if=/dev/urandom of=/dev/nvme0n1", true),
		cmdCase("cat /dev/zero > /dev/sda", true),
		cmdCase("echo x > /dev/sdb", true),
		cmdCase("shred -n 3 -z /dev/sda", true),
		cmdCase("wipefs -a /dev/sdb", true),
		cmdCase("dd if=/dev/zero of=disk.img bs=1M count=100", false),
		cmdCase("dd if=image.iso of=/dev/null", false),
		cmdCase("echo x > /dev/null", false),
		cmdCase("shred -u secret.txt", false),
	})
}

func TestDestructiveForkBomb(t *testing.T) {
	runRuleCases(t, "destructive.fork-bomb", []ruleCase{
		cmdCase(":(){ :|:& };:", true),
		cmdCase(":() { : | : & }; :", true),
		cmdCase("bomb(){ bomb|bomb& };bomb", true),
		cmdCase("f() { echo hi; }; f | cat &", false),
		cmdCase("make -j4 2>&1 | tee build.log &", false),
	})
}

func TestDestructiveRecursivePermissions(t *testing.T) {
	runRuleCases(t, "destructive.recursive-permissions", []ruleCase{
		cmdCase("chmod -R 777 /", true),
		cmdCase("sudo chmod -R 777 /etc", true),
		cmdCase("chown -R nobody:nogroup /usr", true),
		cmdCase("chmod -R 000 ~", true),
		cmdCase("chmod -R 755 ./scripts", false),
		cmdCase("chmod -R u+w .", false),
		cmdCase("chown -R dev:dev /home/dev/project/build", false),
	})
}

func TestDestructiveFindDelete(t *testing.T) {
	runRuleCases(t, "destructive.find-delete", []ruleCase{
		cmdCase("find / -delete", true),
		cmdCase("find / -name '*.log' -delete", true),
		cmdCase("find /etc -type f -exec rm -f {} +", true),
		cmdCase("find ~ -delete", true),
		cmdCase("find . -delete", true),
		cmdCase("find . -name '*.go' -delete", false),
		cmdCase("find . -type f -name '*.pyc' -exec rm {} +", false),
		cmdCase("find build -delete", false),
		cmdCase("find / -name passwd", false),
	})
}

func TestDestructiveSystemFileTruncate(t *testing.T) {
	runRuleCases(t, "destructive.system-file-truncate", []ruleCase{
		cmdCase("truncate -s 0 /etc/passwd", true),
		cmdCase("truncate -s 0 /var/log/auth.log", true),
		cmdCase("echo > /etc/hosts", true),
		cmdCase("cat /dev/null > /var/log/syslog", true),
		cmdCase("truncate -s 0 app.log", false),
		cmdCase("echo 127.0.0.1 dev.local >> /etc/hosts", false),
		cmdCase("> out.txt", false),
	})
}
