package audit

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Updates collects the notifications/resources/updated a client session
// receives, for Options.Updates. Set its Handle method as the client's
// mcp.ClientOptions.ResourceUpdatedHandler. The zero value is ready to
// use, and safe for concurrent use.
type Updates struct {
	mu      sync.Mutex
	uris    []string
	arrived chan struct{} // closed and replaced at each arrival
}

// Handle records the URI of an update.
func (u *Updates) Handle(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
	if req == nil || req.Params == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.uris = append(u.uris, req.Params.URI)
	if u.arrived != nil {
		close(u.arrived)
		u.arrived = nil
	}
}

// since returns the URIs received after the first n, and a channel closed
// at the next arrival.
func (u *Updates) since(n int) ([]string, <-chan struct{}) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.arrived == nil {
		u.arrived = make(chan struct{})
	}
	return append([]string(nil), u.uris[min(n, len(u.uris)):]...), u.arrived
}

// count returns how many updates have arrived.
func (u *Updates) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.uris)
}
