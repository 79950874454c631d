package action

// The reference decoder: the same tree built through go-json-experiment's
// jsontext token API. FuzzJSONParser checks the hand-written parser against
// it: both must accept and reject the same documents and build equal trees.

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// decodeObject parses a JSON object into a tree. jsontext rejects duplicate
// member names, invalid UTF-8 and lone surrogates: an engine and the shield
// must never read different arguments from the same bytes.
func decodeObject(payload []byte, lim Limits) (map[string]any, error) {
	pd := decoderPool.Get().(*pooledDecoder)
	defer pd.release()
	pd.r.Reset(payload)
	pd.dec.Reset(&pd.r)
	dec := pd.dec
	if k := dec.PeekKind(); k != '{' {
		if k == 0 {
			_, err := dec.ReadToken()
			return nil, invalidf("payload_json is not valid JSON: %v", trimJSONErr(err))
		}
		return nil, invalidf("payload_json must be a JSON object, got %s", kindName(k))
	}
	v, err := decodeValue(dec, 0, lim)
	if err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, invalidf("payload_json has data after the top-level object")
	}
	return v.(map[string]any), nil
}

// pooledDecoder reuses a decoder's buffers across requests.
type pooledDecoder struct {
	r   bytes.Reader
	dec *jsontext.Decoder
}

var decoderPool = sync.Pool{New: func() any {
	pd := &pooledDecoder{}
	pd.dec = jsontext.NewDecoder(&pd.r)
	return pd
}}

func (pd *pooledDecoder) release() {
	pd.r.Reset(nil)
	pd.dec.Reset(&pd.r) // drop references to the payload before pooling
	decoderPool.Put(pd)
}

func decodeValue(dec *jsontext.Decoder, depth int, lim Limits) (any, error) {
	if depth > lim.MaxDepth {
		return nil, tooLargef("payload_json nests deeper than %d levels", lim.MaxDepth)
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, invalidf("payload_json is not valid JSON: %v", trimJSONErr(err))
	}
	switch tok.Kind() {
	case '{':
		m := make(map[string]any)
		for dec.PeekKind() != '}' {
			k, err := dec.ReadToken()
			if err != nil {
				return nil, invalidf("payload_json is not valid JSON: %v", trimJSONErr(err))
			}
			key := k.String() // a token is void after the next decoder call
			v, err := decodeValue(dec, depth+1, lim)
			if err != nil {
				return nil, err
			}
			m[key] = v
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, invalidf("payload_json is not valid JSON: %v", trimJSONErr(err))
		}
		return m, nil
	case '[':
		var arr []any
		for dec.PeekKind() != ']' {
			v, err := decodeValue(dec, depth+1, lim)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, invalidf("payload_json is not valid JSON: %v", trimJSONErr(err))
		}
		return arr, nil
	case '"':
		return tok.String(), nil
	case '0':
		return Number(tok.String()), nil
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case 'n':
		return nil, nil
	}
	return nil, invalidf("payload_json is not valid JSON: unexpected %s", kindName(tok.Kind()))
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "something else"
}

func trimJSONErr(err error) string {
	if err == nil {
		return "unexpected end of input"
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input"
	}
	return strings.TrimPrefix(err.Error(), "jsontext: ")
}
