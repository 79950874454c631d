package policy

import (
	"slices"
	"strings"
	"testing"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

func TestConfineParses(t *testing.T) {
	p := mustParse(t, `version: 1
verify:
  - id: push
    tier: 3
    confine: { network: [443, 22, 443] }
    match: { action: [git_push] }
allow:
  - id: fetch
    confine:
      write: temp
      network: [80]
      read: [~/go/pkg/mod, /opt/tools, $WORKSPACE/vendor]
    match: { action: [http_request] }
  - id: plain
    match: { action: [read_file] }
`)
	d := p.Evaluate(act(t, "http_request", `{"url":"https://example.com/","method":"GET"}`))
	g := d.Confine
	if d.RuleID != "fetch" || g == nil {
		t.Fatalf("decision %+v", d)
	}
	if g.GetWrite() != pb.ConfinementWrite_CONFINEMENT_WRITE_TEMP_ONLY || !slices.Equal(g.GetConnectPorts(), []uint32{80}) ||
		!slices.Equal(g.GetReadPaths(), []string{"~/go/pkg/mod", "/opt/tools", "$WORKSPACE/vendor"}) {
		t.Fatalf("grant %v", g)
	}
	if got := DescribeConfinement(g); got != "write temp only, network tcp ports 80, read ~/go/pkg/mod /opt/tools $WORKSPACE/vendor" {
		t.Errorf("describe: %q", got)
	}
	if d := p.Evaluate(act(t, "git_push", `{}`)); !slices.Equal(d.Confine.GetConnectPorts(), []uint32{22, 443}) {
		t.Errorf("verify grant: %v", d.Confine)
	}
	if d := p.Evaluate(act(t, "read_file", `{"path":"a"}`)); d.Confine != nil {
		t.Errorf("a rule without confine granted %v", d.Confine)
	}
	if got := DescribeConfinement(nil); got != "write workspace, network none" {
		t.Errorf("default: %q", got)
	}
}

func TestConfineErrors(t *testing.T) {
	for name, c := range map[string]struct{ rule, want string }{
		"port 0":        {"confine: { network: [0] }", "is not a TCP port"},
		"port too big":  {"confine: { network: [70000] }", "is not a TCP port"},
		"port word":     {"confine: { network: [https] }", "is not a TCP port"},
		"empty network": {"confine: { network: [] }", "empty"},
		"write":         {"confine: { write: everywhere }", "workspace or temp"},
		"relative read": {"confine: { read: [src] }", "must be absolute"},
		"other user":    {"confine: { read: [~root/x] }", "must be absolute"},
		"unknown key":   {"confine: { hosts: [a.com] }", "unknown key"},
	} {
		_, err := Parse("t.yaml", []byte("version: 1\nallow:\n  - id: r\n    "+c.rule+"\n    match: { action: [read_file] }\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	// A deny rule runs nothing, so it grants nothing.
	if _, err := Parse("t.yaml", []byte("version: 1\ndeny:\n  - id: r\n    confine: { network: [80] }\n    match: { action: [read_file] }\n")); err == nil || !strings.Contains(err.Error(), "unknown key") {
		t.Errorf("confine in deny: %v", err)
	}
}

func TestNarrowConfinement(t *testing.T) {
	g := &pb.Confinement{Write: pb.ConfinementWrite_CONFINEMENT_WRITE_TEMP_ONLY, ConnectPorts: []uint32{443}, ReadPaths: []string{"/opt"}}
	if NarrowConfinement(g, false) != g || NarrowConfinement(nil, true) != nil {
		t.Fatal("narrowing without cause changed the grant")
	}
	n := NarrowConfinement(g, true)
	if len(n.GetConnectPorts()) != 0 || n.GetWrite() != g.GetWrite() || !slices.Equal(n.GetReadPaths(), g.GetReadPaths()) {
		t.Fatalf("narrowed %v", n)
	}
	if len(g.GetConnectPorts()) != 1 {
		t.Fatal("the shared grant was modified")
	}
}
