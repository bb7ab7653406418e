package audit

import (
	"context"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The rules of subscriptions and of 2026-07-28's caching hints.
var (
	ruleSubscribeMissing = newRule("subscribe.missing", Should,
		`resources, subscriptions: a client subscribes "to specific resources" to hear of their changes; a subscription to a URI that names nothing can never be told anything, and is refused (-32602)`)
	ruleSubscribeDelivers = newRule("subscribe.delivers", Must,
		`resources, subscriptions: "Server sends notifications/resources/updated" when a subscribed resource changes`)
	ruleSubscribeSilent = newRule("subscribe.unsubscribed-silent", Should,
		`resources, subscriptions: updates go to subscribers; after resources/unsubscribe (or the end of its subscriptions/listen) a client is told no more`)
	ruleCacheHints = newRule("cache.hints", Must,
		`2026-07-28, caching: "ttlMs" is a number of milliseconds, 0 or more, and "cacheScope" is "public" or "private"`)
)

// protocolCaching is the first protocol version with caching hints.
const protocolCaching = "2026-07-28"

// refusalWait is how long a subscription at 2026-07-28, which lasts as
// long as its listen, is given to be refused.
const refusalWait = 2 * time.Second

// checkSubscriptions checks that a subscription to nothing is refused,
// that a subscribed change arrives and an unsubscribed one does not, and
// the caching hints of 2026-07-28.
func checkSubscriptions(c *checker) error {
	if err := c.checkCacheHints(); err != nil {
		return err
	}
	caps := c.capabilities()
	if caps == nil || !caps.Subscribe {
		c.report.Skipped = append(c.report.Skipped, "subscriptions: the server does not advertise subscribe")
		return nil
	}
	if uri, ok := c.missingURI(); ok {
		switch {
		case c.protocolAtLeast("2026-07-28") && c.opts.Subscribe != nil:
			if err := c.opts.Subscribe(c.ctx, uri); err == nil {
				c.fail(ruleSubscribeMissing, uri, "a subscriptions/listen to a URI that names nothing was acknowledged")
			}
		case c.protocolAtLeast("2026-07-28"):
			c.report.Skipped = append(c.report.Skipped, "subscription to nothing: at 2026-07-28 go-sdk's client does not report a refused subscriptions/listen (set Options.Subscribe, as mcpaudit -url does, or audit at an earlier version)")
		default:
			refused, cancel := c.subscribe(uri)
			cancel()
			if !refused {
				c.fail(ruleSubscribeMissing, uri, "a subscription to a URI that names nothing was accepted")
			}
		}
	}
	if c.opts.Updates == nil || c.opts.Change == nil || len(c.resources) == 0 {
		c.report.Skipped = append(c.report.Skipped, "subscription delivery: needs Options.Updates, Options.Change and a listed resource")
		return nil
	}
	return c.checkDelivery(c.resources[0].URI)
}

// subscribe subscribes to uri and reports whether the server refused;
// cancel unsubscribes. At 2026-07-28 go-sdk's client subscribes in the
// background, through a subscriptions/listen that lasts until cancel, and
// does not report a refusal: subscribe then reports one only if Subscribe
// fails within refusalWait.
func (c *checker) subscribe(uri string) (refused bool, cancel func()) {
	done := make(chan error, 1)
	go func() { done <- c.cs.Subscribe(c.ctx, &mcp.SubscribeParams{URI: uri}) }()
	unsubscribe := func() { c.cs.Unsubscribe(context.WithoutCancel(c.ctx), &mcp.UnsubscribeParams{URI: uri}) }
	wait := refusalWait
	if !c.protocolAtLeast("2026-07-28") {
		wait = c.opts.Wait // a legacy subscription is answered at once
	}
	select {
	case err := <-done:
		if err != nil {
			return true, func() {}
		}
		return false, unsubscribe
	case <-time.After(wait):
		return false, unsubscribe
	}
}

// checkDelivery subscribes to uri, has it changed, and waits for the
// update; then unsubscribes, has it changed again, and checks that no
// update comes.
func (c *checker) checkDelivery(uri string) error {
	u := c.opts.Updates
	refused, unsubscribe := c.subscribe(uri)
	if refused {
		c.fail(ruleSubscribeDelivers, uri, "a subscription to a listed resource was refused")
		return nil
	}
	// A 2026-07-28 listen may be recorded some time after it was sent:
	// change the resource again until the update comes, or Wait ends.
	deadline := time.Now().Add(c.opts.Wait)
	start := u.count()
	arrived := false
	for !arrived && time.Now().Before(deadline) {
		if err := c.opts.Change(c.ctx, uri); err != nil {
			unsubscribe()
			return err
		}
		arrived = c.awaitUpdate(start, uri, min(time.Until(deadline), 200*time.Millisecond))
	}
	unsubscribe()
	if !arrived {
		c.fail(ruleSubscribeDelivers, uri, "no notifications/resources/updated within %v of the change", c.opts.Wait)
		return nil
	}
	// Let what was in flight arrive, then change it once more.
	time.Sleep(100 * time.Millisecond)
	start = u.count()
	if err := c.opts.Change(c.ctx, uri); err != nil {
		return err
	}
	if c.awaitUpdate(start, uri, min(c.opts.Wait, time.Second)) {
		c.fail(ruleSubscribeSilent, uri, "an update arrived after unsubscribing")
	}
	return nil
}

// awaitUpdate reports whether an update for uri arrives, after the first
// start, within d.
func (c *checker) awaitUpdate(start int, uri string, d time.Duration) bool {
	timeout := time.After(d)
	for {
		uris, next := c.opts.Updates.since(start)
		if slices.Contains(uris, uri) {
			return true
		}
		select {
		case <-next:
		case <-timeout:
			return false
		case <-c.ctx.Done():
			return false
		}
	}
}

// checkCacheHints checks the caching hints of a list page and a read, at
// 2026-07-28 and later.
func (c *checker) checkCacheHints() error {
	if !c.protocolAtLeast(protocolCaching) || c.capabilities() == nil {
		return nil
	}
	list, err := c.cs.ListResources(c.ctx, &mcp.ListResourcesParams{})
	if err != nil && c.sessionFailed(err) {
		return err
	}
	if err == nil {
		c.checkCacheable("resources/list", list.Cacheable)
	}
	if len(c.resources) == 0 {
		return nil
	}
	read, err := c.cs.ReadResource(c.ctx, &mcp.ReadResourceParams{URI: c.resources[0].URI})
	if err != nil && c.sessionFailed(err) {
		return err
	}
	if err == nil {
		c.checkCacheable(c.resources[0].URI, read.Cacheable)
	}
	return nil
}

// checkCacheable records a caching hint out of range.
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
