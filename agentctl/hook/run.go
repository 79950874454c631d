package hook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Options configure one hook run.
type Options struct {
	Agent  Agent
	Shield ShieldConfig
	// Timeout bounds the whole run, from reading stdin to the verdict.
	Timeout time.Duration
	// OnError answers when the call cannot be judged; OnEscalate answers
	// ESCALATE. Each is Deny or Ask.
	OnError, OnEscalate Decision
	Env                 Env
}

// DefaultTimeout leaves the agents' own hook timeouts (which, on expiry,
// let the tool run) far behind: the hook answers deny first.
const DefaultTimeout = 5 * time.Second

// Run reads one hook input from stdin, judges it and writes the agent's
// answer to stdout. It returns the process exit code: 0 with the answer
// on stdout, or 2 (both agents' "block", with the reason on stderr) when
// even the answer could not be written.
func Run(ctx context.Context, o Options, stdin io.Reader, stdout, stderr io.Writer) int {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Shield.Timeout <= 0 {
		o.Shield.Timeout = o.Timeout
	}
	if o.OnError != Ask {
		o.OnError = Deny
	}
	if o.OnEscalate != Deny {
		o.OnEscalate = Ask
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()

	// The judging runs aside so that the deadline holds whatever it waits
	// on: a stdin never closed, a shieldd that never answers, a lock.
	done := make(chan Answer, 1)
	go func() { done <- judge(ctx, o, stdin) }()
	var a Answer
	select {
	case a = <-done:
	case <-ctx.Done():
		a = FromError(fmt.Errorf("no verdict within %v", o.Timeout), o.OnError)
	}
	if a.Decision != Allow {
		fmt.Fprintln(stderr, "agentctl hook:", a.Reason)
	}
	if _, err := stdout.Write(Render(o.Agent, a)); err != nil {
		fmt.Fprintln(stderr, "agentctl hook: writing the answer:", err, "; blocking the action")
		return 2
	}
	return 0
}

// judge turns one hook input into an answer; every failure is the
// OnError answer.
func judge(ctx context.Context, o Options, stdin io.Reader) Answer {
	data, err := io.ReadAll(io.LimitReader(stdin, MaxInputBytes+1))
	if err != nil {
		return FromError(fmt.Errorf("reading stdin: %w", err), o.OnError)
	}
	call, err := Parse(o.Agent, data)
	if err != nil {
		return FromError(err, o.OnError)
	}
	m, err := Map(call)
	if err != nil {
		return FromError(err, o.OnError)
	}
	shield, release, err := OpenShield(o.Shield)
	if err != nil {
		return FromError(fmt.Errorf("shield: %w", err), o.OnError)
	}
	defer release()
	v, err := shield.Evaluate(ctx, Request(call, m, o.Env))
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("no verdict within %v: %w", o.Timeout, err)
		}
		return FromError(err, o.OnError)
	}
	return FromVerdict(v, o.OnEscalate)
}
