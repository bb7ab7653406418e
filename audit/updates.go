package audit

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Updates collects the notifications/resources/updated and
// notifications/resources/list_changed a client session receives, for
// Options.Updates. Set its Handle method as the client's
// mcp.ClientOptions.ResourceUpdatedHandler, and HandleListChanged as its
// ResourceListChangedHandler (at 2026-07-28 go-sdk's client listens for
// list changes only if that handler is set). The zero value is ready to
// use, and safe for concurrent use.
type Updates struct {
	mu          sync.Mutex
	uris        []string
	listChanged int
	arrived     chan struct{} // closed and replaced at each arrival
}

// Handle records the URI of an update.
func (u *Updates) Handle(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
	if req == nil || req.Params == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.uris = append(u.uris, req.Params.URI)
	u.wake()
}

// HandleListChanged records a change to the list of resources.
func (u *Updates) HandleListChanged(context.Context, *mcp.ResourceListChangedRequest) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.listChanged++
	u.wake()
}

// wake tells the waiters that something arrived. u.mu is held.
func (u *Updates) wake() {
	if u.arrived != nil {
		close(u.arrived)
		u.arrived = nil
	}
}

// next returns a channel closed at the next arrival. u.mu is held.
func (u *Updates) next() <-chan struct{} {
	if u.arrived == nil {
		u.arrived = make(chan struct{})
	}
	return u.arrived
}

// since returns the URIs received after the first n, and a channel closed
// at the next arrival.
func (u *Updates) since(n int) ([]string, <-chan struct{}) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.uris[min(n, len(u.uris)):]...), u.next()
}

// count returns how many updates have arrived.
func (u *Updates) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.uris)
}

// listChangedCount returns how many list changes have arrived.
func (u *Updates) listChangedCount() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.listChanged
}

// awaitListChanged reports whether more than start list changes have
// arrived, or arrive within d.
func (u *Updates) awaitListChanged(ctx context.Context, start int, d time.Duration) bool {
	timeout := time.NewTimer(d)
	defer timeout.Stop()
	for {
		u.mu.Lock()
		n, next := u.listChanged, u.next()
		u.mu.Unlock()
		if n > start {
			return true
		}
		select {
		case <-next:
		case <-timeout.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}
