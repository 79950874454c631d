package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"google.golang.org/grpc/status"

	"github.com/parapet-dev/parapet/engine"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// envThief makes the test binary a process that holds a sub-agent's
// connection (descriptor 3) and tries a token given on its command line.
const envThief = "ENGINE_TEST_THIEF"

// thief registers and reports with each token in args over the
// connection it inherited, and prints the gRPC code of each call.
func thief(tokens []string) int {
	conn, err := dialSubAgentConn(os.NewFile(3, "sub-agent"))
	if err != nil {
		fmt.Println("dial:", err)
		return 1
	}
	defer conn.Close()
	c := pb.NewSubAgentServiceClient(conn)
	ctx := context.Background()
	for _, tok := range tokens {
		_, err := c.RegisterSubAgent(ctx, &pb.SubAgentRegisterRequest{Token: tok, SandboxResultJson: sandboxedJSON})
		_, err2 := c.SubAgentComplete(ctx, &pb.SubAgentCompleteRequest{Token: tok, Result: "forged by another process"})
		fmt.Printf("%s %s\n", status.Code(err), status.Code(err2))
	}
	return 0
}

// A sub-agent's token stolen by another process is refused there, on
// every call, even over a sub-agent connection of the engine's own
// making: the process that holds the "thief" sub-agent's connection tries
// the victim's token (Unauthenticated), then its own (accepted). The
// victim's answer is the one spawn_agent returns.
func TestSubAgentTokenFromAnotherProcess(t *testing.T) {
	h := newSubHarness(t, nil)
	a, _, p := h.startTurn(t, context.Background(), engine.Message{Content: "delegate"})
	a.send(t, proposal(p.GetSessionId(), p.GetMessageId(), "m1", "spawn_agent", spawnArgs("victim")))
	victim := h.nextProc(t)
	h.register(t, victim)
	a.send(t, proposal(p.GetSessionId(), p.GetMessageId(), "m2", "spawn_agent", spawnArgs("thief")))
	thiefProc := h.nextProc(t)

	// The test's spawner dup'ed the thief's connection; hand it to a
	// process of its own with the stolen token. (The test never calls
	// over thiefProc.conn, so the process is the connection's only client.)
	cmd := exec.Command(os.Args[0], victim.spec.Token, thiefProc.spec.Token)
	cmd.Env = append(os.Environ(), envThief+"=1")
	cmd.ExtraFiles = []*os.File{thiefProc.file}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("thief process: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "Unauthenticated Unauthenticated\nOK OK" {
		t.Fatalf("the thief process got:\n%s\nwant the stolen token refused, its own accepted", got)
	}

	if _, err := victim.sub().SubAgentComplete(context.Background(), &pb.SubAgentCompleteRequest{Token: victim.spec.Token, Result: "the real answer"}); err != nil {
		t.Fatal(err)
	}
	victim.exit <- nil
	thiefProc.exit <- errors.New("exit status 0")
	results := map[string]string{}
	for range 2 {
		r := a.next(t).GetToolResult()
		results[r.GetCallId()] = r.GetContent()
	}
	if results["m1"] != "the real answer" || results["m2"] != "forged by another process" {
		t.Fatalf("spawn_agent results %v", results)
	}
}
