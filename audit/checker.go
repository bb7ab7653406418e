package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A checker is one audit under way: the session, what the listing found
// for later steps, and the report.
type checker struct {
	ctx    context.Context
	cs     *mcp.ClientSession
	opts   Options
	report *Report

	resources []*mcp.Resource         // every resource listed, in list order
	templates []*mcp.ResourceTemplate // every template listed
}

// A step is one group of checks. It records what the server does wrong
// with c.fail, and returns an error only if the session itself fails.
type step func(c *checker) error

// steps are run in order: the listings first, since later steps use what
// they found.
var steps = []step{
	checkLists,
	checkReads,
	checkNotFound,
	checkTemplates,
	checkSubscriptions,
}

// fail records that the server broke rule at target (a URI, a template or
// a method), having seen what format says.
func (c *checker) fail(rule Rule, target, format string, args ...any) {
	f := Finding{Rule: rule, Target: target, Seen: fmt.Sprintf(format, args...)}
	if reason, ok := c.opts.Waive[rule.ID]; ok {
		f.Waived = reason
	}
	c.report.Findings = append(c.report.Findings, f)
}

// capabilities returns the server's resource capabilities; nil if it
// advertises none.
func (c *checker) capabilities() *mcp.ResourceCapabilities {
	caps := c.cs.InitializeResult().Capabilities
	if caps == nil {
		return nil
	}
	return caps.Resources
}

// protocolAtLeast reports whether the negotiated version is v or later
// (versions are dates, and sort as strings).
func (c *checker) protocolAtLeast(v string) bool { return c.report.Protocol >= v }

// rpcError returns err's JSON-RPC error, if it is one (an answer from the
// server, not a failure of the session).
func rpcError(err error) (*jsonrpc.Error, bool) {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// sessionFailed reports whether err means the session cannot go on (the
// connection closed, the context ended), rather than an error answer.
func (c *checker) sessionFailed(err error) bool {
	if err == nil {
		return false
	}
	if _, ok := rpcError(err); ok {
		return false
	}
	// go-sdk gives a call in flight when its connection dies the reader's
	// own error: io.EOF over stdio, ErrSessionMissing over HTTP.
	return c.ctx.Err() != nil || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// mediaType returns the type/subtype of a MIME type, lower case, without
// parameters.
func mediaType(t string) string {
	t, _, _ = strings.Cut(t, ";")
	return strings.ToLower(strings.TrimSpace(t))
}
