// Package mcpgo serves a resource.Registry on a server made with
// github.com/mark3labs/mcp-go (v1.2.1), over any of its transports:
//
//	reg, _ := resource.NewRegistry(nil)
//	// reg.Add, reg.AddTemplate, reg.AddProvider ...
//	s := server.NewMCPServer("name", "v1.0.0", mcpgo.WithRegistry(reg))
//	server.ServeStdio(s) // or server.NewStreamableHTTPServer(s)
//
// It is a module of its own, at the core's version, so that the core
// does not depend on mcp-go:
//
//	go get github.com/mcpres/mcpres/mcpgo@v0.1.0
//
// Before v0.1.0 is published, the README's set-up gives the replace
// directives that use it from a checkout.
//
// On such a server the registry answers resources/list and
// resources/templates/list with its keyset pages and encrypted cursors,
// its providers and template instance lists, filtered by the Authorizer;
// resources/read with the most specific template, its variables decoded
// once, the MIME check, the read cap and the caching hints (for
// 2026-07-28 clients); completion/complete for its templates' variables;
// resources/subscribe and the resource subscriptions of a 2026-07-28
// subscriptions/listen, notified on reg.Changed (and its kin, and changes
// from other replicas on a bus) after the coalescing window and the
// Authorizer's second look, from sending goroutines that one stalled
// session holds up for 10 ms at most;
// and notifications/resources/list_changed when entries are added or
// removed. Rate limits, the caps on subscriptions, the access log and
// the Observer work as on go-sdk: the adapter hands each request to the
// registry's handler methods, naming its caller with resource.WithCaller
// (its protocol version, and its mcp-go session), opens each listen
// stream with resource.Registry.Listen, and tells the registry of the
// server with resource.Registry.Attach.
//
// Options.Identity receives the context mcp-go serves the request with
// and a go-sdk request whose Extra holds the HTTP header. mcp-go verifies
// no token for Extra.TokenInfo, so resource.DefaultIdentity names every
// caller "". To tell callers apart, name each request's caller with
// WithIdentity in the server's context function
// (server.WithHTTPContextFunc, once the request's token is verified, or
// server.WithStdioContextFunc), and set Options.Identity to Identity,
// which reads it back.
//
// Serve mcp-go's streamable HTTP handler behind the HTTP edge of package
// serve, as a go-sdk server is: serve.ListenAndServeHandler, or
// serve.Guard in a mux of your own. The edge refuses pages of other
// origins, mirrored headers that do not match the body (mcp-go compares
// only the protocol version), oversized and trickled bodies; it keeps
// event streams open through proxies, records each client's address for
// rate limits of anonymous callers, and caps the sessions and listen
// streams of each caller. Give mcp-go the edge's session timeout
// (server.WithSessionIdleTTL(serve.DefaultSessionTimeout)). The tests of
// this module run the edge's suite on mcp-go (TestEdgeOnMCPGo).
//
// # What mcp-go v1.2.1 does not let an adapter do
//
// mcp-go serves the resource methods itself and offers no handler to
// replace them: the adapter works through the before and after hooks of
// each method, one resource of its own that reads are readdressed to,
// the completion provider, the session hooks and each session's
// notification channel. What that cannot do, what a client gets
// instead, and the change in mcp-go that would lift it:
//
//  1. No hook or handler can answer with an error of its choosing: a
//     resource handler's error always goes out as -32603 with the error's
//     text, and a list, subscribe or completion fails only where mcp-go
//     itself fails. So the adapter answers, where go-sdk's server sends
//     the registry's own error:
//     a read over the rate limit with -32603 "Rate limit exceeded" (not
//     429 with data.retryAfterMs); a read function's own *jsonrpc.Error
//     with -32603 and its message (not its code); an unknown resource
//     with mcp-go's not-found error, which has the code of the request's
//     protocol version (-32002, or -32602 from 2026-07-28) but the
//     message "handler not found for resource URI '…': resource not
//     found" and no data {"uri": …}; a URI that is not one (which
//     go-sdk's server refuses with -32602) with that same not-found error;
//     a list with a cursor the registry refuses, or whose provider fails,
//     with -32602 "illegal base64 data at input byte 0" (go-sdk's: -32602
//     "invalid cursor", -32603 for a provider); a subscription the
//     registry refuses (no such resource, denied, over a cap or the rate
//     limit, or a session that cannot be notified) with -32602 "uri is
//     required"; a completion it refuses (an unknown template or
//     variable) with -32603 and the registry's message (go-sdk's: -32602).
//     No error text of a read function, provider or completer reaches a
//     client either way. Of the official conformance suite's resource
//     scenarios (scripts/conformance.sh mcp-go), this fails only
//     sep-2164-resource-not-found at 2026-07-28, whose check
//     sep-2164-data-uri warns that data.uri is missing: the script does
//     not run it on mcp-go. No version of the specification requires
//     data.uri; its pages show it only in their example error, and the
//     audit reports its absence as ADVICE (notfound.data,
//     docs/auditing.md). The change: let a handler or a
//     before hook return an error that carries its JSON-RPC code, message
//     and data (say, handlerError and the list, subscribe and complete
//     handlers sending an error that implements
//     interface{ JSONRPCError() mcp.JSONRPCErrorDetails } as it is), or
//     let a server replace the resource handlers outright
//     (server.WithResourceHandlers, mcp-go issue #51's custom list
//     handler and its read, subscribe and complete kin); either removes
//     every detour below too.
//  2. The hooks around a read or a list see the adapter's detour: hooks
//     added to the server's Hooks after WithRegistry, and its OnSuccess
//     hooks, see a read addressed to mcpres:registry (its arguments
//     replaced), and OnSuccess sees mcp-go's own list, not the
//     registry's; resource handler middlewares
//     (server.WithResourceHandlerMiddleware) see the read readdressed
//     too. Before and after hooks added before WithRegistry see the
//     request as the client sent it and the registry's result.
//     Resources added to the server itself (AddResource,
//     AddResourceTemplate) are never listed, and are read only at URIs
//     the registry does not know.
//  3. A session that cannot be sent notifications (mcp-go's stateless
//     streamable HTTP before 2026-07-28, whose sessions mcp-go never
//     registers) is refused subscriptions, but is still offered the
//     subscribe capability: a stateful session is registered only after
//     its initialize result is sent, so the adapter cannot tell them
//     apart when it could withhold it. The change: register a session
//     before its initialize result goes out, or say in the context
//     whether the session will be registered.
//  4. The resource subscriptions of a 2026-07-28 listen are recorded in
//     the listen's before hook, and mcp-go sends the acknowledgment
//     after it, with no hook between: a change reported in that instant
//     may reach the stream before notifications/subscriptions/acknowledged.
//     A URI the registry refuses is left out of the listen, so the
//     acknowledgment leaves it out, as the protocol wants. The change: a
//     hook after the acknowledgment is sent. (A listen over the cap of
//     streams per caller is refused by the edge, before mcp-go sees it.)
//  5. mcp-go broadcasts list_changed (SendNotificationToAllClients)
//     without waiting: a session whose notification channel is full
//     misses it (mcp-go reports that to its OnError hooks). The registry's
//     own resources/updated wait for room, up to 10 s, on the registry's
//     sending goroutines: a session that waits holds up no other for
//     more than 10 ms.
package mcpgo

// What the adapter relies on mcp-go v1.2.1 doing, which its
// documentation does not promise; the tests of this package (named
// below) fail if an upgrade changes it:
//
//  1. hooks: a method's before hooks get a pointer to the request the
//     handler is then given (a copy taken after them), and its after
//     hooks the same pointer and a pointer to the result then sent;
//     after hooks are not called when the handler fails; hooks run in
//     the order of their slices in server.Hooks. (All tests.)
//  2. marker: a read addressed to a resource added with AddResource is
//     served by its handler, whose error goes out as -32603 with the
//     error's text as the message. (TestRead.)
//  3. arguments: the Arguments of a read reach a static resource's
//     handler as the before hook left them. (TestRead.)
//  4. cursor: resources/list and resources/templates/list from the ""
//     cursor do not fail, and a cursor that is not base64 fails with
//     -32602. (TestList.)
//  5. notFound: a read of a URI no resource or template of mcp-go's
//     matches fails with -32002, or -32602 for a 2026-07-28 request.
//     (TestRead.)
//  6. completion: the error of the ResourceCompletionProvider goes out
//     with -32603. (TestComplete.)
//  7. subscribe: resources/subscribe with the URI "" fails with -32602,
//     and mcp-go's built-in sessions record no subscription. (TestSubscribe.)
//  8. listen: the ResourceSubscriptions a listen's before hook leaves are
//     what mcp-go acknowledges, and the context of the hook ends when the
//     listen's stream does. (TestSubscribe, TestListChangedAndEnd.)
//  9. notificationChannel: a notification sent on a session's
//     NotificationChannel reaches its client: over stdio as it is, over
//     streamable HTTP on a listen's stream (tagged with its ID) or a
//     legacy session's standalone stream. (TestSubscribe.)
// 10. sessions: OnRegisterSession and OnUnregisterSession bracket the
//     sessions that can be sent notifications (stdio's, a stateful
//     streamable HTTP session's), and ClientSessionFromContext gives
//     their requests the session registered. (TestSubscribe,
//     TestListChangedAndEnd.)
