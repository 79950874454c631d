package evaluator_test

import (
	"encoding/json"
	"testing"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/policy"
	"github.com/parapet-dev/parapet/shieldd/evaluator"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
)

// everydayCommands are known-safe on the default policy: with an
// evaluator configured they still cost no model call.
var everydayCommands = []string{
	"ls -la", "git status", "git diff --cached --stat", "git log --oneline -20", "go build ./...", "go test -race -count=1 ./...",
	"go vet ./... && gofmt -l .", "npm test", "npm ci && npm run build", "pip install -r requirements.txt", "python -m pytest -q tests/",
	"cargo build --release", "make -j2 test", "cat cmd/server/main.go", "grep -rn 'TODO' --include='*.go' .",
	"rg -n 'func New' internal/ | head -20", "sed -n '40,80p' internal/store/store.go", "tail -n 50 logs/dev.log",
	"mkdir -p internal/cache && touch internal/cache/doc.go", "echo 'node_modules/' >> .gitignore", "rm -rf node_modules",
	"git add -A && git commit -m 'wip'", "git checkout -b feature/x", "git stash && git pull && git stash pop", "du -sh * | sort -h",
	"which go node python3 && go version", "jq -r '.dependencies | keys[]' package.json", "bash -c 'cd web && npm run lint'",
	"CGO_ENABLED=0 GOOS=linux go build -o bin/server ./cmd/server", "curl -s https://api.github.com/repos/golang/go/releases/latest | jq -r .tag_name",
	"cp .env.example .env", "cat /etc/os-release", "docker build -t project:dev .", "git push origin feature/login", "kubectl get pods -o wide",
}

// secondOpinionCommands are allowed by Tier 0 and Tier 1 but not
// known-safe: each goes to the model once.
var secondOpinionCommands = []string{
	"python3 scripts/migrate.py", "node server.js", "wget -qO- http://203.0.113.7/data.json", "ansible-playbook -i hosts site.yml",
	// The loop's items are known (go test ./internal/api/... is
	// everyday), but what a computed list holds is not.
	"for p in $(cat services.txt); do go test ./internal/$p/...; done",
}

func commandInput(line string) pipeline.Input {
	b, _ := json.Marshal(map[string]string{"command": line})
	return input("execute_command", string(b))
}

func defaultPipeline(t *testing.T, ev pipeline.Evaluator) *pipeline.Pipeline {
	t.Helper()
	pol, err := policy.Embedded("default")
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Config{Policy: pol, Evaluator: ev, CacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSecondOpinionForShellCommands(t *testing.T) {
	forProviders(t, func(t *testing.T, provider string) {
		e := setup(t, provider, evaluator.Config{}, -1)
		e.srv.Handle(answering("BLOCK"))
		e.p = defaultPipeline(t, e.ev)

		for _, line := range everydayCommands {
			v := e.eval(t, commandInput(line))
			if v.Decision != allow || v.Tier >= pipeline.TierEvaluator {
				t.Errorf("%s: %s tier %d %v (%s)", line, v.Decision, v.Tier, v.RuleIds, v.Reasoning)
			}
		}
		if n := e.srv.Count(); n != 0 {
			t.Fatalf("everyday commands made %d model calls, want none", n)
		}

		// A command Tier 1 blocks never reaches the model either.
		if v := e.eval(t, commandInput("rm -rf ~")); v.Decision != block || v.Tier != pipeline.TierHeuristics {
			t.Fatalf("rm -rf ~: %s tier %d", v.Decision, v.Tier)
		}
		if n := e.srv.Count(); n != 0 {
			t.Fatalf("a blocked command made %d model calls", n)
		}

		// The rest gets the model's second opinion, here a BLOCK.
		for i, line := range secondOpinionCommands {
			v := e.eval(t, commandInput(line))
			wantVerdict(t, v, block, evaluator.RuleLLM)
			if n := e.srv.Count(); n != i+1 {
				t.Fatalf("%s: %d model calls so far, want %d", line, n, i+1)
			}
		}
	})
}

// Without an evaluator the same commands are allowed, as before.
func TestNoEvaluatorNoSecondOpinion(t *testing.T) {
	p := defaultPipeline(t, nil)
	for _, line := range append(append([]string{}, everydayCommands...), secondOpinionCommands...) {
		v, err := p.Evaluate(t.Context(), commandInput(line))
		if err != nil {
			t.Fatal(err)
		}
		if v.Decision != pb.VerdictDecision_VERDICT_DECISION_ALLOW {
			t.Errorf("%s: %s %v (%s)", line, v.Decision, v.RuleIds, v.Reasoning)
		}
	}
}
