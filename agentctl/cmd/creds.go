package cmd

// Credentials of the processes agentctl runs (README, "Trust
// boundaries"): the agent's and sub-agents' tokens travel on an inherited
// pipe, never in an environment; every process that holds one makes
// itself non-dumpable first, so no other process of the user can read it
// from /proc/PID/{environ,mem,fd} or ptrace it.

import (
	"net/url"
	"os"
	"os/exec"
	"strconv"

	"github.com/urfave/cli/v2"
	"google.golang.org/grpc"

	"github.com/parapet-dev/parapet/agentctl/procman"
	"github.com/parapet-dev/parapet/agentctl/subagent"
	"github.com/parapet-dev/parapet/internal/secrets"
)

// tokenFDFlag names the inherited descriptor an internal child reads its
// token from.
func tokenFDFlag() cli.Flag {
	return &cli.IntFlag{Name: "token-fd", Usage: "inherited descriptor `N` holding the token (read once, then closed)"}
}

// readChildToken hides this process from the user's other processes, then
// takes the token its parent passed on --token-fd.
func readChildToken(c *cli.Context) (string, error) {
	if err := secrets.NonDumpable(); err != nil {
		return "", exitf(exitFailed, "%v", err)
	}
	if !c.IsSet("token-fd") {
		return "", usageErrorf("--token-fd is not set: %s is started by the engine", c.Command.Name)
	}
	tok, err := secrets.ReadFD(c.Int("token-fd"))
	if err != nil {
		return "", usageErrorf("%v", err)
	}
	return string(tok), nil
}

// passToken hands token to cmd on a pipe and adds --token-fd N to its
// arguments. release closes this process's end once cmd has started.
func passToken(cmd *exec.Cmd, token string) (release func(), err error) {
	fd, release, err := secrets.PassFD(cmd, []byte(token))
	if err != nil {
		return nil, err
	}
	cmd.Args = append(cmd.Args, "--token-fd", strconv.Itoa(fd))
	return release, nil
}

// holdCredentials makes a process that holds credentials (the engine, the
// process manager) non-dumpable. Where the system cannot, it runs on,
// logged: the tokens are then as exposed as before, not less.
func holdCredentials() error {
	err := secrets.NonDumpable()
	if err == secrets.ErrUnsupported {
		return nil
	}
	return err
}

// dialInheritedConn is a gRPC client over the connected socket the engine
// passed on descriptor fd (a sub-agent's own connection).
func dialInheritedConn(fd int) (*grpc.ClientConn, error) {
	if fd < 3 {
		return nil, usageErrorf("--engine-fd %d is stdin, stdout or stderr", fd)
	}
	f := os.NewFile(uintptr(fd), "--engine-fd "+strconv.Itoa(fd))
	defer f.Close() // Dial has its own copy
	conn, err := subagent.Dial(f)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	return conn, nil
}

// clientToken is the client token of the workspace's engine, from its
// state file (with --engine ADDR too: the token is never on a command
// line, where every process could read it).
func clientToken(c *cli.Context) (string, error) {
	ws := c.String("workspace")
	if ws == "" {
		ws, _ = os.Getwd()
	}
	st, err := procman.ReadState(stateDirOf(ws))
	switch {
	case err != nil:
		return "", exitf(exitFailed, "the engine's client token: %v (run this as the engine's user, with --workspace of its workspace)", err)
	case st.ClientToken == "":
		return "", exitf(exitFailed, "the engine's client token: the state file of %s holds none (the engine is starting or older than this agentctl)", ws)
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
