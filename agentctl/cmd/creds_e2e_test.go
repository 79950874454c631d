package cmd

// The credentials proof of issue 11 (item 3), with real processes: the
// manager, engine, agent and sub-agent of `agentctl start`, an attacking
// process of the same user, and agentctl's own client commands. When the
// tests run as root they all run as nobody (secretstest): root's
// CAP_SYS_PTRACE sees through non-dumpable processes, another process of
// the same ordinary user does not.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/parapet-dev/parapet/agentctl/host"
	"github.com/parapet-dev/parapet/agentctl/procman"
	"github.com/parapet-dev/parapet/engine/tools"
	"github.com/parapet-dev/parapet/internal/proctest"
	"github.com/parapet-dev/parapet/internal/secrets/secretstest"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// envRunAsAttacker makes the test binary the attacking process.
const envRunAsAttacker = "PARAPET_TEST_RUN_AS_ATTACKER"

// attack is a process of the engine's user that tries everything it can
// find to answer a pending approval, except the state file, which the
// confined executor cannot open (Landlock). It prints what each attempt
// got, one line each, and the approval stays pending unless one worked.
// args: CLIENT_ADDR AGENT_ADDR WEB_URL APPROVAL_ID.
func attack(args []string) int {
	clientAddr, agentAddr, webURL, approvalID := args[0], args[1], args[2], args[3]
	report := func(what, got string) { fmt.Printf("%s\t%s\n", what, got) }

	// Every token-looking string in reach: its own environment, and every
	// /proc/PID/{environ,cmdline} it can read.
	hexTok := regexp.MustCompile(`[0-9a-f]{32,64}`)
	cands := map[string]bool{"": true}
	for _, kv := range os.Environ() {
		for _, m := range hexTok.FindAllString(kv, -1) {
			cands[m] = true
		}
	}
	procs, _ := os.ReadDir("/proc")
	readable := 0
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		for _, f := range []string{"environ", "cmdline"} {
			b, err := os.ReadFile("/proc/" + p.Name() + "/" + f)
			if err != nil {
				continue
			}
			if f == "environ" {
				readable++
			}
			for _, m := range hexTok.FindAllString(string(b), -1) {
				cands[m] = true
			}
		}
	}
	report("candidates", strconv.Itoa(len(cands)))

	dial := func(addr string) *grpc.ClientConn {
		c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			panic(err)
		}
		return c
	}
	client, agent := dial(clientAddr), dial(agentAddr)
	defer client.Close()
	defer agent.Close()
	cs, ss := pb.NewClientServiceClient(client), pb.NewSubAgentServiceClient(agent)
	for tok := range cands {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if tok != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
		}
		_, err := cs.ResolveApproval(ctx, &pb.ApprovalResponse{ApprovalId: approvalID, Approved: true})
		report("grpc ResolveApproval", status.Code(err).String())
		w, err := cs.WatchSession(ctx, &pb.WatchSessionRequest{})
		if err == nil {
			_, err = w.Recv()
		}
		report("grpc WatchSession", status.Code(err).String())
		_, err = ss.SubAgentComplete(ctx, &pb.SubAgentCompleteRequest{Token: tok, Result: "forged"})
		report("grpc SubAgentComplete", status.Code(err).String())
		cancel()

		for _, r := range []struct{ method, path, body string }{
			{"GET", "/api/events", ""}, {"GET", "/api/sessions", ""}, {"GET", "/api/status", ""}, {"GET", "/", ""},
			{"POST", "/api/approvals/" + approvalID, `{"approved":true}`},
		} {
			req, _ := http.NewRequest(r.method, webURL+r.path, strings.NewReader(r.body))
			req.Header.Set("Content-Type", "application/json")
			if tok != "" {
				req.Header.Set("X-Parapet-Token", tok)
			}
			resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
			if err != nil {
				report("http "+r.method+" "+r.path, err.Error())
				continue
			}
			resp.Body.Close()
			report("http "+r.method+" "+r.path, strconv.Itoa(resp.StatusCode))
			if len(resp.Cookies()) > 0 {
				report("http cookie", resp.Cookies()[0].Name)
			}
		}
	}
	return 0
}

func TestCredentialsOutOfReach(t *testing.T) {
	u := secretstest.New(t)
	ws, dir, state := u.Dir(t), u.Dir(t), u.Dir(t)
	script := filepath.Join(dir, "task.yaml")
	write := func(path, s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(script, `
- tool_calls:
    - name: load_tools
      arguments: {groups: [agents]}
- tool_calls:
    - name: spawn_agent
      arguments: {name: helper, task: "Publish the branch", tools: [execute_command]}
- text: "The helper reported back."
`)
	write(host.SubAgentScriptPath(script, "helper"), `
- tool_calls:
    - name: execute_command
      arguments: {command: "git push --force origin main"}
- text: "helper: the push was not approved."
`)
	u.Own(t, dir)
	as := func(args ...string) *exec.Cmd {
		cmd := exec.Command(u.Exe, args...)
		cmd.Env = append(os.Environ(), envRunAsAgentctl+"=1", "GORACE=atexit_sleep_ms=0", "XDG_STATE_HOME="+state)
		u.Apply(cmd)
		return cmd
	}

	mgr := as("start", "--workspace", ws, "--provider", "scripted", "--script", script)
	var mgrErr proctest.Buffer
	mgr.Stderr = &mgrErr
	if err := mgr.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = mgr.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = mgr.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = mgr.Process.Kill()
		}
		if t.Failed() {
			t.Logf("manager stderr:\n%s", mgrErr.String())
		}
	})
	stateDir := filepath.Join(ws, tools.StateDirName)
	var st procman.State
	proctest.Until(t, "engine and agent", 60*time.Second, func() bool {
		var ok bool
		st, ok = procman.Running(stateDir)
		if !ok || st.GRPCAddress == "" || st.AgentPID == 0 || st.ClientToken == "" || st.WebURL == "" {
			return false
		}
		s, err := engineStatus(t, st.GRPCAddress, st.ClientToken)
		return err == nil && s.GetAgentConnected()
	})
	if fi, err := os.Stat(filepath.Join(stateDir, procman.StateFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v %v", fi.Mode(), err)
	}

	// A message whose sub-agent's call waits for a person.
	send := as("send", "--workspace", ws, "--output", "json", "publish the branch")
	var sendOut bytes.Buffer
	var sendErr proctest.Buffer
	send.Stdout, send.Stderr = &sendOut, &sendErr
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("send stderr:\n%s", sendErr.String())
		}
	})
	if err := send.Start(); err != nil {
		t.Fatal(err)
	}
	sendDone := make(chan error, 1)
	go func() { sendDone <- send.Wait() }()
	t.Cleanup(func() {
		_ = send.Process.Kill()
		<-sendDone
	})
	approvalID := pendingApproval(t, st)
	subPID := childWith(t, st.EnginePID, "internal-subagent")

	// The processes that hold credentials are closed to the user's other
	// processes, and none of their environments holds a token.
	for who, pid := range map[string]int{"manager": st.ManagerPID, "engine": st.EnginePID, "agent": st.AgentPID, "sub-agent": subPID} {
		for _, f := range []string{"environ", "mem"} {
			if b, err := u.Read(fmt.Sprintf("/proc/%d/%s", pid, f)); err == nil || !strings.Contains(err.Error(), "Permission denied") {
				t.Errorf("the %s's /proc/%d/%s as the same user: %d bytes, %v; want permission denied", who, pid, f, len(b), err)
			}
		}
		if os.Geteuid() == 0 { // root still sees it: check what is in it
			env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(env), st.ClientToken) || strings.Contains(string(env), "TOKEN=") {
				t.Errorf("the %s's environment holds a token", who)
			}
		}
	}

	// The attacker gets nowhere.
	atk := exec.Command(u.Exe, st.GRPCAddress, agentGRPCAddr(t, st.AgentPID), st.WebURL, approvalID)
	atk.Env = append(os.Environ(), envRunAsAttacker+"=1")
	u.Apply(atk)
	out, err := atk.Output()
	if err != nil {
		t.Fatalf("attacker: %v\n%s", err, out)
	}
	attempts := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		what, got, _ := strings.Cut(line, "\t")
		switch {
		case what == "candidates":
		case strings.HasPrefix(what, "grpc SubAgentComplete"):
			// Not served where the attacker can connect.
			if got != "Unimplemented" {
				t.Errorf("attacker: %s: %s", what, got)
			}
		case strings.HasPrefix(what, "grpc "):
			if got != "Unauthenticated" {
				t.Errorf("attacker: %s: %s", what, got)
			}
		case strings.HasPrefix(what, "http "):
			if got != "401" {
				t.Errorf("attacker: %s: %s", what, got)
			}
		default:
			t.Errorf("attacker: %s: %s", what, got)
		}
		attempts++
	}
	t.Logf("the attacker tried %d ways, none worked:\n%s", attempts, out)
	if attempts < 9 {
		t.Fatalf("attacker made %d attempts:\n%s", attempts, out)
	}

	// The engine's own client, with the token from the state file, can.
	deny := as("deny", "--workspace", ws, approvalID)
	if out, err := deny.CombinedOutput(); err != nil {
		t.Fatalf("agentctl deny %s: %v\n%s", approvalID, err, out)
	}
	select {
	case err := <-sendDone:
		sendDone <- err
		if err != nil {
			t.Fatalf("send: %v\n%s", err, sendOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the turn did not end after the denial")
	}
	lines := jsonLines(t, sendOut.String())
	var resolved []map[string]any
	for _, l := range ofType(lines, "approval") {
		if l["state"] == "resolved" {
			resolved = append(resolved, l)
		}
	}
	if len(resolved) != 1 || resolved[0]["approved"] != false || resolved[0]["by"] != "cli" {
		t.Fatalf("approval lines %v\n%s", resolved, sendOut.String())
	}
	var spawn map[string]any
	for _, r := range ofType(lines, "tool_result") {
		if r["tool"] == "spawn_agent" {
			spawn = r
		}
	}
	if spawn == nil || spawn["output"] != "helper: the push was not approved." {
		t.Fatalf("spawn_agent result %v", spawn)
	}
}

// pendingApproval waits for an approval on the engine, watching as a
// client with the token, and returns its id.
func pendingApproval(t *testing.T, st procman.State) string {
	t.Helper()
	client, closeConn, err := dialEngine(st.GRPCAddress, st.ClientToken)
	if err != nil {
		t.Fatal(err)
	}
	defer closeConn()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w, err := client.WatchSession(ctx, &pb.WatchSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := w.Recv()
		if err != nil {
			t.Fatalf("waiting for an approval: %v", err)
		}
		if a := ev.GetApprovalNeeded(); a != nil {
			return a.GetApprovalId()
		}
	}
}

// childWith finds the child of parent whose command line contains arg.
func childWith(t *testing.T, parent int, arg string) int {
	t.Helper()
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + p.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(parent) {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + p.Name() + "/cmdline")
		if bytes.Contains(cmdline, []byte(arg)) {
			return pid
		}
	}
	t.Fatalf("no child of %d runs %s", parent, arg)
	return 0
}
