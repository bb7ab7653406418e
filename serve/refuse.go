package serve

// This file holds the answers the edge refuses a request with, and the
// log line of a refusal. Every answer is a JSON-RPC error response, as
// the transport allows: "The HTTP response body MAY comprise a JSON-RPC
// error response that has no id" (2025-11-25 and 2026-07-28,
// transports).

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpres/mcpres/internal/burst"
	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/resource"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// refuse answers with status and a JSON-RPC error of code and message,
// with id (none if it is the zero ID) and data (none if nil).
func refuse(w http.ResponseWriter, status int, id jsonrpc.ID, code int64, message string, data json.RawMessage) {
	body, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: message, Data: data}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// refuseOrigin answers a request refused for its Origin header: 403, and
// -32600 Invalid Request. The specification names no code for it; the
// refusal is of the whole HTTP request, decided before its body is read,
// so it is no method's or params' error.
func refuseOrigin(w http.ResponseWriter) {
	refuse(w, http.StatusForbidden, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
		"Forbidden: the Origin header names an origin this server does not accept", nil)
}

// refuseMetadata answers a request whose request-metadata headers break a
// rule: 400 and -32020 HeaderMismatch, with its id. "When rejecting a
// request due to header validation failure, servers MUST return HTTP
// status 400 Bad Request and MUST include a JSON-RPC error response"
// (2026-07-28, transports, Server Validation).
func refuseMetadata(w http.ResponseWriter, id jsonrpc.ID, err error) {
	refuse(w, http.StatusBadRequest, id, protocol.CodeHeaderMismatch, err.Error(), nil)
}

// refuseBatch answers a JSON-RPC batch of a version that has none: 400,
// and -32600 Invalid Request, as go-sdk's handler answers 400. "If the
// server cannot accept the input, it MUST return an HTTP error status
// code (e.g., 400 Bad Request)" (2025-06-18, transports).
func refuseBatch(w http.ResponseWriter) {
	refuse(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
		"Invalid Request: JSON-RPC batches are not part of protocol 2025-06-18 and later", nil)
}

// refuseTooLarge answers a body longer than limit: 413, and -32600.
func refuseTooLarge(w http.ResponseWriter, limit int64) {
	refuse(w, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
		"Request body too large: the most this server reads is "+strconv.FormatInt(limit, 10)+" bytes", nil)
}

// refuseCapped answers a request refused for a cap that may free up, with
// status, Retry-After, and resource.CodeRateLimited with data
// {"method": …, "retryAfterMs": …}, as the registry's rate limits do,
// without an id.
func refuseCapped(w http.ResponseWriter, status int, method, message string, wait time.Duration) {
	refuseCappedID(w, status, jsonrpc.ID{}, method, message, wait)
}

// refuseCappedID is refuseCapped, answering the request id.
func refuseCappedID(w http.ResponseWriter, status int, id jsonrpc.ID, method, message string, wait time.Duration) {
	data, _ := json.Marshal(struct {
		Method       string `json:"method"`
		RetryAfterMs int64  `json:"retryAfterMs"`
	}{method, wait.Milliseconds()})
	w.Header().Set("Retry-After", strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10))
	refuse(w, status, id, resource.CodeRateLimited, message, data)
}

// A refusals logs the refusals of an edge to its logger.
type refusals struct {
	log    *slog.Logger
	bursts burst.Counter
}

// debug logs a refusal of req at Debug: a client's mistake, or a page of
// another origin.
func (r *refusals) debug(req *http.Request, msg string, attrs ...slog.Attr) {
	attrs = append(attrs, slog.String("method", req.Method))
	r.log.LogAttrs(req.Context(), slog.LevelDebug, msg, attrs...)
}

// shed logs, at Warn, that a newcomer, caller, was given the place of a
// stream or session of kind that the edge ended, once per burst.
func (r *refusals) shed(ctx context.Context, kind, caller string) {
	begins, unreported := r.bursts.Refused("shed "+kind, time.Now())
	if !begins {
		return
	}
	r.log.LogAttrs(ctx, slog.LevelWarn, "mcpres: ended one of "+kind+" to make room at a cap",
		slog.String("for", caller), slog.Int("moreInPreviousBurst", unreported),
		slog.String("note", "one line per burst"))
}

// capped logs, at Warn, that caller was refused for the cap named kind,
// once per burst of such refusals: a client hammering a cap writes a
// line a burst, not one a request.
func (r *refusals) capped(ctx context.Context, kind, caller string, max int) {
	begins, unreported := r.bursts.Refused(kind, time.Now())
	if !begins {
		return
	}
	r.log.LogAttrs(ctx, slog.LevelWarn, "mcpres: refused over the cap of "+kind,
		slog.Int("cap", max), slog.String("caller", caller),
		slog.Int("moreInPreviousBurst", unreported),
		slog.String("note", "one line per burst of refusals of this cap"))
}
