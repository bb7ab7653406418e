package mcptest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Versions are the protocol versions go-sdk v1.8 speaks, oldest first:
// 2025-06-18 and 2025-11-25, whose clients hold a session and subscribe
// with resources/subscribe, and 2026-07-28, whose clients need no session
// and listen with subscriptions/listen. A server should serve each, with
// its notifications.
var Versions = []string{protocol.Version20250618, protocol.Version20251125, protocol.Version20260728}

// Notifications records the resource notifications a client session
// receives: pass its ClientOptions to Connect, Stdio or ConnectHTTP, then
// wait for what the test expects with WaitUpdated and WaitListChanged.
// The zero value is ready to use; it is safe for concurrent use.
type Notifications struct {
	mu          sync.Mutex
	updated     []string // URIs of notifications/resources/updated not yet waited for
	listChanged int      // notifications/resources/list_changed not yet waited for
	signal      chan struct{}
}

// ClientOptions returns a copy of opts (nil for none) whose
// ResourceUpdatedHandler and ResourceListChangedHandler record into n,
// after calling those opts had, if any. A 2026-07-28 client listens for
// list_changed only when the latter is set, as it always is here.
func (n *Notifications) ClientOptions(opts *mcp.ClientOptions) *mcp.ClientOptions {
	var o mcp.ClientOptions
	if opts != nil {
		o = *opts
	}
	updated, listChanged := o.ResourceUpdatedHandler, o.ResourceListChangedHandler
	o.ResourceUpdatedHandler = func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		if updated != nil {
			updated(ctx, req)
		}
		n.record(func() { n.updated = append(n.updated, req.Params.URI) })
	}
	o.ResourceListChangedHandler = func(ctx context.Context, req *mcp.ResourceListChangedRequest) {
		if listChanged != nil {
			listChanged(ctx, req)
		}
		n.record(func() { n.listChanged++ })
	}
	return &o
}

func (n *Notifications) record(f func()) {
	n.mu.Lock()
	f()
	c := n.signalLocked()
	n.mu.Unlock()
	select {
	case c <- struct{}{}:
	default: // a wake-up is pending already
	}
}

func (n *Notifications) signalLocked() chan struct{} {
	if n.signal == nil {
		n.signal = make(chan struct{}, 1)
	}
	return n.signal
}

// Updated returns the URIs of the updates received and not yet waited
// for, in the order they came.
func (n *Notifications) Updated() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.updated)
}

// ListChanged returns the number of list_changed notifications received
// and not yet waited for.
func (n *Notifications) ListChanged() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.listChanged
}

// WaitTimeout is how long WaitUpdated and WaitListChanged wait before they
// fail the test.
const WaitTimeout = 30 * time.Second

// pokeEvery is how often WaitUpdated and WaitListChanged call change
// again while they wait.
const pokeEvery = time.Second

// WaitUpdated waits until a notifications/resources/updated for uri has
// arrived, and takes it from those recorded. change, if not nil, makes the
// change: it is called at once and then every second while none has
// arrived, since a 2026-07-28 client subscribes in the background (its
// subscriptions/listen is acknowledged after Subscribe returns), so a
// change made at once may come before the server records the
// subscription. It fails t after WaitTimeout.
func (n *Notifications) WaitUpdated(t testing.TB, uri string, change func()) {
	t.Helper()
	n.wait(t, protocol.NotificationResourceUpdated+" for "+uri, change, func() bool {
		i := slices.Index(n.updated, uri)
		if i >= 0 {
			n.updated = slices.Delete(n.updated, i, i+1)
		}
		return i >= 0
	})
}

// WaitListChanged waits until a notifications/resources/list_changed has
// arrived, and takes it from those recorded, calling change as
// WaitUpdated does. It fails t after WaitTimeout.
func (n *Notifications) WaitListChanged(t testing.TB, change func()) {
	t.Helper()
	n.wait(t, protocol.NotificationListChanged, change, func() bool {
		if n.listChanged > 0 {
			n.listChanged--
			return true
		}
		return false
	})
}

// wait calls change as WaitUpdated says until take, called with n.mu
// held, reports that what arrived.
func (n *Notifications) wait(t testing.TB, what string, change func(), take func() bool) {
	t.Helper()
	deadline := time.NewTimer(WaitTimeout)
	defer deadline.Stop()
	poke := time.NewTicker(pokeEvery)
	defer poke.Stop()
	if change != nil {
		change()
	}
	for {
		n.mu.Lock()
		done, signal := take(), n.signalLocked()
		n.mu.Unlock()
		if done {
			return
		}
		select {
		case <-signal:
		case <-poke.C:
			if change != nil {
				change()
			}
		case <-deadline.C:
			t.Fatalf("mcptest: no %s within %v", what, WaitTimeout)
		}
	}
}
