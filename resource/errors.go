package resource

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file is the one place where failures become JSON-RPC errors.

// CodeLegacyResourceNotFound is the "resource not found" code that MCP
// versions before 2026-07-28 recommend.
const CodeLegacyResourceNotFound = -32002

// CodeRateLimited is the JSON-RPC error code of a request refused by
// Options.RateLimits: an implementation-defined server error (the MCP
// specification defines none for this), chosen to recall HTTP 429.
const CodeRateLimited = -32029

// protocolSEP2164 is the first protocol version whose specification answers
// an unknown resource with -32602 (SEP-2164).
const protocolSEP2164 = "2026-07-28"

// notFoundError answers an unknown or missing resource: -32602 or -32002
// (by the client's protocol version and Options.NotFound), message
// "Resource not found", data {"uri": …}.
func (r *Registry) notFoundError(version, u string) error {
	code := int64(jsonrpc.CodeInvalidParams)
	switch r.opts.NotFound {
	case NotFoundLegacy:
		code = CodeLegacyResourceNotFound
	case NotFoundByVersion:
		if version < protocolSEP2164 {
			code = CodeLegacyResourceNotFound
		}
	}
	data, _ := json.Marshal(struct {
		URI string `json:"uri"`
	}{u})
	return &jsonrpc.Error{Code: code, Message: "Resource not found", Data: data}
}

// rateLimitedError answers a request of method refused by a rate limit:
// CodeRateLimited, message "Rate limit exceeded", data {"method": …,
// "retryAfterMs": …}, wait rounded up to at least 1 ms.
func rateLimitedError(method string, wait time.Duration) error {
	data, _ := json.Marshal(struct {
		Method       string `json:"method"`
		RetryAfterMs int64  `json:"retryAfterMs"`
	}{method, max(1, (wait + time.Millisecond - 1).Milliseconds())})
	return &jsonrpc.Error{Code: CodeRateLimited, Message: "Rate limit exceeded", Data: data}
}

// errNoSuchSubscription answers a subscription to an unknown resource, or
// to one the caller may not see.
func errNoSuchSubscription(u string) error {
	return invalidParams("cannot subscribe to %q: no such resource", u)
}

// invalidParams answers a request the client got wrong, saying why.
func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// errInternal is what a client sees of any failure inside the server.
var errInternal = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}

// isNotFound reports whether a read function's error means "no such
// resource": ErrNotFound, or go-sdk's own not-found error (either code), for
// handlers written against mcp.ResourceNotFoundError.
func isNotFound(err error) bool {
	if errors.Is(err, ErrNotFound) {
		return true
	}
	var jerr *jsonrpc.Error
	if errors.As(err, &jerr) && jerr.Message == "Resource not found" {
		return jerr.Code == mcp.CodeResourceNotFound || jerr.Code == CodeLegacyResourceNotFound
	}
	return false
}
