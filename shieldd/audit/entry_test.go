package audit

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func sampleEntry() *Entry {
	return &Entry{
		Time: time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC), Kind: KindEvaluation,
		Tenant: "acme", Principal: "hmac:alice", Caller: Caller{Engine: "e1", User: "alice", Workspace: "w1", Agent: "coder"},
		Session: "s1", RequestID: "r1", ActionType: "execute_command", ActionHash: strings.Repeat("ab", 32),
		Decision: "block", Tier: 1, RuleIDs: []string{"rce.download-pipe-shell"}, Latency: 1234 * time.Microsecond,
		PrevHash: Genesis, Seq: 1,
	}
}

func TestEncodeParseRoundTrip(t *testing.T) {
	for _, e := range []*Entry{
		sampleEntry(),
		{Time: time.Unix(0, 0), Kind: KindOutcome, Seq: 7, PrevHash: strings.Repeat("1", 64), Outcome: "approved",
			DecidedBy: "bob", ApprovalID: "a-1", Reason: "looks fine", ActionHash: strings.Repeat("cd", 32)},
		{Time: time.Now(), Kind: KindEvaluation, Seq: 2, PrevHash: Genesis, Decision: "error",
			Error: "InvalidArgument: bad \"json\"\n\t\x01\\ é \u2028", Tenant: "t\xff", Caller: Caller{Agent: "x"}},
	} {
		e.normalize()
		line, h := e.encode(nil)
		got, err := ParseLine(line)
		if err != nil {
			t.Fatalf("ParseLine(%s): %v", line, err)
		}
		if got.Hash != h {
			t.Fatalf("hash %s, want %s", got.Hash, h)
		}
		again, _ := got.encode(nil)
		if !bytes.Equal(again, line) {
			t.Fatalf("re-encoded\n%s\nwant\n%s", again, line)
		}
	}
}

func TestParseLineRejects(t *testing.T) {
	e := sampleEntry()
	e.normalize()
	good, _ := e.encode(nil)
	cases := map[string]struct {
		line string
		want string
	}{
		"changed field":   {strings.Replace(string(good), `"decision":"block"`, `"decision":"allow"`, 1), "entry_hash does not match"},
		"reformatted":     {strings.Replace(string(good), `"tier":1`, `"tier": 1`, 1), "canonical"},
		"extra member":    {strings.Replace(string(good), `{"v":1,`, `{"v":1,"x":2,`, 1), "unknown field"},
		"duplicate":       {strings.Replace(string(good), `"tenant":"acme"`, `"tenant":"acme","tenant":"acme"`, 1), "canonical"},
		"no hash":         {`{"v":1}`, "entry_hash"},
		"upper-case hash": {string(good[:len(good)-66]) + strings.ToUpper(string(good[len(good)-66:len(good)-2])) + `"}`, "lower-case"},
		"not JSON":        {"{" + string(good[2:]), "JSON"},
	}
	for name, tc := range cases {
		if _, err := ParseLine([]byte(tc.line)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, tc.want)
		}
	}
}

func FuzzParseLine(f *testing.F) {
	e := sampleEntry()
	e.normalize()
	good, _ := e.encode(nil)
	f.Add(good)
	f.Add([]byte(`{"v":1,"entry_hash":"` + Genesis + `"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		got, err := ParseLine(line)
		if err != nil {
			return
		}
		// Whatever parses is canonical: it encodes back to the same bytes.
		again, h := got.encode(nil)
		if !bytes.Equal(again, line) || h != got.Hash {
			t.Fatalf("parsed line does not re-encode to itself:\n%q\n%q", line, again)
		}
	})
}

func FuzzVerifyReader(f *testing.F) {
	var chain []byte
	prev := Genesis
	for i := range 3 {
		e := sampleEntry()
		e.Seq, e.PrevHash = uint64(i+1), prev
		e.normalize()
		var line []byte
		line, prev = e.encode(nil)
		chain = append(append(chain, line...), '\n')
	}
	f.Add(chain)
	f.Add(chain[:len(chain)-10])
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, _ := NewVerifier("")
		err := v.Reader(bytes.NewReader(data), "fuzz", true)
		r := v.Result()
		if err == nil && r.Entries > 0 && r.LastSeq != uint64(r.Entries) {
			t.Fatalf("a verified chain from genesis has %d entries but ends at seq %d", r.Entries, r.LastSeq)
		}
	})
}

func FuzzLastLine(f *testing.F) {
	f.Add([]byte("a\nb\n"))
	f.Add([]byte("a\nb"))
	f.Add([]byte(""))
	f.Add([]byte("\n\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		line, complete, err := lastLine(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		// The reference: the whole-line prefix ends at the last newline.
		wantComplete := bytes.LastIndexByte(data, '\n') + 1
		var wantLine []byte
		if wantComplete > 0 {
			whole := data[:wantComplete-1]
			wantLine = whole[bytes.LastIndexByte(whole, '\n')+1:]
		}
		if complete != int64(wantComplete) || !bytes.Equal(line, wantLine) || (line == nil) != (wantComplete == 0) {
			t.Fatalf("lastLine(%q) = %q, %d; want %q, %d", data, line, complete, wantLine, wantComplete)
		}
	})
}

func TestLastLineAcrossReadChunks(t *testing.T) {
	for _, sizes := range [][3]int{{10, 70 << 10, 0}, {70 << 10, 10, 5}, {64 << 10, 64<<10 - 1, 64 << 10}, {0, 130 << 10, 1}} {
		data := append(bytes.Repeat([]byte("a"), sizes[0]), '\n')
		data = append(data, bytes.Repeat([]byte("b"), sizes[1])...)
		data = append(data, '\n')
		data = append(data, bytes.Repeat([]byte("c"), sizes[2])...) // torn tail
		line, complete, err := lastLine(bytes.NewReader(data), int64(len(data)))
		if err != nil || len(line) != sizes[1] || complete != int64(sizes[0]+sizes[1]+2) {
			t.Errorf("sizes %v: line %d bytes, complete %d, %v", sizes, len(line), complete, err)
		}
	}
}
