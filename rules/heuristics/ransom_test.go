package heuristics

import "testing"

func TestEncryptImpact(t *testing.T) {
	runRuleCases(t, "destructive.encrypt-impact", []ruleCase{
		cmdCase("openssl enc -aes-256-cbc -in ~/a.db -out ~/a.db.enc -k x && rm ~/a.db", true),
		cmdCase("openssl aes-256-cbc -salt -in report.pdf -out report.pdf.enc -pass pass:x; shred -u report.pdf", true),
		cmdCase("gpg --batch --passphrase x -c ~/important.db && shred -u ~/important.db", true),
		cmdCase("gpg --symmetric --batch --passphrase x notes.txt && rm -f notes.txt", true),
		cmdCase("age -p -o d.age d.sql && rm d.sql", true),
		cmdCase("cd ~ && openssl enc -aes-256-cbc -in x -out x.e -k k && rm ~/x", true),
		cmdCase(`for f in ~/Documents/*; do openssl enc -aes-256-cbc -in "$f" -out "$f.enc" -k x; rm "$f"; done`, true),
		cmdCase("find ~ -type f -exec openssl enc -aes-256-cbc -k p -in {} -out {}.enc \\;", true),
		cmdCase("find ~/Documents -type f | xargs -I % gpg --batch --passphrase x -c %", true),
		cmdCase("find / -name '*.sql' | xargs gpg -c", true),
		cmdCase("ccrypt -r -K k ~/", true),
		cmdCase("ccencrypt -r -K k ~/Pictures", true),
		// openssl's single-dash words: -pbkdf2 is not the -d of decryption.
		cmdCase("openssl enc -aes-256-cbc -pbkdf2 -in ~/a.db -out ~/a.db.enc -k x && rm ~/a.db", true),
		cmdCase("openssl enc -d -aes-256-cbc -pbkdf2 -in b.enc -out b.tar -k x && rm b.enc", false),
		cmdCase("gpg -c notes.txt", false),
		cmdCase("gpg -e -r alice@example.com report.pdf && rm report.pdf.bak", false),
		cmdCase("openssl enc -d -aes-256-cbc -in b.enc -out b.tar -k x && rm b.enc", false),
		cmdCase("gpg -d secrets.gpg > secrets.txt && rm secrets.gpg", false),
		cmdCase("age -d -i key.txt -o s.txt s.age && rm s.age", false),
		cmdCase("find ./secrets -name '*.yaml' -exec sops -e -i {} \\;", false),
		cmdCase("find ./exports -type f -exec gpg -e -r ops@example.com {} \\;", false),
		cmdCase("openssl dgst -sha256 release.tar.gz && rm release.tar.gz", false),
		cmdCase("ccrypt -r -K k ./vault", false),
		// The find that feeds xargs is the one in its pipeline.
		cmdCase("find . -name '*.tmp' -delete; ls reports | xargs gpg -c", false),
		cmdCase("find ~ -type f | sort | xargs -n1 gpg -c", true),
	})
}
