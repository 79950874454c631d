package policy

import (
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/checker"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/interpreter"
	"go.yaml.in/yaml/v3"

	"github.com/parapet-dev/parapet/rules/action"
)

// celMatcher is a `when:` expression. A runtime error (a missing key, the
// cost limit) is a match for deny/verify and no match for allow: whatever
// cannot be evaluated must not end in ALLOW.
type celMatcher struct {
	source string
	prg    cel.Program
	every  bool // set for allow rules: errors count as no match
	// costTracked says the program counts its cost as it runs: the
	// checker could not bound its worst case under celCostLimit.
	costTracked bool
}

func (m *celMatcher) kind() string { return "when" }

func (m *celMatcher) eval(st *evalState) (bool, string) {
	ok, errText := m.run(st)
	if errText != "" {
		return !m.every, "error: " + errText
	}
	return ok, ""
}

// run evaluates the expression; errText is set when it failed.
func (m *celMatcher) run(st *evalState) (result bool, errText string) {
	if st.cel == nil {
		st.cel = celActivations.Get().(*celActivation)
		st.cel.act = st.act
	}
	out, _, err := m.prg.Eval(st.cel)
	if err != nil {
		return false, err.Error()
	}
	b, isBool := out.(types.Bool)
	if !isBool {
		return false, "result is not a bool"
	}
	return bool(b), ""
}

func (c *compiler) celMatcher(label string, n *yaml.Node, every bool) *celMatcher {
	src, ok := c.ps.scalar(n, label, "when")
	if !ok {
		return nil
	}
	if strings.TrimSpace(src) == "" {
		c.ps.add(n.Line, label, "when is empty")
		return nil
	}
	env, err := celEnv()
	if err != nil {
		c.ps.add(n.Line, label, "when: CEL is unavailable: %v", err)
		return nil
	}
	ast, iss := env.Compile(src)
	if iss != nil && iss.Err() != nil {
		c.ps.add(n.Line, label, "when: %s", celIssues(iss.Err().Error()))
		return nil
	}
	if !ast.OutputType().IsExactType(cel.BoolType) {
		c.ps.add(n.Line, label, "when: expression must be a bool, but it is %s (compare it, e.g. `== true`)", ast.OutputType())
		return nil
	}
	opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}
	tracked := false
	// Tracking the cost at run time costs a fifth of an evaluation. It is
	// only needed where the cost depends on the input (comprehensions,
	// string functions): an expression whose worst case the checker can
	// bound under the limit runs without it.
	if est, err := env.EstimateCost(ast, unsizedInputs{}); err != nil || est.Max > celCostLimit {
		opts, tracked = append(opts, cel.CostLimit(celCostLimit)), true
	}
	prg, err := env.Program(ast, opts...)
	if err != nil {
		c.ps.add(n.Line, label, "when: %v", err)
		return nil
	}
	return &celMatcher{source: src, prg: prg, every: every, costTracked: tracked}
}

// unsizedInputs gives the cost estimator no size for any input, so every
// cost that grows with an input is unbounded.
type unsizedInputs struct{}

func (unsizedInputs) EstimateSize(checker.AstNode) *checker.SizeEstimate { return nil }

func (unsizedInputs) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// celIssues keeps the "ERROR: <input>:1:5: msg" lines of a CEL error,
// dropping the source excerpts, so each problem stays on one line.
func celIssues(msg string) string {
	var out []string
	for _, line := range strings.Split(msg, "\n") {
		if rest, ok := strings.CutPrefix(line, "ERROR: <input>:"); ok {
			out = append(out, "at "+rest)
		}
	}
	if len(out) == 0 {
		return strings.ReplaceAll(msg, "\n", " ")
	}
	return strings.Join(out, "; ")
}

// celActivation resolves the `when:` variables lazily and caches them for
// the rest of one evaluation: a rule that reads only `args` never pays
// for `paths`.
type celActivation struct {
	act                              *action.Action
	vAction, vArgs, vCaller          any
	vPaths, vCommands, vURLs         any
	doneAction, doneArgs, doneCaller bool
	donePaths, doneCommands, doneURL bool
}

var _ interpreter.Activation = (*celActivation)(nil)

// celActivations lends evaluations their activation: CEL holds it as an
// interface, so one on the evaluation's stack would move it to the heap.
var celActivations = sync.Pool{New: func() any { return new(celActivation) }}

func (a *celActivation) Parent() interpreter.Activation { return nil }

func (a *celActivation) ResolveName(name string) (any, bool) {
	act := a.act
	switch name {
	case "action":
		if !a.doneAction {
			a.vAction, a.doneAction = map[string]any{
				"type": act.Type, "raw_type": act.RawType, "known": act.Known, "hash": act.HashHex(),
			}, true
		}
		return a.vAction, true
	case "args":
		if !a.doneArgs {
			// A map only for the rules that read it: most actions never
			// reach a `when`.
			a.vArgs, a.doneArgs = act.Args.Map(), true
		}
		return a.vArgs, true
	case "caller":
		if !a.doneCaller {
			c := act.Caller
			a.vCaller, a.doneCaller = map[string]string{
				"tenant": c.Tenant, "workspace_id": c.WorkspaceID, "engine_id": c.EngineID,
				"user_id": c.UserID, "session_id": c.SessionID, "agent_name": c.AgentName,
				"workspace_root": c.WorkspaceRoot, "home": c.Home,
			}, true
		}
		return a.vCaller, true
	case "paths":
		if !a.donePaths {
			list := make([]any, len(act.Paths))
			for i, p := range act.Paths {
				list[i] = map[string]any{
					"raw": p.Raw, "abs": p.Abs, "rel": p.Rel, "in_workspace": p.InWorkspace,
					"access": p.Access.String(), "field": p.Field,
				}
			}
			a.vPaths, a.donePaths = list, true
		}
		return a.vPaths, true
	case "commands":
		if !a.doneCommands {
			var list []any
			if act.Script != nil {
				list = make([]any, len(act.Script.Commands))
				for i, c := range act.Script.Commands {
					list[i] = map[string]any{
						"program": c.Program, "name": c.Name, "args": stringsToAny(c.Args),
						"assigns": stringsToAny(c.Assigns), "depth": int64(c.Depth), "via": c.Via,
					}
				}
			}
			if list == nil {
				list = []any{}
			}
			a.vCommands, a.doneCommands = list, true
		}
		return a.vCommands, true
	case "urls":
		if !a.doneURL {
			list := make([]any, len(act.URLs))
			for i, u := range act.URLs {
				list[i] = map[string]any{
					"raw": u.Raw, "scheme": u.Scheme, "host": u.Host, "port": u.Port,
					"path": u.Path, "method": u.Method, "field": u.Field,
				}
			}
			a.vURLs, a.doneURL = list, true
		}
		return a.vURLs, true
	}
	return nil, false
}

func stringsToAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
