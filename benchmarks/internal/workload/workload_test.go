package workload

import (
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
