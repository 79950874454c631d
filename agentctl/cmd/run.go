package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/agentctl/host"
	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/internal/textcut"
	"github.com/parapet-dev/parapet/observability"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// agentConnectTimeout bounds the wait for the sandboxed agent to connect.
const agentConnectTimeout = 30 * time.Second

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run one task headless (for CI): sandboxed agent, every tool call judged by the shield",
		ArgsUsage: `"TASK"`,
		Description: `Exit codes: 0 completed; 1 run failed (LLM or engine error, turn limit);
2 usage or configuration error; 3 the agent's sandbox could not be verified;
4 completed, but an action was blocked or denied and --fail-on-block was given.

With --output json, stdout carries one JSON object per line (see agentctl/README.md);
human progress always goes to stderr.`,
		Flags: append(host.Flags(),
			&cli.StringFlag{Name: "task-file", Usage: "read the task from `FILE` instead of the argument"},
			&cli.StringFlag{Name: "on-escalate", Usage: "what to do when the shield escalates: deny, allow or ask (default: ask on a terminal, deny otherwise)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "text", Usage: "text or json"},
			&cli.BoolFlag{Name: "fail-on-block", Usage: "exit 4 when an action was blocked or denied"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Minute, Usage: "give up on the task after this long"},
		),
		Action: runRun,
	}
}

func runRun(c *cli.Context) error {
	task, err := readTask(c)
	if err != nil {
		return err
	}
	cfg, err := host.ConfigFrom(c)
	if err != nil {
		return err
	}
	output := c.String("output")
	if output != "text" && output != "json" {
		return exitcode.Usagef("--output must be text or json, got %q", output)
	}
	approver, err := escalationApprover(c.String("on-escalate"), os.Stdin, c.App.ErrWriter)
	if err != nil {
		return err
	}
	level := cfg.LogLevel
	if !c.IsSet("log-level") {
		level = "warn" // progress lines are the human output; engine logs only when something is wrong
	}
	stderr := c.App.ErrWriter
	log := observability.TextLogger(stderr, level)
	em := &emitter{json: output == "json", stdout: c.App.Writer, stderr: stderr, calls: map[string]string{}}

	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, c.Duration("timeout"))
	defer cancel()

	em.progress("parapet: workspace %s, shield %s, provider %s", cfg.Workspace, shieldName(cfg), cfg.Provider)
	h, err := host.Start(ctx, cfg, approver, log, stderr)
	if err != nil {
		return err
	}
	defer h.Stop()

	waitCtx, waitCancel := context.WithTimeout(ctx, agentConnectTimeout)
	st, err := h.WaitAgent(waitCtx)
	waitCancel()
	var sbErr *engine.SandboxError
	switch {
	case errors.As(err, &sbErr):
		em.sandbox(sbErr.Status, sbErr.Report, h.Executor())
		return exitcode.Errorf(exitcode.Sandbox, "%v", err)
	case err != nil:
		em.errorEvent("AGENT_UNAVAILABLE", err.Error())
		return exitcode.Errorf(exitcode.Failed, "the agent did not start: %v", err)
	}
	em.sandbox(st.SandboxStatus, st.SandboxJSON, h.Executor())

	turn, err := h.Engine().Submit(ctx, engine.Message{Content: task, Source: "run"})
	if err != nil {
		em.errorEvent("SUBMIT_FAILED", err.Error())
		return exitcode.Errorf(exitcode.Failed, "%v", err)
	}
	completed := false
	for ev := range turn.Events {
		em.event(ev)
		switch ev.GetEventType() {
		case pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE:
			completed = true
		case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR:
			return exitcode.Errorf(exitcode.Failed, "run failed: %s: %s", ev.GetPipelineError().GetCode(), ev.GetPipelineError().GetMessage())
		}
	}
	if !completed {
		if ctx.Err() != nil {
			return exitcode.Errorf(exitcode.Failed, "run stopped: %v", context.Cause(ctx))
		}
		return exitcode.Errorf(exitcode.Failed, "the run ended without an answer")
	}
	if em.blocked > 0 && c.Bool("fail-on-block") {
		return exitcode.Errorf(exitcode.Blocked, "%d action(s) blocked or denied", em.blocked)
	}
	return nil
}

func readTask(c *cli.Context) (string, error) {
	arg, file := strings.Join(c.Args().Slice(), " "), c.String("task-file")
	switch {
	case arg != "" && file != "":
		return "", exitcode.Usagef("give the task as an argument or with --task-file, not both")
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", exitcode.Usagef("--task-file: %v", err)
		}
		arg = string(b)
	}
	if strings.TrimSpace(arg) == "" {
		return "", exitcode.Usagef(`no task: agentctl run [flags] "TASK" (or --task-file FILE)`)
	}
	return arg, nil
}

func shieldName(cfg host.Config) string {
	if cfg.ShieldAddr != "" {
		return "shieldd at " + cfg.ShieldAddr
	}
	p := cfg.PolicyRef
	if p == "" {
		p = "default"
	}
	return "in-process (policy " + p + ")"
}

// escalationApprover maps --on-escalate to an Approver.
func escalationApprover(mode string, in *os.File, prompt io.Writer) (engine.Approver, error) {
	interactive := isTerminal(in)
	if mode == "" {
		mode = "deny"
		if interactive {
			mode = "ask"
		}
	}
	switch mode {
	case "deny":
		return engine.FixedApprover{}, nil
	case "allow":
		return engine.FixedApprover{Allow: true}, nil
	case "ask":
		if !interactive {
			return nil, exitcode.Usagef("--on-escalate ask needs a terminal on stdin")
		}
		return &terminalApprover{in: bufio.NewReader(in), out: prompt}, nil
	}
	return nil, exitcode.Usagef("--on-escalate must be deny, allow or ask, got %q", mode)
}

// isTerminal asks the kernel: a character device such as /dev/null is not a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// terminalApprover asks on the terminal, one question at a time.
type terminalApprover struct {
	mu  sync.Mutex
	in  *bufio.Reader
	out io.Writer
}

func (t *terminalApprover) Approve(ctx context.Context, req engine.ApprovalRequest) engine.ApprovalResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.out, "\n? The shield escalated %s %s\n  %s\n  Allow it? [y/N] ", req.ToolName, textcut.Truncate(req.ArgumentsJSON, 300), req.Verdict.GetReasoning())
	answer := make(chan string, 1)
	go func() {
		line, _ := t.in.ReadString('\n')
		answer <- strings.TrimSpace(strings.ToLower(line))
	}()
	select {
	case a := <-answer:
		if a == "y" || a == "yes" {
			return engine.ApprovalResult{Approved: true, Outcome: pb.OutcomeApproved, By: "cli"}
		}
		return engine.ApprovalResult{Outcome: pb.OutcomeDenied, By: "cli"}
	case <-ctx.Done():
		// The deadline passed, the turn ended or another client answered
		// first; the engine's APPROVAL_RESOLVED event says which.
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			fmt.Fprintln(t.out, "(no answer in time: denied)")
		} else {
			fmt.Fprintln(t.out, "(the question was closed)")
		}
		return engine.ApprovalResult{Outcome: pb.OutcomeTimeout, By: "cli"}
	}
}

// emitter prints run events: JSON lines on stdout, or human progress on
// stderr with the final answer on stdout.
type emitter struct {
	json    bool
	stdout  io.Writer
	stderr  io.Writer
	calls   map[string]string // call id → tool name
	blocked int
	inText  bool
}

func (e *emitter) line(v map[string]any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"type":"error","code":"ENCODE","message":"could not encode an event"}`)
	}
	fmt.Fprintf(e.stdout, "%s\n", b)
}

func (e *emitter) progress(format string, args ...any) {
	if e.inText {
		fmt.Fprintln(e.stderr)
		e.inText = false
	}
	fmt.Fprintf(e.stderr, format+"\n", args...)
}

// sandbox reports the agent's sandbox and, next to it, the confined
// executor that runs the allowed tool calls.
func (e *emitter) sandbox(status, report string, x host.ExecutorSetup) {
	if e.json {
		var rep, xrep any
		if json.Unmarshal([]byte(report), &rep) != nil {
			rep = nil
		}
		if json.Unmarshal([]byte(x.ReportJSON), &xrep) != nil {
			xrep = nil
		}
		e.line(map[string]any{"type": "sandbox", "status": status, "report": rep,
			"executor": map[string]any{"status": x.Status, "report": xrep}})
		return
	}
	e.progress("sandbox: %s; executor: %s", status, x.Status)
}

func (e *emitter) errorEvent(code, msg string) {
	if e.json {
		e.line(map[string]any{"type": "error", "code": code, "message": msg})
		return
	}
	e.progress("error: %s: %s", code, msg)
}

func (e *emitter) event(ev *pb.PipelineEvent) {
	switch ev.GetEventType() {
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_LLM_TOKEN:
		if e.json {
			e.line(map[string]any{"type": "token", "text": ev.GetLlmToken().GetText()})
			return
		}
		fmt.Fprint(e.stderr, ev.GetLlmToken().GetText())
		e.inText = true
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTIONS_PLANNED:
		for _, a := range ev.GetActionsPlanned().GetActions() {
			tool := a.GetPayload()["tool_name"]
			e.calls[a.GetRequestId()] = tool
			if e.json {
				var args any
				if json.Unmarshal([]byte(a.GetPayloadJson()), &args) != nil {
					args = a.GetPayloadJson() // not JSON: show it as the agent sent it
				}
				e.line(map[string]any{"type": "tool_call", "call_id": a.GetRequestId(), "tool": tool, "arguments": args})
			} else {
				e.progress("→ %s%s %s", subAgentLabel(a.GetRequestId()), tool, textcut.Truncate(a.GetPayloadJson(), 200))
			}
		}
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_SHIELD_VERDICT:
		sv := ev.GetShieldVerdict()
		v := sv.GetVerdict()
		decision := v.GetDecision().Label()
		if v.GetDecision().Effective() == pb.VerdictDecision_VERDICT_DECISION_BLOCK {
			e.blocked++
		}
		if e.json {
			e.line(map[string]any{"type": "verdict", "call_id": sv.GetCallId(), "decision": decision, "tier": v.GetTier(),
				"rule_ids": nonNil(v.GetRuleIds()), "reason": v.GetReasoning(), "action_hash": v.GetActionHash(),
				"confinement": confinementJSON(v.GetConfinement())})
			return
		}
		e.progress("  shield: %s (tier %d%s) %s", decision, v.GetTier(), rulesSuffix(v.GetRuleIds()), textcut.Truncate(v.GetReasoning(), 300))
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_NEEDED:
		a := ev.GetApprovalNeeded()
		if e.json {
			e.line(map[string]any{"type": "approval", "state": "pending", "approval_id": a.GetApprovalId(), "call_id": a.GetCallId(),
				"tool": a.GetToolName(), "timeout_at": a.GetTimeoutAt()})
		}
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_RESOLVED:
		a := ev.GetApprovalResolved()
		if !a.GetApproved() {
			e.blocked++
		}
		if e.json {
			e.line(map[string]any{"type": "approval", "state": "resolved", "approval_id": a.GetApprovalId(),
				"approved": a.GetApproved(), "outcome": a.GetOutcome(), "by": a.GetResolvedBy()})
			return
		}
		e.progress("  escalation %s by %s", a.GetOutcome(), a.GetResolvedBy())
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_OTR_BLOCKED:
		e.blocked++
		if e.json {
			e.line(map[string]any{"type": "verdict", "call_id": ev.GetOtrBlocked().GetCallId(), "decision": pb.VerdictDecision_VERDICT_DECISION_BLOCK.Label(), "tier": -1,
				"rule_ids": []string{"engine.otr"}, "reason": ev.GetOtrBlocked().GetReason()})
		}
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_COMPLETED:
		ac := ev.GetActionCompleted()
		r := ac.GetResult()
		if e.json {
			e.line(map[string]any{"type": "tool_result", "call_id": ac.GetCallId(), "tool": ac.GetToolName(),
				"is_error": !r.GetSuccess(), "output": r.GetOutput()})
			return
		}
		mark := "ok"
		if !r.GetSuccess() {
			mark = "error"
		}
		out := textcut.Truncate(strings.TrimSpace(r.GetOutput()), 300)
		e.progress("  result (%s): %s", mark, strings.ReplaceAll(out, "\n", "\n    "))
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE:
		rc := ev.GetResponseComplete()
		u := rc.GetUsage()
		if e.json {
			e.line(map[string]any{"type": "complete", "text": rc.GetContent(), "usage": map[string]any{
				"input_tokens": u.GetInputTokens(), "output_tokens": u.GetOutputTokens(),
				"cache_read_tokens": u.GetCacheReadTokens(), "cache_write_tokens": u.GetCacheWriteTokens()}})
			return
		}
		e.progress("done (%d input, %d output tokens)", u.GetInputTokens(), u.GetOutputTokens())
		fmt.Fprintln(e.stdout, rc.GetContent())
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_SUB_AGENT:
		sa := ev.GetSubAgent()
		if e.json {
			e.line(map[string]any{"type": "sub_agent", "name": sa.GetName(), "state": sa.GetState(), "detail": sa.GetDetail()})
			return
		}
		e.progress("  sub-agent %s %s: %s", sa.GetName(), sa.GetState(), textcut.Truncate(sa.GetDetail(), 300))
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR:
		pe := ev.GetPipelineError()
		e.errorEvent(pe.GetCode(), pe.GetMessage())
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func rulesSuffix(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ", " + strings.Join(ids, ", ")
}

// confinementJSON is a verdict's grant as the run's JSON shows it: the
// write scope, the TCP ports (empty: no network) and extra read paths.
// An unset grant is the default confinement.
func confinementJSON(c *pb.Confinement) map[string]any {
	write := "workspace"
	if c.GetWrite() == pb.ConfinementWrite_CONFINEMENT_WRITE_TEMP_ONLY {
		write = "temp"
	}
	ports := c.GetConnectPorts()
	if ports == nil {
		ports = []uint32{}
	}
	return map[string]any{"write": write, "network_ports": ports, "read_paths": nonNil(c.GetReadPaths())}
}

// subAgentLabel marks a sub-agent's tool call in run's text output: the
// engine gives its calls the id sub:<name>:<id>.
func subAgentLabel(callID string) string {
	rest, ok := strings.CutPrefix(callID, "sub:")
	if !ok {
		return ""
	}
	name, _, ok := strings.Cut(rest, ":")
	if !ok {
		return ""
	}
	return "[" + name + "] "
}
