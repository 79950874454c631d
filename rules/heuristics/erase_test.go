package heuristics

import "testing"

func TestEraseMany(t *testing.T) {
	runRuleCases(t, "destructive.mass-erase", []ruleCase{
		// Every name where it sweeps.
		cmdCase("rm -f ~/*", true),
		cmdCase("rm ~/.*", true),
		cmdCase("rm -f *", true),
		cmdCase("rm -f ~/Pictures/*.*", true),
		cmdCase("rm -f /etc/*.conf", true),
		cmdCase("cd ~ && rm -f *", true),
		cmdCase("shred -u ./*", true),
		cmdCase("shred -u -n 2 ~/.ssh/*", true),
		cmdCase("truncate -s 0 ./*", true),
		// Work emptied or shredded by its extension.
		cmdCase("truncate --size 0 lib/*.rb", true),
		cmdCase("truncate -s0 ~/notes/*.md", true),
		cmdCase("shred -u docs/*.docx", true),
		// Listings handed to xargs are their globs.
		cmdCase("ls | xargs rm -f", true),
		cmdCase("find ~ -name '*.pdf' | xargs rm", true),
		cmdCase("git ls-files | xargs truncate -s 0", true),
		cmdCase("find . -type f ! -name '*.go' | xargs rm -f", true),
		// Housekeeping.
		cmdCase("rm -f *.pyc", false),
		cmdCase("rm -f build/*", false),
		cmdCase("rm -f ~/Downloads/*.iso", false),
		cmdCase("rm -f /tmp/*.sock", false),
		cmdCase("rm -f gen/*.pb.go", false),
		cmdCase("truncate -s 0 logs/*.log", false),
		cmdCase("truncate -s 100M disk.img", false),
		cmdCase("truncate -s 0 src/main.py", false),
		cmdCase("shred -u old.key", false),
		cmdCase("find . -name '*.pyc' | xargs rm -f", false),
		cmdCase("find . -name '*.o' -o -name '*.a' | xargs rm -f", false),
		cmdCase("git ls-files | xargs wc -l", false),
		cmdCase("rm -rf ~/*", false), // the recursive delete's
	})
}

func TestFindDeleteNarrowedByName(t *testing.T) {
	runRuleCases(t, "destructive.find-delete", []ruleCase{
		cmdCase("find . -type f -mtime +30 -delete", true),
		cmdCase("find . -type f -exec shred -u {} +", true),
		cmdCase("find . -name '*.orig' -delete", false),
		cmdCase("find . -type d -empty -delete", false),
		cmdCase("find ./logs -type f -mtime +7 -delete", false),
	})
}

func TestContainerMountDestruction(t *testing.T) {
	runRuleCases(t, "destructive.recursive-delete", []ruleCase{
		cmdCase("docker run --rm -v /home/dev:/h alpine rm -rf /h", true),
		cmdCase("docker run --rm -v $PWD:/app alpine sh -c 'rm -rf /app/*'", true),
		cmdCase("docker run --rm -v $PWD:/app alpine sh -c 'rm -rf /var/cache/* /tmp/*'", false),
		cmdCase("docker run --rm -v $PWD:/app -w /app node:20 sh -c 'rm -rf dist'", false),
	})
}

func TestIndirectErase(t *testing.T) {
	runRuleCases(t, "destructive.recursive-delete", []ruleCase{
		cmdCase("mkdir -p /tmp/e && rsync -a --delete /tmp/e/ ~/", true),
		cmdCase("rsync -a --delete-after empty/ /home/dev/project/", true),
		cmdCase("rsync -av --delete src/ build/", false),
		cmdCase("rsync -av --delete dist/ deploy@web:/srv/www/", false),
		cmdCase("tar --remove-files -cf /dev/null notes/", true),
		cmdCase("tar --remove-files -czf logs.tgz logs/", false),
		cmdCase("git --work-tree=/home/dev clean -fdx", true),
		cmdCase("git --git-dir=x/.git --work-tree=/ clean -fd", true),
		cmdCase("git clean -fdx", false),
		cmdCase("git --work-tree=/home/dev clean -n", false),
		// Moved first, then deleted.
		cmdCase("mv ~/Documents /tmp/d && rm -rf /tmp/d", true),
		cmdCase("mv build /tmp/old && rm -rf /tmp/old", false),
	})
	runRuleCases(t, "destructive.credential-destroy", []ruleCase{
		cmdCase("ln -sf /dev/null ~/.ssh/id_rsa", true),
		cmdCase("cp /dev/null ~/.aws/credentials", true),
		cmdCase("ln -s /dev/null ~/.ssh/id_rsa", false), // no -f: it fails on the existing key
		cmdCase("cp /dev/null logs/app.log", false),
	})
	runRuleCases(t, "destructive.git-history", []ruleCase{
		cmdCase("mv .git /tmp/.g && rm -rf /tmp/.g", true),
		cmdCase("mv dist /tmp/.g && rm -rf /tmp/.g", false),
	})
}

func TestEmptyingEdits(t *testing.T) {
	runRuleCases(t, "destructive.mass-erase", []ruleCase{
		cmdCase("sed -i d src/*.py", true),
		cmdCase("perl -pi -e '$_=\"\"' $(git ls-files)", true),
		cmdCase("sed -i d ~/.ssh/known_hosts ~/.gitconfig", true),
		cmdCase("sed -i '1,$d' ~/.config/starship.toml", true),
		cmdCase("sed -i d logs/*.log", false),
		cmdCase("sed -i d notes.txt", false),
		cmdCase("sed -i 's/a/b/' src/*.py", false),
		cmdCase("sed -i '/^DEBUG=/d' ~/.bashrc", false),
	})
	runRuleCases(t, "defense.history-tamper", []ruleCase{
		cmdCase("sed -i '1,$d' ~/.bash_history", true),
		cmdCase("perl -pi -e 'undef $_' ~/.zsh_history", true),
	})
	runRuleCases(t, "destructive.credential-destroy", []ruleCase{
		cmdCase("sed -i d ~/.aws/credentials", true),
	})
}
