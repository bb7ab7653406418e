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
// To serve resources/subscribe (and the resource subscriptions of
// 2026-07-28 listens), create s with ServerOptions{SubscribeHandler:
// r.Subscribe, UnsubscribeHandler: r.Unsubscribe}, and report changes with
// r.Changed: see Registry.Subscribe.
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
	// that hold a resource of their own. The marker is that resource. It is
	// never listed (the middleware answers the list methods), and reads
	// reach the registry through it (see middleware).
	r.notify.add(s, r.readViaMarker)
}

// marker is the one go-sdk resource behind a mounted registry.
var marker = &mcp.Resource{URI: "mcpres:registry", Name: "mcpres registry"}

// readKey is the context key under which the middleware passes a
// resources/read request to readViaMarker.
type readKey struct{}

// readViaMarker is the marker's read function: it reads the request the
// middleware set aside.
func (r *Registry) readViaMarker(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	if orig, ok := ctx.Value(readKey{}).(*mcp.ReadResourceRequest); ok {
		req = orig
	}
	return r.ReadResource(ctx, req)
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
			if q.Params == nil {
				return result(r.ReadResource(ctx, q))
			}
			// Send the read on to go-sdk's own resources/read, addressed to
			// the marker, so go-sdk finishes the result as for any resource
			// it holds: resultType for 2026-07-28 clients (which only it can
			// set) and ServerOptions.SetCacheable. The marker's read function
			// reads the original.
			ctx = context.WithValue(ctx, readKey{}, q)
			viaMarker, params := *q, *q.Params
			params.URI = marker.URI
			viaMarker.Params = &params
			return next(ctx, method, &viaMarker)
		case *mcp.SubscriptionsListenRequest:
			// go-sdk turns each resource of a listen into a subscribe
			// request of its own, without the transport's token: pass the
			// listen on, for Subscribe to find it.
			ctx = context.WithValue(ctx, listenKey{}, q)
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
	read    ReadFunc // the marker's
	pending bool
}

// add adds the marker, read by read, to s, and s to the servers notified.
func (n *notifier) add(s *mcp.Server, read ReadFunc) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.read = read
	s.AddResource(marker, read)
	if !slices.Contains(n.servers, s) {
		n.servers = append(n.servers, s)
	}
}

// mounted returns the servers the registry is mounted on.
func (n *notifier) mounted() []*mcp.Server {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.servers)
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
	servers, read := slices.Clone(n.servers), n.read
	n.mu.Unlock()
	for _, s := range servers {
		// Re-adding the marker is go-sdk's public way to say "the resource
		// list changed": it sends list_changed to the server's sessions.
		s.AddResource(marker, read)
	}
}
