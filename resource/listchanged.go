package resource

import (
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A notifier turns registry changes into list_changed notifications on
// the mounted servers: the first change after a quiet spell starts a timer,
// later changes ride along, and when it fires each server is told once.
type notifier struct {
	delay time.Duration

	mu      sync.Mutex
	servers []*mcp.Server
	read    mcp.ResourceHandler // the marker's
	timer   *time.Timer         // set while a notification is pending
	closed  bool
	firing  sync.WaitGroup // fire calls under way
}

// add adds s, whose marker read reads, to the servers notified.
func (n *notifier) add(s *mcp.Server, read mcp.ResourceHandler) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.read = read
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

// changed notes a change: a notification goes out after the delay, unless
// one is already pending.
func (n *notifier) changed() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed || n.timer != nil || len(n.servers) == 0 {
		return
	}
	n.timer = time.AfterFunc(n.delay, n.fire)
}

func (n *notifier) fire() {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return
	}
	n.timer = nil
	servers, read := slices.Clone(n.servers), n.read
	n.firing.Add(1)
	n.mu.Unlock()
	defer n.firing.Done()
	for _, s := range servers {
		announce(s, read)
	}
}

// close stops the timer and waits for a notification under way.
func (n *notifier) close() {
	n.mu.Lock()
	n.closed = true
	if n.timer != nil {
		n.timer.Stop()
		n.timer = nil
	}
	n.mu.Unlock()
	n.firing.Wait()
}
