// Package burst tells when refusals of one kind begin a burst, so that a
// server under attack writes one log line per burst rather than one per
// refused request.
package burst

import (
	"sync"
	"time"
)

// DefaultQuiet is the spell without a refusal that ends a burst when
// Counter.Quiet is zero.
const DefaultQuiet = 10 * time.Second

// A Counter counts refusals by kind. The zero value is ready to use;
// a Counter must not be copied after first use.
type Counter struct {
	// Quiet is how long a kind must go without a refusal for the next
	// one to begin a burst. Zero means DefaultQuiet.
	Quiet time.Duration

	mu    sync.Mutex
	kinds map[string]*kind
}

type kind struct {
	last  time.Time // of the latest refusal
	since int       // refusals since the one that began the burst
}

// Refused counts one refusal of the given kind at now. It reports whether
// the refusal begins a burst (the first of its kind, or the first after a
// quiet spell), and if so how many refusals followed the first of the
// burst before it, which were not reported. Kinds are meant to be few
// (the caps a server has): each is remembered for ever.
func (c *Counter) Refused(name string, now time.Time) (begins bool, unreported int) {
	quiet := c.Quiet
	if quiet == 0 {
		quiet = DefaultQuiet
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.kinds[name]
	if k == nil {
		if c.kinds == nil {
			c.kinds = make(map[string]*kind)
		}
		k = &kind{}
		c.kinds[name] = k
		k.last = now
		return true, 0
	}
	if now.Sub(k.last) >= quiet {
		unreported = k.since
		k.last, k.since = now, 0
		return true, unreported
	}
	k.last = now
	k.since++
	return false, 0
}
