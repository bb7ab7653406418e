package main

// This file builds, for tests that serve the knowledge base in process,
// the handler and the http.Server the binary serves over HTTP.

import (
	"net/http"

	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpHandler returns the handler the binary serves server with, with
// tokens (nil for none). It panics on a bad
// $KNOWLEDGE_READ_HEADER_TIMEOUT: the tests that call it set none.
func httpHandler(server *mcp.Server, tokens *tokenSet) http.Handler {
	opts, err := httpOptions(tokens, nil)
	if err != nil {
		panic(err)
	}
	h, err := serve.Handler(server, opts)
	if err != nil {
		panic(err)
	}
	return h
}

// newHTTPServer returns an http.Server for h with the binary's limits.
func newHTTPServer(h http.Handler) (*http.Server, error) {
	opts, err := httpOptions(nil, nil)
	if err != nil {
		return nil, err
	}
	return serve.NewServer(h, opts)
}
