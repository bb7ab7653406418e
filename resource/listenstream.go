package resource

import (
	"context"
	"sync"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/resource/internal/delivery"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file serves the resources of a 2026-07-28 subscriptions/listen
// whose stream a transport serves itself, rather than go-sdk: package
// serve's edge does, in front of a server NewServer made, so that a
// stream holds no more than its HTTP request (listen.go is go-sdk's way).

// A ListenStream is a 2026-07-28 subscriptions/listen stream that a
// transport serves itself (see OpenListen). It is a Session the server
// can end, whose end the transport reports (OpenListen's end), and whose
// notifications may wait in a buffer until Flush.
type ListenStream interface {
	Session
	// Close ends the stream from the server's side: a total of the
	// registry's sheds it to make room. It returns at once; the
	// transport then ends the stream and calls OpenListen's end.
	Close()
	// Flush sends what Updated left in a buffer. The registry calls it
	// once it has sent the stream every notification waiting for it.
	Flush() error
}

// Subscribes reports whether r answers the resource subscriptions of s:
// whether s is a server r.NewServer made. A transport in front of s may
// then serve 2026-07-28 listens itself, with OpenListen.
func (r *Registry) Subscribes(s *mcp.Server) bool {
	_, ok := r.made.Load(s)
	return ok
}

// OpenListen subscribes stream to each resource of the 2026-07-28
// subscriptions/listen req (its notifications' resourceSubscriptions), as
// a listen to a server NewServer made is subscribed: within the listen's
// Observer Call, each resource a Subscribe of its own, with stream as the
// caller's Session and the protocol version req's _meta names, so that
// the caps and rate limits count them as go-sdk's. The first refusal
// refuses the listen: OpenListen then drops the subscriptions made before
// it and returns its error, to answer the listen with. Else it returns
// end, which the transport calls once the stream has ended: the
// subscriptions are forgotten and the Call ends (a second call does
// nothing).
//
// The transport acknowledges the listen, naming every resource, and sends
// nothing else on it but what stream.Updated is given, each after the
// acknowledgment. The list_changed flags of a listen are go-sdk's to
// serve: OpenListen serves resource subscriptions alone.
//
// OpenListen returns an error, having subscribed nothing, for a nil req or
// stream, a listen without notifications, or after Close (ErrClosed).
func (r *Registry) OpenListen(ctx context.Context, req *mcp.SubscriptionsListenRequest, stream ListenStream) (end func(), err error) {
	if stream == nil || req == nil || req.Params == nil || req.Params.Notifications == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "subscriptions/listen: missing required 'notifications' field"}
	}
	if r.closed.Load() {
		return nil, ErrClosed
	}
	version, _ := req.Params.Meta[mcp.MetaKeyProtocolVersion].(string)
	ctx = WithCaller(ctx, Caller{ProtocolVersion: version, Session: stream})
	key := delivery.Key{Other: stream}
	c := call{ctx: ctx, op: OpSubscribe, method: protocol.MethodListen, req: req, session: key, caller: callerOf(ctx)}
	if r.opts.Observer != nil {
		c.identity = r.opts.Identity(ctx, req)
		r.observe(&c)
	}
	if err := r.subscribeEach(c.ctx, key, req.Params.Notifications.ResourceSubscriptions, req.Params.Meta, req.Extra); err != nil {
		if c.obs != nil {
			r.observeEnd(&c, listenDecision(err), err)
		}
		return nil, err
	}
	if c.obs == nil {
		// Nothing of the request is kept for the stream's life: a listen
		// of a thousand long URIs would otherwise hold them twice.
		return sync.OnceFunc(func() { r.delivery.Ended(key) }), nil
	}
	return sync.OnceFunc(func() {
		r.delivery.Ended(key)
		r.observeEnd(&c, DecisionAllowed, nil)
	}), nil
}

// subscribeEach subscribes the stream key, which ctx names as the caller
// (WithCaller), to each of uris, and returns the first refusal, having
// dropped those made before it.
func (r *Registry) subscribeEach(ctx context.Context, key delivery.Key, uris []string, meta mcp.Meta, extra *mcp.RequestExtra) error {
	for _, u := range uris {
		req := &mcp.SubscribeRequest{Params: &mcp.SubscribeParams{URI: u, Meta: meta}, Extra: extra}
		if err := r.Subscribe(ctx, req); err != nil {
			r.delivery.Drop(key)
			return err
		}
	}
	return nil
}

// listenDecision is the Observer's Decision for a listen refused with
// err.
func listenDecision(err error) Decision {
	switch code, _ := errorCode(err); code {
	case jsonrpc.CodeInvalidParams, jsonrpc.CodeInvalidRequest:
		return DecisionInvalid
	case CodeRateLimited:
		return DecisionLimited
	}
	return DecisionFailed
}
