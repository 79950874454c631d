package sandbox

import (
	"errors"
	"testing"
)

func TestStatusOf(t *testing.T) {
	ok := ProbeResult{Name: "a", Blocked: true, Control: true}
	open := ProbeResult{Name: "b", Blocked: false, Control: true}
	badControl := ProbeResult{Name: "c", Blocked: true, Control: false}
	skipped := ProbeResult{Name: "d", Blocked: true, Control: false, Skipped: true}
	skippedOpen := ProbeResult{Name: "e", Blocked: false, Control: false, Skipped: true}

	for _, tc := range []struct {
		name     string
		probes   []ProbeResult
		applyErr error
		want     Status
	}{
		{"all blocked, controls ok", []ProbeResult{ok, ok}, nil, StatusSandboxed},
		{"skipped probes do not count", []ProbeResult{ok, skipped, skippedOpen}, nil, StatusSandboxed},
		{"one open", []ProbeResult{ok, open}, nil, StatusPartial},
		{"none blocked", []ProbeResult{open, open}, nil, StatusUnsandboxed},
		{"failed control caps at partial", []ProbeResult{ok, badControl}, nil, StatusPartial},
		{"apply error caps at partial", []ProbeResult{ok, ok}, errors.New("seccomp failed"), StatusPartial},
		{"no probes proves nothing", nil, nil, StatusUnsandboxed},
		{"only skipped proves nothing", []ProbeResult{skipped}, nil, StatusUnsandboxed},
	} {
		if got := statusOf(tc.probes, tc.applyErr); got != tc.want {
			t.Errorf("%s: statusOf = %q, want %q", tc.name, got, tc.want)
		}
	}
}
