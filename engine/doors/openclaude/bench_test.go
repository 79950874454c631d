package openclaude_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/parapet-dev/parapet/engine/doors/doorstest"
	"github.com/parapet-dev/parapet/engine/doors/openclaude"
	"github.com/parapet-dev/parapet/llm"
	ocpb "github.com/parapet-dev/parapet/proto/openclaude/v1"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
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
	cs := pb.NewClientServiceClient(eng.Conn)
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
	viaClientService := func() {
		st, err := cs.SendMessage(ctx, &pb.ClientMessageRequest{Content: "check"})
		if err != nil {
			b.Fatal(err)
		}
		for {
			ev, err := st.Recv()
			if err != nil {
				b.Fatal(err)
			}
			if ev.GetEventType() == pb.PipelineEventType_PIPELINE_EVENT_TYPE_ERROR {
				b.Fatal(ev)
			}
			if ev.GetEventType() == pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE {
				return
			}
		}
	}
	door, direct := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		timed := func(f func(), into *[]time.Duration) {
			start := time.Now()
			f()
			*into = append(*into, time.Since(start))
		}
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
