package audit

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sections of the specification the rules of subscriptions quote.
const (
	secSubscriptions    = "server/resources, Subscriptions"
	secListenStream     = "basic/patterns/subscriptions, Opening a Stream"
	secListChanged      = "server/resources, List Changed Notification"
	secSchemaUpdatedMsg = "schema, ResourceUpdatedNotification"
)

// The rules of subscriptions and notifications.
var (
	ruleSubscribeDelivers = newRule("subscribe.delivers",
		`with a way to change a resource (Options.Change, mcpaudit -change), subscribes to it, changes it, and waits Options.Wait for notifications/resources/updated. The specification describes the delivery, and requires it in no version`,
		clause(beforeListen, Advice, secSubscriptions, "Clients can subscribe to specific resources and receive notifications when they change"),
		clause(sinceListen, Advice, "server/resources, Subscriptions", "The server delivers notifications/resources/updated on the resulting stream whenever a watched resource changes."))
	ruleSubscribeSilent = newRule("subscribe.unsubscribed-silent",
		`then unsubscribes (at 2026-07-28, ends the listen), changes the resource twice, and expects no update: one that comes after both changes breaks the rule`,
		clause(beforeListen, Advice, secSchemaUpdatedMsg, "This should only be sent if the client previously sent a resources/subscribe request."),
		clause(sinceListen, Must, secListenStream, "The server MUST NOT send notification types the client has not explicitly requested."))
	ruleListChanged = newRule("list.changed",
		`with a way to change the list (Options.ChangeList, mcpaudit -list-change), and if the server advertises listChanged, changes it and waits Options.Wait for notifications/resources/list_changed (at 2026-07-28 on the subscriptions/listen go-sdk's client opens for it)`,
		clause(everyVersion, Should, secListChanged, "When the list of available resources changes, servers that declared the listChanged capability SHOULD send a notification"))
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
// closing its stream, in the background; over stdio, by a
// notifications/cancelled).
const (
	settle      = 100 * time.Millisecond
	settleAgain = 500 * time.Millisecond
)

// checkSubscriptions checks, if the server advertises subscribe, with
// Options.Updates and Options.Change, that a subscribed change arrives
// and an unsubscribed one does not.
func checkSubscriptions(c *checker) error {
	caps := c.capabilities()
	if caps == nil {
		return nil // checkLists has said that nothing was checked
	}
	if !caps.Subscribe {
		c.skip("subscriptions: the server does not advertise subscribe", ruleSubscribeDelivers, ruleSubscribeSilent)
		return nil
	}
	uri := c.opts.ChangeURI
	if uri == "" && len(c.resources) > 0 {
		uri = c.resources[0].URI
	}
	if c.opts.Updates == nil || c.opts.Change == nil || uri == "" {
		c.skip("subscription delivery: needs a way to change a resource (Options.Updates and Options.Change; mcpaudit -change) and a resource to change", ruleSubscribeDelivers, ruleSubscribeSilent)
		return nil
	}
	return c.checkDelivery(uri)
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
		e, _ := c.answer(err, protocol.MethodSubscribe, uri)
		if e != nil && e.Code == codeMethodNotFound {
			c.skip(fmt.Sprintf("subscriptions: the server advertises subscribe, and does not implement it: %v", err), ruleSubscribeDelivers, ruleSubscribeSilent)
			return nil
		}
		c.fail(ruleSubscribeDelivers, uri, "a subscription to it failed: %v", err)
		c.skip("unsubscribed silence: the subscription failed", ruleSubscribeSilent)
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
		c.skip("unsubscribed silence: no update came while subscribed", ruleSubscribeSilent)
		return nil
	case uerr != nil:
		c.skip("unsubscribed silence: resources/unsubscribe was refused: "+uerr.Error(), ruleSubscribeSilent)
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

// checkListChanged, if the server advertises listChanged, has it change
// its list with Options.ChangeList, again every 200 ms until a
// notifications/resources/list_changed arrives or Options.Wait has
// passed.
func checkListChanged(c *checker) error {
	caps := c.capabilities()
	switch {
	case caps == nil:
		return nil
	case !caps.ListChanged:
		c.skip("list changes: the server does not advertise listChanged", ruleListChanged)
		return nil
	case c.opts.Updates == nil || c.opts.ChangeList == nil:
		c.skip("list changes: needs a way to change the list (Options.Updates and Options.ChangeList; mcpaudit -list-change)", ruleListChanged)
		return nil
	}
	deadline := time.Now().Add(c.opts.Wait)
	for c.ctx.Err() == nil && time.Now().Before(deadline) {
		start := c.opts.Updates.listChangedCount()
		if err := c.opts.ChangeList(c.ctx); err != nil {
			return err
		}
		if c.opts.Updates.awaitListChanged(c.ctx, start, min(time.Until(deadline), 200*time.Millisecond)) {
			return nil
		}
	}
	if err := c.ctx.Err(); err != nil {
		return err
	}
	c.fail(ruleListChanged, protocol.MethodListResources, "no notifications/resources/list_changed within %v of a change to the list", c.opts.Wait)
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
