package serve

// This file holds the body of a POST: read once, bounded in size and
// time, and checked against the request-metadata headers (2026-07-28,
// transports, "Request Metadata"). The rules are in internal/reqmeta.
//
// What the check costs is bounded by what the handler's own decoding of
// the body costs. The body of a session the edge does not hold is not
// read: the handler answers 404 for it. A batch of a version that has
// none is refused on its first byte, before the rest is read. Any other
// batch go-sdk's handler checks itself, and gets unread.

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
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
// The body of a session the gate does not hold, and a batch for a handler
// that checks batches itself, it leaves unread past its first byte,
// bounded in size and time. Otherwise it returns the request to serve,
// whose body reads the same bytes again, and whose Mcp-Name is decoded.
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
	head, err := g.readHead(w, req)
	if err != nil {
		g.refuseRead(w, req, err)
		return nil, false
	}
	version := req.Header.Get(protocol.HeaderProtocolVersion)
	if reqmeta.Batched(head, version) {
		// Refused on its first byte: the rest is not read.
		g.refusals.debug(req, "refused a batch of a version without batches",
			slog.String("mcp_protocol_version", reqmeta.Bounded(version)))
		refuseBatch(w)
		return nil, false
	}
	if g.handlerChecksBatches && reqmeta.IsBatch(head) {
		// A batch is never of 2026-07-28, which alone has mirrored
		// headers: "The body of the HTTP POST MUST be a single JSON-RPC
		// request or notification" (2026-07-28, transports, Sending
		// Messages). Its version is the header's, older, or 2025-03-26
		// if there is none ("A server that supports clients implementing
		// protocol versions earlier than 2025-06-18 ... MAY treat a
		// request that omits the header as protocol version
		// 2025-03-26"). A message of it whose _meta names a protocol
		// version all the same is go-sdk's to refuse, and it does
		// (behaviour 4 of gosdk.go): the edge leaves the body unread,
		// bounded in size and time, rather than scan what go-sdk
		// decodes whole after it.
		req.Body = http.MaxBytesReader(w, replayBody{io.MultiReader(bytes.NewReader(head), req.Body), req.Body}, g.o.MaxBodyBytes)
		return req, true
	}
	body, err := g.readRest(w, req, head)
	if err != nil {
		g.refuseRead(w, req, err)
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

// refuseRead answers req, whose body could not be read for the reason
// err: too large (413), or cut short or too slow (400).
func (g *guard) refuseRead(w http.ResponseWriter, req *http.Request, err error) {
	if errors.Is(err, errTooLarge) {
		refuseTooLarge(w, g.o.MaxBodyBytes)
		return
	}
	g.refusals.debug(req, "could not read a request's body", slog.String("reason", err.Error()))
	refuse(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeParseError, "Could not read the request body", nil)
}

// readBody reads req's body, up to g.o.MaxBodyBytes and within
// g.o.ReadTimeout. A body longer than that is errTooLarge.
func (g *guard) readBody(w http.ResponseWriter, req *http.Request) ([]byte, error) {
	head, err := g.readHead(w, req)
	if err != nil {
		return nil, err
	}
	return g.readRest(w, req, head)
}

// headChunk is what readHead reads at a time: the first byte of a body
// that is not white space is nearly always its first.
const headChunk = 512

// readHead reads the first bytes of req's body, up to its first byte
// other than JSON white space (or its end), so that a batch is known
// before the rest is read. It reads at most g.o.MaxBodyBytes: a body
// longer than that, by its Content-Length or its white space, is
// errTooLarge.
//
// It sets the connection's read deadline g.o.ReadTimeout ahead, for the
// whole body: a client trickling its body holds a goroutine and a
// connection. net/http lifts the deadline once the body is read to its
// end (readRest, or the handler), so that an event stream answering the
// request is not cut off. On an error the deadline stays: net/http then
// gives up on the rest of the body, and the connection, rather than
// wait for it.
func (g *guard) readHead(w http.ResponseWriter, req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	limit := g.o.MaxBodyBytes
	if req.ContentLength > limit {
		return nil, errTooLarge
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(g.o.ReadTimeout))
	var head []byte
	for len(bytes.TrimLeft(head, " \t\r\n")) == 0 {
		if int64(len(head)) > limit {
			return nil, errTooLarge
		}
		head = slices.Grow(head, headChunk)
		n, err := req.Body.Read(head[len(head):min(cap(head), len(head)+headChunk)])
		head = head[:len(head)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return head, nil
}

// readRest reads the rest of req's body after head, what readHead read
// of it, to g.o.MaxBodyBytes in all, and returns the whole body; then it
// lifts the read deadline. A body longer than that is errTooLarge.
func (g *guard) readRest(w http.ResponseWriter, req *http.Request, head []byte) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return head, nil
	}
	limit := g.o.MaxBodyBytes
	body, err := io.ReadAll(io.MultiReader(bytes.NewReader(head), io.LimitReader(req.Body, limit+1-int64(len(head)))))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		return nil, errTooLarge
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
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
