package crawbl_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/parapet-dev/parapet/engine/doors/crawbl"
	"github.com/parapet-dev/parapet/engine/doors/doorstest"
	"github.com/parapet-dev/parapet/llm"
	crpb "github.com/parapet-dev/parapet/proto/crawbl/agentruntime/v1"
	"github.com/parapet-dev/parapet/shieldd/auth"
)

// BenchmarkConverseTurn compares one turn (a scripted one-line answer)
// through the crawbl door, token checked, with the same turn through
// ClientService, both over gRPC on loopback to one engine, alternating.
// door_overhead_p50-ns is what the door adds to a turn.
func BenchmarkConverseTurn(b *testing.B) {
	replies := make([]llm.Response, 2*b.N+2)
	for i := range replies {
		replies[i] = doorstest.Text("Done: nothing to change.")
	}
	eng := doorstest.Start(b, replies, nil)
	verifier, err := auth.NewHMAC(key)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := crawbl.New(crawbl.Options{Engine: eng.Engine, Store: eng.Store, Verifier: verifier, Model: "scripted"})
	if err != nil {
		b.Fatal(err)
	}
	conn := doorstest.Serve(b, func(g *grpc.Server) { srv.Register(g) }, srv.ServerOptions()...)
	tok, err := auth.Mint(key, "u1", "ws1", time.Now())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	stream, err := crpb.NewAgentRuntimeClient(conn).Converse(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok))
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	viaDoor := func() {
		// A new session per turn, as ClientService's turns below: a
		// continued session's growing history would be measured instead.
		n++
		if err := stream.Send(&crpb.ConverseRequest{SessionId: "bench-" + strconv.Itoa(n), Message: "check"}); err != nil {
			b.Fatal(err)
		}
		for {
			ev, err := stream.Recv()
			if err != nil {
				b.Fatal(err)
			}
			if d := ev.GetDone(); d != nil {
				if len(d.GetTurns()) != 1 {
					b.Fatal(d)
				}
				return
			}
		}
	}
	eng.CompareTurns(b, viaDoor)
}
