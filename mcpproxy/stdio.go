package mcpproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// lineWriter writes one message per line; writes from several goroutines
// never interleave.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

func (l *lineWriter) write(m *Message) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	buf := make([]byte, 0, len(m.Raw)+1)
	buf = append(append(buf, m.Raw...), '\n')
	if _, err := l.w.Write(buf); err != nil {
		l.err = err
	}
	return l.err
}

func (l *lineWriter) fail(err error) {
	l.mu.Lock()
	if l.err == nil {
		l.err = err
	}
	l.mu.Unlock()
}

type stdioClient struct{ w *lineWriter }

func (c stdioClient) send(m *Message, _ string) { _ = c.w.write(m) }
func (stdioClient) abandon(string)              {}

type stdioServer struct{ w *lineWriter }

func (s stdioServer) send(m *Message, _ string) error { return s.w.write(m) }

// RunStdio proxies an MCP client speaking on in/out (the proxy is the
// client's server command) to the server command argv, run as a child
// whose stderr goes to serverStderr. It returns when the client closes
// in or ctx ends; a server that exits early is reported and every later
// request answered with an error, so the client sees what happened.
func RunStdio(ctx context.Context, cfg Config, argv []string, in io.Reader, out io.Writer, serverStderr io.Writer) error {
	if len(argv) == 0 {
		return &ConfigError{errors.New("no MCP server command given (mcp-proxy [flags] -- COMMAND ARGS…)")}
	}
	if err := cfg.prepare(); err != nil {
		return err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = serverStderr
	childIn, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	childOut, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start MCP server %s: %w", argv[0], err)
	}
	cfg.Log.Info("mcp-proxy: MCP server started", "server", cfg.Server, "pid", cmd.Process.Pid, "command", argv[0], "pins", cfg.Pins.Path())

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	toClient := &lineWriter{w: out}
	toServer := &lineWriter{w: childIn}
	s := newSession(ctx, &cfg, stdioClient{toClient}, stdioServer{toServer})

	exited := make(chan struct{})
	go func() {
		defer close(exited)
		lr := NewLineReader(childOut, cfg.MaxMessageBytes)
		for {
			line, err := lr.Next()
			if errors.Is(err, ErrLineTooLong) {
				cfg.Log.Warn("mcp-proxy: over-long message from the server dropped", "server", cfg.Server, "limit", cfg.MaxMessageBytes)
				continue
			}
			if err != nil {
				break
			}
			s.fromServer(line, "")
		}
		werr := cmd.Wait()
		toServer.fail(errors.New("the server has exited"))
		if werr == nil {
			werr = errors.New("exit status 0")
		}
		if ctx.Err() == nil {
			s.serverExited(werr)
		}
	}()

	clientDone := make(chan error, 1)
	go func() {
		lr := NewLineReader(in, cfg.MaxMessageBytes)
		for {
			line, err := lr.Next()
			if errors.Is(err, ErrLineTooLong) {
				stdioClient{toClient}.send(errorResponse(nil, codeParseError, fmt.Sprintf("Parapet MCP proxy: message longer than %d bytes", cfg.MaxMessageBytes)), "")
				continue
			}
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				clientDone <- err
				return
			}
			s.fromClient(line)
		}
	}()

	var result error
	select {
	case result = <-clientDone:
		s.drain(10 * time.Second)
	case <-ctx.Done():
	}
	cancel()
	// The stdio shutdown MCP describes: close the server's input, give it
	// a moment, then SIGTERM, then SIGKILL.
	childIn.Close()
	select {
	case <-exited:
	case <-time.After(2 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(2 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	return result
}
