package resource

// This file holds the check of the request-metadata headers on the
// streamable HTTP endpoint (2026-07-28, transports, "Request Metadata"):
// NewHTTPHandler refuses, with 400 and -32020 HeaderMismatch, a POST
// whose mirrored headers break a rule go-sdk does not enforce itself, and
// gives go-sdk an Mcp-Name sent in Base64 decoded, for it to compare with
// the body. The rules are in internal/reqmeta; what go-sdk enforces is
// behaviour 14 of gosdk.go.

import (
	"bytes"
	"io"
	"log/slog"
	"math"
	"net/http"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/internal/reqmeta"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// checkMetadata checks the request-metadata headers of req, a POST that
// modern tells the era of, as the eraHandler routes it. If they break a
// rule, it answers and returns false. Otherwise it returns the request to
// serve: req, or a copy with Mcp-Name decoded.
func (h *eraHandler) checkMetadata(w http.ResponseWriter, req *http.Request, modern bool) (*http.Request, bool) {
	name, decoded, err := reqmeta.Headers(req.Header, modern)
	if err != nil {
		body, _ := readBody(req, h.limit)
		refuseMetadata(w, req, reqmeta.ID(body), err)
		return nil, false
	}
	if modern {
		// go-sdk compares the header with the body, as it is (behaviour 14).
		if decoded {
			req = req.Clone(req.Context())
			req.Header.Set(protocol.HeaderName, name)
		}
		return req, true
	}
	body, ok := readBody(req, h.limit)
	if !ok {
		return req, true // too long, or unreadable: go-sdk answers
	}
	if id, err := reqmeta.Body(body, req.Header.Get(protocol.HeaderProtocolVersion)); err != nil {
		refuseMetadata(w, req, id, err)
		return nil, false
	}
	return req, true
}

// readBody reads req's body, to at most limit bytes (all of it if limit is
// negative), and gives req a body that reads the same bytes again, then
// the rest, for go-sdk to read (and bound) as if nothing had. ok is false
// if the body is longer than limit or could not be read.
func readBody(req *http.Request, limit int64) (body []byte, ok bool) {
	if req.Body == nil {
		return nil, true
	}
	var r io.Reader = req.Body
	if limit >= 0 && limit < math.MaxInt64 {
		r = io.LimitReader(req.Body, limit+1)
	}
	body, err := io.ReadAll(r)
	req.Body = replayBody{io.MultiReader(bytes.NewReader(body), req.Body), req.Body}
	return body, err == nil && (limit < 0 || int64(len(body)) <= limit)
}

// A replayBody reads what was read of a request's body, then the rest, and
// closes the original.
type replayBody struct {
	io.Reader
	io.Closer
}

// refuseMetadata answers req, whose request-metadata headers break a rule
// for the reason err, with 400 and a JSON-RPC error -32020 with id (none
// if it is the zero ID), as the transport requires: "When rejecting a
// request due to header validation failure, servers MUST return HTTP
// status 400 Bad Request and MUST include a JSON-RPC error response"
// (2026-07-28, transports, Server Validation). It logs the refusal to
// slog.Default() at Debug, as the Origin check does.
func refuseMetadata(w http.ResponseWriter, req *http.Request, id jsonrpc.ID, err error) {
	slog.Default().LogAttrs(req.Context(), slog.LevelDebug, "refused a request for its request-metadata headers",
		slog.String("reason", err.Error()),
		slog.String("mcp_method", req.Header.Get(protocol.HeaderMethod)),
		slog.String("mcp_protocol_version", req.Header.Get(protocol.HeaderProtocolVersion)))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	w.Write(headerMismatch(id, err))
}
