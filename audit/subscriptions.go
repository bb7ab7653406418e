package audit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The rules of subscriptions and of 2026-07-28's caching hints.
var (
	ruleSubscribeMissing = newRule("subscribe.missing", Should,
		`resources, security considerations: "Servers MUST validate all resource URIs"; error handling: "Servers SHOULD return standard JSON-RPC errors for common failure cases: Resource not found"; a subscription to a URI that names nothing can never be told anything, and is refused (mcpres answers -32602)`)
	ruleSubscribeDelivers = newRule("subscribe.delivers", Must,
		`resources, subscriptions: "Clients can subscribe to specific resources and receive notifications when they change" (notifications/resources/updated)`)
	ruleSubscribeSilent = newRule("subscribe.unsubscribed-silent", Should,
		`resources, subscriptions: notifications go to the clients that "subscribe to specific resources"; after resources/unsubscribe (or, at 2026-07-28, the end of its subscriptions/listen) a client is told no more`)
	ruleCacheHints = newRule("cache.hints", Must,
		`2026-07-28 (SEP-2549), caching: "ttlMs" is "how long (in milliseconds) the client MAY cache this response", so never negative; "cacheScope" is "public" ("Any client or intermediary MAY cache and serve the response") or "private" ("Only the requesting user's client MAY cache the response")`)
)

// protocolListen is the first protocol version at which a subscription is
// a subscriptions/listen, and results carry caching hints.
const protocolListen = protocol.SessionlessSince

// listenWait is how long a Subscribe at protocolListen is given to return:
// go-sdk's client sends the subscriptions/listen and returns at once,
// without waiting for the acknowledgment, but a client that waits for the
// whole listen would block until Unsubscribe.
const listenWait = 500 * time.Millisecond

// Pauses after unsubscribing, for what was in flight to arrive and for the
// server to hear of it (at protocolListen, the end of a listen is told by
// a notifications/cancelled sent in the background).
const (
	settle      = 100 * time.Millisecond
	settleAgain = 500 * time.Millisecond
)

// checkSubscriptions checks the caching hints of 2026-07-28; then, if the
// server advertises subscribe, that a subscription to nothing is refused,
// and, with Options.Updates and Options.Change, that a subscribed change
// arrives and an unsubscribed one does not.
func checkSubscriptions(c *checker) error {
	if err := c.checkCacheHints(); err != nil {
		return err
	}
	caps := c.capabilities()
	if caps == nil {
		return nil // checkLists has said that nothing was checked
	}
	if !caps.Subscribe {
		c.report.Skipped = append(c.report.Skipped, "subscriptions: the server does not advertise subscribe")
		return nil
	}
	if err := c.checkSubscribeMissing(); err != nil {
		return err
	}
	if c.opts.Updates == nil || c.opts.Change == nil || len(c.resources) == 0 {
		c.report.Skipped = append(c.report.Skipped, "subscription delivery: needs Options.Updates, Options.Change and a listed resource")
		return nil
	}
	return c.checkDelivery(c.resources[0].URI)
}

// checkSubscribeMissing checks that a subscription to a URI that names
// nothing, in the scheme of a listed one, is refused.
func (c *checker) checkSubscribeMissing() error {
	uri, ok := c.missingURI()
	if !ok {
		c.report.Skipped = append(c.report.Skipped, "subscription to nothing: no listed URI has a scheme to make one up in")
		return nil
	}
	if c.protocolAtLeast(protocolListen) {
		if c.opts.Subscribe == nil {
			c.report.Skipped = append(c.report.Skipped, "subscription to nothing: at 2026-07-28 go-sdk's client does not report a refused subscriptions/listen (set Options.Subscribe, as mcpaudit -url does, or audit at an earlier version)")
			return nil
		}
		err := c.opts.Subscribe(c.ctx, uri)
		if _, refused := rpcError(err); err != nil && !refused && c.ctx.Err() == nil {
			// Not an answer: the check could not be made, which must not
			// read as the server refusing.
			c.report.Skipped = append(c.report.Skipped, fmt.Sprintf("subscription to nothing: Options.Subscribe failed without an answer from the server: %v", err))
		} else if err == nil {
			c.fail(ruleSubscribeMissing, uri, "a subscriptions/listen to a URI that names nothing was acknowledged")
		}
		return c.ctx.Err()
	}
	unsubscribe, err := c.subscribe(uri)
	switch {
	case err == nil:
		c.fail(ruleSubscribeMissing, uri, protocol.MethodSubscribe+" to a URI that names nothing was accepted")
		if err := unsubscribe(); c.sessionFailed(err) {
			return err
		}
	case c.sessionFailed(err):
		return err
	case errors.Is(err, context.DeadlineExceeded):
		c.fail(ruleSubscribeMissing, uri, protocol.MethodSubscribe+" to a URI that names nothing was not answered within %v", c.opts.Wait)
	}
	return nil
}

// subscribe subscribes the session to uri and returns how to unsubscribe,
// or the server's refusal. Before protocolListen it is a
// resources/subscribe, given Options.Wait to be answered. At
// protocolListen go-sdk's client opens a subscriptions/listen that lasts
// until Unsubscribe, and does not report a refusal: subscribe then fails
// only if Subscribe does within listenWait.
func (c *checker) subscribe(uri string) (unsubscribe func() error, err error) {
	params := &mcp.SubscribeParams{URI: uri}
	if !c.protocolAtLeast(protocolListen) {
		ctx, cancel := context.WithTimeout(c.ctx, c.opts.Wait)
		defer cancel()
		if err := c.cs.Subscribe(ctx, params); err != nil {
			return nil, err
		}
		return func() error {
			return c.cs.Unsubscribe(c.ctx, &mcp.UnsubscribeParams{URI: uri})
		}, nil
	}
	done := make(chan error, 1)
	go func() { done <- c.cs.Subscribe(c.ctx, params) }()
	unsubscribe = func() error {
		// At protocolListen Unsubscribe only cancels the listen.
		return c.cs.Unsubscribe(context.WithoutCancel(c.ctx), &mcp.UnsubscribeParams{URI: uri})
	}
	select {
	case err := <-done:
		if err != nil {
			unsubscribe() // forget the subscription the client recorded
			return nil, err
		}
	case <-time.After(listenWait):
	case <-c.ctx.Done():
		unsubscribe()
		return nil, c.ctx.Err()
	}
	return unsubscribe, nil
}

// checkDelivery subscribes to uri, has it changed, and waits for the
// update; then unsubscribes, has it changed again, and checks that no
// update comes.
func (c *checker) checkDelivery(uri string) error {
	unsubscribe, err := c.subscribe(uri)
	if err != nil {
		if c.sessionFailed(err) {
			return err
		}
		c.fail(ruleSubscribeDelivers, uri, "a subscription to a listed resource failed: %v", err)
		return nil
	}
	// A 2026-07-28 listen is recorded by the server some time after
	// Subscribe returns: change the resource again until the update
	// comes, or Wait ends.
	deadline := time.Now().Add(c.opts.Wait)
	arrived := false
	for !arrived && c.ctx.Err() == nil && time.Now().Before(deadline) {
		start := c.opts.Updates.count()
		if err := c.opts.Change(c.ctx, uri); err != nil {
			unsubscribe()
			return err
		}
		arrived = c.awaitUpdate(start, uri, min(time.Until(deadline), 200*time.Millisecond))
	}
	uerr := unsubscribe()
	switch {
	case c.ctx.Err() != nil:
		return c.ctx.Err()
	case c.sessionFailed(uerr):
		return uerr
	case !arrived:
		c.fail(ruleSubscribeDelivers, uri, "no notifications/resources/updated within %v of the change", c.opts.Wait)
		return nil
	case uerr != nil:
		c.report.Skipped = append(c.report.Skipped, "unsubscribed silence: resources/unsubscribe was refused: "+uerr.Error())
		return nil
	}
	// An update after unsubscribing breaks the rule only if it comes
	// again after a longer pause: the first may have crossed the
	// unsubscription.
	for _, pause := range []time.Duration{settle, settleAgain} {
		if !sleep(c.ctx, pause) {
			return c.ctx.Err()
		}
		start := c.opts.Updates.count()
		if err := c.opts.Change(c.ctx, uri); err != nil {
			return err
		}
		if !c.awaitUpdate(start, uri, min(c.opts.Wait, time.Second)) {
			return c.ctx.Err()
		}
	}
	c.fail(ruleSubscribeSilent, uri, "an update arrived after unsubscribing, at each of two changes")
	return nil
}

// sleep waits for d, and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// awaitUpdate reports whether an update for uri, after the first start
// updates, arrives within d.
func (c *checker) awaitUpdate(start int, uri string, d time.Duration) bool {
	timeout := time.NewTimer(d)
	defer timeout.Stop()
	for {
		uris, next := c.opts.Updates.since(start)
		if slices.Contains(uris, uri) {
			return true
		}
		select {
		case <-next:
		case <-timeout.C:
			return false
		case <-c.ctx.Done():
			return false
		}
	}
}

// checkCacheHints checks, at protocolListen and later, the caching hints
// of the first page of resources/list and of a read of the first listed
// resource.
func (c *checker) checkCacheHints() error {
	if !c.protocolAtLeast(protocolListen) || c.capabilities() == nil {
		return nil
	}
	list, err := c.cs.ListResources(c.ctx, &mcp.ListResourcesParams{})
	switch {
	case c.sessionFailed(err):
		return err
	case err == nil && list != nil:
		c.checkCacheable(protocol.MethodListResources, list.Cacheable)
	}
	if len(c.resources) == 0 {
		return nil
	}
	uri := c.resources[0].URI
	read, err := c.cs.ReadResource(c.ctx, &mcp.ReadResourceParams{URI: uri})
	switch {
	case c.sessionFailed(err):
		return err
	case err == nil && read != nil:
		c.checkCacheable(uri, read.Cacheable)
	}
	return nil
}

// checkCacheable records a caching hint out of range. An empty
// cacheScope is taken as absent, which means "public".
func (c *checker) checkCacheable(target string, h mcp.Cacheable) {
	if h.TTLMs < 0 {
		c.fail(ruleCacheHints, target, "ttlMs %d", h.TTLMs)
	}
	switch h.CacheScope {
	case "", "public", "private":
	default:
		c.fail(ruleCacheHints, target, "cacheScope %q", h.CacheScope)
	}
}
