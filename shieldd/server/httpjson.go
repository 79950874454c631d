package server

import (
	"bytes"
	"errors"
	"math"
	"net/http"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/parapet-dev/parapet/internal/textcut"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// The JSON of POST /v1/evaluate without protojson's reflection, which was
// about 40 % of the HTTP path's CPU (benchmarks/README.md, "Profiling").
//
// decodeEvaluateRequest accepts only what protojson.Unmarshal accepts, and
// then gives the same message; whatever it does not handle, including
// everything protojson rejects, it hands back unjudged, and protojson
// decides (so the error messages are protojson's). appendEvaluateResponse
// emits what marshaler (UseProtoNames, EmitUnpopulated) emits, less the
// whitespace protojson adds at random: json.Compact of protojson's output
// byte for byte. FuzzEvaluateRequestJSON and FuzzEvaluateResponseJSON
// hold both to that.
//
// Both know the fields of their messages by heart. fastJSON checks the
// generated descriptors against that list at start-up: a field added to
// the .proto turns the fast path off (protojson serves every call, still
// correct) until this file learns it, and TestFastJSONCoversSchema fails.

// fastJSON is on when the descriptors have exactly the fields below.
var fastJSON = schemaMatches()

type fieldSpec struct {
	num      protoreflect.FieldNumber
	name     string
	jsonName string
	kind     protoreflect.Kind
	list     bool
}

var knownFields = map[protoreflect.FullName][]fieldSpec{
	"openparallax.v1.EvaluateRequest": {
		{1, "action_type", "actionType", protoreflect.StringKind, false},
		{2, "payload_json", "payloadJson", protoreflect.StringKind, false},
		{3, "tool_name", "toolName", protoreflect.StringKind, false},
		{4, "tool_args_json", "toolArgsJson", protoreflect.StringKind, false},
		{5, "session_id", "sessionId", protoreflect.StringKind, false},
		{6, "min_tier", "minTier", protoreflect.Int32Kind, false},
		{7, "caller", "caller", protoreflect.MessageKind, false},
		{8, "context", "context", protoreflect.MessageKind, true}, // map<string, string>
		{9, "request_id", "requestId", protoreflect.StringKind, false},
		{10, "attachments", "attachments", protoreflect.MessageKind, true},
	},
	"openparallax.v1.Attachment": {
		{1, "path", "path", protoreflect.StringKind, false},
		{2, "content", "content", protoreflect.StringKind, false},
		{3, "unreadable", "unreadable", protoreflect.BoolKind, false},
	},
	"openparallax.v1.CallerContext": {
		{1, "tenant", "tenant", protoreflect.StringKind, false},
		{2, "workspace_id", "workspaceId", protoreflect.StringKind, false},
		{3, "engine_id", "engineId", protoreflect.StringKind, false},
		{4, "user_id", "userId", protoreflect.StringKind, false},
		{5, "workspace_root", "workspaceRoot", protoreflect.StringKind, false},
		{6, "home_dir", "homeDir", protoreflect.StringKind, false},
		{7, "agent_name", "agentName", protoreflect.StringKind, false},
	},
	"openparallax.v1.EvaluateResponse": {
		{1, "verdict", "verdict", protoreflect.MessageKind, false},
		{2, "request_id", "requestId", protoreflect.StringKind, false},
	},
	"openparallax.v1.Verdict": {
		{1, "decision", "decision", protoreflect.EnumKind, false},
		{2, "tier", "tier", protoreflect.Int32Kind, false},
		{3, "confidence", "confidence", protoreflect.DoubleKind, false},
		{4, "reasoning", "reasoning", protoreflect.StringKind, false},
		{5, "action_hash", "actionHash", protoreflect.StringKind, false},
		{6, "evaluated_at", "evaluatedAt", protoreflect.Int64Kind, false},
		{7, "expires_at", "expiresAt", protoreflect.Int64Kind, false},
		{8, "rule_ids", "ruleIds", protoreflect.StringKind, true},
		{9, "policy_version", "policyVersion", protoreflect.StringKind, false},
		{10, "cache_hit", "cacheHit", protoreflect.BoolKind, false},
		{11, "findings", "findings", protoreflect.MessageKind, true},
		{12, "action_type", "actionType", protoreflect.StringKind, false},
		{13, "required_tier", "requiredTier", protoreflect.Int32Kind, false},
		{14, "confinement", "confinement", protoreflect.MessageKind, false},
	},
	"openparallax.v1.Confinement": {
		{1, "write", "write", protoreflect.EnumKind, false},
		{2, "connect_ports", "connectPorts", protoreflect.Uint32Kind, true},
		{4, "read_paths", "readPaths", protoreflect.StringKind, true},
	},
	"openparallax.v1.Finding": {
		{1, "rule_id", "ruleId", protoreflect.StringKind, false},
		{2, "category", "category", protoreflect.StringKind, false},
		{3, "severity", "severity", protoreflect.EnumKind, false},
		{4, "outcome", "outcome", protoreflect.EnumKind, false},
		{5, "message", "message", protoreflect.StringKind, false},
		{6, "tier", "tier", protoreflect.Int32Kind, false},
		{7, "evidence", "evidence", protoreflect.StringKind, false},
	},
}

// schemaMatches reports whether the generated messages have exactly the
// fields above, in that order, and the enums the names below.
func schemaMatches() bool {
	for _, md := range []protoreflect.MessageDescriptor{
		(&pb.EvaluateRequest{}).ProtoReflect().Descriptor(), (&pb.CallerContext{}).ProtoReflect().Descriptor(),
		(&pb.EvaluateResponse{}).ProtoReflect().Descriptor(), (&pb.Verdict{}).ProtoReflect().Descriptor(),
		(&pb.Finding{}).ProtoReflect().Descriptor(), (&pb.Attachment{}).ProtoReflect().Descriptor(),
		(&pb.Confinement{}).ProtoReflect().Descriptor(),
	} {
		want := knownFields[md.FullName()]
		fields := md.Fields()
		if fields.Len() != len(want) || md.Oneofs().Len() != 0 || md.Extensions().Len() != 0 {
			return false
		}
		for i, w := range want {
			fd := fields.Get(i)
			if fd.Number() != w.num || string(fd.Name()) != w.name || fd.JSONName() != w.jsonName ||
				fd.Kind() != w.kind || (fd.Cardinality() == protoreflect.Repeated) != w.list {
				return false
			}
			if w.num >= 16 { // the wire writer's tags are one byte (grpcwire.go)
				return false
			}
		}
	}
	return enumMatches(pb.VerdictDecision(0).Descriptor(), decisionNames[:]) &&
		enumMatches(pb.Severity(0).Descriptor(), severityNames[:]) &&
		enumMatches(pb.ConfinementWrite(0).Descriptor(), confinementWriteNames[:]) &&
		requestMapMatches()
}

func enumMatches(ed protoreflect.EnumDescriptor, names []string) bool {
	vals := ed.Values()
	if vals.Len() != len(names) {
		return false
	}
	for i, n := range names {
		v := vals.ByNumber(protoreflect.EnumNumber(i))
		if v == nil || string(v.Name()) != n {
			return false
		}
	}
	return true
}

func requestMapMatches() bool {
	fd := (&pb.EvaluateRequest{}).ProtoReflect().Descriptor().Fields().ByNumber(8)
	return fd.IsMap() && fd.MapKey().Kind() == protoreflect.StringKind && fd.MapValue().Kind() == protoreflect.StringKind
}

var (
	decisionNames = [...]string{"VERDICT_DECISION_UNSPECIFIED", "VERDICT_DECISION_ALLOW", "VERDICT_DECISION_BLOCK", "VERDICT_DECISION_ESCALATE"}
	severityNames = [...]string{"SEVERITY_UNSPECIFIED", "SEVERITY_LOW", "SEVERITY_MEDIUM", "SEVERITY_HIGH", "SEVERITY_CRITICAL"}

	confinementWriteNames = [...]string{"CONFINEMENT_WRITE_UNSPECIFIED", "CONFINEMENT_WRITE_WORKSPACE", "CONFINEMENT_WRITE_TEMP_ONLY"}
)

// bufPool holds request bodies, respPool encoded responses, between calls.
var (
	bufPool  = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	respPool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}
)

// pooledBufMax is the largest buffer kept: a rare large request should
// not pin its memory in the pool.
const pooledBufMax = 64 << 10

func putBuf(b *bytes.Buffer) {
	if b.Cap() <= pooledBufMax {
		b.Reset()
		bufPool.Put(b)
	}
}

// readEvaluateRequest reads POST /v1/evaluate's body into req, answering
// the error itself when it cannot.
func readEvaluateRequest(w http.ResponseWriter, r *http.Request, limit int, req *pb.EvaluateRequest) bool {
	buf := bufPool.Get().(*bytes.Buffer)
	defer putBuf(buf)
	if n := r.ContentLength; n > 0 && n <= int64(limit) {
		buf.Grow(int(n) + bytes.MinRead) // ReadFrom wants MinRead spare to read to EOF in one go
	}
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, int64(limit))); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, status.Errorf(codes.ResourceExhausted, "request body exceeds %d bytes", limit))
			return false
		}
		writeError(w, status.Errorf(codes.InvalidArgument, "reading request body: %v", err))
		return false
	}
	if err := unmarshalEvaluateRequest(buf.Bytes(), req); err != nil {
		writeError(w, status.Errorf(codes.InvalidArgument, "request body is not a valid EvaluateRequest: %v", err))
		return false
	}
	return true
}

// unmarshalEvaluateRequest is protojson.Unmarshal(body, req), the fast
// way when it can be.
func unmarshalEvaluateRequest(body []byte, req *pb.EvaluateRequest) error {
	if fastJSON && decodeEvaluateRequest(body, req) {
		return nil
	}
	return protojson.Unmarshal(body, req) // resets req first
}

var jsonContentType = []string{"application/json"} // shared, never modified

// writeEvaluateResponse answers 200 with resp as writeProto would.
func writeEvaluateResponse(w http.ResponseWriter, resp *pb.EvaluateResponse) {
	if !fastJSON {
		writeProto(w, http.StatusOK, resp)
		return
	}
	bp := respPool.Get().(*[]byte)
	b, ok := appendEvaluateResponse((*bp)[:0], resp)
	if !ok { // invalid UTF-8 somewhere: protojson reports it
		writeProto(w, http.StatusOK, resp)
		return
	}
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	if cap(b) <= pooledBufMax {
		*bp = b
		respPool.Put(bp)
	}
}

// --- decoding ---

// jsonScanner walks a JSON text; every method reports false for input it
// does not handle, which then goes to protojson.
type jsonScanner struct {
	b       []byte
	i       int
	scratch []byte // unescaped string bytes
}

func (s *jsonScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// eat skips whitespace and then c, if c is next.
func (s *jsonScanner) eat(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// isNotDelim is what protojson's tokenizer does not accept right after a
// literal or a number.
func isNotDelim(c byte) bool {
	return c == '-' || c == '+' || c == '.' || c == '_' ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// null consumes a null literal, if one is next.
func (s *jsonScanner) null() bool {
	s.ws()
	if bytes.HasPrefix(s.b[s.i:], []byte("null")) && (s.i+4 == len(s.b) || !isNotDelim(s.b[s.i+4])) {
		s.i += 4
		return true
	}
	return false
}

// rawString reads a string and returns its bytes as they are between the
// quotes, or the unescaped bytes in s.scratch; the bytes are valid UTF-8,
// unescaped exactly as protojson does (which rejects control characters,
// invalid UTF-8, bad escapes and lone surrogates).
func (s *jsonScanner) rawString() ([]byte, bool) {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	s.i++
	start, ascii := s.i, true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			if !ascii && !utf8.Valid(v) {
				return nil, false
			}
			return v, true
		case c == '\\':
			return s.escapedString(start)
		case c < ' ':
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		s.i++
	}
	return nil, false
}

// escapedString finishes a string whose first escape is at s.i.
func (s *jsonScanner) escapedString(start int) ([]byte, bool) {
	out := append(s.scratch[:0], s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			s.scratch = out
			if !utf8.Valid(out) {
				return nil, false
			}
			return out, true
		case c < ' ':
			return nil, false
		case c != '\\':
			out = append(out, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			return nil, false
		}
		switch e := s.b[s.i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(s.b[s.i+2:])
			if !ok {
				return nil, false
			}
			s.i += 6
			if utf16.IsSurrogate(r) {
				if s.i+1 >= len(s.b) || s.b[s.i] != '\\' || s.b[s.i+1] != 'u' {
					return nil, false
				}
				r2, ok := hex4(s.b[s.i+2:])
				if !ok {
					return nil, false
				}
				if r = utf16.DecodeRune(r, r2); r == unicode.ReplacementChar {
					return nil, false
				}
				s.i += 6
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return nil, false
		}
		s.i += 2
	}
	return nil, false
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// str reads a string value.
func (s *jsonScanner) str() (string, bool) {
	v, ok := s.rawString()
	return string(v), ok
}

// int32Number reads a plain integer (no fraction, exponent or quotes:
// those go to protojson) within int32.
func (s *jsonScanner) int32Number() (int32, bool) {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' && s.i-digits < 11 {
		s.i++
	}
	n := s.i - digits
	if n == 0 || n > 10 || n > 1 && s.b[digits] == '0' || s.i < len(s.b) && isNotDelim(s.b[s.i]) {
		return 0, false
	}
	v, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 32)
	return int32(v), err == nil
}

// object reads {"name": value, …}, calling member with each name (the
// scanner then at its value) and refusing a name twice by the index
// member gives it.
func (s *jsonScanner) object(member func(name []byte, seen *uint32) bool) bool {
	if !s.eat('{') {
		return false
	}
	var seen uint32
	if s.eat('}') {
		return true
	}
	for {
		name, ok := s.rawString()
		if !ok || !s.eat(':') || !member(name, &seen) {
			return false
		}
		if s.eat('}') {
			return true
		}
		if !s.eat(',') {
			return false
		}
	}
}

// once marks field bit f as seen; false if it was (protojson: duplicate
// field, whichever of its two names each occurrence used).
func once(seen *uint32, f int) bool {
	if *seen&(1<<f) != 0 {
		return false
	}
	*seen |= 1 << f
	return true
}

// decodeEvaluateRequest fills the empty req from body as
// protojson.Unmarshal would, or returns false (req then partly filled)
// for input it leaves to protojson.
func decodeEvaluateRequest(body []byte, req *pb.EvaluateRequest) bool {
	s := &jsonScanner{b: body}
	ok := s.object(func(name []byte, seen *uint32) bool {
		f := requestField(name)
		if f == 0 || !once(seen, f) {
			return false
		}
		if s.null() { // protojson: null leaves the field unset
			return true
		}
		var ok bool
		switch f {
		case 1:
			req.ActionType, ok = s.str()
		case 2:
			req.PayloadJson, ok = s.str()
		case 3:
			req.ToolName, ok = s.str()
		case 4:
			req.ToolArgsJson, ok = s.str()
		case 5:
			req.SessionId, ok = s.str()
		case 6:
			req.MinTier, ok = s.int32Number()
		case 7:
			req.Caller = &pb.CallerContext{}
			ok = s.decodeCaller(req.Caller)
		case 8:
			req.Context = map[string]string{}
			ok = s.decodeStringMap(req.Context)
		case 9:
			req.RequestId, ok = s.str()
		case 10:
			ok = s.decodeAttachments(req)
		}
		return ok
	})
	s.ws()
	return ok && s.i == len(s.b)
}

// decodeAttachments reads the attachments array: objects only (a null
// element is protojson's to refuse).
func (s *jsonScanner) decodeAttachments(req *pb.EvaluateRequest) bool {
	if !s.eat('[') {
		return false
	}
	req.Attachments = []*pb.Attachment{}
	if s.eat(']') {
		return true
	}
	for {
		s.ws()
		a := &pb.Attachment{}
		if !s.object(func(name []byte, seen *uint32) bool {
			f := attachmentField(name)
			if f == 0 || !once(seen, f) {
				return false
			}
			if s.null() {
				return true
			}
			var ok bool
			switch f {
			case 1:
				a.Path, ok = s.str()
			case 2:
				a.Content, ok = s.str()
			case 3:
				a.Unreadable, ok = s.boolean()
			}
			return ok
		}) {
			return false
		}
		req.Attachments = append(req.Attachments, a)
		if s.eat(']') {
			return true
		}
		if !s.eat(',') {
			return false
		}
	}
}

func attachmentField(name []byte) int {
	switch string(name) {
	case "path":
		return 1
	case "content":
		return 2
	case "unreadable":
		return 3
	}
	return 0
}

// boolean reads a true or false literal.
func (s *jsonScanner) boolean() (bool, bool) {
	s.ws()
	for _, lit := range [...]string{"false", "true"} {
		if bytes.HasPrefix(s.b[s.i:], []byte(lit)) && (s.i+len(lit) == len(s.b) || !isNotDelim(s.b[s.i+len(lit)])) {
			s.i += len(lit)
			return lit == "true", true
		}
	}
	return false, false
}

// requestField numbers EvaluateRequest's fields by either JSON name.
func requestField(name []byte) int {
	switch string(name) {
	case "action_type", "actionType":
		return 1
	case "payload_json", "payloadJson":
		return 2
	case "tool_name", "toolName":
		return 3
	case "tool_args_json", "toolArgsJson":
		return 4
	case "session_id", "sessionId":
		return 5
	case "min_tier", "minTier":
		return 6
	case "caller":
		return 7
	case "context":
		return 8
	case "request_id", "requestId":
		return 9
	case "attachments":
		return 10
	}
	return 0
}

func (s *jsonScanner) decodeCaller(c *pb.CallerContext) bool {
	return s.object(func(name []byte, seen *uint32) bool {
		f := callerField(name)
		if f == 0 || !once(seen, f) {
			return false
		}
		if s.null() {
			return true
		}
		var ok bool
		switch f {
		case 1:
			c.Tenant, ok = s.str()
		case 2:
			c.WorkspaceId, ok = s.str()
		case 3:
			c.EngineId, ok = s.str()
		case 4:
			c.UserId, ok = s.str()
		case 5:
			c.WorkspaceRoot, ok = s.str()
		case 6:
			c.HomeDir, ok = s.str()
		case 7:
			c.AgentName, ok = s.str()
		}
		return ok
	})
}

func callerField(name []byte) int {
	switch string(name) {
	case "tenant":
		return 1
	case "workspace_id", "workspaceId":
		return 2
	case "engine_id", "engineId":
		return 3
	case "user_id", "userId":
		return 4
	case "workspace_root", "workspaceRoot":
		return 5
	case "home_dir", "homeDir":
		return 6
	case "agent_name", "agentName":
		return 7
	}
	return 0
}

// decodeStringMap reads a map<string, string>: string values only (null
// is an error there), each key once.
func (s *jsonScanner) decodeStringMap(m map[string]string) bool {
	if !s.eat('{') {
		return false
	}
	if s.eat('}') {
		return true
	}
	for {
		k, ok := s.str()
		if !ok || !s.eat(':') {
			return false
		}
		if _, dup := m[k]; dup {
			return false
		}
		if m[k], ok = s.str(); !ok {
			return false
		}
		if s.eat('}') {
			return true
		}
		if !s.eat(',') {
			return false
		}
	}
}

// --- encoding ---

// appendEvaluateResponse appends resp's JSON; false if a string is not
// valid UTF-8 (protojson refuses to encode it).
func appendEvaluateResponse(b []byte, resp *pb.EvaluateResponse) ([]byte, bool) {
	e := jsonEncoder{b: b, ok: true}
	e.b = append(e.b, `{"verdict":`...)
	if v := resp.GetVerdict(); v == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.verdict(v)
	}
	e.b = append(e.b, `,"request_id":`...)
	e.str(resp.GetRequestId())
	e.b = append(e.b, '}')
	return e.b, e.ok
}

type jsonEncoder struct {
	b  []byte
	ok bool
}

func (e *jsonEncoder) verdict(v *pb.Verdict) {
	e.b = append(e.b, `{"decision":`...)
	e.enum(int32(v.Decision), decisionNames[:])
	e.b = append(e.b, `,"tier":`...)
	e.b = strconv.AppendInt(e.b, int64(v.Tier), 10)
	e.b = append(e.b, `,"confidence":`...)
	e.float(v.Confidence)
	e.b = append(e.b, `,"reasoning":`...)
	e.str(v.Reasoning)
	e.b = append(e.b, `,"action_hash":`...)
	e.str(v.ActionHash)
	e.b = append(e.b, `,"evaluated_at":"`...) // int64 is a string in protojson
	e.b = strconv.AppendInt(e.b, v.EvaluatedAt, 10)
	e.b = append(e.b, `","expires_at":"`...)
	e.b = strconv.AppendInt(e.b, v.ExpiresAt, 10)
	e.b = append(e.b, `","rule_ids":[`...)
	for i, id := range v.RuleIds {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.str(id)
	}
	e.b = append(e.b, `],"policy_version":`...)
	e.str(v.PolicyVersion)
	e.b = append(e.b, `,"cache_hit":`...)
	e.b = strconv.AppendBool(e.b, v.CacheHit)
	e.b = append(e.b, `,"findings":[`...)
	for i, f := range v.Findings {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.finding(f)
	}
	e.b = append(e.b, `],"action_type":`...)
	e.str(v.ActionType)
	e.b = append(e.b, `,"required_tier":`...)
	e.b = strconv.AppendInt(e.b, int64(v.RequiredTier), 10)
	e.b = append(e.b, `,"confinement":`...)
	if c := v.Confinement; c == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.b = append(e.b, `{"write":`...)
		e.enum(int32(c.Write), confinementWriteNames[:])
		e.b = append(e.b, `,"connect_ports":[`...)
		for i, p := range c.ConnectPorts {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = strconv.AppendUint(e.b, uint64(p), 10)
		}
		e.b = append(e.b, `],"read_paths":[`...)
		for i, p := range c.ReadPaths {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.str(p)
		}
		e.b = append(e.b, "]}"...)
	}
	e.b = append(e.b, '}')
}

func (e *jsonEncoder) finding(f *pb.Finding) {
	// A nil element of a repeated message field is an empty message.
	e.b = append(e.b, `{"rule_id":`...)
	e.str(f.GetRuleId())
	e.b = append(e.b, `,"category":`...)
	e.str(f.GetCategory())
	e.b = append(e.b, `,"severity":`...)
	e.enum(int32(f.GetSeverity()), severityNames[:])
	e.b = append(e.b, `,"outcome":`...)
	e.enum(int32(f.GetOutcome()), decisionNames[:])
	e.b = append(e.b, `,"message":`...)
	e.str(f.GetMessage())
	e.b = append(e.b, `,"tier":`...)
	e.b = strconv.AppendInt(e.b, int64(f.GetTier()), 10)
	e.b = append(e.b, `,"evidence":`...)
	e.str(f.GetEvidence())
	e.b = append(e.b, '}')
}

// enum writes a value's name, or its number when it has none.
func (e *jsonEncoder) enum(n int32, names []string) {
	if n >= 0 && int(n) < len(names) {
		e.b = append(e.b, '"')
		e.b = append(e.b, names[n]...)
		e.b = append(e.b, '"')
		return
	}
	e.b = strconv.AppendInt(e.b, int64(n), 10)
}

// float writes a double as protojson does (encoding/json's format; NaN
// and the infinities as strings).
func (e *jsonEncoder) float(f float64) {
	switch {
	case math.IsNaN(f):
		e.b = append(e.b, `"NaN"`...)
		return
	case math.IsInf(f, 1):
		e.b = append(e.b, `"Infinity"`...)
		return
	case math.IsInf(f, -1):
		e.b = append(e.b, `"-Infinity"`...)
		return
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	e.b = strconv.AppendFloat(e.b, f, format, -1, 64)
	if format == 'e' { // e-07 → e-7
		if n := len(e.b); n >= 4 && e.b[n-4] == 'e' && e.b[n-3] == '-' && e.b[n-2] == '0' {
			e.b[n-2] = e.b[n-1]
			e.b = e.b[:n-1]
		}
	}
}

// str writes a string as protojson does: only '"', '\\' and control
// characters escaped (\b \f \n \r \t, else \u00XX); invalid UTF-8 fails.
// In valid UTF-8 no byte of a multi-byte character is below 0x80, so the
// scan only looks for ASCII bytes to escape.
func (e *jsonEncoder) str(s string) {
	if !textcut.ValidUTF8(s) {
		e.ok = false
	}
	e.b = append(e.b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= ' ' && c != '"' && c != '\\' {
			continue
		}
		e.b = append(e.b, s[start:i]...)
		switch c {
		case '"', '\\':
			e.b = append(e.b, '\\', c)
		case '\b':
			e.b = append(e.b, '\\', 'b')
		case '\f':
			e.b = append(e.b, '\\', 'f')
		case '\n':
			e.b = append(e.b, '\\', 'n')
		case '\r':
			e.b = append(e.b, '\\', 'r')
		case '\t':
			e.b = append(e.b, '\\', 't')
		default:
			e.b = append(e.b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	e.b = append(e.b, s[start:]...)
	e.b = append(e.b, '"')
}

const hexDigits = "0123456789abcdef"
