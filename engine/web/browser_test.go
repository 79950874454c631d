package web_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parapet-dev/parapet/llm"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// browser starts headless Chromium (Debian's package) for one test. A
// missing browser fails the test, so CI cannot pass without running it;
// PARAPET_SKIP_BROWSER=1 skips it on purpose.
func browser(t *testing.T) context.Context {
	t.Helper()
	if os.Getenv("PARAPET_SKIP_BROWSER") == "1" {
		t.Skip("PARAPET_SKIP_BROWSER=1: the headless Chromium test is skipped on purpose")
	}
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (%v). Install Debian's package: apt-get install -y --no-install-recommends chromium "+
			"(make deps does it), or set PARAPET_SKIP_BROWSER=1 to skip this test on purpose", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()))
	if os.Geteuid() == 0 {
		// Chromium will not start its sandbox as root, and CI runs these
		// tests as root. The page it loads is our own, from loopback.
		opts = append(opts, chromedp.NoSandbox)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	return ctx
}

// TestPageInChromium drives the page as a person would: it loads, a
// message shows the streamed answer, an escalated action shows an
// approval card whose Approve button makes it run, and Deny keeps another
// from running.
func TestPageInChromium(t *testing.T) {
	ctx := browser(t)
	s := newStack(t, stackOptions{replies: []llm.Response{
		text("Hello from the scripted model. <b>not bold</b>"),
		loadTools, escalated("approved.txt"), text("Pushed after your approval."),
		escalated("denied.txt"), text("You denied the push, so nothing ran."),
	}})
	// The engine's own view of what ran, subscribed before anything happens.
	watch := s.eng.Subscribe("")
	defer watch.Close()

	var mu sync.Mutex
	var problems []string
	console := chromedp.Console(ctx)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()

	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(js string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return v
	}
	wait := func(what, js string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(guard))); err != nil {
			t.Fatalf("waiting for %s (%s): %v", what, js, err)
		}
	}
	send := func(msg string) {
		t.Helper()
		run("send "+msg, chromedp.SendKeys(chromedp.ID("message"), msg), chromedp.Click(chromedp.ID("send")))
	}
	answers := `document.querySelectorAll('#chat .bubble.assistant[data-done]')`
	lastAnswer := `[...` + answers + `].pop()`

	// Signing in: the address agentctl status prints, with the token.
	run("load the page", chromedp.Navigate(s.base+"/?token="+s.web.Token()))
	wait("the event stream", `document.body.dataset.events === 'open'`)
	wait("the status line", `document.body.dataset.agent === 'connected'`)
	if st := eval(`document.getElementById('status').textContent`); !strings.Contains(st, "agent atlas connected") {
		t.Fatalf("status line %q", st)
	}

	send("hello")
	wait("the first answer", answers+`.length === 1`)
	if got := eval(lastAnswer + `.dataset.done + '|' + ` + lastAnswer + `.textContent`); got != "complete|Hello from the scripted model. <b>not bold</b>" {
		t.Fatalf("first answer %q", got)
	}
	// The model's markup is shown as text, never parsed.
	if n := eval(`String(document.querySelectorAll('#chat b').length)`); n != "0" {
		t.Fatalf("model output became %s HTML element(s)", n)
	}
	wait("the session in the list", `document.querySelectorAll('#sessions li.current').length === 1`)

	// Escalated, then approved: the command runs.
	send("push it")
	wait("the approval card", `document.querySelector('.approval button.approve') !== null`)
	card := eval(`document.querySelector('.approval').textContent`)
	for _, want := range []string{"execute_command", "approved.txt", "ESCALATE", "tier", "denied automatically at"} {
		if !strings.Contains(card, want) {
			t.Fatalf("approval card %q lacks %q", card, want)
		}
	}
	run("approve", chromedp.Click(chromedp.CSS(".approval button.approve")))
	wait("the second answer", answers+`.length === 2`)
	if got := eval(lastAnswer + `.textContent`); got != "Pushed after your approval." {
		t.Fatalf("second answer %q", got)
	}
	wait("the card to go", `document.querySelectorAll('.approval').length === 0`)
	if !exists(t, s.file("approved.txt")) {
		t.Fatal("approved.txt is missing: the approved command did not run")
	}
	wait("the verdict in the activity panel", `document.querySelector('#activity li[data-type="SHIELD_VERDICT"][data-decision="ESCALATE"]') !== null`)
	wait("the run in the activity panel", `document.querySelector('#activity li[data-type="ACTION_COMPLETED"]') !== null`)

	// Escalated, then denied: the command does not run.
	send("push again")
	wait("the second approval card", `document.querySelector('.approval button.deny') !== null`)
	run("deny", chromedp.Click(chromedp.CSS(".approval button.deny")))
	wait("the third answer", answers+`.length === 3`)
	if got := eval(lastAnswer + `.textContent`); got != "You denied the push, so nothing ran." {
		t.Fatalf("third answer %q", got)
	}
	wait("the denial in the activity panel", `document.querySelector('#activity li[data-outcome="denied"]') !== null`)
	if exists(t, s.file("denied.txt")) {
		t.Fatal("denied.txt exists: the denied command ran")
	}

	// The engine saw one run (approved) and one refusal (denied), both
	// decided over HTTP.
	var ran, resolved []string
	for done := 0; done < 3; {
		select {
		case ev := <-watch.Events:
			switch ev.GetEventType() {
			case evStarted:
				ran = append(ran, ev.GetActionStarted().GetArgumentsJson())
			case evResolved:
				r := ev.GetApprovalResolved()
				resolved = append(resolved, fmt.Sprintf("%s by %s", r.GetOutcome(), r.GetResolvedBy()))
			case pb.PipelineEventType_PIPELINE_EVENT_TYPE_RESPONSE_COMPLETE:
				done++
			}
		case <-timeout():
			t.Fatal("the engine's events stopped")
		}
	}
	if len(ran) != 1 || !strings.Contains(ran[0], "approved.txt") || strings.Join(resolved, ", ") != "approved by http, denied by http" {
		t.Fatalf("ran %q, approvals %q", ran, resolved)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Fatalf("the page logged errors (CSP violations show here too):\n%s", strings.Join(problems, "\n"))
	}
}
