package main

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// noTemplateURI is a URI of the knowledge base that no template matches.
const noTemplateURI = "resource://knowledge/nosuch"

// missingURIs are URIs that a template matches but that name nothing in a
// newly seeded knowledge base.
var missingURIs = []string{
	documentURI("engineering", "nosuch"),         // a collection that exists, a document that does not
	documentURI("nosuch", "runbook"),             // a collection that does not exist
	documentURI("product", "runbook"),            // a document of another collection
	"resource://knowledge/engineering/document/", // an empty document name
	documentsURI("nosuch"), statsURI("nosuch"),   // a collection that does not exist
	documentsURI("runbook"), statsURI("onboarding"), // a document's name is no collection's
}

// checkRefused checks that subscribe(uri), for each of uris, is refused
// exactly as subscribe(noTemplateURI) is, but for the URI: -32602 "no such
// resource". subscribe returns the error the server answered with.
func checkRefused(t *testing.T, subscribe func(uri string) *jsonrpc.Error, uris ...string) {
	t.Helper()
	want := subscribe(noTemplateURI)
	require.Equal(t, int64(jsonrpc.CodeInvalidParams), want.Code)
	require.Contains(t, want.Message, "no such resource")
	for _, uri := range uris {
		requireSameError(t, want, noTemplateURI, subscribe(uri), uri)
	}
}

// legacySubscribe returns a function for checkRefused that subscribes cs,
// a session of a protocol before 2026-07-28, with resources/subscribe.
func legacySubscribe(t *testing.T, cs *mcp.ClientSession) func(uri string) *jsonrpc.Error {
	return func(uri string) *jsonrpc.Error {
		t.Helper()
		return rpcError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}), uri)
	}
}

// recordListenErrors makes server send the errors it answers
// subscriptions/listen requests with to the channel it returns: go-sdk's
// client subscribes on 2026-07-28 with a listen it sends in the
// background, and does not report its failure to Subscribe's caller.
func recordListenErrors(server *mcp.Server) <-chan error {
	errs := make(chan error, 100)
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "subscriptions/listen" && err != nil {
				errs <- err
			}
			return res, err
		}
	})
	return errs
}

// listenSubscribe returns a function for checkRefused that subscribes cs,
// a 2026-07-28 session, and returns the error its listen was refused with,
// from errs (see recordListenErrors).
func listenSubscribe(t *testing.T, cs *mcp.ClientSession, errs <-chan error) func(uri string) *jsonrpc.Error {
	return func(uri string) *jsonrpc.Error {
		t.Helper()
		require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}), "a listen is sent in the background")
		// The client takes uri for subscribed until told otherwise, and
		// would send no listen for it again.
		defer cs.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: uri})
		select {
		case err := <-errs:
			return rpcError(t, err, uri)
		case <-time.After(10 * time.Second):
			t.Fatalf("the listen for %s was not refused within 10s", uri)
			return nil
		}
	}
}

// TestSubscribeMissing serves the knowledge base in process and checks,
// on each protocol version, that a subscription to a document or a
// collection that does not exist is refused as one to a URI no template
// matches (resource.WithExists), while one to what exists is served, and
// that a collection emptied of its documents can no longer be subscribed
// to.
func TestSubscribeMissing(t *testing.T) {
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			server, _ := newTestServer(t, config{pageSize: pageSize}, slog.New(slog.DiscardHandler))
			errs := recordListenErrors(server)
			n := new(mcptest.Notifications)
			cs := mcptest.Connect(t, server, version, n.ClientOptions(nil))
			subscribe := legacySubscribe(t, cs)
			if version >= "2026-07-28" {
				subscribe = listenSubscribe(t, cs, errs)
			}

			checkRefused(t, subscribe, missingURIs...)

			// What exists is subscribed to, and its subscribers told.
			faq := seed[len(seed)-1]
			require.Equal(t, "support", faq.collection)
			for _, uri := range []string{documentURI(faq.collection, faq.name), documentsURI(faq.collection), statsURI(faq.collection)} {
				require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}))
				n.WaitUpdated(t, uri, func() {
					callTool(t, cs, "put_document", map[string]any{"collection": faq.collection, "doc": faq.name, "markdown": faq.markdown})
				})
			}

			// Deleting support's one document deletes the collection: its
			// subscribers are told, and it can no longer be subscribed to.
			deleted := false
			n.WaitUpdated(t, statsURI(faq.collection), func() {
				if !deleted {
					deleted = true
					callTool(t, cs, "delete_document", map[string]any{"collection": faq.collection, "doc": faq.name})
				}
			})
			gone := []string{documentURI(faq.collection, faq.name), documentsURI(faq.collection), statsURI(faq.collection)}
			for _, uri := range gone {
				require.NoError(t, cs.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: uri}))
			}
			checkRefused(t, subscribe, gone...)
		})
	}
}
