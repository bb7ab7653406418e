package mcpgo

// This file carries the caller's identity from mcp-go's request context
// to the registry. mcp-go has no verified token for a request, and hands
// a request only what a context function of the server put in its
// context (server.WithHTTPContextFunc, server.WithStdioContextFunc):
// WithIdentity is for that function, and Identity is the registry's
// Options.Identity that reads it back.

import (
	"context"

	"github.com/mcpres/mcpres/resource"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// identityKey is the context key of the identity WithIdentity records.
type identityKey struct{}

// WithIdentity returns a copy of ctx naming id as the caller of the
// request it serves, for Identity to read. Call it from an mcp-go server's
// context function (server.WithHTTPContextFunc, once the request's
// token is verified; server.WithStdioContextFunc), which is given the
// context each request is served with. An id of "" names an anonymous
// caller.
func WithIdentity(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// Identity names the caller of req, for resource.Options.Identity on a
// registry served by WithRegistry: the id WithIdentity recorded in ctx.
// If none was, it returns resource.DefaultIdentity(ctx, req), which is ""
// on mcp-go.
func Identity(ctx context.Context, req sdk.Request) string {
	if id, ok := ctx.Value(identityKey{}).(string); ok {
		return id
	}
	return resource.DefaultIdentity(ctx, req)
}
