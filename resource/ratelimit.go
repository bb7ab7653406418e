package resource

import (
	"math"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

// RateLimits caps how fast one session may read and subscribe. The zero
// value sets no limits.
//
// A session is counted by its ID (stateful streamable HTTP). A session
// without one (stdio, and stateless HTTP, where go-sdk makes a session per
// request) is counted under the caller's identity (Options.Identity)
// instead, and requests with neither share one budget.
//
// A refused request is answered with CodeRateLimited, message "Rate limit
// exceeded", and data {"method": …, "retryAfterMs": …}; it reads nothing,
// subscribes nothing and changes nothing. Every request counts, including
// those answered as not found, so limits also slow a client probing for
// URIs. A subscription refused by the limit fails a 2026-07-28 listen as
// any refused subscription does.
type RateLimits struct {
	// Read limits resources/read.
	Read RateLimit
	// Subscribe limits resources/subscribe, and each resource
	// subscription of a 2026-07-28 subscriptions/listen.
	Subscribe RateLimit
}

// A RateLimit is a token bucket: Rate requests a second on average, and
// bursts of up to Burst at once. A zero (or negative) Rate means no limit;
// a Burst below 1 means the whole part of Rate, and at least 1.
type RateLimit struct {
	Rate  rate.Limit
	Burst int
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

// newLimiter returns the limiter l describes, or nil if it sets no limit.
func newLimiter(l RateLimit) *limiter {
	if l.Rate <= 0 {
		return nil
	}
	burst := l.Burst
	if burst < 1 {
		burst = int(max(1, min(float64(l.Rate), math.MaxInt32)))
	}
	return &limiter{limit: l.Rate, burst: burst, buckets: make(map[string]*rate.Limiter), sweepAt: minSweep}
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

// spend takes one token of a request of method from the budget of its
// session (or caller, see RateLimits), and returns the error to answer if
// there was none. A nil limiter limits nothing, and costs nothing: the
// key is only built when there is a limit.
func (l *limiter) spend(method string, session *mcp.ServerSession, identity string) error {
	if l == nil {
		return nil
	}
	ok, wait := l.allow(rateKey(session, identity), time.Now())
	if ok {
		return nil
	}
	return rateLimitedError(method, wait)
}

// rateKey names whose budget a request spends: its session's ID, else the
// caller's identity, else "" (one budget for the rest).
func rateKey(session *mcp.ServerSession, identity string) string {
	if id := sessionID(session); id != "" {
		return "session:" + id
	}
	if identity != "" {
		return "identity:" + identity
	}
	return ""
}
