package crawbl_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/parapet-dev/parapet/engine/doors/crawbl"
	"github.com/parapet-dev/parapet/engine/doors/doorstest"
	"github.com/parapet-dev/parapet/llm"
	crpb "github.com/parapet-dev/parapet/proto/crawbl/agentruntime/v1"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
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
	cs := pb.NewClientServiceClient(eng.Conn)
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
	viaClientService := func() {
		st, err := cs.SendMessage(ctx, &pb.ClientMessageRequest{Content: "check"})
		if err != nil {
			b.Fatal(err)
		}
		for {
			ev, err := st.Recv()
			if err != nil || ev.GetEventType() == pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR {
				b.Fatal(err, ev)
			}
			if ev.GetEventType() == pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE {
				return
			}
		}
	}
	door, direct := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	timed := func(f func(), into *[]time.Duration) {
		start := time.Now()
		f()
		*into = append(*into, time.Since(start))
	}
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			timed(viaDoor, &door)
			timed(viaClientService, &direct)
		} else {
			timed(viaClientService, &direct)
			timed(viaDoor, &door)
		}
	}
	b.StopTimer()
	slices.Sort(door)
	slices.Sort(direct)
	p50 := func(s []time.Duration) time.Duration { return s[len(s)/2] }
	b.ReportMetric(float64(p50(door).Nanoseconds()), "door_p50-ns")
	b.ReportMetric(float64(p50(direct).Nanoseconds()), "clientservice_p50-ns")
	b.ReportMetric(float64((p50(door) - p50(direct)).Nanoseconds()), "door_overhead_p50-ns")
}
