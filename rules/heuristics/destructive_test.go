package heuristics

import "testing"

func TestDestructiveRecursiveDelete(t *testing.T) {
	runRuleCases(t, "destructive.recursive-delete", []ruleCase{
		// The directory that holds the user's other code.
		cmdCase("rm -rf ~/projects", true),
		cmdCase("rm -rf $HOME/src/", true),
		cmdCase("rm -rf ~/projects/old-prototype", false),
		cmdCase("rm -rf /", true),
		// The user's documents and media, as their keys and configuration.
		cmdCase("rm -rf ~/Documents", true),
		cmdCase("rm -rf ~/Pictures/*", true),
		cmdCase(`rm -rf "$HOME/Google Drive"`, true),
		cmdCase("rm -rf ~/Downloads/tool-1.2.3", false),
		cmdCase("rm -rf ~/Documents/old-notes", false),
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
	runRuleCases(t, "destructive.recursive-delete-variable", []ruleCase{
		// cd to a variable that may be empty goes home (or stays here).
		cmdCase("cd $DEPLOY_DIR && rm -rf *", true),
		cmdCase(`cd "${BUILD_OUT}" && rm -rf ./*`, true),
		cmdCase(`pushd "$STAGE"; rm -rf .; popd`, true),
		cmdCase(`cd "${BUILD_OUT:?}/cache" && rm -rf *`, false),
		cmdCase(`cd "${BUILD_OUT:?}" && rm -rf *`, false),
		cmdCase("cd build && rm -rf *", false),
		cmdCase("cd $DEPLOY_DIR && rm -rf tmp", false),
	})
	runRuleCases(t, "destructive.find-delete", []ruleCase{
		cmdCase(`find ~ -type f -name '*.py' -exec truncate -s 0 {} \;`, true),
		cmdCase(`find . -name '*.log' -exec truncate -s 0 {} +`, false),
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

func TestDestructiveCrontabRemove(t *testing.T) {
	runRuleCases(t, "destructive.crontab-remove", []ruleCase{
		cmdCase("crontab -r", true),
		cmdCase("crontab -ri", true),
		cmdCase("sudo crontab -u www-data -r", true),
		cmdCase("crontab -r -u alice", true),
		cmdCase("cd /tmp && crontab -r; echo done", true),
		cmdCase(`bash -c "crontab -r"`, true),
		cmdCase("crontab -l", false),
		cmdCase("crontab -l > crontab.bak", false),
		cmdCase("crontab -u alice -l", false),
		cmdCase("crontab -e", false),
		cmdCase("crontab mycron.txt", false),
		cmdCase("echo 'crontab -r removes everything'", false),
		cmdCase("rm -r ./crontab", false),
	})
	// crontab -r only removes: it is not a persistence finding.
	runRuleCases(t, "persistence.cron", []ruleCase{cmdCase("crontab -r", false)})
	// Escalate, not block: a human may well want the table gone.
	fs := defaultAnalyzer(t).Analyze(cmd(t, "crontab -r"))
	if len(fs) != 1 || fs[0].Outcome != escalate {
		t.Errorf("crontab -r: want one ESCALATE finding, got %s", describe(fs))
	}
}

func TestDestructiveCredentialDestroy(t *testing.T) {
	runRuleCases(t, "destructive.credential-destroy", []ruleCase{
		cmdCase("shred -u ~/.ssh/id_ed25519", true),
		cmdCase("rm ~/.aws/credentials", true),
		cmdCase("mv ~/.ssh /dev/null", true),
		cmdCase("rm -f ~/.gnupg/private-keys-v1.d/x.key", true),
		cmdCase("rm .env", false),
		cmdCase("rm ~/.ssh/id_rsa.pub", false),
		cmdCase("mv ~/.ssh/config ~/.ssh/config.bak", false),
		cmdCase("shred -u secret.txt", false),
	})
}

func TestDestructiveGitHistory(t *testing.T) {
	runRuleCases(t, "destructive.git-history", []ruleCase{
		cmdCase("rm -rf .git", true),
		cmdCase("rm -rf ./.git/", true),
		cmdCase("rm -rf vendor/lib/.git", true),
		cmdCase("rm -rf .github", false),
		cmdCase("rm .gitignore", false),
		cmdCase("rm -rf .git/hooks/pre-commit.sample", false),
	})
}
