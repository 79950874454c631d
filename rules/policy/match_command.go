package policy

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/parapet-dev/parapet/rules/shell"
)

// commandMatcher matches the parsed simple commands of an action, never
// its raw text. `command:` is one spec or a list of alternative specs; a
// simple command matches when it satisfies any alternative.
type commandMatcher struct {
	alts  []commandSpec
	every bool
	// programs is the union of the alternatives' programBits. Unless open
	// is set (some alternative admits a program without a bit: it names
	// none, or a pattern), a command whose program has none of these bits
	// satisfies no alternative, and the alternatives need not be read.
	programs uint64
	open     bool
}

// commandSpec is one alternative: all of its given parts must hold for
// the same simple command.
type commandSpec struct {
	// program is the `program:` patterns as written, nil when not given.
	// Matching uses programBits and programRest instead: the literal
	// names that have a bit in the policy's programTable, and the rest.
	program     wordGlobs
	programBits uint64
	programRest wordGlobs
	subcommand  wordGlobs
	argsAny     wordGlobs
	argsNone    wordGlobs
	argsAll     []wordGlob
	flags       []flagSpec
	assigns     wordGlobs
	hasAssigns  bool
}

func (m *commandMatcher) kind() string { return "command" }

func (m *commandMatcher) eval(st *evalState) (bool, string) {
	s := st.act.Script
	if s == nil {
		return false, ""
	}
	if m.every {
		// An allow rule never vouches for a command line the parser could
		// not fully read: its best-effort words are not what would run.
		if s.ParseError != "" || s.TooDeep || len(s.Commands) == 0 {
			return false, ""
		}
		for i := range s.Commands {
			if !m.holdsFor(st, i, &s.Commands[i]) {
				return false, s.Commands[i].Name
			}
		}
		return true, ""
	}
	if !m.open && st.scriptPrograms()&m.programs == 0 {
		return false, "" // no command runs one of the programs
	}
	for i := range s.Commands {
		if m.holdsFor(st, i, &s.Commands[i]) {
			return true, s.Commands[i].Name
		}
	}
	return false, ""
}

// holdsFor reports whether cmd, the script's command i, satisfies an
// alternative.
func (m *commandMatcher) holdsFor(st *evalState, i int, cmd *shell.Command) bool {
	bit := st.programBit(i, cmd)
	if !m.open && bit&m.programs == 0 {
		return false
	}
	for j := range m.alts {
		if m.alts[j].holdsFor(st, i, cmd, bit, m.every) {
			return true
		}
	}
	return false
}

// holdsFor reports whether cmd, the script's command i, whose program
// has bit in the policy's programTable, satisfies s.
func (s *commandSpec) holdsFor(st *evalState, i int, cmd *shell.Command, bit uint64, every bool) bool {
	if s.program != nil && (cmd.Program == "" || bit&s.programBits == 0 && !s.programRest.match(cmd.Program)) {
		return false
	}
	if s.subcommand != nil {
		sub := st.subcommand(i, cmd)
		if sub == "" || !s.subcommand.match(sub) {
			return false
		}
	}
	if s.argsAny != nil && !anyArg(cmd.Args, s.argsAny) {
		return false
	}
	for _, g := range s.argsAll {
		if !anyArg(cmd.Args, wordGlobs{g}) {
			return false
		}
	}
	if s.argsNone != nil && anyArg(cmd.Args, s.argsNone) {
		return false
	}
	if s.flags != nil && !hasAnyFlag(cmd, s.flags) {
		return false
	}
	return s.assignsHold(cmd.Assigns, every)
}

// programTable numbers the literal program names of a policy's command
// matchers, up to 64 of them: an evaluation looks each command's program
// up once (commandFacts), and every spec then tests a bit instead of
// comparing strings. A name past the 64th stays a pattern (programRest).
type programTable map[string]uint8

// add returns name's bit, numbering it if it is new; 0 when the table is full.
func (t programTable) add(name string) uint64 {
	id, ok := t[name]
	if !ok {
		if len(t) >= 64 {
			return 0
		}
		id = uint8(len(t))
		t[name] = id
	}
	return 1 << id
}

// bit returns name's bit, 0 for a name the table does not hold.
func (t programTable) bit(name string) uint64 {
	if id, ok := t[name]; ok {
		return 1 << id
	}
	return 0
}

// commandFacts is what an evaluation works out once per simple command
// for all the command matchers that read it.
type commandFacts struct {
	program    uint64 // the program's bit in the programTable
	subcommand string // subcommandOf
	subDone    bool
}

// numberPrograms sets the program bits of the script's commands and
// their union, on the first call.
func (st *evalState) numberPrograms() {
	if st.programsDone {
		return
	}
	st.programsDone = true
	for i := range st.act.Script.Commands {
		bit := st.programs.bit(st.act.Script.Commands[i].Program)
		if i < len(st.cmds) {
			st.cmds[i].program = bit
		}
		st.programUnion |= bit
	}
}

// scriptPrograms returns the union of the bits of the script's programs.
func (st *evalState) scriptPrograms() uint64 {
	st.numberPrograms()
	return st.programUnion
}

// programBit returns the bit of the program of cmd, the script's command
// i, in the policy's programTable.
func (st *evalState) programBit(i int, cmd *shell.Command) uint64 {
	if i >= len(st.cmds) {
		return st.programs.bit(cmd.Program)
	}
	st.numberPrograms()
	return st.cmds[i].program
}

// subcommand returns subcommandOf(cmd) for cmd, the script's command i.
func (st *evalState) subcommand(i int, cmd *shell.Command) string {
	if i >= len(st.cmds) {
		return subcommandOf(cmd)
	}
	f := &st.cmds[i]
	if !f.subDone {
		f.subcommand, f.subDone = subcommandOf(cmd), true
	}
	return f.subcommand
}

// assignsHold applies `assigns:`. Environment assignments can change what
// a program does (LD_PRELOAD=…, GIT_SSH_COMMAND=…), so an allow rule
// vouches only for assignments it lists; deny/verify rules without
// `assigns:` ignore them and with it need one that matches.
func (s *commandSpec) assignsHold(assigns []string, every bool) bool {
	if every {
		for _, a := range assigns {
			if !s.assigns.match(a) {
				return false
			}
		}
		return true
	}
	return !s.hasAssigns || anyArg(assigns, s.assigns)
}

func anyArg(args []string, gs wordGlobs) bool {
	for _, a := range args {
		if gs.match(a) {
			return true
		}
	}
	return false
}

// globalOptionsWithValue lists, per program, options before the
// subcommand that take a separate value, so `git -C dir push` has the
// subcommand push, not dir.
var globalOptionsWithValue = map[string][]string{
	"git":     {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env", "--super-prefix"},
	"docker":  {"-H", "--host", "-c", "--context", "--config", "-l", "--log-level"},
	"podman":  {"--connection", "-c", "--url", "--root", "--runroot"},
	"kubectl": {"-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user", "-s", "--server"},
	"helm":    {"-n", "--namespace", "--kube-context", "--kubeconfig"},
	"npm":     {"--prefix", "-C", "--workspace", "-w"},
	"cargo":   {"-C", "--config", "-Z"},
	"make":    {"-C", "-f", "--file", "--directory", "-j", "-I"},
	"go":      {"-C"},
}

// subcommandOf returns the first operand of cmd: its first argument that
// is neither an option nor an option's value.
func subcommandOf(cmd *shell.Command) string {
	withValue := globalOptionsWithValue[cmd.Program]
	for i := 0; i < len(cmd.Args); i++ {
		a := cmd.Args[i]
		switch {
		case a == "--":
			if i+1 < len(cmd.Args) {
				return cmd.Args[i+1]
			}
			return ""
		case len(a) > 1 && a[0] == '-':
			if !strings.Contains(a, "=") && containsString(withValue, a) {
				i++ // skip the option's value
			}
		default:
			return a
		}
	}
	return ""
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// flagSpec is one entry of flags_any: a long option ("--force") or a set
// of short letters that must all be present ("-f"; "-rf" needs r and f).
type flagSpec struct {
	long  string
	short string
}

func (f flagSpec) String() string {
	if f.long != "" {
		return f.long
	}
	return "-" + f.short
}

// hasAnyFlag reports whether cmd carries one of flags, with the getopt
// conventions of shell.Command.HasFlag: -rf has -r and -f, --long=value
// has --long, nothing after "--" counts.
func hasAnyFlag(cmd *shell.Command, flags []flagSpec) bool {
	for _, f := range flags {
		if f.long != "" {
			if cmd.HasFlag(0, f.long[2:]) {
				return true
			}
			continue
		}
		all := true
		for i := 0; i < len(f.short) && all; i++ {
			all = cmd.HasFlag(f.short[i], "")
		}
		if all {
			return true
		}
	}
	return false
}

var commandKeys = []string{"program", "subcommand", "args_any", "args_all", "args_none", "flags_any", "assigns"}

func (c *compiler) commandMatcher(label string, n *yaml.Node, every bool) *commandMatcher {
	m := &commandMatcher{every: every}
	var alts []*yaml.Node
	switch n.Kind {
	case yaml.MappingNode:
		alts = []*yaml.Node{n}
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			c.ps.add(n.Line, label, "command is an empty list")
		}
		alts = n.Content
	default:
		c.ps.add(n.Line, label, "command must be a mapping (program, subcommand, args_any, …) or a list of them, got %s", kindName(n))
		return nil
	}
	for _, alt := range alts {
		s := c.commandSpec(label, alt)
		if s == nil {
			continue
		}
		m.alts = append(m.alts, *s)
		m.programs |= s.programBits
		m.open = m.open || s.program == nil || s.programRest != nil
	}
	return m
}

func (c *compiler) commandSpec(label string, n *yaml.Node) *commandSpec {
	kvs := c.ps.entries(n, label, "command")
	if n.Kind != yaml.MappingNode {
		return nil
	}
	if len(kvs) == 0 {
		c.ps.add(n.Line, label, "command is empty (give program, subcommand, args_*, flags_any or assigns)")
		return nil
	}
	c.ps.checkKeys(kvs, commandKeys, label, "command")
	s := &commandSpec{}
	globs := func(kv keyValue) wordGlobs {
		var out wordGlobs
		for _, it := range c.ps.stringList(kv.value, label, "command."+kv.key) {
			g, err := compileWordGlob(it.value)
			if err != nil {
				c.ps.add(it.line, label, "command.%s: bad pattern %q: %v", kv.key, it.value, err)
				continue
			}
			out = append(out, g)
		}
		return out
	}
	for _, kv := range kvs {
		switch kv.key {
		case "program":
			s.program = globs(kv)
			s.programBits, s.programRest = 0, nil
			for _, g := range s.program {
				bit := uint64(0)
				if g.literal {
					bit = c.programs.add(g.pattern)
				}
				if bit == 0 {
					s.programRest = append(s.programRest, g)
				}
				s.programBits |= bit
			}
		case "subcommand":
			s.subcommand = globs(kv)
		case "args_any":
			s.argsAny = globs(kv)
		case "args_all":
			s.argsAll = globs(kv)
		case "args_none":
			s.argsNone = globs(kv)
		case "assigns":
			s.assigns, s.hasAssigns = globs(kv), true
		case "flags_any":
			for _, it := range c.ps.stringList(kv.value, label, "command.flags_any") {
				f, ok := parseFlag(it.value)
				if !ok {
					c.ps.add(it.line, label, "command.flags_any: %q is not a flag (write -x, -xy or --name)", it.value)
					continue
				}
				s.flags = append(s.flags, f)
			}
		}
	}
	return s
}

func parseFlag(v string) (flagSpec, bool) {
	switch {
	case strings.HasPrefix(v, "--") && len(v) > 2 && !strings.ContainsAny(v, "= \t"):
		return flagSpec{long: v}, true
	case len(v) > 1 && v[0] == '-' && !strings.ContainsAny(v[1:], "-= \t"):
		return flagSpec{short: v[1:]}, true
	}
	return flagSpec{}, false
}
