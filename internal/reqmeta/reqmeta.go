// Package reqmeta is the rule of the request-metadata headers, which the
// streamable HTTP transport of protocol 2026-07-28 mirrors from a
// request's body so that intermediaries can route on them without reading
// it (transports, "Request Metadata"): Mcp-Protocol-Version, Mcp-Method
// and Mcp-Name. "Servers that process the request body MUST reject
// requests where the values specified in the headers do not match the
// corresponding values in the request body", with 400 Bad Request and
// -32020 HeaderMismatch.
//
// go-sdk v1.8 compares Mcp-Method and Mcp-Name with the body of a request
// whose Mcp-Protocol-Version header names 2026-07-28 or later, and that
// header with the body's _meta protocol version. This package holds what
// it leaves out:
//
//   - Headers: a header given more than once, a value with a character a
//     header value may not carry, and an Mcp-Name in Base64, which go-sdk
//     compares undecoded;
//   - Body: a request whose header does not name 2026-07-28 or later, but
//     whose _meta names a protocol version other than the header's;
//   - Mirrored: the comparison go-sdk makes, for handlers that do not
//     make it (mark3labs/mcp-go compares only the protocol version).
//
// Package serve applies the rule at its edge, in front of any handler.
package reqmeta

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/mcpres/mcpres/internal/protocol"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Base64 sentinel of Mcp-Name (transports, "Value Encoding"): "The
// prefix =?base64? and suffix ?= indicate that the value is
// Base64-encoded. These markers are case-sensitive and MUST appear
// exactly as shown (lowercase)."
const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// The reasons a request is refused. Each begins as go-sdk's own do
// ("header mismatch: …"), and names no value the client sent.
var (
	errVersions      = errors.New("header mismatch: more than one Mcp-Protocol-Version header")
	errVersionLength = errors.New("header mismatch: the Mcp-Protocol-Version header is too long to name a protocol version")
	errBase64        = errors.New("header mismatch: the Mcp-Name header is not valid Base64 between =?base64? and ?=")
	errNoHeader      = errors.New("header mismatch: the Mcp-Protocol-Version header is required for a request whose _meta names its protocol version")
	errVersion       = errors.New("header mismatch: the Mcp-Protocol-Version header does not match the request's _meta protocol version")
	// errDuplicate: JSON parsers differ on which of two equal keys they
	// take, so a proxy and the server could read two versions.
	errDuplicate = errors.New("header mismatch: the request's params, _meta, or its protocol version key, is given twice")
)

// mirrored are the headers a 2026-07-28 request mirrors from its body
// ("A required standard header (MCP-Protocol-Version, Mcp-Method,
// Mcp-Name) is missing" is the first of the validation failures).
var mirrored = []string{protocol.HeaderProtocolVersion, protocol.HeaderMethod, protocol.HeaderName}

// Headers checks the request-metadata headers of a POST, before its body
// is read. modern tells whether the request is of 2026-07-28 or later, as
// its first Mcp-Protocol-Version header says (the one go-sdk reads).
//
// Every request is refused if it has more than one Mcp-Protocol-Version
// header and one of them names 2026-07-28 or later: which of them counts
// is then the reader's guess, and a proxy that takes the last would trust
// mirrored headers that nothing checked. Of a modern request, Headers
// also refuses a mirrored header given more than once, or with a
// character other than visible ASCII, space and tab ("A header value
// contains invalid characters").
//
// A version header longer than 64 bytes names no version, and is
// refused: handlers echo the version they do not support ("If the server
// receives a request with an invalid or unsupported MCP-Protocol-Version,
// it MUST respond with 400 Bad Request", 2025-06-18, transports).
//
// It returns the Mcp-Name header go-sdk should compare with the body:
// decoded, with decoded true, if the client sent it in Base64 ("servers
// MUST decode an encoded Mcp-Name or Mcp-Param-{Name} value before
// comparing it to the corresponding request body value").
func Headers(h http.Header, modern bool) (name string, decoded bool, err error) {
	for _, v := range h.Values(protocol.HeaderProtocolVersion) {
		if len(v) > echoMax {
			return "", false, errVersionLength
		}
	}
	if versions := h.Values(protocol.HeaderProtocolVersion); len(versions) > 1 {
		for _, v := range versions {
			if v >= protocol.SessionlessSince {
				return "", false, errVersions
			}
		}
	}
	if !modern {
		return "", false, nil
	}
	for _, k := range mirrored {
		vs := h.Values(k)
		if len(vs) > 1 {
			return "", false, errors.New("header mismatch: more than one " + k + " header")
		}
		if len(vs) == 1 && !plain(vs[0]) {
			return "", false, errors.New("header mismatch: the " + k + " header has a character other than visible ASCII, space or tab" + base64Hint(k))
		}
	}
	name = h.Get(protocol.HeaderName)
	encoded, ok := strings.CutPrefix(name, base64Prefix)
	if ok {
		encoded, ok = strings.CutSuffix(encoded, base64Suffix)
	}
	if !ok {
		return name, false, nil
	}
	b, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return "", false, errBase64
	}
	return string(b), true, nil
}

// base64Hint tells how to send a value of header k that is not plain
// ASCII, if there is a way.
func base64Hint(k string) string {
	if k == protocol.HeaderName {
		return ": send it in Base64, as =?base64?…?="
	}
	return ""
}

// plain reports whether v is a header value as the transport allows it
// ("HTTP header field values must consist of visible ASCII characters
// (0x21-0x7E), space (0x20), and horizontal tab (0x09)").
func plain(v string) bool {
	for i := range len(v) {
		if c := v[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
			return false
		}
	}
	return true
}

// metaKey is the _meta key of a request's protocol version, as it is
// written in JSON when none of its characters is escaped.
var metaKey = []byte(`"` + mcp.MetaKeyProtocolVersion + `"`)

// Body checks the body of a POST whose Mcp-Protocol-Version header,
// version ("" if there is none), does not name 2026-07-28 or later: one
// JSON-RPC message, or a batch. A request in it whose _meta names a
// protocol version is of that version, and "The header value MUST match
// the io.modelcontextprotocol/protocolVersion field carried in the
// request body's _meta. If the values do not match, the server MUST
// reject the request with 400 Bad Request and a HeaderMismatch JSON-RPC
// error". go-sdk checks this only for a header of 2026-07-28 or later
// (an older one it refuses with -32022 UnsupportedProtocolVersion, naming
// the header's version as the one it does not support). A request whose
// params, _meta or protocol version key is given twice breaks the rule
// too: which one counts is the reader's guess. Body returns the id of
// the first request that breaks the rule, and why; a body that is not
// JSON-RPC passes, for the handler to refuse.
func Body(body []byte, version string) (jsonrpc.ID, error) {
	// Without a backslash, no JSON string in body is escaped: a _meta key
	// naming the protocol version would be there as it is.
	if bytes.IndexByte(body, '\\') < 0 && !bytes.Contains(body, metaKey) {
		return jsonrpc.ID{}, nil
	}
	return scan(body, version)
}

// ID returns the id of the request body holds, for the answer that
// refuses it: the zero ID if body is not one request with an id ("Error
// responses MUST include the same ID as the request they correspond to
// (except in error cases where the ID could not be read due a malformed
// request)", basic).
func ID(body []byte) jsonrpc.ID {
	if msg, err := jsonrpc.DecodeMessage(body); err == nil {
		if req, ok := msg.(*jsonrpc.Request); ok {
			return req.ID
		}
	}
	return jsonrpc.ID{}
}

// The reasons Mirrored refuses a request.
var (
	errNoMethod = errors.New("header mismatch: the Mcp-Method header is required")
	errMethod   = errors.New("header mismatch: the Mcp-Method header does not match the request's method")
	errName     = errors.New("header mismatch: the Mcp-Name header does not match the request's name or uri")
)

// named are the methods whose Mcp-Name mirrors a param, and which param
// ("Mcp-Name: params.name for tools/call and prompts/get, params.uri for
// resources/read", 2026-07-28, transports, Request Metadata).
var named = map[string]string{"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

// Mirrored checks the body of a POST of 2026-07-28 or later against its
// mirrored headers: Mcp-Method must name the body's method, Mcp-Name
// (name, decoded by Headers) its name or uri, and Mcp-Protocol-Version
// (version) the protocol version its _meta names, if it names one. It
// returns the request's id, and why it breaks the rule. A body that is
// not one JSON-RPC request or notification passes, for the handler to
// refuse. go-sdk makes the same check; mark3labs/mcp-go checks only the
// version, so the edge makes it for every handler.
func Mirrored(body []byte, h http.Header, name, version string) (jsonrpc.ID, error) {
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return jsonrpc.ID{}, nil
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return jsonrpc.ID{}, nil
	}
	switch method := h.Get(protocol.HeaderMethod); {
	case method == "":
		return req.ID, errNoMethod
	case method != req.Method:
		return req.ID, errMethod
	}
	var p struct {
		Name *string                    `json:"name"`
		URI  *string                    `json:"uri"`
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if len(req.Params) > 0 && json.Unmarshal(req.Params, &p) != nil {
		return jsonrpc.ID{}, nil // the handler refuses the params
	}
	if param, ok := named[req.Method]; ok {
		got := p.Name
		if param == "uri" {
			got = p.URI
		}
		if got == nil || *got != name {
			return req.ID, errName
		}
	}
	var v string
	if raw, ok := p.Meta[mcp.MetaKeyProtocolVersion]; ok && json.Unmarshal(raw, &v) == nil && v != version {
		return req.ID, errVersion
	}
	return jsonrpc.ID{}, nil
}

// Batched reports whether body is a JSON-RPC batch (its first byte other
// than white space is '[') and version, the Mcp-Protocol-Version header,
// names 2025-06-18 or later. Those versions have no batches: "The body
// of the POST request MUST be a single JSON-RPC request, notification,
// or response" (2025-06-18, transports; the changelog: "Remove support
// for JSON-RPC batching"). A client sends the header on every request
// after initialize ("the client MUST include the MCP-Protocol-Version:
// <protocol-version> HTTP header on all subsequent requests"), so the
// header is its session's version. Without it, a server "SHOULD assume
// protocol version 2025-03-26", which has batches.
func Batched(body []byte, version string) bool {
	return version >= protocol.Version20250618 && IsBatch(body)
}

// IsBatch reports whether body, or its first bytes, begin a JSON-RPC
// batch: its first byte other than JSON white space is '['. A body of
// white space alone, so far, is not one.
func IsBatch(body []byte) bool {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '['
}

// echoMax is the most bytes of a client's value an error or a log line
// echoes.
const echoMax = 64

// Bounded returns v, cut to its first 64 bytes and marked "…" if longer:
// a header can be as long as the server's MaxHeaderBytes allows.
func Bounded(v string) string {
	if len(v) <= echoMax {
		return v
	}
	return strings.ToValidUTF8(v[:echoMax], "") + "…"
}
