package mcpgo

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// WithRegistry returns the option of server.NewMCPServer that makes the
// server serve reg: pass it after any server.WithHooks,
// server.WithResourceCapabilities and server.WithResourceCompletionProvider
// of your own, which it adds to or replaces. The server then advertises
// the resources capability (subscribe and listChanged) and the
// completions capability, and reg answers resources/list,
// resources/templates/list, resources/read, resources/subscribe and
// resources/unsubscribe, the resource subscriptions of a 2026-07-28
// subscriptions/listen, and completion/complete for "ref/resource"
// references. reg.Changed notifies the subscribers; adding or removing
// entries in reg sends list_changed. See the package documentation for
// what mcp-go v1.2.1 lets the adapter answer, and how.
//
// Register every resource in reg: a resource added to the server with
// AddResource or AddResourceTemplate is never listed, and is read only at
// a URI reg does not know. One registry may serve several servers.
func WithRegistry(reg *resource.Registry) server.ServerOption {
	if reg == nil {
		panic("mcpgo.WithRegistry: nil registry")
	}
	return func(s *server.MCPServer) {
		(&adapter{reg: reg}).mount(s)
	}
}

// markerURI is the one resource the adapter adds to the server: reads the
// registry answers are readdressed to it (mcp-go behaviour 2).
const markerURI = "mcpres:registry"

// outcomeKey is the key under which a read's outcome travels in its
// arguments, from the before hook to the marker's handler and the after
// hook (mcp-go behaviour 3).
const outcomeKey = "mcpres"

// refusedCursor is a cursor mcp-go refuses with -32602, since it is not
// base64 (mcp-go behaviour 4).
const refusedCursor = "!"

// An adapter serves a registry on one mcp-go server.
type adapter struct {
	reg       *resource.Registry
	sessions  sync.Map // server.ClientSession → *session: those mcp-go registered
	pages     sync.Map // *mcp.ListResourcesRequest, *mcp.ListResourceTemplatesRequest → *page
	templates sync.Map // *sdk.ResourceTemplate → *mcp.ResourceTemplate, converted once
}

// mount sets s up to serve a's registry (every mcp-go behaviour listed in
// doc.go).
func (a *adapter) mount(s *server.MCPServer) {
	server.WithResourceCapabilities(true, true)(s)
	server.WithCompletions()(s)
	server.WithResourceCompletionProvider(a)(s)
	h := s.GetHooks()
	if h == nil {
		h = new(server.Hooks)
		server.WithHooks(h)(s)
	}
	h.AddOnRegisterSession(a.registered)
	h.AddOnUnregisterSession(a.unregistered)
	h.AddAfterInitialize(a.initialized)
	// Before hooks run after those added earlier, which see the request
	// as the client sent it; after hooks run first, so that every other
	// one sees the registry's result and the request as it was sent.
	h.AddBeforeListResources(a.beforeList)
	h.OnAfterListResources = append([]server.OnAfterListResourcesFunc{a.afterList}, h.OnAfterListResources...)
	h.AddBeforeListResourceTemplates(a.beforeTemplates)
	h.OnAfterListResourceTemplates = append([]server.OnAfterListResourceTemplatesFunc{a.afterTemplates}, h.OnAfterListResourceTemplates...)
	h.AddBeforeReadResource(a.beforeRead)
	h.OnAfterReadResource = append([]server.OnAfterReadResourceFunc{a.afterRead}, h.OnAfterReadResource...)
	h.AddBeforeSubscribe(a.beforeSubscribe)
	h.AddBeforeUnsubscribe(a.beforeUnsubscribe)
	h.AddBeforeSubscriptionsListen(a.beforeListen)
	s.AddResource(mcp.Resource{URI: markerURI, Name: "mcpres registry"}, a.readMarker)
	a.reg.Attach(func() {
		s.SendNotificationToAllClients(mcp.MethodNotificationResourcesListChanged, nil)
	})
}

// caller returns ctx naming the caller of the request it serves, for the
// registry (resource.WithCaller): its protocol version, and its session
// if mcp-go registered it (one it can notify).
func (a *adapter) caller(ctx context.Context, header http.Header) context.Context {
	c := resource.Caller{ProtocolVersion: server.RequestProtocolVersion(ctx)}
	if c.ProtocolVersion == "" && header != nil {
		c.ProtocolVersion = header.Get(mcp.HeaderProtocolVersion)
	}
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		if v, ok := a.sessions.Load(cs); ok {
			s := v.(*session)
			c.Session = s
			if c.ProtocolVersion == "" {
				c.ProtocolVersion = s.protocolVersion()
			}
		}
	}
	return resource.WithCaller(ctx, c)
}

// extra is the go-sdk RequestExtra of a request with header: nil if it
// has none (stdio).
func extra(header http.Header) *sdk.RequestExtra {
	if header == nil {
		return nil
	}
	return &sdk.RequestExtra{Header: header}
}

// modern reports whether the request ctx serves is of 2026-07-28 or
// later.
func modern(ctx context.Context) bool { return server.IsModernRequest(ctx) }

// A page is a list page the registry answered, from the before hook to
// the after hook, with the client's cursor.
type page struct {
	cursor mcp.Cursor
	res    any // *sdk.ListResourcesResult or *sdk.ListResourceTemplatesResult
}

// beforeList asks the registry for the page req asks for, and has mcp-go
// list its own resources from the start (mcp-go behaviour 4), unless the
// registry refused the request: mcp-go then refuses a cursor that is not
// base64.
func (a *adapter) beforeList(ctx context.Context, _ any, req *mcp.ListResourcesRequest) {
	res, err := a.reg.ListResources(a.caller(ctx, req.Header), &sdk.ListResourcesRequest{
		Params: &sdk.ListResourcesParams{Cursor: string(req.Params.Cursor)},
		Extra:  extra(req.Header),
	})
	a.hold(req, &req.Params.Cursor, res, err)
}

// hold keeps res, the registry's page for the list request req, for
// its after hook, and has mcp-go list its own from the start (the cursor
// at *cursor cleared); if the registry refused the request (err), it
// sets *cursor to one mcp-go refuses instead.
func (a *adapter) hold(req any, cursor *mcp.Cursor, res any, err error) {
	if err != nil {
		*cursor = refusedCursor
		return
	}
	a.pages.Store(req, &page{cursor: *cursor, res: res})
	*cursor = ""
}

// take returns the page hold kept for req, and puts its cursor back at
// *cursor; ok is false if there is none.
func (a *adapter) take(req any, cursor *mcp.Cursor) (res any, ok bool) {
	v, ok := a.pages.LoadAndDelete(req)
	if !ok {
		return nil, false
	}
	p := v.(*page)
	*cursor = p.cursor
	return p.res, true
}

// afterList answers req with the registry's page in place of mcp-go's.
func (a *adapter) afterList(ctx context.Context, _ any, req *mcp.ListResourcesRequest, result *mcp.ListResourcesResult) {
	held, ok := a.take(req, &req.Params.Cursor)
	if !ok {
		return
	}
	res := held.(*sdk.ListResourcesResult)
	*result = mcp.ListResourcesResult{Resources: resources(res.Resources)}
	result.NextCursor = mcp.Cursor(res.NextCursor)
	result.Meta = meta(res.Meta)
	if modern(ctx) {
		cache(&result.CacheableResult, res.Cacheable)
	}
}

// beforeTemplates is beforeList for resources/templates/list.
func (a *adapter) beforeTemplates(ctx context.Context, _ any, req *mcp.ListResourceTemplatesRequest) {
	res, err := a.reg.ListResourceTemplates(a.caller(ctx, req.Header), &sdk.ListResourceTemplatesRequest{
		Params: &sdk.ListResourceTemplatesParams{Cursor: string(req.Params.Cursor)},
		Extra:  extra(req.Header),
	})
	a.hold(req, &req.Params.Cursor, res, err)
}

// afterTemplates is afterList for resources/templates/list.
func (a *adapter) afterTemplates(ctx context.Context, _ any, req *mcp.ListResourceTemplatesRequest, result *mcp.ListResourceTemplatesResult) {
	held, ok := a.take(req, &req.Params.Cursor)
	if !ok {
		return
	}
	res := held.(*sdk.ListResourceTemplatesResult)
	*result = mcp.ListResourceTemplatesResult{ResourceTemplates: a.resourceTemplates(res.ResourceTemplates)}
	result.NextCursor = mcp.Cursor(res.NextCursor)
	result.Meta = meta(res.Meta)
	if modern(ctx) {
		cache(&result.CacheableResult, res.Cacheable)
	}
}

// A readOutcome is what the registry answered a read, from the before
// hook to the marker's handler and the after hook, with what the client
// sent.
type readOutcome struct {
	uri  string
	args map[string]any
	res  *sdk.ReadResourceResult // nil if the read failed
	msg  string                  // the error's message, if it failed
}

// beforeRead has the registry read the URI req names. A URI the registry
// does not know (or one it does not take for a URI) is left for mcp-go,
// which finds no handler for it and answers with its not-found error, the
// code of the request's protocol version (mcp-go behaviour 5). Anything
// else is readdressed to the marker, with the outcome in its arguments.
func (a *adapter) beforeRead(ctx context.Context, _ any, req *mcp.ReadResourceRequest) {
	uri := req.Params.URI
	res, err := a.reg.ReadResource(a.caller(ctx, req.Header), &sdk.ReadResourceRequest{
		Params: &sdk.ReadResourceParams{URI: uri, Meta: sdkMeta(req.Params.Meta)},
		Extra:  extra(req.Header),
	})
	if err != nil {
		var jerr *jsonrpc.Error
		if errors.As(err, &jerr) && (jerr.Code == resource.CodeLegacyResourceNotFound || jerr.Code == jsonrpc.CodeInvalidParams) {
			if uri == markerURI {
				req.Params.URI = "" // no handler has it either
			}
			return
		}
	}
	o := &readOutcome{uri: uri, args: req.Params.Arguments, res: res}
	if err != nil {
		o.msg = message(err)
	}
	req.Params.URI = markerURI
	req.Params.Arguments = map[string]any{outcomeKey: o}
}

// readMarker is the marker's handler: the contents the registry read, or
// its error, whose message is what the registry tells a client.
func (a *adapter) readMarker(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	o, ok := req.Params.Arguments[outcomeKey].(*readOutcome)
	switch {
	case !ok:
		return nil, errors.New("Internal error") // not readdressed by beforeRead
	case o.res == nil:
		return nil, errors.New(o.msg)
	}
	return contents(o.res.Contents), nil
}

// afterRead puts back the request the client sent, and sets the result's
// _meta and caching hints as the registry did.
func (a *adapter) afterRead(ctx context.Context, _ any, req *mcp.ReadResourceRequest, result *mcp.ReadResourceResult) {
	o, ok := req.Params.Arguments[outcomeKey].(*readOutcome)
	if !ok || o.res == nil {
		return
	}
	req.Params.URI, req.Params.Arguments = o.uri, o.args
	result.Meta = meta(o.res.Meta)
	if modern(ctx) {
		cache(&result.CacheableResult, o.res.Cacheable)
	}
}

// message is what the registry's error err tells the client.
func message(err error) string {
	var jerr *jsonrpc.Error
	if errors.As(err, &jerr) {
		return jerr.Message
	}
	return "Internal error"
}

// CompleteResourceArgument completes a variable of one of the registry's
// templates (server.ResourceCompletionProvider). A refusal is an error
// with the registry's message, which mcp-go sends with -32603 (mcp-go
// behaviour 6).
func (a *adapter) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	p := &sdk.CompleteParams{
		Ref:      &sdk.CompleteReference{Type: "ref/resource", URI: uri},
		Argument: sdk.CompleteParamsArgument{Name: arg.Name, Value: arg.Value},
	}
	if cc.Arguments != nil {
		p.Context = &sdk.CompleteContext{Arguments: cc.Arguments}
	}
	res, err := a.reg.Complete(a.caller(ctx, nil), &sdk.CompleteRequest{Params: p})
	if err != nil {
		return nil, errors.New(message(err))
	}
	return &mcp.Completion{Values: res.Completion.Values, Total: res.Completion.Total, HasMore: res.Completion.HasMore}, nil
}

// beforeSubscribe has the registry subscribe the session to the URI req
// names. A refusal empties the URI, which mcp-go refuses with -32602
// (mcp-go behaviour 7).
func (a *adapter) beforeSubscribe(ctx context.Context, _ any, req *mcp.SubscribeRequest) {
	err := a.reg.Subscribe(a.caller(ctx, req.Header), &sdk.SubscribeRequest{
		Params: &sdk.SubscribeParams{URI: req.Params.URI},
		Extra:  extra(req.Header),
	})
	if err != nil {
		req.Params.URI = ""
	}
}

// beforeUnsubscribe has the registry forget the subscription.
func (a *adapter) beforeUnsubscribe(ctx context.Context, _ any, req *mcp.UnsubscribeRequest) {
	a.reg.Unsubscribe(a.caller(ctx, req.Header), &sdk.UnsubscribeRequest{
		Params: &sdk.UnsubscribeParams{URI: req.Params.URI},
	})
}

// beforeListen opens a 2026-07-28 listen stream in the registry (the cap
// of streams per caller, the Observer's call; a refusal empties the
// listen, which mcp-go then acknowledges as establishing nothing and
// closes), has the registry subscribe the stream to each resource it
// names, and leaves out of the listen those it refuses, so that mcp-go
// acknowledges only the others (mcp-go behaviour 8). The stream, and its
// subscriptions, end with the listen request.
func (a *adapter) beforeListen(ctx context.Context, id any, req *mcp.SubscriptionsListenRequest) {
	cs := server.ClientSessionFromContext(ctx)
	if cs == nil || id == nil {
		return // mcp-go refuses the listen
	}
	stream := &session{cs: cs, done: ctx.Done(), listen: id}
	cctx := resource.WithCaller(ctx, resource.Caller{ProtocolVersion: server.RequestProtocolVersion(ctx), Session: stream})
	cctx, end, err := a.reg.Listen(cctx, &sdk.SubscriptionsListenRequest{Params: &sdk.SubscriptionsListenParams{}, Extra: extra(req.Header)})
	if err != nil {
		req.Params.Notifications = mcp.SubscriptionFilter{}
		return
	}
	go func() {
		<-ctx.Done()
		end()
	}()
	var kept []string
	for _, uri := range req.Params.Notifications.ResourceSubscriptions {
		err := a.reg.Subscribe(cctx, &sdk.SubscribeRequest{Params: &sdk.SubscribeParams{URI: uri}, Extra: extra(req.Header)})
		if err == nil {
			kept = append(kept, uri)
		}
	}
	req.Params.Notifications.ResourceSubscriptions = kept
}
