package resource

import (
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewServer returns a go-sdk server that serves r: resources/list,
// resources/templates/list, resources/read, resources/subscribe and
// resources/unsubscribe (with the resource subscriptions of 2026-07-28
// listens), and completion/complete for "ref/resource" references. It
// advertises the resources capability with subscribe and listChanged, and
// the completions capability. It is mcp.NewServer(impl, opts) with the
// registry's SubscribeHandler and UnsubscribeHandler, and Mount; every
// other option of opts (which may be nil) is kept, CompletionHandler
// included, which answers completions of other references.
//
// Use NewServer for a server of your own; use Mount for a server made
// elsewhere. Serve it as any go-sdk server: server.Run(ctx,
// &mcp.StdioTransport{}) over stdio, or over streamable HTTP behind
// NewHTTPHandler, which serves clients of every protocol version on one
// URL with their notifications.
//
// NewServer returns an error if impl is nil, if opts sets
// SubscribeHandler or UnsubscribeHandler (they are the registry's), or if
// r is closed (ErrClosed).
func (r *Registry) NewServer(impl *mcp.Implementation, opts *mcp.ServerOptions) (*mcp.Server, error) {
	if impl == nil {
		return nil, errors.New("resource: NewServer needs an implementation")
	}
	var o mcp.ServerOptions
	if opts != nil {
		o = *opts
	}
	if o.SubscribeHandler != nil || o.UnsubscribeHandler != nil {
		return nil, errors.New("resource: NewServer: ServerOptions.SubscribeHandler and UnsubscribeHandler are the registry's; leave them nil")
	}
	if r.closed.Load() {
		return nil, fmt.Errorf("resource: NewServer: %w", ErrClosed)
	}
	o.SubscribeHandler, o.UnsubscribeHandler = r.Subscribe, r.Unsubscribe
	s := mcp.NewServer(impl, &o)
	mount(s, r)
	return s, nil
}

// Mount makes r answer the resource methods of s, a server made elsewhere
// (Registry.NewServer makes one with everything wired): resources/list,
// resources/templates/list, resources/read, and completion/complete for
// "ref/resource" references (other completions go on to s's own
// CompletionHandler). s advertises the resources capability with
// listChanged, and the completions capability; adding or removing entries
// in r afterwards sends notifications/resources/list_changed to s's
// sessions, debounced by Options.ListChangedDelay, to legacy sessions
// directly and to 2026-07-28 sessions that listen for it.
//
// Reads pass through go-sdk's own resources/read, so s finishes their
// results as it does for its own resources: resultType for 2026-07-28
// clients, and ServerOptions.SetCacheable after the registry's caching
// hints.
//
// Mount installs a receiving middleware. Middleware added to s before Mount
// does not see the list and completion requests r answers, and sees reads
// addressed to an internal URI, so add your own (logging, auth) after
// Mount. Resources added to s directly with s.AddResource are hidden behind
// r: register everything in r. Mount one registry per server.
//
// Mount does not enable resources/subscribe, which go-sdk takes only from
// the options s was made with: make s with ServerOptions{SubscribeHandler:
// r.Subscribe, UnsubscribeHandler: r.Unsubscribe} (NewServer does), and
// report changes with r.Changed; see Registry.Subscribe.
//
// One registry may be mounted on several servers; each is notified of
// changes. Mount panics if s or r is nil.
func Mount(s *mcp.Server, r *Registry) {
	if s == nil || r == nil {
		panic("resource.Mount: nil server or registry")
	}
	mount(s, r)
}
