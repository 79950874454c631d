package workload

import (
	"encoding/json"
	"testing"

	"github.com/parapet-dev/parapet/rules/action"
)

func TestLoadEmbeddedCorpus(t *testing.T) {
	wl, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if len(wl.Items) == 0 || wl.Source == "" {
		t.Fatalf("workload %+v", wl)
	}
	for _, it := range wl.Items {
		if it.Request.Type == "" {
			t.Errorf("%s: no action type", it.Name)
		}
	}
}

func TestVariationTouchesOnlyWorkspaceID(t *testing.T) {
	it := Item{Name: "x", MinTier: 2, Request: action.Request{
		Type: "read_file", Payload: []byte(`{"path":"a"}`),
		Caller: action.Caller{Tenant: "t", WorkspaceID: "w", EngineID: "e", UserID: "u", SessionID: "s",
			AgentName: "a", WorkspaceRoot: "/r", Home: "/h"},
		Attachments: []action.Attachment{{Path: "run.sh", Content: "ls"}, {Path: "gone.sh", Unreadable: true}},
	}}
	id := DistinctID("w", "run", 7)
	if id == "w" || id == DistinctID("w", "run", 8) || id == DistinctID("w", "other", 7) {
		t.Errorf("ids are not distinct: %q", id)
	}
	v := it.Varied(id)
	want := it.Request.Caller
	want.WorkspaceID = id
	if v.Caller != want || string(v.Payload) != string(it.Request.Payload) || v.Type != it.Request.Type {
		t.Errorf("Varied = %+v", v)
	}
	if it.Request.Caller.WorkspaceID != "w" {
		t.Error("Varied modified the item")
	}

	p := it.Proto(id)
	c := p.GetCaller()
	if p.GetActionType() != "read_file" || p.GetPayloadJson() != `{"path":"a"}` || p.GetMinTier() != 2 ||
		p.GetSessionId() != "s" || c.GetTenant() != "t" || c.GetWorkspaceId() != id || c.GetEngineId() != "e" ||
		c.GetUserId() != "u" || c.GetAgentName() != "a" || c.GetWorkspaceRoot() != "/r" || c.GetHomeDir() != "/h" {
		t.Errorf("Proto = %v", p)
	}
	if a := p.GetAttachments(); len(a) != 2 || a[0].GetPath() != "run.sh" || a[0].GetContent() != "ls" || !a[1].GetUnreadable() {
		t.Errorf("Proto attachments = %v", a)
	}
	if got := it.Proto("").GetCaller().GetWorkspaceId(); got != "w" {
		t.Errorf("Proto(\"\") workspace id %q, want the case's", got)
	}
}

// VaryContent appends the request's token to the longest string argument
// and nothing else, and keeps the workspace id to the run; VaryWorkspace
// leaves the payload alone; a payload with no string argument varies by
// workspace id.
func TestDistinctContent(t *testing.T) {
	it := Item{Request: action.Request{Type: "execute_command", Payload: []byte(`{"command":"ls -la src","cwd":"/w","timeout":5}`),
		Caller: action.Caller{WorkspaceID: "w"}}}
	r := it.Distinct(VaryContent, "x", 7)
	var got map[string]any
	if err := json.Unmarshal(r.Payload, &got); err != nil {
		t.Fatal(err)
	}
	if got["command"] != "ls -la src x-000000000007" || got["cwd"] != "/w" || got["timeout"] != 5.0 || len(got) != 3 {
		t.Errorf("content varied as %s", r.Payload)
	}
	if r.Caller.WorkspaceID != "w/bench-x" {
		t.Errorf("workspace %q, want the run's", r.Caller.WorkspaceID)
	}
	if other := it.Distinct(VaryContent, "x", 8); string(other.Payload) == string(r.Payload) || len(other.Payload) != len(r.Payload) {
		t.Errorf("requests 7 and 8: %s and %s, want distinct payloads of one length", r.Payload, other.Payload)
	}
	if string(it.Request.Payload) != `{"command":"ls -la src","cwd":"/w","timeout":5}` {
		t.Error("Distinct modified the item")
	}
	if w := it.Distinct(VaryWorkspace, "x", 7); string(w.Payload) != string(it.Request.Payload) || w.Caller.WorkspaceID != DistinctID("w", "x", 7) {
		t.Errorf("VaryWorkspace = %+v", w)
	}
	for _, p := range []string{`{"n":1,"ok":true}`, `[1,2]`, `not json`, ``} {
		it.Request.Payload = []byte(p)
		if got := it.Distinct(VaryContent, "x", 7); string(got.Payload) != p || got.Caller.WorkspaceID != DistinctID("w", "x", 7) {
			t.Errorf("payload %q: %+v, want it unchanged and the workspace varied", p, got)
		}
	}
	// Equal lengths: the first key in order is chosen, whatever the map's order.
	it.Request.Payload = []byte(`{"b":"xy","a":"zz"}`)
	if got := string(it.Distinct(VaryContent, "x", 7).Payload); got != `{"a":"zz x-000000000007","b":"xy"}` {
		t.Errorf("tie varied as %s", got)
	}
	if _, err := ParseVary("content"); err != nil {
		t.Error(err)
	}
	if _, err := ParseVary("payload"); err == nil {
		t.Error("ParseVary accepted an unknown mode")
	}
}
