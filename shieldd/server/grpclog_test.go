package server

import (
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/parapet-dev/parapet/internal/proctest"
	"github.com/parapet-dev/parapet/observability"
)

// jsonRecords parses the JSON log lines the server's goroutines wrote.
func jsonRecords(t *testing.T, sink *proctest.Buffer) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(sink.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, rec)
	}
	return out
}

// finishedCalls logs an OK Evaluate and a rejected one (InvalidArgument,
// logged at Info) to a JSON logger at level, and returns the "finished
// call" records.
func finishedCalls(t *testing.T, level slog.Level) []map[string]any {
	var sink proctest.Buffer
	log := slog.New(slog.NewJSONHandler(&sink, &slog.HandlerOptions{Level: level}))
	ts := startServerWith(t, func(_ *ShieldService, cfg *DaemonConfig, _ *observability.Metrics) { cfg.Logger = log })
	if _, err := ts.client.Evaluate(t.Context(), evalReq("read_file", `{"path":"/home/dev/project/a"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.client.Evaluate(t.Context(), evalReq("", `{}`)); err == nil {
		t.Fatal("an empty action type was accepted")
	}
	ts.stop()
	var calls []map[string]any
	for _, rec := range jsonRecords(t, &sink) {
		if rec["msg"] == "finished call" {
			calls = append(calls, rec)
		}
	}
	return calls
}

// TestQuietUnaryLogging: at Info, the OK call is not logged and the
// failed one is, with the fields the middleware logs for it at Debug.
func TestQuietUnaryLogging(t *testing.T) {
	quiet := finishedCalls(t, slog.LevelInfo)
	if len(quiet) != 1 || quiet[0]["grpc.code"] != "InvalidArgument" || quiet[0]["level"] != "INFO" {
		t.Fatalf("at Info: finished calls %v; want only the InvalidArgument one, at INFO", quiet)
	}
	full := finishedCalls(t, slog.LevelDebug)
	if len(full) != 2 || full[0]["grpc.code"] != "OK" || full[1]["grpc.code"] != "InvalidArgument" {
		t.Fatalf("at Debug: finished calls %v; want OK then InvalidArgument", full)
	}
	if got, want := slices.Sorted(maps.Keys(quiet[0])), slices.Sorted(maps.Keys(full[1])); !slices.Equal(got, want) {
		t.Errorf("quiet logging fields %v; the middleware's %v", got, want)
	}
	for _, k := range []string{"protocol", "grpc.component", "grpc.service", "grpc.method", "grpc.method_type", "grpc.error"} {
		if quiet[0][k] != full[1][k] {
			t.Errorf("%s: %v, the middleware: %v", k, quiet[0][k], full[1][k])
		}
	}
}
