package reqmeta

// This file holds the scan of a body for the protocol version its
// requests' _meta names. It reads the body once, token by token, keeps
// only the keys on the path params._meta.<version key>, and stops at the
// first request that breaks the rule. go-sdk decodes the same body whole,
// twice for a batch; the scan costs less a byte (BenchmarkBody).

import (
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/segmentio/encoding/json"
)

// A role is what an open object or array of a body is to the scan.
type role uint8

const (
	inOther   role = iota // nothing the scan reads
	inBatch               // the body's array of messages
	inMessage             // a JSON-RPC message
	inParams              // a message's params
	inMeta                // params' _meta
)

// A key is a key the scan reads: each is read in objects of one role.
type key uint8

const (
	noKey key = iota
	keyMethod
	keyParams
	keyMeta
	keyVersion
)

// keyOf returns the key s is in an object of role r, or noKey.
func keyOf(r role, s []byte) key {
	switch {
	case r == inMessage && string(s) == "method":
		return keyMethod
	case r == inMessage && string(s) == "params":
		return keyParams
	case r == inParams && string(s) == "_meta":
		return keyMeta
	case r == inMeta && string(s) == mcp.MetaKeyProtocolVersion:
		return keyVersion
	}
	return noKey
}

// A frame is an open object or array of a body.
type frame struct {
	role  role
	start int                  // where it begins in the body
	next  key                  // the key of the value that comes next
	seen  [keyVersion + 1]bool // the keys it held already
}

// scan walks body, one message or a batch, and returns the first request
// whose _meta names a protocol version other than version, with
// errNoHeader or errVersion; or the first message that names a version
// and holds params, _meta or the version key twice, with errDuplicate. Keys are compared
// as go-sdk compares them: unescaped, case kept. A body that is not JSON
// passes as far as it parses, for the handler to refuse.
func scan(body []byte, version string) (jsonrpc.ID, error) {
	t := json.NewTokenizer(body)
	stack := make([]frame, 0, 8)
	var request bool   // the message has a method
	var named []byte   // the protocol version its _meta names, empty if none
	var dup bool       // it holds params, _meta or the version key twice
	var versioned bool // its _meta has the version key
	for t.Next() {
		top := len(stack) - 1
		if top < 0 && t.Delim != '{' && t.Delim != '[' {
			break // a scalar, or what follows the body's one value
		}
		if t.IsKey {
			f := &stack[top]
			f.next = keyOf(f.role, t.String())
			if f.next != noKey && f.next != keyMethod {
				dup = dup || f.seen[f.next]
				versioned = versioned || f.next == keyVersion
				f.seen[f.next] = true
			}
			continue
		}
		switch t.Delim {
		case ':', ',':
			continue
		case '{', '[':
			start := len(body) - t.Remaining() - 1
			r := inOther
			switch {
			case top < 0 && t.Delim == '[':
				r = inBatch
			case t.Delim != '{':
			case top < 0 || stack[top].role == inBatch:
				r, request, named, dup, versioned = inMessage, false, nil, false, false
			case stack[top].role == inMessage && stack[top].next == keyParams:
				r = inParams
			case stack[top].role == inParams && stack[top].next == keyMeta:
				r = inMeta
			}
			if top >= 0 {
				stack[top].next = noKey
			}
			stack = append(stack, frame{role: r, start: start})
			continue
		case '}', ']':
			f := stack[top]
			stack = stack[:top]
			if f.role == inMessage && dup && versioned {
				return idAt(body, f.start), errDuplicate
			}
			if f.role == inMessage && request && len(named) > 0 && string(named) != version {
				if version == "" {
					return idAt(body, f.start), errNoHeader
				}
				return idAt(body, f.start), errVersion
			}
			continue
		}
		// A value other than an object or an array.
		f := &stack[top]
		switch f.next {
		case keyMethod:
			request = t.Kind().Class() == json.String
		case keyVersion:
			if t.Kind().Class() == json.String {
				named = t.String()
			}
		}
		f.next = noKey
	}
	return jsonrpc.ID{}, nil
}

// idAt returns the id of the message that begins at start in body, for
// the answer that refuses it.
func idAt(body []byte, start int) jsonrpc.ID {
	var raw json.RawMessage
	if _, err := json.Parse(body[start:], &raw, json.ZeroCopy); err != nil {
		return jsonrpc.ID{}
	}
	return ID(raw)
}
