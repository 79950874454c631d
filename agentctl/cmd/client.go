package cmd

// Shared plumbing of the client commands (chat, send, approve, deny,
// sessions, history): finding the running engine, turning gRPC failures
// into messages a person can act on, and the flags they have in common.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/agentctl/host"
	"github.com/parapet-dev/parapet/agentctl/procman"
	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/internal/textcut"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// unaryTimeout bounds one request/response call to the engine.
const unaryTimeout = 10 * time.Second

// clientFlags are --workspace and --engine, then the command's own flags.
func clientFlags(extra ...cli.Flag) []cli.Flag {
	return append([]cli.Flag{stateDirFlag(),
		&cli.StringFlag{Name: "engine", Usage: "engine gRPC `ADDR` (default: found through the workspace's state)"},
	}, extra...)
}

func outputFlag() cli.Flag {
	return &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "text", Usage: "text or json"}
}

func sessionFlag(usage string) cli.Flag {
	return &cli.StringFlag{Name: "session", Aliases: []string{"s"}, Usage: usage}
}

func pageFlags(defaultLimit int) []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "limit", Value: defaultLimit, Usage: "show at most `N` (0: all)"},
		&cli.IntFlag{Name: "offset", Usage: "skip the first `N`"},
	}
}

// outputMode reads --output: true for json.
func outputMode(c *cli.Context) (jsonOut bool, err error) {
	switch o := c.String("output"); o {
	case "text":
		return false, nil
	case "json":
		return true, nil
	default:
		return false, exitcode.Usagef("--output must be text or json, got %q", o)
	}
}

// pageArgs reads --limit and --offset.
func pageArgs(c *cli.Context) (limit, offset int32, err error) {
	l, o := c.Int("limit"), c.Int("offset")
	if l < 0 || o < 0 {
		return 0, 0, exitcode.Usagef("--limit and --offset must not be negative")
	}
	const maxPage = 1 << 30
	if l > maxPage || o > maxPage {
		return 0, 0, exitcode.Usagef("--limit and --offset must be below %d", maxPage)
	}
	return int32(l), int32(o), nil
}

// engineConn is a connection to the engine a client command talks to.
type engineConn struct {
	pb.ClientServiceClient
	addr  string
	close func()
}

// connectEngine finds the engine (--engine, or the workspace's state) and
// dials it. No running engine is an error that says how to start one.
func connectEngine(c *cli.Context) (*engineConn, error) {
	addr, _, running, err := engineTarget(c)
	if err != nil {
		return nil, exitcode.Errorf(exitcode.Failed, "%v", err)
	}
	return connectTarget(c, addr, running)
}

// connectTarget dials an engine engineTarget found.
func connectTarget(c *cli.Context, addr string, running bool) (*engineConn, error) {
	if !running || addr == "" {
		ws := c.String("workspace")
		if ws == "" {
			ws, _ = os.Getwd()
		}
		return nil, exitcode.Errorf(exitcode.Failed, "no engine is running for workspace %s: start one with agentctl start (or give its address with --engine ADDR)", ws)
	}
	token, err := clientToken(c)
	if err != nil {
		return nil, err
	}
	client, closeConn, err := dialEngine(addr, token)
	if err != nil {
		return nil, exitcode.Errorf(exitcode.Failed, "engine address %q: %v", addr, err)
	}
	return &engineConn{ClientServiceClient: client, addr: addr, close: closeConn}, nil
}

// callEngine makes one call (what names it in errors) to an engine
// engineTarget found, bounded by unaryTimeout. An error the call already
// made an exit error (a NotFound it explains better, say) is returned as
// it is; any other becomes callError's.
func callEngine(c *cli.Context, addr string, running bool, what string, call func(context.Context, *engineConn) error) error {
	conn, err := connectTarget(c, addr, running)
	if err != nil {
		return err
	}
	defer conn.close()
	ctx, cancel := context.WithTimeout(c.Context, unaryTimeout)
	defer cancel()
	if err := call(ctx, conn); err != nil {
		if _, isExit := err.(cli.ExitCoder); isExit {
			return err
		}
		return conn.callError(what, err)
	}
	return nil
}

// callFoundEngine is callEngine on the engine connectEngine would dial.
func callFoundEngine(c *cli.Context, what string, call func(context.Context, *engineConn) error) error {
	addr, _, running, err := engineTarget(c)
	if err != nil {
		return exitcode.Errorf(exitcode.Failed, "%v", err)
	}
	return callEngine(c, addr, running, what, call)
}

// asCLI marks calls as coming from agentctl, so an approval answered here
// is recorded as answered by "cli".
func asCLI(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, engine.FrontendMetadataKey, "cli")
}

// callError turns a failed engine call into an exit error: NotFound is
// exit 5, a refused argument exit 2, anything else exit 1.
func (e *engineConn) callError(what string, err error) error {
	st := status.Convert(err)
	msg := st.Message()
	switch st.Code() {
	case codes.NotFound:
		return exitcode.Errorf(exitcode.NotFound, "%s: %s", what, msg)
	case codes.InvalidArgument:
		return exitcode.Errorf(exitcode.Usage, "%s: %s", what, msg)
	case codes.Unavailable:
		return exitcode.Errorf(exitcode.Failed, "%s: cannot reach the engine at %s (%s); is it running? start one with agentctl start", what, e.addr, msg)
	case codes.DeadlineExceeded:
		return exitcode.Errorf(exitcode.Failed, "%s: the engine at %s did not answer in time", what, e.addr)
	case codes.Unimplemented:
		return exitcode.Errorf(exitcode.Failed, "%s: the engine at %s does not support this (%s)", what, e.addr, msg)
	case codes.Canceled:
		return exitcode.Errorf(exitcode.Failed, "%s: interrupted", what)
	}
	return exitcode.Errorf(exitcode.Failed, "%s: engine %s: %s: %s", what, e.addr, st.Code(), msg)
}

// sessionMode is the mode a new session gets: off the record with --otr.
func sessionMode(c *cli.Context) pb.SessionMode {
	if c.Bool("otr") {
		return pb.SessionMode_SESSION_MODE_OTR
	}
	return pb.SessionMode_SESSION_MODE_NORMAL
}

func otrFlag() cli.Flag {
	return &cli.BoolFlag{Name: "otr", Usage: "start the session off the record: nothing is stored, write tools are refused"}
}

// modeName is a session mode as the commands print it: normal, otr, heartbeat.
func modeName(m pb.SessionMode) string {
	return strings.ToLower(strings.TrimPrefix(m.String(), "SESSION_MODE_"))
}

// engineHint is the --workspace / --engine part of a command line that
// reaches the same engine this one did, for the commands we print.
func engineHint(c *cli.Context) string {
	var b strings.Builder
	for _, f := range []string{"engine", "workspace"} {
		if v := c.String(f); v != "" && c.IsSet(f) {
			fmt.Fprintf(&b, " --%s %s", f, shellQuote(v))
		}
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:@=+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// approvalPrompt describes an escalated action waiting for an answer:
// the action, the shield's verdict and reasons, and the deadline.
func approvalPrompt(a *pb.ApprovalNeeded, now time.Time) string {
	var b strings.Builder
	v := a.GetShieldAssessment()
	fmt.Fprintf(&b, "? approval needed: %s %s\n", a.GetToolName(), oneLine(a.GetAction().GetPayloadJson(), 300))
	fmt.Fprintf(&b, "  shield: %s (tier %d%s): %s\n", v.GetDecision().Label(), v.GetTier(), rulesSuffix(v.GetRuleIds()), oneLine(v.GetReasoning(), 500))
	if a.GetTimeoutAt() > 0 {
		deadline := time.Unix(a.GetTimeoutAt(), 0)
		fmt.Fprintf(&b, "  answer by %s (%s left), or it is denied\n", deadline.Format("15:04:05"), deadline.Sub(now).Round(time.Second))
	}
	fmt.Fprintf(&b, "  id %s", a.GetApprovalId())
	return b.String()
}

// oneLine shortens s and keeps it on one line.
func oneLine(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
	return textcut.Truncate(termSafe(s), max)
}

// termSafe drops control characters but newlines and tabs: text from the
// model or a tool must not move the cursor, recolour or retitle the
// terminal of the person deciding on an approval.
func termSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return -1
		}
		return r
	}, s)
}

func isNotFound(err error) bool { return status.Code(err) == codes.NotFound }

// unixTime formats Unix seconds for tables; 0 is unknown.
func unixTime(sec int64) string {
	if sec <= 0 {
		return "-"
	}
	return time.Unix(sec, 0).Format("2006-01-02 15:04")
}

// printJSON writes v as one line of JSON.
func printJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return exitcode.Errorf(exitcode.Failed, "encoding JSON: %v", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// flagAfterArgs refuses a flag written after the positional arguments:
// the CLI stops reading flags at the first argument, so it would silently
// become part of the message or a second id.
func flagAfterArgs(c *cli.Context) error {
	args := c.Args().Slice()
	for i, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if i == 0 || !strings.HasPrefix(a, "-") || name == "" {
			continue
		}
		for _, f := range c.Command.Flags {
			for _, n := range f.Names() {
				if n == name {
					return exitcode.Usagef("%s comes after the arguments; put flags first: agentctl %s [flags] %s", a, c.Command.Name, c.Command.ArgsUsage)
				}
			}
		}
	}
	return nil
}

// clientToken is the client token of the workspace's engine, from its
// state file (with --engine ADDR too: the token is never on a command
// line, where every process could read it).
func clientToken(c *cli.Context) (string, error) {
	ws := c.String("workspace")
	if ws == "" {
		ws, _ = os.Getwd()
	}
	st, err := procman.ReadState(host.StateDirOf(ws))
	switch {
	case err != nil:
		return "", exitcode.Errorf(exitcode.Failed, "the engine's client token: %v (run this as the engine's user, with --workspace of its workspace)", err)
	case st.ClientToken == "":
		return "", exitcode.Errorf(exitcode.Failed, "the engine's client token: the state file of %s holds none (the engine is starting or older than this agentctl)", ws)
	}
	return st.ClientToken, nil
}

// webSignInURL is webURL with the token that signs the browser in
// ("" when either is unknown or the command did not ask for it).
func webSignInURL(webURL string, c *cli.Context) string {
	if webURL == "" {
		return ""
	}
	tok, err := clientToken(c)
	if err != nil {
		return ""
	}
	return webURL + "/?token=" + url.QueryEscape(tok)
}
