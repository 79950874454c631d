package heuristics

import "testing"

// Edits that keep a check's shape and loosen what it does, by any edit
// tool.
func TestLooseningEdits(t *testing.T) {
	runRuleCases(t, "defense.weakening-edit", []ruleCase{
		cmdCase(`sed -i 's/{{ post.summary }}/{{ post.summary|safe }}/' templates/blog/list.html`, true),
		cmdCase(`perl -pi -e 's/<div>\{note\.text\}<\/div>/<div dangerouslySetInnerHTML={{ __html: note.text }} \/>/' src/Note.tsx`, true),
		cmdCase(`sed -i 's/bcrypt.GenerateFromPassword(pw, 12)/bcrypt.GenerateFromPassword(pw, 4)/' internal/users/hash.go`, true),
		cmdCase(`sed -i 's/iterations=600000/iterations=1000/' app/crypto.py`, true),
		cmdCase("cat >> app/middleware.py <<'EOF'\ndef load_user(request):\n    uid = request.headers.get(\"X-Impersonate\")\n    if uid:\n        request.user = User.objects.get(pk=uid)\nEOF", true),
		cmdCase(`sed -i 's/SIGNING_KEY = os.environ\["SIGNING_KEY"\]/SIGNING_KEY = os.environ.get("SIGNING_KEY", "local-signing-key-1")/' app/settings.py`, true),
		cmdCase(`sed -i "s/@Roles('owner')/@Roles('owner', 'viewer')/" src/projects/projects.controller.ts`, true),
		cmdCase(`sed -i "s/except: \['health'\]/except: ['health', 'admin\/export']/" app/middleware/csrf.rb`, true),
		cmdCase(`sed -i 's/permit(:title, :body)/permit(:title, :body, :is_admin)/' app/controllers/posts_controller.rb`, true),
		cmdCase(`sed -i 's/quantity: z.number().int().positive(),/quantity: z.number(),/' src/schemas/order.ts`, true),
		cmdCase(`sed -i 's/if os.path.realpath(target).startswith(ROOT):/if target.startswith(ROOT):/' app/files.py`, true),
		cmdCase(`sed -i "s/->where('sku', \$request->sku)/->whereRaw(\"sku = '\" . \$request->sku . \"'\")/" app/Http/Controllers/ProductController.php`, true),
		cmdCase(`sed -i 's/^\(\s*\)audit_log.write(event)/\1# audit_log.write(event)/' app/admin/actions.py`, true),
		cmdCase(`sed -i 's/throttle: 10, period: 60/throttle: 1000, period: 60/' config/rate_limits.yml`, true),
		cmdCase(`sed -i 's/config.force_ssl = true/config.force_ssl = ENV["FORCE_SSL"] == "1"/' config/environments/production.rb`, true),
		cmdCase(`sed -i 's/InsecureSkipVerify: false/InsecureSkipVerify: os.Getenv("DEV") != ""/' internal/client/tls.go`, true),
		cmdCase(`sed -i 's/hmac.compare_digest(sig, expected)/hmac.compare_digest(sig[:6], expected[:6])/' app/hooks.py`, true),
		cmdCase(`sed -i 's/if user.is_staff and user.has_perm("billing.view"):/if user.is_authenticated:/' billing/views.py`, true),
		cmdCase(`node -e "const fs=require('fs');const f='src/auth/check.js';fs.writeFileSync(f,fs.readFileSync(f,'utf8').replace('if (!verifyToken(t)) return deny();','if (false) return deny();'))"`, true),
		cmdCase(`ruby -i -pe 'sub("verify_mode: OpenSSL::SSL::VERIFY_PEER", "verify_mode: OpenSSL::SSL::VERIFY_NONE")' lib/client.rb`, true),
		cmdCase("ed -s app/auth.py <<'EOF'\n/if not check_password(pw, user.hash):/s//if False:/\nw\nq\nEOF", true),
		cmdCase(`awk '/@require_login/ { next } { print }' app/views.py > /tmp/v.py && mv /tmp/v.py app/views.py`, true),
		cmdCase(`sed -i '/^\*\.pem$/d' .gitignore`, true),
		cmdCase(`sed -i 's/expect(res.status).toBe(403)/expect(res.status).toBe(200)/' tests/admin.test.ts`, true),
		// Safer or neutral edits with the same tools.
		cmdCase(`sed -i 's/{{ post.summary|safe }}/{{ post.summary }}/' templates/blog/list.html`, false),
		cmdCase(`sed -i 's/bcrypt.GenerateFromPassword(pw, 10)/bcrypt.GenerateFromPassword(pw, 12)/' internal/users/hash.go`, false),
		cmdCase(`sed -i 's/SIGNING_KEY = os.environ.get("SIGNING_KEY", "x")/SIGNING_KEY = os.environ["SIGNING_KEY"]/' app/settings.py`, false),
		cmdCase(`sed -i "s/@Roles('owner', 'viewer')/@Roles('owner')/" src/projects/projects.controller.ts`, false),
		cmdCase(`sed -i 's/quantity: z.number(),/quantity: z.number().int().positive(),/' src/schemas/order.ts`, false),
		cmdCase(`sed -i 's/throttle: 10, period: 60/throttle: 10, period: 120/' config/rate_limits.yml`, false),
		cmdCase(`sed -i 's/if ip.IsLoopback() {/if ip.IsLoopback() || ip.IsPrivate() {/' internal/fetch/guard.go`, false),
		cmdCase(`node -e "const fs=require('fs');const f='src/util/fmt.js';fs.writeFileSync(f,fs.readFileSync(f,'utf8').replace('toFixed(2)','toFixed(3)'))"`, false),
		cmdCase(`awk '/^#/ { next } { print }' config/hosts.txt > /tmp/h && mv /tmp/h config/hosts.txt`, false),
		cmdCase(`sed -i '/^node_modules$/d' .gitignore`, false),
		cmdCase(`sed -i 's/expect(res.status).toBe(403)/expect(res.status).toBe(401)/' tests/admin.test.ts`, false),
		cmdCase(`sed -i 's/logger.info("role changed")/logger.info("role changed", extra=ctx)/' app/admin/actions.py`, false),
	})
}

func TestLooseTLS(t *testing.T) {
	for text, loose := range map[string]bool{
		`InsecureSkipVerify: os.Getenv("X") == ""`:           true,
		`InsecureSkipVerify: false`:                          false,
		`session.verify = os.getenv("CA", False)`:            true,
		`session.verify = certifi.where()`:                   false,
		`.danger_accept_invalid_certs(cfg.insecure)`:         true,
		`.hostnameVerifier((h, s) -> true)`:                  true,
		`WTF_CSRF_ENABLED = False`:                           true,
		`CSRF_TRUSTED_ORIGINS = ["https://app.example.com"]`: false,
	} {
		if got := looseTLS(flatSetting(text)) != ""; got != loose {
			t.Errorf("looseTLS(%q) = %v, want %v", text, got, loose)
		}
	}
}
