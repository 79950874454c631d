package engine_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/rules/policy"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/shield"
)

// TestVerdictGrantIsApplied: the engine runs a command with exactly the
// network its verdict grants. Every command here is ALLOWed, so only the
// executor stands between it and the servers.
func TestVerdictGrantIsApplied(t *testing.T) {
	granted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "granted-body") }))
	defer granted.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "other-body") }))
	defer other.Close()
	gp := granted.Listener.Addr().(*net.TCPAddr).Port
	pol, err := policy.Parse("t.yaml", []byte(`version: 1
heuristics: { trusted_hosts: [127.0.0.1] }
allow:
  - id: curl-granted
    confine: { network: [`+strconv.Itoa(gp)+`] }
    match:
      action: [execute_command]
      command: { program: [curl] }
  - id: shell
    match: { action: [execute_command] }
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Config{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *engine.Config) { c.Shield = shield.NewLocal(&shield.Shield{Pipeline: p}) })
	if !h.reg.Confined() {
		t.Skip("no confined executor on this host")
	}
	a, tr, pr := h.startTurn(t, context.Background(), engine.Message{Content: "fetch"})
	for _, c := range []struct {
		id, cmd, want string
		ok            bool
	}{
		{"granted", "curl -sS " + granted.URL, "granted-body", true},
		{"other-port", "curl -sS " + other.URL, "", false},
		{"no-grant", "true; curl -sS " + granted.URL, "", false}, // the shell rule grants nothing
	} {
		r := a.call(t, pr.GetSessionId(), pr.GetMessageId(), c.id, "execute_command", `{"command":`+strconv.Quote(c.cmd)+`}`)
		v := verdictOf(t, callEvents(t, tr, c.id))
		if v.GetDecision().String() != "VERDICT_DECISION_ALLOW" {
			t.Fatalf("%s: not allowed: %v", c.id, v)
		}
		if c.ok != !r.GetIsError() || !strings.Contains(r.GetContent(), c.want) || strings.Contains(r.GetContent(), "other-body") {
			t.Errorf("%s: grant %v, result error=%v %q", c.id, v.GetConfinement(), r.GetIsError(), r.GetContent())
		}
		if c.id == "granted" && !slices.Equal(v.GetConfinement().GetConnectPorts(), []uint32{uint32(gp)}) {
			t.Errorf("verdict grant %v", v.GetConfinement())
		}
	}
}
