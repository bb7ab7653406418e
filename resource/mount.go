package resource

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Mount makes r answer the resource methods of s: resources/list,
// resources/templates/list, resources/read, and completion/complete for
// "ref/resource" references (other completions go on to s's own
// CompletionHandler). s advertises the resources capability with
// listChanged, and the completions capability; adding or removing entries
// in r afterwards sends notifications/resources/list_changed to s's
// sessions, debounced by Options.ListChangedDelay, to legacy sessions
// directly and to 2026-07-28 sessions that listen for it.
//
// Mount installs a receiving middleware. Middleware added to s before Mount
// does not see the requests r answers, so add your own (logging, auth)
// after Mount. Resources added to s directly with s.AddResource are hidden
// behind r: register everything in r.
//
// Subscriptions are go-sdk's: to serve resources/subscribe, create s with
// ServerOptions{SubscribeHandler: r.Subscribe, UnsubscribeHandler:
// r.Unsubscribe} and report changes with s.ResourceUpdated.
//
// One registry may be mounted on several servers; each is notified of
// changes. Mount panics if s or r is nil.
func Mount(s *mcp.Server, r *Registry) {
	if s == nil || r == nil {
		panic("resource.Mount: nil server or registry")
	}
	s.AddReceivingMiddleware(r.middleware)
	// go-sdk advertises the resources capability, agrees to 2026-07-28
	// resourcesListChanged listens and sends list_changed only for servers
	// that hold a resource of their own. The marker is that resource; it is
	// never listed or read, because the middleware answers those methods.
	s.AddResource(marker, markerRead)
	r.notify.add(s)
}

// marker is the one go-sdk resource behind a mounted registry.
var marker = &mcp.Resource{URI: "mcpres:registry", Name: "mcpres registry"}

func markerRead(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return nil, ErrNotFound
}

// middleware answers the methods r serves and passes everything else on.
func (r *Registry) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch q := req.(type) {
		case *mcp.ListResourcesRequest:
			return result(r.ListResources(ctx, q))
		case *mcp.ListResourceTemplatesRequest:
			return result(r.ListResourceTemplates(ctx, q))
		case *mcp.ReadResourceRequest:
			return result(r.ReadResource(ctx, q))
		case *mcp.CompleteRequest:
			if q.Params != nil && q.Params.Ref != nil && q.Params.Ref.Type == "ref/resource" {
				return result(r.Complete(ctx, q))
			}
		}
		res, err := next(ctx, method, req)
		if err == nil {
			advertiseCompletions(res)
		}
		return res, err
	}
}

// result converts a handler's typed answer into the middleware's, so that
// a failed call returns a nil interface rather than a typed nil pointer.
func result[R mcp.Result](res R, err error) (mcp.Result, error) {
	if err != nil {
		return nil, err
	}
	return res, nil
}

// advertiseCompletions adds the completions capability to the server's
// answer to initialize (legacy) and server/discover (2026-07-28), since the
// registry answers completion/complete even when the server has no
// CompletionHandler.
func advertiseCompletions(res mcp.Result) {
	var caps *mcp.ServerCapabilities
	switch res := res.(type) {
	case *mcp.InitializeResult:
		caps = res.Capabilities
	case *mcp.DiscoverResult:
		caps = res.Capabilities
	}
	if caps != nil && caps.Completions == nil {
		caps.Completions = &mcp.CompletionCapabilities{}
	}
}

// A notifier turns registry changes into list_changed notifications on
// the mounted servers: the first change after a quiet spell starts a timer,
// later changes ride along, and when it fires each server is told once.
type notifier struct {
	delay time.Duration

	mu      sync.Mutex
	servers []*mcp.Server
	pending bool
}

func (n *notifier) add(s *mcp.Server) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !slices.Contains(n.servers, s) {
		n.servers = append(n.servers, s)
	}
}

func (n *notifier) changed() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.pending || len(n.servers) == 0 {
		return
	}
	n.pending = true
	time.AfterFunc(n.delay, n.fire)
}

func (n *notifier) fire() {
	n.mu.Lock()
	n.pending = false
	servers := slices.Clone(n.servers)
	n.mu.Unlock()
	for _, s := range servers {
		// Re-adding the marker is go-sdk's public way to say "the resource
		// list changed": it sends list_changed to the server's sessions.
		s.AddResource(marker, markerRead)
	}
}
