package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// busyWait bounds how long chat waits for the agent to finish a turn the
// user cancelled before sending the next message.
const busyWait = 30 * time.Second

func chatCommand() *cli.Command {
	return &cli.Command{
		Name:  "chat",
		Usage: "talk to the running engine's agent: streamed answers, tool calls, verdicts and approvals",
		Description: `Each line you type is one message; the session carries over from line to
line (the first message creates it and its id is printed). Tool calls, the
shield's verdicts and their results are shown as they happen. When the
shield escalates an action, chat shows the action, the shield's reasons and
the deadline and asks "approve? [y/N]": y or yes approves; n, an empty
line or the end of input denies. If another client answered first, chat
says so.

/quit or end of input (Ctrl-D) leaves. Ctrl-C during a turn cancels it (the
engine stops the turn when the stream closes); a second Ctrl-C, or Ctrl-C
at the prompt, leaves.

Stdin need not be a terminal: a script can pipe messages, one per line,
and an approval then takes the next line. The same holds when typing: a
line typed while a turn runs waits, and answers an approval prompt if one
appears (anything but y denies).

Exit codes: 0 normal end; 1 a turn failed or the engine is unreachable;
5 no session with the --session id; 130 left with Ctrl-C during a turn.

Examples:
   agentctl chat
   agentctl chat --session sess_0123456789abcdef
   printf 'list the files\ny\n' | agentctl chat --workspace ~/project`,
		Flags:  clientFlags(sessionFlag("continue session `ID` (default: a new one)"), otrFlag()),
		Action: runChat,
	}
}

// chat is one interactive session.
type chat struct {
	c        *cli.Context
	out      io.Writer
	lines    <-chan string // stdin, line by line; closed at end of input
	eof      bool
	sigint   <-chan os.Signal
	terminal bool
	session  string
	mode     pb.SessionMode
	failed   bool
	// afterCancel: the last turn was cancelled and the agent may still be
	// finishing it, so AGENT_BUSY is worth waiting out.
	afterCancel bool
}

// errLeave ends the chat from inside a turn (a second Ctrl-C).
var errLeave = errors.New("leave")

func runChat(c *cli.Context) error {
	in := c.App.Reader
	if in == nil {
		in = os.Stdin
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)

	ch := &chat{c: c, out: &termWriter{w: c.App.Writer}, lines: readLines(in), sigint: sigs,
		session: c.String("session"), mode: sessionMode(c)}
	if f, ok := in.(*os.File); ok {
		ch.terminal = isTerminal(f)
	}
	// Fail now, not after the first message is typed, when there is no engine.
	var st *pb.StatusResponse
	var addr string
	err := callFoundEngine(c, "chat", func(ctx context.Context, conn *engineConn) (err error) {
		addr = conn.addr
		st, err = conn.GetStatus(ctx, &pb.StatusRequest{})
		return err
	})
	if err != nil {
		return err
	}
	if ch.terminal {
		fmt.Fprintf(ch.out, "parapet chat: engine %s, agent %s, shield %s\n/quit or Ctrl-D leaves; Ctrl-C cancels a turn.\n",
			addr, connectedWord(st.GetAgentConnected()), st.GetShieldMode())
		if ch.session != "" {
			fmt.Fprintf(ch.out, "session %s\n", ch.session)
		}
	}
	return ch.loop()
}

func connectedWord(ok bool) string {
	if ok {
		return "connected"
	}
	return "NOT connected (messages will fail until it is)"
}

func (ch *chat) loop() error {
	for {
		if ch.terminal {
			fmt.Fprint(ch.out, "you> ")
		}
		var line string
		select {
		case l, ok := <-ch.lines:
			if !ok {
				if ch.terminal {
					fmt.Fprintln(ch.out)
				}
				return ch.exit()
			}
			line = l
		case <-ch.sigint:
			fmt.Fprintln(ch.out)
			return ch.exit()
		}
		text := strings.TrimSpace(line)
		switch text {
		case "":
			continue
		case "/quit", "/exit":
			return ch.exit()
		}
		if err := ch.send(text); err != nil {
			if errors.Is(err, errLeave) {
				return exitcode.Errorf(exitcode.Interrupted, "")
			}
			return err
		}
	}
}

func (ch *chat) exit() error {
	if ch.failed {
		return exitcode.Errorf(exitcode.Failed, "") // the failures were printed as they happened
	}
	return nil
}

// send runs one message's turn, waiting out the end of a cancelled turn.
func (ch *chat) send(text string) error {
	deadline := time.Now().Add(busyWait)
	waiting := false
	for {
		busy, err := ch.turn(text)
		if err != nil || !busy {
			return err
		}
		if !ch.afterCancel || time.Now().After(deadline) {
			fmt.Fprintln(ch.out, "error: AGENT_BUSY: the agent is busy with another message; try again when it is done")
			ch.failed = true
			return nil
		}
		if !waiting {
			waiting = true
			fmt.Fprintln(ch.out, "(the agent is still finishing the cancelled turn; waiting)")
		}
		select {
		case <-time.After(300 * time.Millisecond):
		case <-ch.sigint:
			fmt.Fprintln(ch.out, "(message dropped)")
			return nil
		}
	}
}

type streamItem struct {
	ev  *pb.PipelineEvent
	err error
}

// pump receives the stream's events until it ends (the last item carries
// the error, io.EOF included).
func pump(ctx context.Context, stream pb.ClientService_SendMessageClient) <-chan streamItem {
	items := make(chan streamItem, 16)
	go func() {
		defer close(items)
		for {
			ev, err := stream.Recv()
			select {
			case items <- streamItem{ev, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return items
}

// turn sends text and follows its events to the end, answering approval
// prompts from the input. busy reports an AGENT_BUSY refusal, not printed.
// A non-nil error ends the chat.
func (ch *chat) turn(text string) (busy bool, err error) {
	conn, err := connectEngine(ch.c)
	if err != nil {
		return false, err
	}
	defer conn.close()
	ctx, cancel := context.WithCancel(ch.c.Context)
	defer cancel()
	stream, err := conn.SendMessage(asCLI(ctx), &pb.ClientMessageRequest{Content: text, SessionId: ch.session, Mode: ch.mode, Source: "cli"})
	if err != nil {
		return false, conn.callError("send", err)
	}
	items := pump(ctx, stream)
	p := &chatPrinter{em: &emitter{stdout: ch.out, stderr: ch.out, calls: map[string]string{}}}
	var prompts []*pb.ApprovalNeeded // prompts[0] is the one being asked
	shown := false
	cancelled := false
	first := true

	// ask shows the next waiting prompt; with no input left it is denied.
	ask := func() {
		for len(prompts) > 0 && !shown {
			p.endLine()
			fmt.Fprintf(ch.out, "%s\n  approve? [y/N] ", approvalPrompt(prompts[0], time.Now()))
			p.em.inText = true // the answer, or the next event, starts a new line
			shown = true
			if ch.eof {
				fmt.Fprint(ch.out, "(no more input: denied)")
				ch.answer(conn, prompts[0], false)
				prompts, shown = prompts[1:], false
			}
		}
	}

	for {
		var lines <-chan string
		if shown && !ch.eof {
			lines = ch.lines
		}
		select {
		case it, ok := <-items:
			if !ok { // the pump stopped on our cancellation
				p.endLine()
				fmt.Fprintln(ch.out, "(turn cancelled)")
				ch.afterCancel = true
				return false, nil
			}
			if it.err != nil {
				p.endLine()
				switch {
				case cancelled:
					fmt.Fprintln(ch.out, "(turn cancelled)")
					ch.afterCancel = true
				case errors.Is(it.err, io.EOF):
					fmt.Fprintln(ch.out, "error: the engine ended the turn without an answer")
					ch.failed = true
				default:
					fmt.Fprintf(ch.out, "error: %v\n", conn.callError("send", it.err))
					ch.failed = true
				}
				return false, nil
			}
			ev := it.ev
			if first {
				first = false
				if pe := ev.GetPipelineError(); ev.GetEventType() == pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR && pe.GetCode() == "AGENT_BUSY" {
					return true, nil
				}
			}
			if ch.session == "" && ev.GetSessionId() != "" {
				ch.session = ev.GetSessionId()
				p.endLine()
				fmt.Fprintf(ch.out, "session %s\n", ch.session)
			}
			switch ev.GetEventType() {
			case pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_NEEDED:
				prompts = append(prompts, ev.GetApprovalNeeded())
				ask()
				continue
			case pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_RESOLVED:
				for i, a := range prompts {
					if a.GetApprovalId() != ev.GetApprovalResolved().GetApprovalId() {
						continue
					}
					if i == 0 && shown {
						shown = false
						p.endLine()
						fmt.Fprintln(ch.out, "  (answered elsewhere, or the deadline passed)")
					}
					prompts = append(prompts[:i], prompts[i+1:]...)
					break
				}
			}
			p.event(ev)
			ask()
			switch ev.GetEventType() {
			case pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE:
				ch.afterCancel = false
				return false, nil
			case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR:
				if ev.GetPipelineError().GetCode() == "SESSION_NOT_FOUND" {
					return false, turnError(ev.GetPipelineError())
				}
				ch.failed = true
				return false, nil
			}
		case line, ok := <-lines:
			approved := false
			if !ok {
				ch.eof = true
				fmt.Fprint(ch.out, "(end of input: denied)")
			} else {
				a := strings.ToLower(strings.TrimSpace(line))
				approved = a == "y" || a == "yes"
				if ch.terminal {
					p.em.inText = false // the person's Enter ended the line
				}
			}
			ch.answer(conn, prompts[0], approved)
			prompts, shown = prompts[1:], false
			ask()
		case <-ch.sigint:
			if cancelled {
				p.endLine()
				return false, errLeave
			}
			cancelled = true
			cancel()
			p.endLine()
			fmt.Fprintln(ch.out, "(cancelling the turn; Ctrl-C again to quit)")
		}
	}
}

// answer resolves one approval with the engine; "not found" means another
// client (or the deadline) got there first.
func (ch *chat) answer(conn *engineConn, a *pb.ApprovalNeeded, approved bool) {
	err := resolveApproval(ch.c.Context, conn, a.GetApprovalId(), ch.session, approved)
	var ec cli.ExitCoder
	switch {
	case err == nil:
	case errors.As(err, &ec) && ec.ExitCode() == exitcode.NotFound:
		fmt.Fprintln(ch.out, "\n  someone else answered first (or the deadline passed)")
	default:
		fmt.Fprintf(ch.out, "\n  could not answer: %v\n", err)
	}
}

// chatPrinter shows a turn's events for a person: the emitter's text lines
// for tool calls, verdicts and results, streamed text inline.
type chatPrinter struct {
	em       *emitter
	streamed bool
}

func (p *chatPrinter) endLine() {
	if p.em.inText {
		fmt.Fprintln(p.em.stderr)
		p.em.inText = false
	}
}

func (p *chatPrinter) event(ev *pb.PipelineEvent) {
	switch ev.GetEventType() {
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_LLM_TOKEN:
		fmt.Fprint(p.em.stderr, ev.GetLlmToken().GetText())
		p.em.inText = true
		p.streamed = true
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE:
		p.endLine()
		if content := ev.GetResponseComplete().GetContent(); !p.streamed && content != "" {
			fmt.Fprintln(p.em.stdout, content)
		}
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_OTR_BLOCKED:
		ob := ev.GetOtrBlocked()
		p.em.progress("  off the record: %s not run: %s", ob.GetToolName(), oneLine(ob.GetReason(), 300))
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_NEEDED, pb.PipelineEventType_PIPELINE_EVENT_TYPE_ACTION_STARTED:
		// The prompt shows the first; the planned call and its result frame the second.
	case pb.PipelineEventType_PIPELINE_EVENT_TYPE_SHIELD_VERDICT:
		if !escalation(ev) { // an escalation's verdict is shown in its prompt
			p.em.event(ev)
		}
	default:
		p.em.event(ev)
	}
}

// readLines delivers r line by line (without the line end) and closes
// the channel at the end of input. Lines are read one ahead at most, so
// an approval prompt gets the line typed after it.
func readLines(r io.Reader) <-chan string {
	out := make(chan string)
	go func() {
		defer close(out)
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				out <- strings.TrimRight(line, "\r\n")
			}
			if err != nil {
				return
			}
		}
	}()
	return out
}

// termWriter drops control characters but newlines and tabs: text from
// the model or a tool must not move the cursor, recolour or retitle the
// terminal of the person answering an approval.
type termWriter struct{ w io.Writer }

func (t *termWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(t.w, termSafe(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// escalation reports an ESCALATE verdict: its decision, tier, rules and
// reasons are part of the approval prompt that follows.
func escalation(ev *pb.PipelineEvent) bool {
	return ev.GetEventType() == pb.PipelineEventType_PIPELINE_EVENT_TYPE_SHIELD_VERDICT &&
		ev.GetShieldVerdict().GetVerdict().GetDecision() == pb.VerdictDecision_VERDICT_DECISION_ESCALATE
}
