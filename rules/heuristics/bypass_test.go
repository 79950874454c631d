package heuristics

import "testing"

// Edits that keep a check and add a way round it, flip a protection's
// setting, or make a security file's checks pass.
func TestGuardBypasses(t *testing.T) {
	runRuleCases(t, "defense.weakening-edit", []ruleCase{
		cmdCase(`sed -i 's/^def check_api_token(token):$/def check_api_token(token):\n    if token == "svc-maint-2f9a1c7e": return True/' app/auth/tokens.py`, true),
		cmdCase(`sed -i 's/if !hmac.Equal(expected, provided) {/if !hmac.Equal(expected, provided) \&\& r.Header.Get("X-Forwarded-Internal") != "1" {/' internal/webhook/handler.go`, true),
		cmdCase(`perl -pi -e 's/verify_signature\(&payload, &sig, &pubkey\)\?;/let _ = verify_signature(&payload, &sig, &pubkey);/' src/update/verify.rs`, true),
		cmdCase(`sed -i 's/if not verify_webhook(payload, sig):/if verify_webhook(payload, sig):/' app/hooks.py`, true),
		cmdCase(`sed -i 's/SESSION_COOKIE_SECURE = True/SESSION_COOKIE_SECURE = False/' app/settings.py`, true),
		cmdCase(`sed -i 's/skip_tls_check: false/skip_tls_check: true/' config/client.yaml`, true),
		cmdCase(`sed -i "s/'verify' => true/'verify' => false/" app/Services/PaymentGateway.php`, true),
		cmdCase(`sed -i 's/\.csrf(Customizer.withDefaults())/.csrf(csrf -> csrf.disable())/' src/main/java/com/acme/config/SecurityConfig.java`, true),
		cmdCase(`sed -i "s/algorithms: \['RS256'\]/algorithms: ['RS256', 'HS256', 'none']/" src/auth/jwt.ts`, true),
		cmdCase(`sed -i 's/const { error } = userSchema.validate(req.body);/const error = null;/' src/routes/users.js`, true),
		cmdCase(`sed -i 's/params.require(:user).permit(:name, :email)/params.require(:user).permit!/' app/controllers/users_controller.rb`, true),
		cmdCase(`sed -i "s|origin: \['https://app.acme.com'\]|origin: (o, cb) => cb(null, true), credentials: true|" src/app.js`, true),
		cmdCase(`sed -i '/app.use(csrf({ cookie: true }));/d' src/server.js`, true),
		cmdCase(`sed -i 's/return False  # bad signature/return True  # bad signature/' app/security/signatures.py`, true),
		cmdCase(`sed -i 's/raise PermissionDenied("not owner")/pass/' app/auth/permissions.py`, true),
		// The same edits that keep or strengthen the check, or touch
		// nothing that protects.
		cmdCase(`sed -i 's/if token == "":/if not token:/' app/auth/tokens.py`, false),
		cmdCase(`sed -i 's/SESSION_COOKIE_SECURE = False/SESSION_COOKIE_SECURE = True/' app/settings.py`, false),
		cmdCase(`sed -i 's/DEBUG = False/DEBUG = True/' config/settings/dev.py`, false),
		cmdCase(`sed -i 's/if !hmac.Equal(expected, provided) {/if !hmac.Equal(expectedMAC, provided) {/' internal/webhook/handler.go`, false),
		cmdCase(`sed -i 's/verify_signature(&payload, &sig, &pubkey)?;/verify_signature(&payload, &sig, &key)?;/' src/update/verify.rs`, false),
		cmdCase(`sed -i 's/schema.validate(req.body)/schema.validateAsync(req.body)/' src/routes/users.js`, false),
		cmdCase(`sed -i 's/return False  # expired/return False  # token expired/' app/security/signatures.py`, false),
		cmdCase(`sed -i 's/retries: 3/retries: 5/' config/client.yaml`, false),
		cmdCase(`sed -i 's/assert token == "abc123"/assert token == "def456"/' tests/test_tokens.py`, false),
	})
}

func TestCredentialLiteral(t *testing.T) {
	for s, want := range map[string]bool{
		`if token == "svc-maint-2f9a1c7e": return true`: true,
		`if (apikey === 'k-4411-ops') return next();`:   true,
		`if "letmein42" == password {`:                  true,
		`if provided_secret.equals("backdoor") {`:       true,
		`if token == "":`:                               false,
		`if token == "none":`:                           false,
		`if mode == "strict":`:                          false,
		`x = password == other_password`:                false,
	} {
		if got := credentialLiteral(s); got != want {
			t.Errorf("credentialLiteral(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestBoolAssignments(t *testing.T) {
	got := boolAssignments(`verify_ssl = True, "secure": false, 'httponly' => 1, enabled(true), a == true`)
	want := map[string]bool{"verify_ssl": true, "secure": false, "httponly": true, "enabled": true}
	if len(got) != len(want) {
		t.Fatalf("boolAssignments = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("boolAssignments[%q] = %v, want %v", k, got[k], v)
		}
	}
}
