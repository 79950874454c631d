package engine

// A sub-agent's connection to the engine (SUBAGENTS.md, "Credentials"):
// the engine makes a connected unix socket pair for each sub-agent, serves
// SubAgentService on its end only for that sub-agent, and the host hands
// the other end to the process as an inherited descriptor. The token
// names the sub-agent; the connection proves the caller is the process
// the engine started, on every call: a token used anywhere else is
// refused. No listening socket exists to connect to, and the sandbox
// refuses the process new unix sockets, so the connection cannot be
// handed on.

import (
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"

	"google.golang.org/grpc"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// subAgentLink is the engine's side of one sub-agent's connection.
type subAgentLink struct {
	server *grpc.Server
	// child is the process's end, for the spawner; closed once it started.
	child *os.File
}

// linkSubAgent makes s's connection and serves SubAgentService on it,
// bound to s.
func (e *Engine) linkSubAgent(s *subAgent) (*subAgentLink, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	ours := os.NewFile(uintptr(fds[0]), "sub-agent-"+s.name+"-engine")
	child := os.NewFile(uintptr(fds[1]), "sub-agent-"+s.name)
	conn, err := net.FileConn(ours) // a dup; ours is not needed after
	ours.Close()
	if err != nil {
		child.Close()
		return nil, fmt.Errorf("sub-agent connection: %w", err)
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(4 << 20))
	pb.RegisterSubAgentServiceServer(srv, &subAgentService{e: e, bound: s})
	go func() { _ = srv.Serve(newOneConnListener(conn)) }()
	return &subAgentLink{server: srv, child: child}, nil
}

// close ends the connection and the server.
func (l *subAgentLink) close() {
	l.child.Close()
	l.server.Stop()
}

// oneConnListener hands out one connection, then waits for Close.
type oneConnListener struct {
	conns     chan net.Conn
	addr      net.Addr
	done      chan struct{}
	closeOnce sync.Once
}

func newOneConnListener(c net.Conn) *oneConnListener {
	l := &oneConnListener{conns: make(chan net.Conn, 1), addr: c.LocalAddr(), done: make(chan struct{})}
	l.conns <- c
	return l
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *oneConnListener) Close() error {
	l.closeOnce.Do(func() {
		close(l.done)
		select {
		case c := <-l.conns: // never accepted
			c.Close()
		default:
		}
	})
	return nil
}

func (l *oneConnListener) Addr() net.Addr { return l.addr }
