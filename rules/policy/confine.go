package policy

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// A rule's `confine:` says what the executor may do when the action it
// allows (or a human approves) runs:
//
//	confine:
//	  write: workspace | temp       # default workspace
//	  network: none | [80, 443]     # TCP ports; default none
//	  read: [~/go/pkg/mod, /opt/x]  # extra read-only paths
//
// Without it the action runs in the default confinement (the verdict
// carries no grant).

var confineKeys = []string{"write", "network", "read"}

func (c *compiler) confine(n *yaml.Node, label string) *pb.Confinement {
	kvs := c.ps.entries(n, label, "confine")
	c.ps.checkKeys(kvs, confineKeys, label, "confine")
	g := &pb.Confinement{}
	for _, kv := range kvs {
		switch kv.key {
		case "write":
			v, ok := c.ps.scalar(kv.value, label, "confine.write")
			if !ok {
				continue
			}
			switch v {
			case "workspace":
				g.Write = pb.ConfinementWrite_CONFINEMENT_WRITE_WORKSPACE
			case "temp":
				g.Write = pb.ConfinementWrite_CONFINEMENT_WRITE_TEMP_ONLY
			default:
				c.ps.add(kv.value.Line, label, "confine.write must be workspace or temp, got %q", v)
			}
		case "network":
			if kv.value.Kind == yaml.ScalarNode && kv.value.Value == "none" {
				continue
			}
			for _, it := range c.ps.stringList(kv.value, label, "confine.network") {
				p, err := strconv.ParseUint(strings.TrimSpace(it.value), 10, 16)
				if err != nil || p == 0 {
					c.ps.add(it.line, label, "confine.network: %q is not a TCP port (1-65535); use `none` for no network", it.value)
					continue
				}
				if !slices.Contains(g.ConnectPorts, uint32(p)) {
					g.ConnectPorts = append(g.ConnectPorts, uint32(p))
				}
			}
			slices.Sort(g.ConnectPorts)
		case "read":
			for _, it := range c.ps.stringList(kv.value, label, "confine.read") {
				p := strings.TrimSpace(it.value)
				switch {
				case p == "$WORKSPACE" || strings.HasPrefix(p, "$WORKSPACE/"),
					p == "~" || strings.HasPrefix(p, "~/"),
					filepath.IsAbs(p):
					g.ReadPaths = append(g.ReadPaths, filepath.Clean(p))
				default:
					c.ps.add(it.line, label, "confine.read: %q must be absolute, ~/… or $WORKSPACE/…", it.value)
				}
			}
		}
	}
	return g
}

// NarrowConfinement returns g without what Tier 1 took away: network when
// a finding suggests data could leave. It never widens, and returns g
// itself when nothing changes (verdicts share grants; never modify one).
func NarrowConfinement(g *pb.Confinement, noNetwork bool) *pb.Confinement {
	if g == nil || !noNetwork || len(g.GetConnectPorts()) == 0 {
		return g
	}
	return &pb.Confinement{Write: g.GetWrite(), ReadPaths: g.GetReadPaths()}
}

// DescribeConfinement renders a grant for people: "write workspace,
// network none, read ~/go/pkg/mod".
func DescribeConfinement(g *pb.Confinement) string {
	var b strings.Builder
	b.WriteString("write ")
	if g.GetWrite() == pb.ConfinementWrite_CONFINEMENT_WRITE_TEMP_ONLY {
		b.WriteString("temp only")
	} else {
		b.WriteString("workspace")
	}
	b.WriteString(", network ")
	if len(g.GetConnectPorts()) == 0 {
		b.WriteString("none")
	} else {
		b.WriteString("tcp ports ")
		for i, p := range g.GetConnectPorts() {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatUint(uint64(p), 10))
		}
	}
	if len(g.GetReadPaths()) > 0 {
		b.WriteString(", read ")
		b.WriteString(strings.Join(g.GetReadPaths(), " "))
	}
	return b.String()
}
