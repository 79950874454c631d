package host

// Credentials of the processes agentctl runs (README, "Trust
// boundaries"): the agent's and sub-agents' tokens travel on an inherited
// pipe, never in an environment; every process that holds one makes
// itself non-dumpable first, so no other process of the user can read it
// from /proc/PID/{environ,mem,fd} or ptrace it.

import (
	"os/exec"
	"strconv"

	"github.com/parapet-dev/parapet/internal/secrets"
)

// PassToken hands token to cmd on a pipe and adds --token-fd N to its
// arguments. release closes this process's end once cmd has started.
func PassToken(cmd *exec.Cmd, token string) (release func(), err error) {
	fd, release, err := secrets.PassFD(cmd, []byte(token))
	if err != nil {
		return nil, err
	}
	cmd.Args = append(cmd.Args, "--token-fd", strconv.Itoa(fd))
	return release, nil
}

// HoldCredentials makes a process that holds credentials (the engine, the
// process manager) non-dumpable. Where the system cannot, it runs on,
// logged: the tokens are then as exposed as before, not less.
func HoldCredentials() error {
	err := secrets.NonDumpable()
	if err == secrets.ErrUnsupported {
		return nil
	}
	return err
}
