package cmd

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

func sendCommand() *cli.Command {
	return &cli.Command{
		Name:      "send",
		Usage:     "send one message to the running engine and print what happens",
		ArgsUsage: `"MESSAGE" (or - to read it from stdin)`,
		Description: `Prints the turn's events as they happen: streamed text, tool calls, shield
verdicts, approvals, then the answer. In text mode the progress goes to
stderr and the answer to stdout; with --output json stdout carries one JSON
object per line, as agentctl run does (see agentctl/README.md).

An escalated action waits for an answer from another client: send prints
its id and the command to answer it (agentctl approve ID / agentctl deny ID).

Exit codes: 0 answered; 1 the turn failed (ERROR event, engine unreachable,
interrupted); 2 usage error; 4 answered, but an action was blocked or denied
and --fail-on-block was given; 5 no session with the --session id.

Examples:
   agentctl send "summarise README.md"
   agentctl send --session sess_0123456789abcdef "and now the tests"
   agentctl send --output json "list the files" | jq -c 'select(.type=="verdict")'`,
		Flags: clientFlags(
			sessionFlag("continue session `ID` (default: start a new one)"),
			otrFlag(),
			outputFlag(),
			&cli.BoolFlag{Name: "fail-on-block", Usage: "exit 4 when an action was blocked or denied"},
		),
		Action: runSend,
	}
}

func runSend(c *cli.Context) error {
	if err := flagAfterArgs(c); err != nil {
		return err
	}
	msg, err := messageArg(c)
	if err != nil {
		return err
	}
	jsonOut, err := outputMode(c)
	if err != nil {
		return err
	}
	conn, err := connectEngine(c)
	if err != nil {
		return err
	}
	defer conn.close()

	// Ctrl-C or SIGTERM closes the stream, which cancels the turn on the engine.
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	stream, err := conn.SendMessage(asCLI(ctx), &pb.ClientMessageRequest{
		Content: msg, SessionId: c.String("session"), Mode: sessionMode(c), Source: "cli",
	})
	if err != nil {
		return conn.callError("send", err)
	}
	// Progress shows text from the model and tools: no control characters
	// reach the terminal. The answer on stdout is passed on as it is unless
	// stdout is a terminal too.
	stdout := c.App.Writer
	if f, ok := stdout.(*os.File); ok && !jsonOut && isTerminal(f) {
		stdout = &termWriter{w: stdout}
	}
	em := &emitter{json: jsonOut, stdout: stdout, stderr: &termWriter{w: c.App.ErrWriter}, calls: map[string]string{}}
	hint := engineHint(c)
	announced := false
	for {
		ev, err := stream.Recv()
		if err != nil {
			if ctx.Err() != nil {
				return exitcode.Errorf(exitcode.Failed, "interrupted: the turn was cancelled")
			}
			if errors.Is(err, io.EOF) {
				return exitcode.Errorf(exitcode.Failed, "the engine ended the stream without an answer")
			}
			return conn.callError("send", err)
		}
		if !announced && ev.GetSessionId() != "" {
			announced = true
			if jsonOut {
				em.line(map[string]any{"type": "session", "session_id": ev.GetSessionId(), "message_id": ev.GetMessageId()})
			} else if c.String("session") == "" {
				em.progress("session %s (continue it with --session %s)", ev.GetSessionId(), ev.GetSessionId())
			}
		}
		switch ev.GetEventType() {
		case pb.PipelineEventType_PIPELINE_EVENT_TYPE_APPROVAL_NEEDED:
			if !jsonOut {
				id := ev.GetApprovalNeeded().GetApprovalId()
				em.progress("%s\n  answer it from another terminal: agentctl approve%s %s  (or: agentctl deny%s %s)",
					approvalPrompt(ev.GetApprovalNeeded(), time.Now()), hint, id, hint, id)
			}
		case pb.PipelineEventType_PIPELINE_EVENT_TYPE_OTR_BLOCKED:
			if !jsonOut {
				ob := ev.GetOtrBlocked()
				em.progress("  off the record: %s not run: %s", ob.GetToolName(), oneLine(ob.GetReason(), 300))
			}
		}
		if jsonOut || !escalation(ev) { // in text, the approval prompt shows an escalation's verdict
			em.event(ev)
		}
		switch ev.GetEventType() {
		case pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE:
			if em.blocked > 0 && c.Bool("fail-on-block") {
				return exitcode.Errorf(exitcode.Blocked, "%d action(s) blocked or denied", em.blocked)
			}
			return nil
		case pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR:
			return turnError(ev.GetPipelineError())
		}
	}
}

// turnError is the exit error for a turn that ended in an ERROR event.
func turnError(pe *pb.PipelineError) error {
	code := exitcode.Failed
	if pe.GetCode() == "SESSION_NOT_FOUND" {
		code = exitcode.NotFound
	}
	return exitcode.Errorf(code, "%s: %s", pe.GetCode(), pe.GetMessage())
}

// messageArg is the message: the arguments joined, or stdin for "-".
func messageArg(c *cli.Context) (string, error) {
	msg := strings.Join(c.Args().Slice(), " ")
	if msg == "-" {
		b, err := io.ReadAll(io.LimitReader(os.Stdin, maxMessageBytes+1))
		if err != nil {
			return "", exitcode.Usagef("reading the message from stdin: %v", err)
		}
		if len(b) > maxMessageBytes {
			return "", exitcode.Usagef("the message on stdin is larger than %d bytes", maxMessageBytes)
		}
		msg = strings.TrimRight(string(b), "\r\n")
	}
	if strings.TrimSpace(msg) == "" {
		return "", exitcode.Usagef(`no message: agentctl send [flags] "MESSAGE" (or - to read it from stdin)`)
	}
	return msg, nil
}

// maxMessageBytes bounds what send reads from stdin; the engine has its
// own (smaller, configurable) limit and says so.
const maxMessageBytes = 16 << 20
