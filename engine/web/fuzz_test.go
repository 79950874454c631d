package web

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// FuzzParseMessage: any body is either refused with a message or gives
// valid, non-empty content; what is accepted decodes the same under the
// standard library's (laxer) decoder, so no body means one thing here
// and another to a different JSON reader.
func FuzzParseMessage(f *testing.F) {
	for _, seed := range []string{
		`{"content":"hi"}`, `{"content":"hi","mode":"otr"}`, `{"content":"hi","mode":"normal"}`, `{"content":""}`,
		`{"content":"a","content":"b"}`, `{"content":"\ud800"}`, "{\"content\":\"\xff\"}", `{"content":"hi","x":1}`,
		`{"Content":"hi"}`, `[]`, `null`, ` {"content":"hi"} `, `{"content":"hi"}{}`, `{"content":5}`, ``,
	} {
		f.Add([]byte(seed), true)
		f.Add([]byte(seed), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, newSession bool) {
		content, mode, err := parseMessage(body, newSession)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("refused without a message")
			}
			return
		}
		if content == "" || !utf8.ValidString(content) {
			t.Fatalf("accepted content %q", content)
		}
		if mode != pb.SessionMode_SESSION_MODE_NORMAL && (mode != pb.SessionMode_SESSION_MODE_OTR || !newSession) {
			t.Fatalf("mode %v for newSession=%v", mode, newSession)
		}
		var std messageBody
		if err := json.Unmarshal(body, &std); err != nil || std.Content != content {
			t.Fatalf("encoding/json reads %q (%v), we read %q", std.Content, err, content)
		}
	})
}

// FuzzParseApproval: an accepted body always states the decision, and
// states it once: the standard library's decoder (which lets a repeated
// member win) reads the same decision.
func FuzzParseApproval(f *testing.F) {
	for _, seed := range []string{
		`{"approved":true}`, `{"approved":false,"session_id":"sess_1"}`, `{"approved":false,"approved":true}`,
		`{"approved":"true"}`, `{"approved":1}`, `{"approved":null}`, `{}`, `{"Approved":true}`, `{"approved":true,"x":0}`,
		`{"approved":true} `, `{"approved":true}x`, `{"session_id":"\u0000"}`, `true`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		approved, sessionID, err := parseApproval(body)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("refused without a message")
			}
			return
		}
		var std struct {
			Approved  *bool  `json:"approved"`
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal(body, &std); err != nil || std.Approved == nil || *std.Approved != approved || std.SessionID != sessionID {
			t.Fatalf("encoding/json reads %+v (%v), we read approved=%v session=%q", std, err, approved, sessionID)
		}
		if !utf8.ValidString(sessionID) || len(sessionID) > maxIDBytes {
			t.Fatalf("accepted session id %q", sessionID)
		}
	})
}

// FuzzTokenOK: a request is let in only when the credential it presents
// first (X-Parapet-Token, else "Authorization: Bearer", else the cookie of
// this listener's port) is exactly the token; a near miss never is.
func FuzzTokenOK(f *testing.F) {
	const tok = "7f3a0c9e2b5d4f6a8c1e3b5d7f9a2c4e6b8d0f1a3c5e7b9d2f4a6c8e0b1d3f5a"
	for _, s := range [][3]string{
		{tok, "", ""}, {"", "Bearer " + tok, ""}, {"", "", tok}, {"x", "", tok}, {"", "Bearer", tok},
		{tok[:63], "", ""}, {tok + " ", "", ""}, {"", "bearer " + tok, ""}, {"", "Bearer  " + tok, ""}, {"", "", ""},
	} {
		f.Add(s[0], s[1], s[2])
	}
	s := &Server{token: tok}
	f.Fuzz(func(t *testing.T, header, auth, cookie string) {
		r := httptest.NewRequest("GET", "/api/status", nil)
		if header != "" {
			r.Header.Set(TokenHeader, header)
		}
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		if cookie != "" {
			r.Header.Set("Cookie", cookieName(r)+"="+cookie)
		}
		got := r.Header.Get(TokenHeader)
		if got == "" {
			got, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		}
		if got == "" {
			if c, err := r.Cookie(cookieName(r)); err == nil {
				got = c.Value
			}
		}
		if ok := s.tokenOK(r); ok != (got == tok) {
			t.Fatalf("tokenOK = %v for header %q, authorization %q, cookie %q", ok, header, auth, cookie)
		}
	})
}
