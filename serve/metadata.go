package serve

// This file holds the body of a POST: read once, bounded in size and
// time, and checked against the request-metadata headers (2026-07-28,
// transports, "Request Metadata"). The rules are in internal/reqmeta.
//
// What the check costs is bounded by what the handler's own decoding of
// the body costs. The body of a session the edge does not hold is not
// read: the handler answers 404 for it. A batch of a version that has
// none is refused before it is scanned.

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/internal/reqmeta"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// modern reports whether req is of protocol 2026-07-28 or later, as its
// first Mcp-Protocol-Version header says: such a request has no session.
func modern(req *http.Request) bool {
	return req.Header.Get(protocol.HeaderProtocolVersion) >= protocol.SessionlessSince
}

// checkBody reads the body of req, a POST, and checks it against the
// request's metadata headers. If the body is too long, too slow, a batch
// its version forbids, or breaks a rule, it answers and returns false.
// The body of a session the gate does not hold it leaves unread, bounded
// in size. Otherwise it returns the
// request to serve, whose body reads the same bytes again, and whose
// Mcp-Name is decoded.
func (g *guard) checkBody(w http.ResponseWriter, req *http.Request) (*http.Request, bool) {
	isModern := modern(req)
	name, decoded, err := reqmeta.Headers(req.Header, isModern)
	if err != nil {
		body, _ := g.readBody(w, req)
		g.refuseMetadata(w, req, reqmeta.ID(body), err)
		return nil, false
	}
	if id := req.Header.Get(protocol.HeaderSessionID); id != "" && !isModern && !g.sessions.known(id) {
		// The handler answers 404, or reads the body itself: the edge
		// only bounds it, in size and in time. net/http lifts the
		// deadline once the body is read to its end; a handler that
		// answers without reading it leaves the connection to close.
		req.Body = http.MaxBytesReader(w, req.Body, g.o.MaxBodyBytes)
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(g.o.ReadTimeout))
		return req, true
	}
	body, err := g.readBody(w, req)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			refuseTooLarge(w, g.o.MaxBodyBytes)
		} else {
			g.refusals.debug(req, "could not read a request's body", slog.String("reason", err.Error()))
			refuse(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeParseError, "Could not read the request body", nil)
		}
		return nil, false
	}
	version := req.Header.Get(protocol.HeaderProtocolVersion)
	if reqmeta.Batched(body, version) {
		g.refusals.debug(req, "refused a batch of a version without batches",
			slog.String("mcp_protocol_version", reqmeta.Bounded(version)))
		refuseBatch(w)
		return nil, false
	}
	var id jsonrpc.ID
	if isModern {
		id, err = reqmeta.Mirrored(body, req.Header, name, version)
	} else {
		id, err = reqmeta.Body(body, version)
	}
	if err != nil {
		g.refuseMetadata(w, req, id, err)
		return nil, false
	}
	if decoded {
		// go-sdk compares the header as it is with the body.
		req = req.Clone(req.Context())
		req.Header.Set(protocol.HeaderName, name)
	}
	req.Body = replayBody{bytes.NewReader(body), req.Body}
	req.ContentLength = int64(len(body)) // what a session opened by it keeps (sessions.go)
	return req, true
}

// errTooLarge is the error of a body longer than Options.MaxBodyBytes.
var errTooLarge = errors.New("request body too large")

// readBody reads req's body, up to g.o.MaxBodyBytes and within
// g.o.ReadTimeout. A body longer than that is errTooLarge.
func (g *guard) readBody(w http.ResponseWriter, req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	limit := g.o.MaxBodyBytes
	if req.ContentLength > limit {
		return nil, errTooLarge
	}
	// A client trickling its body holds a goroutine and a connection.
	// net/http lifts the deadline once the body is read to its end, so
	// that an event stream answering the request is not cut off.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(g.o.ReadTimeout))
	body, err := io.ReadAll(io.LimitReader(req.Body, limit+1))
	switch {
	case err != nil:
		// The deadline stays: net/http then gives up on the rest of the
		// body, and the connection, rather than wait for it.
		return nil, err
	case int64(len(body)) > limit:
		return nil, errTooLarge
	}
	_ = rc.SetReadDeadline(time.Time{})
	return body, nil
}

// A replayBody reads what the edge read of a request's body, and closes
// the original.
type replayBody struct {
	io.Reader
	io.Closer
}

// refuseMetadata answers req, whose request-metadata headers break a rule
// for the reason err, and logs the refusal at Debug.
func (g *guard) refuseMetadata(w http.ResponseWriter, req *http.Request, id jsonrpc.ID, err error) {
	g.refusals.debug(req, "refused a request for its request-metadata headers",
		slog.String("reason", err.Error()),
		slog.String("mcp_method", reqmeta.Bounded(req.Header.Get(protocol.HeaderMethod))),
		slog.String("mcp_protocol_version", reqmeta.Bounded(req.Header.Get(protocol.HeaderProtocolVersion))))
	refuseMetadata(w, id, err)
}
