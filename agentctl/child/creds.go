package child

import (
	"os"
	"strconv"

	"github.com/urfave/cli/v2"
	"google.golang.org/grpc"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/agentctl/host"
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
	if err := host.HoldCredentials(); err != nil {
		return "", exitcode.Errorf(exitcode.Failed, "%v", err)
	}
	if !c.IsSet("token-fd") {
		return "", exitcode.Usagef("--token-fd is not set: %s is started by the engine", c.Command.Name)
	}
	tok, err := secrets.ReadFD(c.Int("token-fd"))
	if err != nil {
		return "", exitcode.Usagef("%v", err)
	}
	return string(tok), nil
}

// dialInheritedConn is a gRPC client over the connected socket the engine
// passed on descriptor fd (a sub-agent's own connection).
func dialInheritedConn(fd int) (*grpc.ClientConn, error) {
	if fd < 3 {
		return nil, exitcode.Usagef("--engine-fd %d is stdin, stdout or stderr", fd)
	}
	f := os.NewFile(uintptr(fd), "--engine-fd "+strconv.Itoa(fd))
	defer f.Close() // Dial has its own copy
	conn, err := subagent.Dial(f)
	if err != nil {
		return nil, exitcode.Usagef("%v", err)
	}
	return conn, nil
}
