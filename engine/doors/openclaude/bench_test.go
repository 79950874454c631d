package openclaude_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"

	"github.com/parapet-dev/parapet/engine/doors/doorstest"
	"github.com/parapet-dev/parapet/engine/doors/openclaude"
	"github.com/parapet-dev/parapet/llm"
	ocpb "github.com/parapet-dev/parapet/proto/openclaude/v1"
)

// BenchmarkChatTurn compares one turn (a scripted one-line answer) sent
// through the openclaude door with the same turn through ClientService,
// both over gRPC on loopback to one engine, alternating so that the
// machine's drift slows both alike. door_overhead_p50-ns is the door's p50
// minus ClientService's: what the door adds to a turn.
func BenchmarkChatTurn(b *testing.B) {
	replies := make([]llm.Response, 2*b.N+2)
	for i := range replies {
		replies[i] = doorstest.Text("Done: nothing to change.")
	}
	eng := doorstest.Start(b, replies, nil)
	srv, err := openclaude.New(openclaude.Options{Engine: eng.Engine, Workspace: eng.Workspace})
	if err != nil {
		b.Fatal(err)
	}
	client := ocpb.NewAgentServiceClient(doorstest.Serve(b, func(g *grpc.Server) { srv.Register(g) }))
	ctx := context.Background()
	chat, err := client.Chat(ctx)
	if err != nil {
		b.Fatal(err)
	}
	viaDoor := func() {
		if err := chat.Send(&ocpb.ClientMessage{Payload: &ocpb.ClientMessage_Request{Request: &ocpb.ChatRequest{Message: "check"}}}); err != nil {
			b.Fatal(err)
		}
		for {
			m, err := chat.Recv()
			if err != nil || m.GetError() != nil {
				b.Fatal(err, m)
			}
			if m.GetDone() != nil {
				return
			}
		}
	}
	eng.CompareTurns(b, viaDoor)
}
