package resource

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/mcpres/mcpres/internal/clientaddr"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

// RateLimits caps how fast one caller may read and subscribe. The zero
// value sets no limits.
//
// A caller is who Options.RateKey names, by default (DefaultRateKey) the
// caller's identity (Options.Identity), else the client's address (see
// serve.ClientAddress), whatever session or transport its requests come
// by; anonymous callers the server cannot tell apart share one budget.
//
// A refused request is answered with CodeRateLimited, message "Rate limit
// exceeded", and data {"method": …, "retryAfterMs": …}; it reads nothing,
// subscribes nothing and changes nothing. Every request counts, including
// those answered as not found, so limits also slow a client probing for
// URIs. A subscription refused by the limit fails a 2026-07-28 listen as
// any refused subscription does.
type RateLimits struct {
	// Read limits resources/read; nil sets no limit.
	Read *RateLimit
	// Subscribe limits resources/subscribe, and each resource
	// subscription of a 2026-07-28 subscriptions/listen; nil sets no
	// limit.
	Subscribe *RateLimit
}

// A RateLimit is a token bucket, as golang.org/x/time/rate has it: Rate
// requests a second on average, and bursts of up to Burst at once. Rate
// must be positive (rate.Inf allows everything) and Burst at least 1:
// NewRegistry refuses a limit that would allow nothing.
type RateLimit struct {
	Rate  rate.Limit
	Burst int
}

// validate returns an error if l, when set, would allow nothing.
func (l *RateLimit) validate() error {
	switch {
	case l == nil || l.Rate == rate.Inf:
		return nil
	case !(l.Rate > 0): // NaN too
		return fmt.Errorf("Rate %v allows nothing; it must be positive (nil RateLimit for no limit)", l.Rate)
	case l.Burst < 1:
		return fmt.Errorf("Burst %d allows nothing; it must be at least 1", l.Burst)
	}
	return nil
}

// A limiter holds one token bucket per session (or caller) for one kind of
// request.
type limiter struct {
	limit rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	// sweepAt is the number of buckets at which full ones are dropped.
	sweepAt int
}

// minSweep is the fewest buckets a limiter holds before it drops full ones.
const minSweep = 1024

// newLimiter returns the limiter l describes, which validate accepted, or
// nil if it sets no limit.
func newLimiter(l *RateLimit) *limiter {
	if l == nil || l.Rate == rate.Inf {
		return nil
	}
	return &limiter{limit: l.Rate, burst: l.Burst, buckets: make(map[string]*rate.Limiter), sweepAt: minSweep}
}

// allow takes a token from key's bucket if it has one, and otherwise says
// how long until it will.
func (l *limiter) allow(key string, now time.Time) (ok bool, retryAfter time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= l.sweepAt {
			l.sweep(now)
		}
		b = rate.NewLimiter(l.limit, l.burst)
		l.buckets[key] = b
	}
	if b.AllowN(now, 1) {
		return true, 0
	}
	missing := 1 - b.TokensAt(now)
	return false, time.Duration(math.Ceil(missing / float64(l.limit) * float64(time.Second)))
}

// sweep drops the buckets that have refilled: a full bucket is the same as
// a new one, so dropping it changes no decision. Then it sets the next
// sweep for when the buckets left have doubled. l.mu must be held.
func (l *limiter) sweep(now time.Time) {
	for key, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.burst) {
			delete(l.buckets, key)
		}
	}
	l.sweepAt = max(minSweep, 2*len(l.buckets))
}

// DefaultRateKey names whose rate budget a request spends (see
// Options.RateKey): the caller's identity when there is one, so that a
// caller who opens new sessions, or sends stateless requests, keeps the
// budget it has; else the client's network, if the HTTP edge recorded
// one in ctx: "address:192.0.2.0/24" (see serve.Options.IPv4Prefix);
// else "", one budget shared by every anonymous caller the server cannot
// tell apart. Sessions are not counted on their own: a client opens a new
// one at will.
func DefaultRateKey(ctx context.Context, req mcp.Request, identity string) string {
	if identity != "" {
		return "identity:" + identity
	}
	if network := clientaddr.From(ctx).Network; network != "" {
		return "address:" + network
	}
	return ""
}
