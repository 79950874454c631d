package engine

// Sub-agents (SUBAGENTS.md): the spawn_agent tool starts a sandboxed
// sub-agent process with its own single-use token. The process registers
// with SubAgentService, proposes its tool calls through the same gate as
// the agent's (shield, approvals, hash re-check), polls before each LLM
// call and reports its result, which becomes spawn_agent's result.

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parapet-dev/parapet/engine/tools"
	"github.com/parapet-dev/parapet/internal/textcut"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// Defaults of the sub-agent limits in Config.
const (
	DefaultMaxSubAgents        = 3
	DefaultSubAgentMaxLLMCalls = 20
	DefaultSubAgentTimeout     = 10 * time.Minute
)

const (
	// subAgentGrace is how long a sub-agent that was told to stop, or that
	// reported its result, has to exit on its own before it is killed.
	subAgentGrace = 5 * time.Second
	// maxSubAgentCallsInFlight bounds one sub-agent's concurrent tool calls.
	maxSubAgentCallsInFlight = 8
	// maxSubAgentResult bounds the result handed back to the agent.
	maxSubAgentResult = 64 << 10
	// maxSubAgentCallID bounds a sub-agent's call ids.
	maxSubAgentCallID = 128
	// maxSubAgentError bounds the error text of SubAgentFailed kept for events.
	maxSubAgentError = 4 << 10
)

// SubAgentSpec is one sub-agent process for the host to start.
type SubAgentSpec struct {
	Name string
	// Token goes to the process on an inherited pipe (never an
	// environment, never disk). It is accepted by RegisterSubAgent once,
	// and only over Conn.
	Token string
	// Conn is the process's end of its connection to the engine, a
	// connected unix socket: the spawner passes it to the process as an
	// inherited descriptor. The engine closes its copy when the spawner
	// returns. SubAgentService is served nowhere else.
	Conn *os.File
	// LLM is what the process prepares before it sandboxes itself (DNS and
	// files are gone after); RegisterSubAgent answers the same values.
	LLM SubAgentLLM
}

// SubAgentLLM is a sub-agent's LLM configuration. The API key stays in the
// environment, named by APIKeyEnv.
type SubAgentLLM struct {
	Provider, Model, BaseURL, APIKeyEnv string
	// ScriptPath is the scripted provider's reply file.
	ScriptPath string
}

// SubAgentSpawner starts a sub-agent process. wait blocks until the process
// has exited and is called exactly once; kill ends it and may be called at
// any time, also after it exited. ctx ends once the engine is done with
// the process.
type SubAgentSpawner func(ctx context.Context, spec SubAgentSpec) (wait func() error, kill func(), err error)

// subAgentName is what spawn_agent accepts as a name: it goes into call ids
// ("sub:<name>:<id>") and events.
var subAgentName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// subCallPrefix starts the call id of every sub-agent tool call.
const subCallPrefix = "sub:"

// subAgent is one spawned sub-agent. Fields below mu in subAgentTable are
// guarded by it.
type subAgent struct {
	name, task string
	tools      []string
	token      string
	llm        SubAgentLLM
	maxCalls   int
	// turn is where its tool calls run: the parent's session and message
	// (so clients see them, and OTR rules apply), with a context of its own
	// that ends with the parent's turn or with the sub-agent.
	turn *turn
	// calls counts its tool calls in flight; finish waits for them.
	calls sync.WaitGroup
	// outcome receives the first result reported (Complete, Failed, or a
	// refused registration).
	outcome chan subAgentOutcome
	// stopCh is closed when the engine tells it to stop (stopReason says why).
	stopCh chan struct{}

	// guarded by subAgentTable.mu
	tokenLive  bool // false once used up: reported, or finished
	registered bool
	reported   bool
	stopReason string
	polls      int
	active     int
}

type subAgentOutcome struct {
	ok     bool
	result string // the answer, or why it failed
	usage  *pb.TokenUsage
}

// subAgentTable holds the running sub-agents. Its zero value is ready.
type subAgentTable struct {
	mu      sync.Mutex
	running []*subAgent
}

// byTokenLocked finds the sub-agent whose live token is tok, comparing
// against every one in constant time.
func (tb *subAgentTable) byTokenLocked(tok string) *subAgent {
	var found *subAgent
	for _, s := range tb.running {
		if s.tokenLive && tok != "" && subtle.ConstantTimeCompare([]byte(s.token), []byte(tok)) == 1 {
			found = s
		}
	}
	return found
}

// add reserves a slot for s, or says why not.
func (tb *subAgentTable) add(s *subAgent, limit int) error {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if len(tb.running) >= limit {
		return fmt.Errorf("too many sub-agents running (limit %d): wait for one to finish", limit)
	}
	for _, o := range tb.running {
		if o.name == s.name {
			return fmt.Errorf("a sub-agent named %q is already running: pick another name", s.name)
		}
	}
	s.tokenLive = true
	tb.running = append(tb.running, s)
	return nil
}

func (tb *subAgentTable) remove(s *subAgent) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	s.tokenLive = false
	tb.running = slices.DeleteFunc(tb.running, func(o *subAgent) bool { return o == s })
}

func (tb *subAgentTable) count() int {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return len(tb.running)
}

// ownsTurn reports whether t is a sub-agent's turn.
func (tb *subAgentTable) ownsTurn(t *turn) bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, s := range tb.running {
		if s.turn == t {
			return true
		}
	}
	return false
}

// stopLocked tells s to stop: polls answer cancelled, new tool calls are
// refused, and the spawn_agent call waiting for it kills it after a grace
// period.
func (s *subAgent) stopLocked(why string) {
	if s.stopReason != "" {
		return
	}
	s.stopReason = why
	close(s.stopCh)
}

// reportLocked records s's first result; later ones are refused.
func (s *subAgent) reportLocked(o subAgentOutcome) bool {
	if s.reported {
		return false
	}
	s.reported = true
	s.tokenLive = false // every later call with the token is Unauthenticated
	s.outcome <- o
	return true
}

func (e *Engine) maxSubAgents() int {
	if e.cfg.MaxSubAgents > 0 {
		return e.cfg.MaxSubAgents
	}
	return DefaultMaxSubAgents
}

func (e *Engine) subAgentMaxLLMCalls() int {
	if e.cfg.SubAgentMaxLLMCalls > 0 {
		return e.cfg.SubAgentMaxLLMCalls
	}
	return DefaultSubAgentMaxLLMCalls
}

func (e *Engine) subAgentTimeout() time.Duration {
	if e.cfg.SubAgentTimeout > 0 {
		return e.cfg.SubAgentTimeout
	}
	return DefaultSubAgentTimeout
}

// SubAgentsRunning is how many sub-agents are running now.
func (e *Engine) SubAgentsRunning() int { return e.subAgents.count() }

// spawnArgs are spawn_agent's arguments, already validated against the
// tool's schema by the gate.
type spawnArgs struct {
	Name  string   `json:"name"`
	Task  string   `json:"task"`
	Tools []string `json:"tools"`
}

// runSpawnAgent is spawn_agent: start the sub-agent, wait for its result
// (or its failure, exit, timeout or the parent turn's end) and return it
// as the tool's result. The shield has already allowed the call.
func (e *Engine) runSpawnAgent(parent *turn, argsJSON []byte) tools.Result {
	start := time.Now()
	out, err := e.superviseSubAgent(parent, argsJSON)
	res := tools.Result{Output: out, Duration: time.Since(start)}
	if err != nil {
		res.Output, res.IsError = err.Error(), true
	}
	return res
}

func (e *Engine) superviseSubAgent(parent *turn, argsJSON []byte) (string, error) {
	if e.subAgents.ownsTurn(parent) {
		return "", fmt.Errorf("spawn_agent: a sub-agent cannot start sub-agents")
	}
	if e.cfg.SpawnSubAgent == nil || e.cfg.SubAgentLLM == nil {
		return "", fmt.Errorf("spawn_agent: sub-agents are not enabled on this engine")
	}
	var a spawnArgs
	if err := json.Unmarshal(argsJSON, &a); err != nil {
		return "", fmt.Errorf("spawn_agent: %v", err)
	}
	if !subAgentName.MatchString(a.Name) {
		return "", fmt.Errorf("spawn_agent: name %q must be 1-32 lower-case letters, digits, '-' or '_', starting with a letter", a.Name)
	}
	toolNames, err := e.subAgentTools(a.Tools)
	if err != nil {
		return "", fmt.Errorf("spawn_agent: %v", err)
	}
	llmCfg, err := e.cfg.SubAgentLLM(a.Name)
	if err != nil {
		return "", fmt.Errorf("spawn_agent: sub-agent %q: %v", a.Name, err)
	}
	s := &subAgent{name: a.Name, task: a.Task, tools: toolNames, token: newToken(), llm: llmCfg,
		maxCalls: e.subAgentMaxLLMCalls(), outcome: make(chan subAgentOutcome, 1), stopCh: make(chan struct{})}
	s.turn = &turn{sessionID: parent.sessionID, messageID: parent.messageID, mode: parent.mode, content: a.Task, scope: parent.scope}
	s.turn.ctx, s.turn.cancel = context.WithCancel(parent.ctx)
	defer s.turn.cancel()
	if err := e.subAgents.add(s, e.maxSubAgents()); err != nil {
		return "", fmt.Errorf("spawn_agent: %v", err)
	}
	defer e.subAgents.remove(s)
	publish := func(state, detail string) {
		e.bus.publish(&pb.PipelineEvent{SessionId: parent.sessionID, MessageId: parent.messageID,
			EventType: pb.PipelineEventType_PIPELINE_EVENT_TYPE_SUB_AGENT,
			SubAgent:  &pb.SubAgentEvent{Name: s.name, State: state, Detail: detail}})
	}

	procCtx, procCancel := context.WithCancel(context.WithoutCancel(parent.ctx))
	defer procCancel()
	link, err := e.linkSubAgent(s)
	if err != nil {
		e.log.Error("could not connect a sub-agent", "name", s.name, "error", err)
		publish("failed", "could not start: "+err.Error())
		return "", fmt.Errorf("spawn_agent: could not start sub-agent %q: %v", s.name, err)
	}
	defer link.close()
	wait, kill, err := e.cfg.SpawnSubAgent(procCtx, SubAgentSpec{Name: s.name, Token: s.token, Conn: link.child, LLM: s.llm})
	link.child.Close() // the process has its own copy, or none
	if err != nil {
		e.log.Error("could not start a sub-agent", "name", s.name, "error", err)
		publish("failed", "could not start: "+err.Error())
		return "", fmt.Errorf("spawn_agent: could not start sub-agent %q: %v", s.name, err)
	}
	e.log.Info("sub-agent started", "name", s.name, "session", parent.sessionID)
	exited := make(chan error, 1)
	go func() { exited <- wait() }()
	processGone := false
	awaitExit := func(d time.Duration) {
		if processGone {
			return
		}
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-exited:
			processGone = true
		case <-timer.C:
		}
	}

	timeout := time.NewTimer(e.subAgentTimeout())
	defer timeout.Stop()
	var out subAgentOutcome
	stop := func(why string) {
		e.subAgents.mu.Lock()
		s.stopLocked(why)
		e.subAgents.mu.Unlock()
	}
	select {
	case out = <-s.outcome:
	case err := <-exited:
		processGone = true
		select {
		case out = <-s.outcome: // reported, then exited before we looked
		default:
			out = subAgentOutcome{result: fmt.Sprintf("the sub-agent exited without reporting a result (%s)", exitText(err))}
		}
	case <-parent.ctx.Done():
		stop("the parent's turn was cancelled")
	case <-timeout.C:
		stop(fmt.Sprintf("it ran longer than %s", e.subAgentTimeout()))
	case <-s.stopCh:
	}

	e.subAgents.mu.Lock()
	why := s.stopReason
	e.subAgents.mu.Unlock()
	if why != "" {
		// Told to stop: its tool calls end now (pending approvals are
		// denied, running tools cancelled); it has a grace period to report
		// and exit before it is killed. Whatever it reports, it was stopped.
		s.turn.cancel()
		awaitExit(subAgentGrace)
		out = subAgentOutcome{result: "stopped: " + why}
	}

	// The token dies, in-flight calls end, and the process goes: on its
	// own after reporting, else killed.
	e.subAgents.mu.Lock()
	s.tokenLive = false
	e.subAgents.mu.Unlock()
	s.turn.cancel()
	s.calls.Wait()
	if why == "" {
		awaitExit(subAgentGrace)
	}
	if !processGone {
		e.log.Warn("sub-agent did not exit; killing it", "name", s.name)
		kill()
		<-exited
	}
	kill() // idempotent; releases anything the spawner still holds

	if !out.ok {
		e.log.Info("sub-agent failed", "name", s.name, "error", out.result)
		publish("failed", textcut.Truncate(out.result, maxSubAgentError))
		return "", fmt.Errorf("sub-agent %s failed: %s", s.name, out.result)
	}
	u := out.usage
	publish("completed", fmt.Sprintf("%d input, %d output tokens", u.GetInputTokens(), u.GetOutputTokens()))
	e.log.Info("sub-agent completed", "name", s.name)
	return textcut.Truncate(out.result, maxSubAgentResult), nil
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// subAgentTools resolves spawn_agent's tools argument: the executable
// tools by default, never spawn_agent or load_tools.
func (e *Engine) subAgentTools(asked []string) ([]string, error) {
	all, err := e.cfg.Tools.Defs()
	if err != nil {
		return nil, err
	}
	var allowed []string
	for _, d := range all {
		if d.Name != tools.SpawnAgentName && d.Name != tools.LoadToolsName {
			allowed = append(allowed, d.Name)
		}
	}
	if len(asked) == 0 {
		return allowed, nil
	}
	var out []string
	for _, name := range asked {
		if !slices.Contains(allowed, name) {
			return nil, fmt.Errorf("a sub-agent cannot have tool %q (it may have: %s)", name, strings.Join(allowed, ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// subAgentSystemPrompt tells the sub-agent's model how it works.
func subAgentSystemPrompt(name string) string {
	return fmt.Sprintf(`You are %s, a sub-agent started by a coding agent to do one task in its project workspace.
You do not see the conversation that led to the task: the task says everything you are given.
Every tool call is checked by the Parapet security gate before it runs. A call that is blocked or denied
returns an error that says why: do not try to get around it; say in your answer what you could not do.
Your final message is returned to the agent that started you: make it a complete, concise answer to the task.`, name)
}

// subAgentService serves SubAgentService on one sub-agent's connection
// (subagentconn.go). Every call names its sub-agent by token, and the
// token must be the one of the sub-agent the connection was made for; a
// missing, wrong, used-up or foreign token is Unauthenticated with one
// message that reveals nothing.
type subAgentService struct {
	pb.UnimplementedSubAgentServiceServer
	e     *Engine
	bound *subAgent
}

var errSubAgentToken = status.Error(codes.Unauthenticated, "sub-agent token missing, wrong or no longer valid")

// byTokenLocked finds the live sub-agent holding token, if it is the one
// this connection was made for: a token stolen from one sub-agent is
// worthless from anywhere but that sub-agent's own connection.
func (s *subAgentService) byTokenLocked(token string) *subAgent {
	sa := s.e.subAgents.byTokenLocked(token)
	if sa == nil || sa != s.bound {
		return nil
	}
	return sa
}

// lookup finds the registered sub-agent holding token, with the table
// locked; the caller unlocks.
func (s *subAgentService) lookupLocked(token string) (*subAgent, error) {
	sa := s.byTokenLocked(token)
	if sa == nil {
		return nil, errSubAgentToken
	}
	if !sa.registered {
		return nil, status.Error(codes.FailedPrecondition, "call RegisterSubAgent first")
	}
	return sa, nil
}

func (s *subAgentService) RegisterSubAgent(_ context.Context, req *pb.SubAgentRegisterRequest) (*pb.SubAgentRegisterResponse, error) {
	e := s.e
	e.subAgents.mu.Lock()
	sa := s.byTokenLocked(req.GetToken())
	if sa == nil || sa.registered {
		e.subAgents.mu.Unlock()
		e.log.Warn("sub-agent registration refused: missing, wrong or used token")
		return nil, errSubAgentToken
	}
	sa.registered = true // single use, whatever happens next
	if sa.stopReason != "" {
		why := sa.stopReason
		e.subAgents.mu.Unlock()
		return nil, status.Errorf(codes.FailedPrecondition, "the sub-agent was stopped: %s", why)
	}
	var rep sandboxReport
	raw := req.GetSandboxResultJson()
	if err := json.Unmarshal([]byte(raw), &rep); err != nil || rep.Status == "" {
		rep.Status = "unknown"
	}
	switch {
	case rep.Status == "sandboxed":
	case rep.Status == "unavailable" && e.cfg.AllowUnsandboxed:
		e.log.Warn("SUB-AGENT IS NOT SANDBOXED: this kernel offers no Landlock; running anyway because unsandboxed agents are allowed", "name", sa.name)
	default:
		sa.reportLocked(subAgentOutcome{result: fmt.Sprintf("sandbox not verified (status %q); refusing to run it", rep.Status)})
		e.subAgents.mu.Unlock()
		e.log.Error("sub-agent refused: sandbox not verified", "name", sa.name, "status", rep.Status, "report", raw)
		return nil, status.Errorf(codes.FailedPrecondition, "sandbox not verified: %s", rep.Status)
	}
	resp := &pb.SubAgentRegisterResponse{
		Name: sa.name, Task: sa.task, SystemPrompt: subAgentSystemPrompt(sa.name), MaxLlmCalls: int32(sa.maxCalls),
		Provider: sa.llm.Provider, Model: sa.llm.Model, BaseUrl: sa.llm.BaseURL, ApiKeyEnv: sa.llm.APIKeyEnv,
		ScriptPath: sa.llm.ScriptPath,
	}
	for _, name := range sa.tools {
		if d, ok := e.cfg.Tools.Lookup(name); ok {
			resp.Tools = append(resp.Tools, &pb.SubAgentToolDef{Name: d.Name, Description: d.Description, ParametersJson: string(d.Schema)})
		}
	}
	parent := sa.turn
	e.subAgents.mu.Unlock()
	e.log.Info("sub-agent registered", "name", sa.name, "sandbox", rep.Status)
	e.bus.publish(&pb.PipelineEvent{SessionId: parent.sessionID, MessageId: parent.messageID,
		EventType: pb.PipelineEventType_PIPELINE_EVENT_TYPE_SUB_AGENT,
		SubAgent: &pb.SubAgentEvent{Name: sa.name, State: "spawned",
			Detail: fmt.Sprintf("sandbox %s; tools: %s; at most %d LLM calls", rep.Status, strings.Join(sa.tools, ", "), sa.maxCalls)}})
	return resp, nil
}

func (s *subAgentService) SubAgentExecuteTool(_ context.Context, req *pb.SubAgentToolRequest) (*pb.SubAgentToolResponse, error) {
	e := s.e
	e.subAgents.mu.Lock()
	sa, err := s.lookupLocked(req.GetToken())
	if err != nil {
		e.subAgents.mu.Unlock()
		return nil, err
	}
	id := req.GetCallId()
	if id == "" || len(id) > maxSubAgentCallID || strings.IndexFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		e.subAgents.mu.Unlock()
		return nil, status.Errorf(codes.InvalidArgument, "call_id must be 1-%d printable bytes", maxSubAgentCallID)
	}
	refuse := func(msg string) (*pb.SubAgentToolResponse, error) {
		e.subAgents.mu.Unlock()
		return &pb.SubAgentToolResponse{Content: msg, IsError: true}, nil
	}
	switch {
	case sa.stopReason != "":
		return refuse("refused: this sub-agent was told to stop: " + sa.stopReason)
	case !slices.Contains(sa.tools, req.GetToolName()):
		return refuse(fmt.Sprintf("refused: %q is not one of this sub-agent's tools (%s)", req.GetToolName(), strings.Join(sa.tools, ", ")))
	case sa.active >= maxSubAgentCallsInFlight:
		return refuse(fmt.Sprintf("refused: too many tool calls in flight (limit %d); wait for results first", maxSubAgentCallsInFlight))
	}
	sa.active++
	sa.calls.Add(1) // before finish can Wait: it sets tokenLive false under this lock first
	e.subAgents.mu.Unlock()
	defer func() {
		e.subAgents.mu.Lock()
		sa.active--
		e.subAgents.mu.Unlock()
		sa.calls.Done()
	}()
	content, isErr, _ := e.proposeIn(sa.turn, &pb.ToolCallProposed{
		SessionId: sa.turn.sessionID, MessageId: sa.turn.messageID, CallId: subCallPrefix + sa.name + ":" + id,
		ToolName: req.GetToolName(), ArgumentsJson: req.GetArgumentsJson(),
	})
	return &pb.SubAgentToolResponse{Content: content, IsError: isErr}, nil
}

func (s *subAgentService) SubAgentPollMessage(_ context.Context, req *pb.SubAgentPollRequest) (*pb.SubAgentPollResponse, error) {
	e := s.e
	e.subAgents.mu.Lock()
	defer e.subAgents.mu.Unlock()
	sa, err := s.lookupLocked(req.GetToken())
	if err != nil {
		return nil, err
	}
	if sa.stopReason == "" && sa.turn.ctx.Err() != nil {
		sa.stopLocked("the parent's turn ended")
	}
	if sa.stopReason == "" {
		// One poll precedes each LLM call: past the budget, it stops.
		sa.polls++
		if sa.polls > sa.maxCalls {
			sa.stopLocked(fmt.Sprintf("it reached its limit of %d LLM calls", sa.maxCalls))
		}
	}
	if sa.stopReason != "" {
		return &pb.SubAgentPollResponse{Cancelled: true, Message: sa.stopReason}, nil
	}
	return &pb.SubAgentPollResponse{}, nil
}

func (s *subAgentService) SubAgentComplete(_ context.Context, req *pb.SubAgentCompleteRequest) (*pb.SubAgentCompleteResponse, error) {
	e := s.e
	e.subAgents.mu.Lock()
	defer e.subAgents.mu.Unlock()
	sa, err := s.lookupLocked(req.GetToken())
	if err != nil {
		return nil, err
	}
	sa.reportLocked(subAgentOutcome{ok: true, result: req.GetResult(), usage: req.GetUsage()})
	return &pb.SubAgentCompleteResponse{}, nil
}

func (s *subAgentService) SubAgentFailed(_ context.Context, req *pb.SubAgentFailedRequest) (*pb.SubAgentFailedResponse, error) {
	e := s.e
	e.subAgents.mu.Lock()
	defer e.subAgents.mu.Unlock()
	sa, err := s.lookupLocked(req.GetToken())
	if err != nil {
		return nil, err
	}
	msg := strings.TrimSpace(req.GetError())
	if msg == "" {
		msg = "no reason given"
	}
	sa.reportLocked(subAgentOutcome{result: textcut.Truncate(msg, maxSubAgentError)})
	return &pb.SubAgentFailedResponse{}, nil
}
