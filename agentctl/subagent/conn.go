package subagent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Dial is a gRPC client over f, the sub-agent's end of the connected
// socket the engine made for it (engine.SubAgentSpec.Conn). It uses that
// one connection: when it breaks there is no other way to the engine, and
// calls fail. f may be closed after Dial returns.
func Dial(f *os.File) (*grpc.ClientConn, error) {
	c, err := net.FileConn(f) // a copy of the descriptor
	if err != nil {
		return nil, fmt.Errorf("the engine connection %s: %w", f.Name(), err)
	}
	var once sync.Once
	conn, err := grpc.NewClient("passthrough:///engine", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) {
			var out net.Conn
			once.Do(func() { out = c })
			if out == nil {
				return nil, errors.New("the connection to the engine is closed")
			}
			return out, nil
		}))
	if err != nil {
		c.Close()
		return nil, err
	}
	return conn, nil
}
